"""DQ IK demo: the main job, headless, on real rigs.

    python demo/run_demo.py [OUTPUT_DIR]        (``make demo`` writes to demo_output/)

1. Builds the extension zip with Blender's own extension CLI and installs it into a scratch user
   folder (``tests/extension_cli.py``), exactly as a user would install it.
2. Adds the Rigify human metarig (159 bones), gives it anatomical limits with
   ``bpy.ops.dqik.apply_preset(preset='HUMANOID')`` and a body: a Skin-modifier mesh over its
   main bones, bound to it by an Armature modifier (``skinned_body.py``), from which the
   capsules take their radii.
3. Puts an Empty target on both feet at priority 1 and on both hands at priority 2: the feet are
   planted first, the hands only use the freedom the feet leave.
4. Scenarios, each solved from the rest pose with ``bpy.ops.dqik.solve()``:
   - ``reachable_1..5``: the targets are the feet and hand tails of a random pose inside the
     limits (forward kinematics, so the targets are provably reachable);
   - ``unreachable_hand``: the targets of ``reachable_1``, but the left hand's target is moved far
     beyond the arm's reach; the hand stretches towards it while the feet stay planted;
   - ``wall``: the targets of ``reachable_1`` with a thin wall (the armature's collider
     collection) across the left arm's way; the arm bends around it to reach the target.
5. In a new file, the production-rig scene (``production_rig.py``): a Rigify rig generated from
   the human metarig (706 bones), limbs in FK, targets on the FK hand and foot controls placed by
   FK of a random pose under a turned torso, a wall made of a scaled cube beside the left arm;
   solved with ``bpy.ops.dqik.solve()``, measured on the DEF bones the mesh follows.
6. In a new file, the live-posing scene (``live_drag.py``): the basic metarig's chest dragged
   through live ticks while the feet and hands hold their targets.
7. In a new file, motion-capture clean-up (``mocap_cleanup.py``): a BVH walk clip given targets
   from its own animation, its feet planted, a hand raised, played with Solve on Frame Change.
8. In new files, full-body posing (``fullbody.py``): the basic metarig crouching between its
   planted feet, and reaching a metre forward without and with Balance.
9. Writes into OUTPUT_DIR:
   - ``results.json``: per scenario, per task the error in mm, plus iterations, converged, the
     largest joint-limit violation (rad) and the operator's wall time (ms); under
     ``"production_rig"`` the rig's bone and constraint counts, per task the DEF bone's error in
     mm, iterations, converged, wall time and the deepest capsule clearance from the wall (mm);
     under ``"live_drag"`` the drag's errors and tick times; under ``"mocap_cleanup"`` how far
     the unedited playback strays from the clip, the planted ankle's drift, the raised hand's
     error, the worst pop and the frame changes' time; under ``"fullbody"`` the crouch's and the
     reaches' errors, the centre of mass's distance outside the support and the hips' motion;
   - ``dq_ik_demo.blend``: the metarig scene (armature solved for the last scenario, its
     targets, camera, lights and the render proxies); ``dq_ik_demo_rigify.blend``: the
     production-rig scene, solved;
   - Workbench renders (800x600, ``workbench.py``): ``rest_with_targets.png``, ``solved.png``
     (``reachable_1``), ``unreachable.png``, ``wall.png``, ``rigify_fk.png`` (the
     production rig), ``live_drag.png``; ``overlay.png``, the wall scene with the viewport
     overlay drawn over it (``overlay_picture.py``); ``plant.png``, the left ankle target's
     speed before and after Plant; ``crouch.png``, ``reach_balance_off.png`` and
     ``reach_balance_on.png`` (with the overlay's Balance layer).

Armatures are not drawn by a render, so each image shows a proxy mesh: one Blender-style
octahedral bone shape per pose bone (from the evaluated ``PoseBone.matrix`` and length; on the
production rig, per DEF bone). Colours: leg chains blue, arm chains green, the spine they share
purple, other bones grey; targets are spheres, red for priority 1 (feet; every target of the
production rig) and orange for priority 2 (hands).

Deterministic: the random poses come from fixed seeds (only the timings vary).
"""

import json
import os
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (os.path.join(ROOT, "tests"), ROOT):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import extension_cli  # noqa: E402  (sets BLENDER_USER_RESOURCES before bpy is imported)
import fullbody  # noqa: E402
import live_drag  # noqa: E402
import mocap_cleanup  # noqa: E402
import production_rig  # noqa: E402
from console import captured_output, timed_operator  # noqa: E402
from overlay_picture import SELECTED, render_with_overlay  # noqa: E402
from skinned_body import build_body  # noqa: E402
from workbench import (  # noqa: E402
    COLOURS,
    bone_points,
    bone_roles,
    build_bone_proxy,
    build_target_spheres,
    frame_camera,
    material,
    render,
    setup_render,
)

