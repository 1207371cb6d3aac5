"""The animated start's base (``solving/animated_start.py``): bones nothing animates start every
frame from the value the user set, bone by bone, whatever happened in between (a cancelled bake,
an edit of another bone, a task added, a stale key on a channel the bone's mode does not use);
and a target that is a bone of the same armature the solve does not move stays a target."""

import bakes
import bpy
import numpy as np
import rigs

ARMS = ["upper_arm.L", "forearm.L", "hand.L", "upper_arm.R", "forearm.R", "hand.R"]


def _quats(obj, names):
    return np.array([obj.pose.bones[name].rotation_quaternion[:] for name in names])


def _rig():
    """The basic metarig, both hands on animated targets (chain length 3), the feet off, Solve
    on Frame Change on."""
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj)
    for pose_bone in obj.pose.bones:
        if pose_bone.dqik.use_target:
            pose_bone.dqik.chain_count = 3
            pose_bone.dqik.use_target = pose_bone.name in ("hand.L", "hand.R")
    obj.dqik.use_solve_on_frame_change = True
    return obj


def _frame_40_after(change, names=ARMS):
    """The arms at frame 40, then again after ``change()`` (made on frame 7)."""
    scene = bpy.context.scene
    scene.frame_set(40)
    before = _quats(bpy.context.active_object, names)
    scene.frame_set(7)
    change()
    scene.frame_set(40)
    return before, _quats(bpy.context.active_object, names)


def test_a_cancelled_bake_leaves_every_frame_as_it_was(clean_scene, dqik):
    obj = _rig()

    def cancelled_bake():
        baker = bakes.baker(dqik, obj)
        for _ in range(10):
            baker.step()
        baker.cancel()
    before, after = _frame_40_after(cancelled_bake)
    assert np.abs(before - after).max() < 1e-5


def _left_arm_base(dqik, obj):
    """The animated start's base of the left arm's bones (the metarig's rest: identity)."""
    session = dqik.api.session_for(obj)
    return session.animated.channels["rotation_quaternion"].values[
        [obj.pose.bones.find(name) for name in ARMS[:3]]]


def test_an_edit_of_one_bone_keeps_the_others_base(clean_scene, dqik):
    obj = _rig()

    def edit_right_arm():
        obj.pose.bones["upper_arm.R"].rotation_quaternion = (0.9, 0.3, 0.1, 0.2)
    _frame_40_after(edit_right_arm)
    assert np.abs(_left_arm_base(dqik, obj) - [1.0, 0.0, 0.0, 0.0]).max() < 1e-6
    right = dqik.api.session_for(obj).animated.channels["rotation_quaternion"].values[
        obj.pose.bones.find("upper_arm.R")]
    assert np.abs(right - [0.9, 0.3, 0.1, 0.2]).max() < 1e-6      # the edit is the new base


def test_a_task_added_keeps_the_arms_base(clean_scene, dqik):
    obj = _rig()

    def add_foot():
        obj.pose.bones["foot.L"].dqik.use_target = True
    _frame_40_after(add_foot)
    assert np.abs(_left_arm_base(dqik, obj) - [1.0, 0.0, 0.0, 0.0]).max() < 1e-6


def test_a_stale_key_on_an_unused_channel_does_not_make_a_bone_animated(clean_scene, dqik):
    obj = _rig()
    upper = obj.pose.bones["upper_arm.L"]
    upper.rotation_mode = 'XYZ'
    for frame, w in ((1, 1.0), (120, 0.8)):
        upper.rotation_quaternion = (w, (1 - w * w) ** 0.5, 0.0, 0.0)
        upper.keyframe_insert("rotation_quaternion", frame=frame)
    upper.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    scene = bpy.context.scene

    def frame_40_from(frame):
        scene.frame_set(frame)
        scene.frame_set(40)
        return _quats(obj, ARMS[1:3]), np.array(upper.rotation_euler)
    (a, euler_a), (b, euler_b) = frame_40_from(1), frame_40_from(80)
    assert np.abs(a - b).max() < 1e-5 and np.abs(euler_a - euler_b).max() < 1e-5


