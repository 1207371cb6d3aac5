"""IK over motion capture: Solve on Frame Change and the bake on a clip, against Blender's own IK
constraints baked by ``nla.bake(visual_keying=True)``, on the same set-up, in one run.

The clip: ``tests/mocap_clips.py``'s procedural walk (Rigify basic metarig, 29 bones, 30 fps,
written and read back with Blender's BVH exporter and importer: Euler rotation modes, location
keys), 96 frames. Targets from Animation keys a target on every frame at each ankle and wrist;
then the animator's edits: the feet planted (``dqik.plant``), the left hand raised 12 cm and the
left foot lowered 15 cm, out of reach, over the middle of the clip. Feet priority 1, hands 2,
two-bone chains (``chain_count`` 2): the limb chains of the issue.

- ``DQ IK``: Solve on Frame Change, every frame set in order (``scene.frame_set``); ms per frame
  change (median) and the slowest frame. ``+ Soft Reach``: the same with Soft Reach 5 %.
- ``Blender IK``: the same clip copied with an IK constraint per effector on the same Empties
  (Standard solver, chain length 2, no pole), DQ IK off; ms per frame change.
- ``frame set alone``: the clip with neither, for what evaluating the animation costs.
- ``pose write alone``: a handler that writes the clip's rotation channels back unchanged and
  tags it, as DQ IK writes a solved pose, and solves nothing (``common.writing_back``): the
  least a solver that writes pose channels from Python adds to a frame change.
- ``HUMANOID preset``: a copy of the clip (same action and targets) with the preset applied:
  the clip's elbows leave the preset's hinge, so its limits move the arms off the animation,
  and the frames where the foot is out of reach converge along the limits; its slowest frame
  counts towards the goal.
- Bake: ``FrameBake.finish()`` (DQ IK's ``dqik.bake`` loop), with a new solver and again after
  a playback of the range (every frame's solve remembered by its exact inputs), against
  ``bpy.ops.nla.bake(visual_keying=True, bake_types={'POSE'})`` of the constrained copy;
  frames per second.
- The 159-bone human metarig with four limb tasks (chain length 3) on targets moving along smooth
  loops: its slowest frame change.

Run from the repository root: ``.venv/bin/python benchmarks/mocap.py``. Goals (the issue): frame
change ≤ 5× Blender's IK constraints on limb chains, slowest frame ≤ 20 ms, bake ≥ 0.5× the speed
of ``nla.bake``.
"""

import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import np  # noqa: E402

FRAMES = 96
GOALS = "frame change ≤ 5× Blender's IK; slowest frame ≤ 20 ms; bake ≥ 0.5× nla.bake's speed"


def edited_clip(folder):
    """The clip with its targets, planted and edited (module docstring)."""
    import bpy
    import mocap_clips as mc
    with common.quiet():
        clip, targets = mc.clip_with_targets(folder, FRAMES)
        mc.select(clip, mc.FEET)
        bpy.ops.dqik.plant()
    frames = range(1, FRAMES + 1)
    mc.shift_keys(targets["forearm.L"], 2, {f: 0.12 * mc.bump(f, 20, 70, 6) for f in frames})
    mc.shift_keys(targets["shin.L"], 2, {f: -0.15 * mc.bump(f, 30, 80, 12) for f in frames})
    return clip, targets


def blender_copy(clip, targets):
    """A copy of the clip (its action shared) with Blender's IK constraints on the targets."""
    import bpy
    rig = clip.copy()
    rig.data = clip.data.copy()
    bpy.context.scene.collection.objects.link(rig)
    for name, target in targets.items():
        rig.pose.bones[name].dqik.use_target = False
        constraint = rig.pose.bones[name].constraints.new('IK')
        constraint.target, constraint.chain_count = target, 2
    return rig


def preset_copy(clip):
    """A copy of the clip (its action and targets shared) with the HUMANOID preset applied and
    the limb chains kept (``chain_count`` 2), Solve on Frame Change and Soft Reach off."""
    import bpy
    import mocap_clips as mc
    rig = clip.copy()
    rig.data = clip.data.copy()
    bpy.context.scene.collection.objects.link(rig)
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.context.view_layer.objects.active = rig
    with common.quiet():
        bpy.ops.dqik.apply_preset()
    for name in mc.FEET + mc.HANDS:
        rig.pose.bones[name].dqik.chain_count = 2
    rig.dqik.use_solve_on_frame_change, rig.dqik.soft_reach = False, 0.0
    return rig


def mute_constraints(rig, mute):
    """Mute (or unmute) Blender's IK constraints of ``rig``."""
    for pose_bone in rig.pose.bones:
        for constraint in pose_bone.constraints:
            constraint.mute = mute


def frame_changes(frames):
    """(ms of each ``frame_set``)."""
    import bpy
    scene, times = bpy.context.scene, []
    for frame in frames:
        started = time.perf_counter()
        scene.frame_set(frame)
        times.append((time.perf_counter() - started) * 1e3)
    return np.array(times)


def timed_frames(clip, rig, dq_ik, blender, soft=0.0):
    """Frame-change times with DQ IK on ``clip`` and/or Blender's IK on ``rig``."""
    clip.dqik.use_solve_on_frame_change, clip.dqik.soft_reach = dq_ik, soft
    mute_constraints(rig, not blender)
    frame_changes(range(1, 6))                       # warm up
    return frame_changes(range(1, FRAMES + 1))