SEED = 7
REACHABLE_SCENARIOS = 5
FEET = ("foot.L", "foot.R")
HANDS = ("hand.L", "hand.R")
PRIORITY = {"foot.L": 1, "foot.R": 1, "hand.L": 2, "hand.R": 2}
UNREACHABLE_HAND = "hand.L"
WALL_HAND, WALL_SHOULDER = "hand.L", "upper_arm.L"
WALL_AT, WALL_SIZE, WALL_THICKNESS = 0.7, 0.25, 0.03
BEYOND_REACH = 0.8           # metres the unreachable target lies beyond the straight arm
MAX_FREE_ANGLE = 0.3         # radians, for bones the preset leaves unlimited (the hips root)
POSE_SCALE = 0.5             # random rotations are scaled to this fraction of their angle


# --- problems and measurements -----------------------------------------------------------------

def gentle_pose_in_limits(obj, names, rng, dqik):
    """Set a random pose inside the limits, scaled towards the rest pose (full-range random poses
    look like contortions): each rotation ``q = swing @ twist`` is decomposed as the README's
    "Limit semantics" says, its swing exponential map and twist angle scaled by POSE_SCALE and recomposed. The
    swing ellipse and the twist range contain the rest pose, so the scaled pose stays inside
    the limits; it is checked with Blender's own decomposition all the same."""
    import solve_problems as sp
    from mathutils import Quaternion
    for _ in range(100):
        pose = sp.random_pose_in_limits(obj, names, rng, dqik, max_free_angle=MAX_FREE_ANGLE)
        for name, q in pose.items():
            swing, twist = Quaternion(q).to_swing_twist('Y')
            swing = Quaternion(swing.to_exponential_map() * POSE_SCALE)
            pose[name] = np.array(swing @ Quaternion((0.0, 1.0, 0.0), twist * POSE_SCALE))
        sp.set_pose(obj, pose)
        if sp.limit_violation(obj, names, dqik) <= 1e-6:
            return
    raise SystemExit("no random pose inside the limits in 100 draws")


def pose_targets_by_fk(obj, empties, rng, dqik):
    """Move the targets to the effector tails of a random pose inside the limits; back to rest."""
    import solve_problems as sp
    gentle_pose_in_limits(obj, sp.chain_bones(obj, list(empties)), rng, dqik)
    for bone, empty in empties.items():
        empty.location = sp.world_tail(obj, bone)
    sp.clear_pose(obj)


def unreachable_location(obj, bone):
    """A point BEYOND_REACH metres past the straight arm's reach, out to the side, forward, up."""
    import solve_problems as sp
    pose = obj.pose.bones
    chain = [pose[bone], pose[bone].parent, pose[bone].parent.parent]   # hand, forearm, upper arm
    reach = sum(pb.length for pb in chain)
    shoulder = np.array(obj.matrix_world @ chain[-1].head)
    side = np.sign(sp.world_tail(obj, bone)[0] - shoulder[0]) or 1.0
    direction = np.array([side * 1.0, -0.45, 0.55])
    direction /= np.linalg.norm(direction)
    return shoulder + direction * (reach + BEYOND_REACH), reach


def solve_with_operator(obj, dqik):
    """``bpy.ops.dqik.solve()`` from the current pose; its result, report, iterations,
    convergence (from the session's ``last_result``) and wall time."""
    import bpy
    bpy.context.view_layer.objects.active = obj
    result, reports, elapsed_ms = timed_operator(bpy.ops.dqik.solve)
    snapshot = dqik.api.session_for(obj).last_result
    return result, reports, snapshot.iterations, snapshot.converged, elapsed_ms


def measure(obj, empties, dqik):
    """Per-task errors (mm, from the scene itself) and the largest limit violation (rad)."""
    import bpy
    import solve_problems as sp
    bpy.context.view_layer.update()
    tasks = {}
    for bone, empty in empties.items():
        goal = np.array(empty.matrix_world.translation)
        tasks[bone] = {
            "priority": PRIORITY[bone],
            "error_mm": round(float(np.linalg.norm(sp.world_tail(obj, bone) - goal)) * 1e3, 6),
        }
    violation = sp.limit_violation(obj, [pb.name for pb in obj.pose.bones], dqik)
    return tasks, float(violation)


