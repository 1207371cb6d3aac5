"""``dqik.bake``'s Clean Up: keys dropped while every target stays within the tolerance, and the
keys that hold a limb out of a passing collider kept."""

import bakes
import bpy
import numpy as np
import rigs
import solve_problems as sp


def _held_then_moved_targets(obj):
    """The feet and hands held still from frame 1 to 40, then moving linearly 3 cm until 120
    (linear keys), from points 12 cm inside the rest tails."""
    empties = sp.add_targets(obj, sp.EFFECTORS)
    preferences = bpy.context.preferences.edit
    interpolation = preferences.keyframe_new_interpolation_type
    preferences.keyframe_new_interpolation_type = 'LINEAR'
    for k, (name, empty) in enumerate(empties.items()):
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
        root = np.array(obj.matrix_world @ obj.pose.bones[name].parent.parent.head)
        rest = sp.world_tail(obj, name)
        rest += 0.12 * (root - rest) / np.linalg.norm(root - rest)
        for frame, offset in ((1, 0.0), (40, 0.0), (120, 0.03)):
            empty.location = rest + offset * np.array([np.cos(k), np.sin(k), 0.5])
            empty.keyframe_insert("location", frame=frame)
    preferences.keyframe_new_interpolation_type = interpolation
    bpy.context.view_layer.objects.active = obj
    return empties


def test_cleanup_drops_keys_and_keeps_every_target_within_its_tolerance(clean_scene, dqik):
    """Cleanup with a 0.1 mm tolerance on bones in quaternion, Euler and axis-angle modes: most
    keys go (the targets hold, then move steadily), and on every frame the keys play back each
    target within 0.1 mm."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    bakes.random_rotation_modes(obj, sp.chain_bones(obj, sp.EFFECTORS), 4)
    _held_then_moved_targets(obj)
    baker = bakes.baker(dqik, obj, cleanup_tolerance=1e-4)
    report = baker.finish()
    assert report.worst_error <= 1e-4
    every_frame = 120 * sum(
        4 if obj.pose.bones[name].rotation_mode in ('QUATERNION', 'AXIS_ANGLE') else 3
        for name in report.bones)
    assert report.keys < 0.25 * every_frame
    _, errors = bakes.played(obj, [], range(1, 121))
    assert errors.max() <= 1e-4


def test_cleanup_keeps_the_keys_that_hold_the_arm_out_of_a_passing_collider(clean_scene, dqik):
    """The hand holds still on its target while a box sweeps through where the forearm was:
    every frame's solve swings the elbow out of its way, and the hand never moves. Cleanup
    with a 5 mm tolerance may drop every key the task does not need, but not those that keep
    the arm out of the box: on every frame the keys play the arm clear of it (within the
    tolerance of the solved clearance)."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    arm = ["hand.L", "forearm.L", "upper_arm.L"]
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    empties["hand.L"].location = sp.world_tail(obj, "hand.L")
    elbow = np.array(obj.matrix_world @ obj.pose.bones["forearm.L"].center)
    passing = sp.box("passing", (-0.04, -0.04, -0.04), (0.04, 0.04, 0.04), colliders)
    for frame, side in ((1, -0.3), (60, 0.3)):
        passing.location = elbow + np.array([0.0, side, 0.0])
        passing.keyframe_insert("location", frame=frame)
    clean_scene.frame_start, clean_scene.frame_end = 1, 60
    bpy.context.view_layer.objects.active = obj
    solved = []
    for frame in range(1, 61):
        clean_scene.frame_set(frame)
        assert bpy.ops.dqik.solve() == {'FINISHED'}
        bpy.context.view_layer.update()
        solved.append(sp.deepest_clearance(obj, dqik, arm))
    sp.clear_pose(obj)
    plain = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 60))
    for _ in range(5):
        plain.step()
    assert plain.states == []    # without Clean Up no frame's collider is kept in memory
    plain.cancel()
    tolerance = 5e-3
    report = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(
        1, 60, cleanup_tolerance=tolerance)).finish()
    assert report.keys < 0.25 * 60 * 4 * len(report.bones)     # most keys were dropped
    played = []
    for frame in range(1, 61):
        clean_scene.frame_set(frame)
        played.append(sp.deepest_clearance(obj, dqik, arm))
    assert min(solved) >= -1e-3
    assert min(played) >= min(solved) - tolerance, (min(played), min(solved))
