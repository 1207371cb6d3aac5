"""``dqik.bake`` ended before its last frame: cancelled, stopped by a target deleted mid-bake, or
by the extension being disabled; each puts back the frame and the pose and keys nothing."""

import bakes
import bpy
import pytest
import rigs
import solve_problems as sp


def test_cancel_puts_back_the_frame_and_every_channel_and_keys_nothing(clean_scene, dqik):
    obj = rigs.metarig("basic")
    old = bakes.key_old_animation(obj)
    bakes.animated_targets(obj)
    scene = bpy.context.scene
    scene.frame_set(7)
    obj.pose.bones["forearm.R"].rotation_quaternion = (0.9, 0.1, 0.3, 0.0)   # not keyed
    before = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    actions = set(bpy.data.actions)
    baker = bakes.baker(dqik, obj)
    for _ in range(10):
        baker.step()
    baker.cancel()
    after = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    for attr, values in before.channels.items():
        assert values.tobytes() == after.channels[attr].tobytes(), attr
    assert scene.frame_current == 7 and set(bpy.data.actions) == actions
    assert obj.animation_data.action is old and len(obj.animation_data.nla_tracks) == 0
    assert not dqik.dq_ik_addon.blender.solving.sessions.session_for(obj).baking
    assert all(pb.dqik.use_target for pb in obj.pose.bones if pb.name in sp.EFFECTORS)


def test_a_target_deleted_mid_bake_stops_it_with_everything_back(clean_scene, dqik):
    obj = rigs.metarig("basic")
    empties = bakes.animated_targets(obj)
    before = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    baker = bakes.baker(dqik, obj)
    for _ in range(5):
        baker.step()
    bpy.data.objects.remove(empties["hand.R"])
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError, match="frame 6.*hand.R"):
        baker.step()
    after = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    assert all(before.channels[a].tobytes() == after.channels[a].tobytes()
               for a in before.channels)
    assert obj.animation_data is None and bpy.context.scene.frame_current == 1


def test_disabling_the_extension_mid_bake_puts_back_the_frame_and_the_pose(clean_scene, dqik):
    import addon_utils
    from extension_cli import MODULE
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj, frames=(1, 20))
    clean_scene.frame_set(3)
    start = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    baker = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 20))
    ended = []
    baker.on_end = lambda: ended.append(True)       # the operator removes its timer here
    for _ in range(5):
        baker.step()
    assert start.changed_bones(obj) and clean_scene.frame_current == 5
    addon_utils.disable(MODULE, default_set=True)
    try:
        assert ended == [True] and clean_scene.frame_current == 3
        assert start.changed_bones(obj) == []
    finally:
        addon_utils.enable(MODULE, default_set=True)