def restore_goals(obj, empties, goals):
    """Back to the rest pose with the targets at ``goals`` (bone → location)."""
    import solve_problems as sp
    sp.clear_pose(obj)
    for bone, location in goals.items():
        empties[bone].location = location


def show_result(camera, obj, roles, empties, rest_points):
    """Frame the solved pose, the rest pose and the targets, and rebuild the bone proxies."""
    frame_camera(camera, bone_points(obj) + rest_points
                 + [tuple(e.location) for e in empties.values()])
    build_bone_proxy(obj, roles)


def add_wall(obj, goal):
    """A thin box across the way from the shoulder of ``WALL_HAND`` to ``goal``, made the
    armature's only collider (a collection ``Colliders``)."""
    import bmesh
    import bpy
    shoulder = np.array(obj.matrix_world @ obj.pose.bones[WALL_SHOULDER].head)
    way = np.array(goal) - shoulder
    normal = way / np.linalg.norm(way)
    side = np.cross(normal, (0.0, 0.0, 1.0))
    side /= np.linalg.norm(side)
    up = np.cross(side, normal)
    centre = shoulder + WALL_AT * way
    corners = [centre + a * WALL_SIZE / 2 * side + b * WALL_SIZE / 2 * up + c * WALL_THICKNESS / 2
               * normal for c in (-1, 1) for b in (-1, 1) for a in (-1, 1)]
    faces = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    mesh = bpy.data.meshes.new("wall")
    mesh.from_pydata([tuple(c) for c in corners], [], faces)
    shell = bmesh.new()
    shell.from_mesh(mesh)
    bmesh.ops.recalc_face_normals(shell, faces=shell.faces)  # outward, for signed distances
    shell.to_mesh(mesh)
    shell.free()
    wall = bpy.data.objects.new("wall", mesh)
    wall.data.materials.append(material("wall", COLOURS["wall"]))  # see-through in renders
    collection = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(collection)
    collection.objects.link(wall)
    obj.dqik.colliders = collection
    return wall


def capsule_radii_mm(obj, dqik):
    """The automatic capsule radii (mm) of the arm and leg bones, from the body's skin."""
    model = dqik.dq_ik_addon.blender.rig.reader.read_rig(obj)[0]
    radii, _ = dqik.dq_ik_addon.blender.colliders.capsules.capsule_radii(
        obj, model, dqik.api.session_for(obj).obstacles.cache)
    return {name: round(float(radii[model.index[name]]) * 1e3, 1)
            for name in ("upper_arm.L", "forearm.L", "hand.L", "thigh.L", "shin.L")}


def run_scenario(name, obj, empties, dqik, description, extra=None):
    import solve_problems as sp
    sp.clear_pose(obj)
    result, reports, iterations, converged, elapsed_ms = solve_with_operator(obj, dqik)
    if result != {'FINISHED'}:
        raise SystemExit(f"{name}: dqik.solve returned {result}: {reports}")
    tasks, violation = measure(obj, empties, dqik)
    entry = {
        "scenario": name,
        "description": description,
        "tasks": tasks,
        "iterations": iterations,
        "converged": converged,
        "max_limit_violation_rad": violation,
        "solve_wall_time_ms": round(elapsed_ms, 2),
        "operator_report": reports,
    }
    entry.update(extra or {})
    return entry


# --- main --------------------------------------------------------------------------------------