def bakes(dqik, clip, rig):
    """``(DQ IK cold frames/s, DQ IK after playback frames/s, nla.bake frames/s)``: DQ IK's bake
    with a new solver (nothing solved before), and again right after a playback of the range
    (each frame's solve remembered by its exact inputs, ``solve_memory``)."""
    import bpy
    import mocap_clips as mc
    mute_constraints(rig, True)
    scene, speeds = bpy.context.scene, []
    for played in (False, True):
        session = dqik.api.session_for(clip)
        session.invalidate()
        clip.dqik.use_solve_on_frame_change = played
        if played:
            frame_changes(range(1, FRAMES + 1))
        clip.dqik.use_solve_on_frame_change = False
        started = time.perf_counter()
        with common.quiet():
            dqik.api.FrameBake(clip, scene, dqik.api.BakeOptions(
                1, FRAMES, switch_off_tasks=False)).finish()
        speeds.append(FRAMES / (time.perf_counter() - started))
        clip.animation_data.action = None        # the next bake starts from the clip again
    mute_constraints(rig, False)
    bpy.ops.object.mode_set(mode='OBJECT')
    clip.hide_set(True)
    bpy.ops.object.select_all(action='DESELECT')
    rig.select_set(True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode='POSE')
    mc.select(rig, [pb.name for pb in rig.pose.bones])
    started = time.perf_counter()
    with common.quiet():
        bpy.ops.nla.bake(frame_start=1, frame_end=FRAMES, only_selected=False,
                         visual_keying=True, bake_types={'POSE'})
    return (*speeds, FRAMES / (time.perf_counter() - started))


def human_limbs(dqik):
    """The slowest and median frame change (ms) of the 159-bone metarig, four limb tasks on
    targets moving along smooth loops, Solve on Frame Change on."""
    import bakes as bake_scenes
    import bpy
    import rigs
    bpy.ops.wm.read_homefile(use_empty=True)
    with common.quiet():
        obj = rigs.metarig("human")
    bake_scenes.animated_targets(obj, frames=(1, FRAMES))
    for pose_bone in obj.pose.bones:
        if pose_bone.dqik.use_target:
            pose_bone.dqik.chain_count = 3
    obj.dqik.use_solve_on_frame_change = True
    frame_changes(range(1, 6))
    times = frame_changes(range(1, FRAMES + 1))
    return float(times.max()), float(np.median(times))


def main():
    dqik = common.install()
    import bpy
    bpy.ops.wm.read_homefile(use_empty=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        clip, targets = edited_clip(pathlib.Path(folder))
    rig = blender_copy(clip, targets)
    bones = len(clip.pose.bones)
    rows, times = [], {}
    for label, dq_ik, blender, soft in (("frame set alone", False, False, 0.0),
                                        ("Blender IK constraints", False, True, 0.0),
                                        ("DQ IK", True, False, 0.0),
                                        ("DQ IK + Soft Reach 5 %", True, False, 0.05)):
        samples = timed_frames(clip, rig, dq_ik, blender, soft)
        times[label] = samples
        rows.append([label, f"{np.median(samples):.2f}", f"{np.percentile(samples, 90):.2f}",
                     f"{samples.max():.2f}"])
    clip.dqik.use_solve_on_frame_change = False
    with common.writing_back(clip, "rotation_euler"):
        frame_changes(range(1, 6))                   # warm up
        samples = times["write"] = frame_changes(range(1, FRAMES + 1))
    rows.append(["pose write alone (no solve)", f"{np.median(samples):.2f}",
                 f"{np.percentile(samples, 90):.2f}", f"{samples.max():.2f}"])
    limited = preset_copy(clip)
    clip.dqik.use_solve_on_frame_change, limited.dqik.use_solve_on_frame_change = False, True
    mute_constraints(rig, True)
    frame_changes(range(1, 6))
    samples = times["HUMANOID"] = frame_changes(range(1, FRAMES + 1))
    rows.append(["DQ IK, HUMANOID preset (a copy)", f"{np.median(samples):.2f}",
                 f"{np.percentile(samples, 90):.2f}", f"{samples.max():.2f}"])
    bpy.data.objects.remove(limited)
    bpy.context.view_layer.objects.active = clip
    ours, replayed, blenders = bakes(dqik, clip, rig)
    slowest, median = human_limbs(dqik)
    print(common.versions())
    print()
    print(f"Walk clip, {bones} bones, {FRAMES} frames, four limb tasks (edited, "
          "feet planted):")
    print(common.markdown(["frame change", "ms median", "ms p90", "ms slowest"], rows))
    print()
    print(common.markdown(["bake", "frames/s"], [
        ["DQ IK (FrameBake), nothing solved before", f"{ours:.0f}"],
        ["DQ IK (FrameBake), after a playback of the range", f"{replayed:.0f}"],
        ["Blender nla.bake, visual keying", f"{blenders:.0f}"]]))
    print()
    print(f"Human metarig (159 bones), four limb tasks: frame change median {median:.2f} ms, "
          f"slowest {slowest:.2f} ms")
    ratio = np.median(times["DQ IK"]) / np.median(times["Blender IK constraints"])
    worst = max(max(times[label].max() for label in ("DQ IK", "DQ IK + Soft Reach 5 %",
                                                     "HUMANOID")), slowest)
    met = ratio <= 5.0 and worst <= 20.0 and ours >= 0.5 * blenders
    floor = np.median(times["write"]) / np.median(times["Blender IK constraints"])
    print(f"\nA pose write alone, with no solve, costs {floor:.1f}× Blender's IK constraints.")
    print(f"\nRun time {time.perf_counter() - started:.0f} s. Goals: {GOALS} → "
          f"{'met' if met else 'NOT met'} (frame change {ratio:.1f}× Blender's IK, slowest "
          f"{worst:.1f} ms, bake {ours / blenders:.2f}× nla.bake)")


if __name__ == "__main__":
    main()
