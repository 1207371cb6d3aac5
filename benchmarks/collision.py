"""Collision-aware solving: warm solves with and without a 20k-triangle collider, in one run.

Rigs: Rigify basic human (29 bones) and human metarig (159 bones) with the HUMANOID preset. Four
tasks: both feet held where they stand (priority 1) and both hands (priority 2) following a path
that pushes the left hand 40 cm forwards and back in 5 cm steps, into a UV sphere of about 20,000
triangles (the collider) and out again. Each step is solved warm from the previous result with
the warm engine ``Solver`` of the armature's solving session (``api.session_for``, what
``dqik.solve`` runs), once
with the collider collection set and once without; only ``Solver.solve`` is timed (fastest of 3
runs, ``common.fastest_ms``, each going on from the previous step's result,
``common.same_warm_start``). Reported: the median and p90 ms per warm solve, the median and
largest number of iterations per solve with the collider (``SolveResult.iterations``: how the
solve's work grows with contacts; the median solve time follows the median iterations) and the
time per iteration over the whole path (total ms / total iterations: steadier than the median,
which falls between free solves and ones held by the sphere), the
deepest capsule penetration past the margin (with collisions), and how many BVH trees were built
over the whole run (the collider is static: one per rig's session).

Run from the repository root: ``.venv/bin/python benchmarks/collision.py`` (or ``make bench``).
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import np  # noqa: E402

STEPS = 8          # 8 × 5 cm forwards, then back
STEP = 0.05
SPHERE_RADIUS = 0.15
GOAL = "159-bone metarig warm solve with collisions ≤ 8 ms"


def scene(kind, dqik):
    import bpy
    import rigs
    import solve_problems as sp
    obj = common.new_rig(kind)
    with common.quiet():
        bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet = sp.add_targets(obj, ["foot.L", "foot.R"], priority=1)
    hands = sp.add_targets(obj, ["hand.L", "hand.R"], priority=2)
    for name, empty in {**feet, **hands}.items():
        empty.location = sp.world_tail(obj, name)
    tail = sp.world_tail(obj, "hand.L")
    collection = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(collection)
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.mesh.primitive_uv_sphere_add(segments=128, ring_count=80, radius=SPHERE_RADIUS,
                                         location=(tail[0] + 0.05, tail[1] - 0.3, tail[2] - 0.1))
    sphere = bpy.context.active_object
    rigs.move_to_collection(sphere, collection)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='POSE')
    bpy.context.view_layer.update()
    triangles = len(sphere.data.loop_triangles) or len(sphere.data.polygons) * 2
    return obj, hands["hand.L"], tail, collection, triangles


def hand_goals(obj, tail):
    """The left hand's goals in armature space: ``STEPS`` steps of ``STEP`` forwards (−Y) from its
    world ``tail``, into the sphere, and back."""
    to_armature = np.linalg.inv(np.array(obj.matrix_world))
    offsets = [k * STEP for k in range(1, STEPS + 1)] + [k * STEP for k in range(STEPS - 1, -1, -1)]
    return [(to_armature @ np.append(tail + np.array([0.0, -offset, 0.0]), 1.0))[:3]
            for offset in offsets]


def run(kind, dqik, with_collider):
    import bpy
    obj, goal, tail, collection, triangles = scene(kind, dqik)
    obj.dqik.colliders = collection if with_collider else None
    pose = dqik.dq_ik_addon.blender.rig.pose.PoseArrays(obj)
    session = dqik.api.session_for(obj)
    session.tick()
    solver = session.solver
    tasks, names, _ = dqik.dq_ik_addon.blender.settings.scene_tasks.read_tasks(obj, session.model)
    targets = np.array([task.target for task in tasks])
    hand = names.index("hand.L")
    rotations, locations = pose.rotations(), None     # (the given locations)
    times, iterations, depth = [], [], 0.0
    for target in hand_goals(obj, tail):
        targets[hand] = target
        solver.retarget(targets)
        ms, result = common.fastest_ms(lambda: solver.solve(rotations, locations=locations),
                                       common.same_warm_start(solver))
        times.append(ms)
        iterations.append(result.iterations)
        rotations, locations = result.rotations, result.locations   # with the pelvis's slide
        if with_collider:   # the deepest capsule sample past the margin
            depth = max(depth, -float(result.contacts.clearances.min(initial=0.0)))
    bpy.context.view_layer.update()
    return times, iterations, depth, triangles, session.obstacles.cache.tree_builds


def main():
    dqik = common.install()
    started = time.perf_counter()
    rows, summary, builds = [], [], 0
    for kind, label in (("basic", "basic human (29)"), ("human", "human metarig (159)")):
        free, _, _, _, _ = run(kind, dqik, False)
        hit, iterations, depth, triangles, built = run(kind, dqik, True)
        builds += built
        free_median, free_p90 = common.median_p90(free)
        hit_median, hit_p90 = common.median_p90(hit)
        rows.append([label, f"{free_median:.2f} / {free_p90:.2f}", f"{hit_median:.2f} / {hit_p90:.2f}",
                     f"{np.median(iterations):g} / {max(iterations)}", f"{triangles}",
                     f"{depth * 1e3:.3f}"])
        summary.append((kind, hit_median, sum(hit) / max(sum(iterations), 1)))
    print(f"\n## Warm solves with and without a collider\n\n{common.versions()}\n")
    print(common.markdown(["rig", "no collider ms median / p90", "with collider ms median / p90",
                           "iterations with collider median / max", "collider triangles",
                           "deepest penetration past margin, mm"],
                          rows))
    print(f"\n{2 * STEPS} warm steps per rig (left hand 5 cm per step into the sphere and back; feet "
          f"priority 1, hands priority 2, HUMANOID limits). BVH trees built: {builds} "
          "(each rig's session builds its own). With the collider, ms per iteration over the "
          "path: " + ", ".join(f"{kind} {per:.2f}" for kind, _, per in summary) + ". "
          f"Run time {time.perf_counter() - started:.0f} s.\n\nGoal: {GOAL}.")
    for kind, median, _ in summary:
        if kind == "human":
            print(f"- human, with collisions: warm {median:.2f} ms (≤ 8) → "
                  f"{'met' if median <= 8.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
