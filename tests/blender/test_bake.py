"""``dqik.bake``: what the keys play back, on Blender 4.5 and 5.0, through the real operator and
its frame loop (``bridge/baking.FrameBake``)."""

import bpy
import numpy as np
import pytest

import rigs
import solve_problems as sp

FRAMES = (1, 120)


def _animated_targets(obj, frames=FRAMES, amplitude=0.06):
    """Hand and foot targets keyed along smooth loops around points 12 cm from the rest tails
    towards the chain's root (bent limbs: reachable): feet at priority 1, hands at 2."""
    empties = sp.add_targets(obj, sp.EFFECTORS)
    for name in sp.EFFECTORS:
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
    first, last = frames
    for k, (name, empty) in enumerate(empties.items()):
        root = np.array(obj.matrix_world @ obj.pose.bones[name].parent.parent.head)
        rest = sp.world_tail(obj, name)
        rest += 0.12 * (root - rest) / np.linalg.norm(root - rest)
        for frame in np.linspace(first, last, 7):
            phase = 2 * np.pi * (frame - first) / (last - first) + k
            empty.location = rest + amplitude * np.array(
                [np.sin(phase), 0.5 * np.cos(phase), 0.7 * np.sin(2 * phase)])
            empty.keyframe_insert("location", frame=frame)
    bpy.context.view_layer.objects.active = obj
    return empties


def _fcurves(obj):
    data = obj.animation_data
    for layer in data.action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(data.action_slot)
            if bag is not None:
                yield from bag.fcurves


def _quaternion_keys(obj, name):
    """(K,4) keys of a bone's rotation_quaternion curves."""
    path = obj.pose.bones[name].path_from_id("rotation_quaternion")
    curves = sorted((fc for fc in _fcurves(obj) if fc.data_path == path),
                    key=lambda fc: fc.array_index)
    assert len(curves) == 4
    out = []
    for fc in curves:
        co = np.empty(2 * len(fc.keyframe_points))
        fc.keyframe_points.foreach_get("co", co)
        out.append(co[1::2])
    return np.array(out).T


def _baker(dqik, obj, **options):
    baking = dqik.bridge.baking
    return baking.FrameBake(obj, bpy.context.scene,
                            baking.BakeOptions(*FRAMES, **options))


def _solved(baker):
    """(F, k, 4) the rotations the bake solved for its solved bones, and their names."""
    names = [baker.obj.pose.bones[row].name for row in baker.solved_rows.tolist()]
    return np.stack(baker.recorded)[:, baker.solved_in_sub], names


def _played(obj, names, frames):
    """(F, k, 4) the bones' rotations Blender evaluates at each frame (in any rotation mode), and the effectors' errors
    (F, 4) against their targets."""
    scene = bpy.context.scene
    rotations, errors = [], []
    empties = {name: obj.pose.bones[name].dqik.target for name in sp.EFFECTORS}
    for frame in frames:
        scene.frame_set(int(frame))
        rotations.append([np.array(obj.pose.bones[name].matrix_basis.to_quaternion())
                          for name in names])
        errors.append(sp.effector_errors(obj, empties))
    return np.array(rotations), np.array(errors)


def _same_rotations(a, b):
    """Largest |1 - |<a, b>|| style distance: the norm of a - b up to sign, per rotation."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1)).max()


def test_baked_keys_play_the_solved_pose_with_the_tasks_off(clean_scene, dqik):
    """120 frames of animated targets: with the tasks off, every frame's keys give the solved
    rotations (≤ 1e-5) and meet the targets (≤ 0.1 mm); quaternion keys never flip sign, and no
    bone turns more between two frames than the targets' motion explains."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _animated_targets(obj)
    baker = _baker(dqik, obj)
    report = baker.finish()
    assert report.frames == 120 and report.worst_error <= 1e-4
    solved, names = _solved(baker)
    assert not any(pb.dqik.use_target for pb in obj.pose.bones)
    played, errors = _played(obj, names, baker.frames)
    assert _same_rotations(played, solved) <= 1e-5
    assert errors.max() <= 1e-4
    for name in names:
        if obj.pose.bones[name].rotation_mode != 'QUATERNION':
            continue
        keys = _quaternion_keys(obj, name)
        assert len(keys) == 120
        dots = np.einsum("ki,ki->k", keys[1:], keys[:-1])
        assert dots.min() >= 0.0, name
        # the targets move at most about 2π·6 cm / 120 frames ≈ 6 mm a frame: a limb bone of
        # 0.2–0.5 m turns by a few hundredths of a radian a frame
        assert np.degrees(2 * np.arccos(np.clip(dots, -1, 1))).max() <= 5.0, name


def test_bake_equals_playback_with_solve_on_frame_change(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _animated_targets(obj, frames=(1, 30))
    start = dqik.bridge.live_posing.PoseSnapshot(obj)
    scene = bpy.context.scene
    obj.dqik.use_solve_on_frame_change = True
    names = [pb.name for pb in obj.pose.bones]
    shown = []
    for frame in range(1, 31):
        scene.frame_set(frame)
        shown.append([np.array(obj.pose.bones[n].matrix_basis.to_quaternion()) for n in names])
    obj.dqik.use_solve_on_frame_change = False
    start.restore(obj)
    bpy.context.view_layer.update()
    bpy.ops.dqik.bake(frame_start=1, frame_end=30)
    played, _ = _played(obj, names, range(1, 31))
    assert _same_rotations(played, np.array(shown)) <= 1e-5