def test_a_bone_of_the_armature_the_solve_does_not_move_is_a_target(clean_scene, dqik):
    """hand.L aims at foot.R (chain length 3: the arm does not move the leg): an aim task, met,
    not a loop; with Position Axes X, a partial position (onto the plane through the foot normal
    to its X axis)."""
    obj = rigs.metarig("basic")
    settings = obj.pose.bones["hand.L"].dqik
    settings.use_target, settings.target, settings.subtarget = True, obj, "foot.R"
    settings.chain_count, settings.use_position, settings.use_aim = 3, False, True
    snapshot = dqik.api.session_for(obj).tick()
    assert snapshot.status == 'MET' and not snapshot.warnings
    settings.use_aim, settings.use_position, settings.position_axes = False, True, {'X'}
    snapshot = dqik.api.session_for(obj).tick()
    assert [task.status for task in snapshot.tasks] == ['MET'] and not snapshot.warnings


def test_a_channel_keyed_on_some_components_starts_the_others_from_their_base(clean_scene,
                                                                             dqik):
    """forearm.L in XYZ Euler with only its X keyed (a bend animated, its twist and swing not):
    the solve writes all three, and the next frame starts its Y and Z from the value the user
    set, not from the last frame's solve, so frame 40 is one pose however it is reached; an
    edit of the unkeyed Y becomes its base."""
    obj = _rig()
    forearm = obj.pose.bones["forearm.L"]
    forearm.rotation_mode = 'XYZ'
    for frame, bend in ((1, 0.2), (60, 0.9), (120, 0.3)):
        forearm.rotation_euler = (bend, 0.0, 0.0)
        forearm.keyframe_insert("rotation_euler", index=0, frame=frame)
    scene = bpy.context.scene

    def frame_40_from(frame):
        scene.frame_set(frame)
        scene.frame_set(40)
        return _quats(obj, ARMS[:1] + ARMS[2:3]), np.array(forearm.rotation_euler)
    (a, euler_a), (b, euler_b) = frame_40_from(1), frame_40_from(100)
    assert np.abs(euler_a[1:]).max() > 1e-3       # the solve turned the unkeyed components
    assert np.abs(a - b).max() < 1e-5 and np.abs(euler_a - euler_b).max() < 1e-5
    session = dqik.api.session_for(obj)
    base = session.animated.channels["rotation_euler"].values[obj.pose.bones.find("forearm.L")]
    assert np.abs(base[1:]).max() < 1e-6       # Y and Z: the value the user set (rest)
    scene.frame_set(7)
    forearm.rotation_euler[1] = 0.25              # the user sets the unkeyed Y
    shown = np.array(forearm.rotation_euler)
    scene.frame_set(40)
    base = session.animated.channels["rotation_euler"].values[obj.pose.bones.find("forearm.L")]
    assert np.abs(base[1:] - shown[1:]).max() < 1e-6    # Y as set, Z as it stood then


def test_one_component_set_on_a_bone_without_keys_makes_the_rotation_shown_its_base(
        clean_scene, dqik):
    """forearm.L in XYZ Euler, nothing keyed on it, solved on frame 7: the user types a new Z.
    The next frames start from the rotation shown after that edit, all three components, not
    from the new Z on the old base's X and Y (a rotation the user never saw, 48° off)."""
    obj = _rig()
    forearm = obj.pose.bones["forearm.L"]
    forearm.rotation_mode = 'XYZ'
    scene = bpy.context.scene
    scene.frame_set(40)
    scene.frame_set(7)
    forearm.rotation_euler[2] = 0.4
    shown = np.array(forearm.rotation_euler)
    assert np.abs(shown[:2]).max() > 1e-3        # X and Y as the last solve left them
    scene.frame_set(40)
    base = dqik.api.session_for(obj).animated.channels["rotation_euler"].values[
        obj.pose.bones.find("forearm.L")]
    assert np.abs(base - shown).max() < 1e-6