def main(output_dir):
    started = time.perf_counter()
    output_dir = os.path.abspath(output_dir)
    os.makedirs(output_dir, exist_ok=True)

    with captured_output():
        dqik = extension_cli.build_and_install(tempfile.mkdtemp(prefix="dqik-demo-"))
    import bpy
    import rigs
    import solve_problems as sp

    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    with captured_output():
        obj = rigs.metarig("human")
    bone_count = len(obj.pose.bones)
    preset_result, preset_report, _ = timed_operator(bpy.ops.dqik.apply_preset, preset='HUMANOID')
    if preset_result != {'FINISHED'}:
        raise SystemExit(f"apply_preset returned {preset_result}: {preset_report}")
    with captured_output():
        body = build_body(obj)

    empties = sp.add_targets(obj, FEET, priority=1)
    empties.update(sp.add_targets(obj, HANDS, priority=2))
    for empty in empties.values():
        empty.empty_display_type = 'SPHERE'
        empty.empty_display_size = 0.05
    roles = bone_roles(obj, FEET, HANDS)
    camera, _ = setup_render(scene)
    build_target_spheres(obj, empties, radius=0.035)
    rng = np.random.default_rng(SEED)

    scenarios, images = [], {}
    reachable_goals = None
    for index in range(1, REACHABLE_SCENARIOS + 1):
        name = f"reachable_{index}"
        pose_targets_by_fk(obj, empties, rng, dqik)
        if index == 1:
            reachable_goals = {b: e.location.copy() for b, e in empties.items()}
            rest_points = bone_points(obj)
            frame_camera(camera, rest_points + [tuple(e.location) for e in empties.values()])
            build_bone_proxy(obj, roles)
            images["rest_with_targets"] = render(
                scene, os.path.join(output_dir, "rest_with_targets.png"),
                "Rest pose and targets: feet = priority 1 (red), hands = priority 2 (orange)")
        scenarios.append(run_scenario(
            name, obj, empties, dqik,
            f"targets at the feet and hand tails of a random pose inside the Humanoid limits "
            f"(swing and twist scaled to {POSE_SCALE:g} of a uniform draw; forward kinematics, so "
            f"provably reachable); solved from the rest pose"))
        if index == 1:
            build_bone_proxy(obj, roles)
            worst = max(t["error_mm"] for t in scenarios[-1]["tasks"].values())
            images["solved"] = render(
                scene, os.path.join(output_dir, "solved.png"),
                f"Solved with dqik.solve: worst task error {worst:.3g} mm, "
                f"{scenarios[-1]['iterations']} iterations")

    # The same targets as reachable_1, but one hand's target far beyond its reach.
    restore_goals(obj, empties, reachable_goals)
    far, reach = unreachable_location(obj, UNREACHABLE_HAND)
    empties[UNREACHABLE_HAND].location = far
    bpy.context.view_layer.update()
    entry = run_scenario(
        "unreachable_hand", obj, empties, dqik,
        f"the targets of reachable_1, but {UNREACHABLE_HAND}'s target is {BEYOND_REACH} m beyond "
        "the reach of the straight arm: the feet (priority 1) stay planted, the hand "
        "(priority 2) stretches as close as it can",
        extra={"unreachable_task": UNREACHABLE_HAND,
               "arm_reach_m": round(reach, 4),
               "target_beyond_straight_arm_m": BEYOND_REACH})
    scenarios.append(entry)
    show_result(camera, obj, roles, empties, rest_points)
    feet = max(entry["tasks"][b]["error_mm"] for b in FEET)
    hands = ", ".join(f"{b} {entry['tasks'][b]['error_mm']:.0f} mm" for b in HANDS)
    images["unreachable"] = render(
        scene, os.path.join(output_dir, "unreachable.png"),
        f"{UNREACHABLE_HAND} target out of reach: the feet (priority 1) stay planted "
        f"({feet:.2g} mm); the hands (priority 2) get as close as they can ({hands})")

    # The targets of reachable_1 again, with a wall across the left arm's way to its target.
    restore_goals(obj, empties, reachable_goals)
    wall = add_wall(obj, reachable_goals[WALL_HAND])
    bpy.context.view_layer.update()
    entry = run_scenario(
        "wall", obj, empties, dqik,
        f"the targets of reachable_1 with a {WALL_SIZE} m wall, {WALL_THICKNESS * 100:g} cm thick, "
        f"across the way of {WALL_HAND} at {WALL_AT:.0%} of the way from its shoulder to its target "
        "(Object.dqik.colliders): the arm bends around the wall to reach the target",
        extra={"collider": wall.name,
               "deepest_capsule_past_margin_mm": round(sp.deepest_clearance(obj, dqik) * 1e3, 4)})
    scenarios.append(entry)
    show_result(camera, obj, roles, empties, rest_points)
    images["wall"] = render(
        scene, os.path.join(output_dir, "wall.png"),
        f"A wall in the way: the left arm bends around it and {WALL_HAND} reaches its target "
        f"({entry['tasks'][WALL_HAND]['error_mm']:.2g} mm); capsules "
        f"{max(-entry['deepest_capsule_past_margin_mm'], 0.0):.2g} mm past the margin at most")

    images["overlay"], overlay_vertices = render_with_overlay(
        scene, obj, dqik, os.path.join(output_dir, "overlay.png"),
        "The viewport overlay (every layer): limits of the selected left arm, capsules, "
        "contacts on the wall, task lines by status")

    blend = os.path.join(output_dir, "dq_ik_demo.blend")
    with captured_output():
        bpy.ops.wm.save_as_mainfile(filepath=blend, check_existing=False)

    results = {
        "rig": f"Rigify human metarig ({bone_count} bones)",
        "blender": bpy.app.version_string,
        "seed": SEED,
        "preset_report": preset_report,
        "tasks": {bone: {"priority": PRIORITY[bone]} for bone in empties},
        "solver_settings": {key: float(f"{getattr(obj.dqik, key):.6g}")
                            for key in ("max_iterations", "tolerance", "damping", "rest_weight")},
        "scenarios": scenarios,
        "files": {"blend": os.path.basename(blend), **images},
        "overlay_vertices": overlay_vertices,
        "body": {"vertices": len(body.data.vertices), "vertex_groups": len(body.vertex_groups),
                 "capsule_radii_mm": capsule_radii_mm(obj, dqik)},
    }
    # a new file: the metarig scene is saved above and no longer open
    results["production_rig"] = production_rig.run(dqik, output_dir)
    results["live_drag"] = live_drag.run(dqik, output_dir)
    results["mocap_cleanup"] = mocap_cleanup.run(dqik, output_dir)
    results["fullbody"] = fullbody.run(dqik, output_dir)
    results["total_wall_time_s"] = round(time.perf_counter() - started, 2)
    with open(os.path.join(output_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
    print_summary(results, output_dir)


def print_summary(results, output_dir):
    print(f"DQ IK demo: {results['rig']}, Blender {results['blender']}, seed {results['seed']}")
    for line in results["preset_report"]:
        print(f"  preset: {line}")
    print("  tasks: " + ", ".join(f"{b} (priority {t['priority']})"
                                  for b, t in results["tasks"].items()))
    print(f"  {'scenario':<18}{'feet mm':>16}{'hands mm':>22}{'iter':>6}  {'converged':<10}"
          f"{'limit viol. rad':>16}{'ms':>8}")
    for s in results["scenarios"]:
        feet = " ".join(f"{s['tasks'][b]['error_mm']:.3g}" for b in FEET)
        hands = " ".join(f"{s['tasks'][b]['error_mm']:.3g}" for b in HANDS)
        print(f"  {s['scenario']:<18}{feet:>16}{hands:>22}{s['iterations']!s:>6}  "
              f"{s['converged']!s:<10}{s['max_limit_violation_rad']:>16.2g}"
              f"{s['solve_wall_time_ms']:>8.1f}")
    print("  (errors: feet L R, hands L R; wall time of bpy.ops.dqik.solve())")
    reachable = [s for s in results["scenarios"] if s["scenario"].startswith("reachable")]
    worst = max(t["error_mm"] for s in reachable for t in s["tasks"].values())
    print(f"  reachable: {sum(bool(s['converged']) for s in reachable)}/{len(reachable)} converged, "
          f"worst task error {worst:.3g} mm, worst limit violation "
          f"{max(s['max_limit_violation_rad'] for s in reachable):.2g} rad")
    for s in results["scenarios"]:
        if not s["scenario"].startswith("reachable"):
            feet = max(s["tasks"][b]["error_mm"] for b in FEET)
            print(f"  {s['scenario']}: feet (priority 1) within {feet:.3g} mm; "
                  + ", ".join(f"{b} {s['tasks'][b]['error_mm']:.0f} mm" for b in HANDS)
                  + " (priority 2)")
    drawn = results["overlay_vertices"]
    body = results["body"]
    print(f"  body: {body['vertices']} vertices, {body['vertex_groups']} vertex groups (each vertex "
          "to its nearest bone); capsule radii from its skin (mm): "
          + ", ".join(f"{name} {radius:g}" for name, radius in body["capsule_radii_mm"].items()))
    print(f"  overlay (wall scene, {', '.join(SELECTED)} selected): {sum(drawn.values())} "
          "vertices, " + ", ".join(f"{style} {count}" for style, count in drawn.items()))
    for line in [*production_rig.summary_lines(results["production_rig"]),
                 *live_drag.summary_lines(results["live_drag"]),
                 *mocap_cleanup.summary_lines(results["mocap_cleanup"]),
                 *fullbody.summary_lines(results["fullbody"])]:
        print(f"  {line}")
    files = [*results["files"].values(), *results["production_rig"]["files"].values(),
             *results["live_drag"]["files"].values(), results["mocap_cleanup"]["picture"],
             results["fullbody"]["crouch"]["image"],
             *(reach["image"] for reach in results["fullbody"]["reach"])]
    print(f"  wrote {', '.join(sorted(files))} and results.json "
          f"to {output_dir} in {results['total_wall_time_s']:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "demo_output"))
