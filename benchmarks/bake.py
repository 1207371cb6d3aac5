"""Baking IK to keyframes: ``dqik.bake`` against Blender's own bake of its IK constraints
(``bpy.ops.nla.bake`` with visual keying), on the same animated targets, in one run.

Scene: the Rigify basic human (29 bones) with DQ IK's HUMANOID limits and the four targets of
``collision.py``'s scene (feet at priority 1, hands at 2), with or without its 20,000-triangle
UV sphere as collider (in the armature's collider collection for DQ IK; in the scene, unused,
for Blender). The targets are keyed linearly every 10 frames over ``FRAMES`` frames along
``solve.make_problems``' warm path (Blender's FK of smoothly interpolated in-limit poses of the
chains: reachable), so they move at most 5 mm a frame.

- ``DQ IK``: ``bpy.ops.dqik.bake(frame_start=1, frame_end=FRAMES)`` with its defaults (every
  frame, the task chains, a new action, the tasks switched off afterwards); ``+ cleanup``: with
  ``cleanup_tolerance`` 0.1 mm.
- ``Blender``: an IK constraint per effector (Standard solver, default settings, chain to the
  root like the DQ IK tasks), pose at rest, then ``bpy.ops.nla.bake(frame_start=1,
  frame_end=FRAMES, only_selected=False, visual_keying=True, clear_constraints=True,
  bake_types={'POSE'})``.

Frames per second: frames baked over the operator's wall time. Playback error: after each bake,
every frame is set again (nothing solves: DQ IK's tasks are off, Blender's constraints cleared)
and each effector's evaluated tail is measured against its target.

Run from the repository root: ``.venv/bin/python benchmarks/bake.py [--quick]`` (also with
``.venv-lts/bin/python``). Seeds are fixed; timings vary with machine load.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collision  # noqa: E402
import common  # noqa: E402
import solve  # noqa: E402
from common import np  # noqa: E402

FRAMES = {False: 1000, True: 200}
KEY_EVERY = 10
CLEANUP = 1e-4
GOALS = ("DQ IK with collisions ≥ 150 frames/s; without them within 2× of Blender's bake time; "
         "playback error ≤ 0.1 mm where Blender's is larger")


def animated_scene(dqik, frames, seed):
    """``collision.scene``'s basic human, its four targets keyed along a reachable path."""
    import bpy
    import solve_problems as sp
    with common.quiet():
        obj, _, _, collection, triangles = collision.scene("basic", dqik)
    empties = {name: obj.pose.bones[name].dqik.target for name in sp.EFFECTORS}
    names = sorted({n for e in sp.EFFECTORS for n in solve.chain_of(obj, e, 0)})
    keys = frames // KEY_EVERY + 1
    path, segments = [], max(2, keys // 8)
    while len(path) < keys:
        with common.quiet():
            path = solve.make_problems(obj, dqik, names, sp.EFFECTORS,
                                       np.random.default_rng(seed), 0, segments)[1]
        segments += max(1, segments // 2)
    preferences = bpy.context.preferences.edit
    preferences.keyframe_new_interpolation_type = 'LINEAR'
    for k, targets in enumerate(path[:keys]):      # world points (``solve.targets_of``)
        frame = min(1 + k * KEY_EVERY, frames)
        for empty, target in zip(empties.values(), targets):
            empty.location = target
            empty.keyframe_insert("location", frame=frame)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    sp.clear_pose(obj)
    scene.frame_set(1)
    return obj, empties, collection, triangles


def playback_errors(obj, empties, frames):
    """(frames × effectors) distance of each effector's evaluated tail to its target."""
    import bpy
    import solve_problems as sp
    scene, out = bpy.context.scene, []
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
        out.append([np.linalg.norm(sp.world_tail(obj, name) -
                                   np.array(empty.matrix_world.translation))
                    for name, empty in empties.items()])
    return np.array(out)


def bake_dq_ik(dqik, frames, seed, collider, cleanup=0.0):
    import bpy
    obj, empties, collection, triangles = animated_scene(dqik, frames, seed)
    obj.dqik.colliders = collection if collider else None
    begun = time.perf_counter()
    with common.quiet():
        result = bpy.ops.dqik.bake(frame_start=1, frame_end=frames, cleanup_tolerance=cleanup)
    seconds = time.perf_counter() - begun
    assert result == {'FINISHED'}
    keys = sum(len(fc.keyframe_points) for fc in _fcurves(dqik, obj))
    return seconds, keys, playback_errors(obj, empties, frames), triangles


def bake_blender(dqik, frames, seed):
    import bpy
    obj, empties, _, _ = animated_scene(dqik, frames, seed)
    for name, empty in empties.items():
        obj.pose.bones[name].dqik.use_target = False
        constraint = obj.pose.bones[name].constraints.new('IK')
        constraint.target, constraint.chain_count = empty, 0
    begun = time.perf_counter()
    with common.quiet():
        result = bpy.ops.nla.bake(frame_start=1, frame_end=frames, only_selected=False,
                                  visual_keying=True, clear_constraints=True,
                                  bake_types={'POSE'})
    seconds = time.perf_counter() - begun
    assert result == {'FINISHED'}
    keys = sum(len(fc.keyframe_points) for fc in _fcurves(dqik, obj))
    return seconds, keys, playback_errors(obj, empties, frames)


def _fcurves(dqik, obj):
    data = obj.animation_data
    return dqik.dq_ik_addon.blender.keys.action_slots.slot_fcurves(data.action, data.action_slot)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{FRAMES[True]} frames")
    args = parser.parse_args()
    dqik = common.install()
    frames, seed = FRAMES[args.quick], 18
    started = time.perf_counter()
    rows, measured = [], {}
    runs = (("Blender nla.bake, visual keying of IK constraints", lambda: bake_blender(
                dqik, frames, seed) + (None,)),
            ("DQ IK bake", lambda: bake_dq_ik(dqik, frames, seed, False)),
            ("DQ IK bake, 20k-triangle collider", lambda: bake_dq_ik(dqik, frames, seed, True)),
            (f"DQ IK bake, collider, cleanup {CLEANUP * 1e3:g} mm",
             lambda: bake_dq_ik(dqik, frames, seed, True, CLEANUP)))
    for label, run in runs:
        seconds, keys, errors, _ = run()
        mm = errors * 1e3
        measured[label] = (seconds, mm)
        rows.append([label, f"{seconds:.2f}", f"{frames / seconds:.0f}", f"{keys}",
                     f"{np.median(mm):.3g}", f"{np.percentile(mm, 99):.3g}", f"{mm.max():.3g}"])
    print(f"\n## Bake: {frames} frames, basic human (29 bones), 4 animated targets"
          f"{' (--quick)' if args.quick else ''}\n")
    print(common.versions() + f"; load average {os.getloadavg()[0]:.2f}\n")
    print(common.markdown(["bake", "s", "frames/s", "keys", "playback error mm median",
                           "p99", "max"], rows))
    blender, plain, with_collider = (measured[label] for label, _ in runs[:3])
    ratio = plain[0] / blender[0]
    collider_rate = frames / with_collider[0]
    print(f"\nRun time {time.perf_counter() - started:.0f} s. Goals: {GOALS}.")
    print(f"With collisions {collider_rate:.0f} frames/s → "
          f"{'met' if collider_rate >= 150 else 'NOT met'}; without, {ratio:.2f}× Blender's time "
          f"→ {'met' if ratio <= 2 else 'NOT met'}; playback error max {plain[1].max():.3g} mm "
          f"(Blender {blender[1].max():.3g} mm) → "
          f"{'met' if plain[1].max() <= 0.1 or blender[1].max() <= plain[1].max() else 'NOT met'}")


if __name__ == "__main__":
    main()
