"""``dqik.bake`` and the DQ IK tasks: keyed task settings solved, played and baked as keyed (and
keyed settings of a deleted or renamed bone not stopping a solve), Switch Tasks Off leaving the
tasks it did not bake and switching a baked balance off."""

import bakes
import bpy
import numpy as np
import rigs
import solve_problems as sp


def test_keyed_task_settings_are_solved_played_and_baked_as_keyed(clean_scene, dqik):
    """The left hand's position task keyed on until frame 5 and off from frame 6 (its rotation
    task stays): Solve, Solve on Frame Change and a bake all follow the keys, so from frame 6
    the hand is no longer pulled to its moving target."""
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj, frames=(1, 12))
    settings = obj.pose.bones["hand.L"].dqik
    settings.use_rotation = True
    path = 'pose.bones["hand.L"].dqik.use_position'
    for frame, on in ((5, True), (6, False)):
        settings.use_position = on
        obj.keyframe_insert(path, frame=frame)
    target = settings.target
    scene = bpy.context.scene

    def hand_error():
        return float(np.linalg.norm(sp.world_tail(obj, "hand.L")
                                    - np.array(target.matrix_world.translation)))
    scene.frame_set(10)
    assert not settings.use_position
    bpy.context.view_layer.objects.active = obj
    bpy.ops.dqik.solve()
    report = dqik.api.session_for(obj).last_result
    assert report.tasks[[t.name for t in report.tasks].index("hand.L")].position_error is None
    scene.frame_set(3)
    obj.dqik.use_solve_on_frame_change = True
    errors = {}
    for frame in range(3, 11):
        scene.frame_set(frame)
        bpy.context.view_layer.update()
        errors[frame] = hand_error()
    obj.dqik.use_solve_on_frame_change = False
    assert max(errors[f] for f in range(3, 6)) <= 1e-4 and min(errors[f] for f in (8, 10)) > 1e-3
    report = dqik.api.FrameBake(obj, scene, dqik.api.BakeOptions(1, 12)).finish()
    assert report.frames == 12
    scene.frame_set(4)
    assert hand_error() <= 1e-4


def test_switch_tasks_off_leaves_the_tasks_it_did_not_bake(clean_scene, dqik):
    """A task with no target is left out of the bake (with a warning): Switch Tasks Off switches
    the baked tasks off and leaves that one on."""
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj, frames=(1, 5))
    waiting = obj.pose.bones["forearm.R"].dqik
    waiting.use_target = True
    report = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 5)).finish()
    assert any("forearm.R" in warning for warning in report.warnings)
    assert waiting.use_target
    assert not any(obj.pose.bones[name].dqik.use_target for name in sp.EFFECTORS)


def test_switch_tasks_off_switches_a_baked_balance_off_too(clean_scene, dqik):
    """Balance is a task of the bake (it moves the bones the others move): once they are off,
    it is switched off as well, where it stayed on and had no task to move bones with."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    sp.plant_feet(obj, ["foot.L", "foot.R"])
    hand = sp.add_targets(obj, ["hand.L"], priority=3)["hand.L"]
    for frame, forward in ((1, 0.2), (5, 0.6)):
        hand.location = sp.world_tail(obj, "hand.L") + np.array([0.0, -forward, -0.2])
        hand.keyframe_insert("location", frame=frame)
    obj.dqik.use_balance = True
    dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 5)).finish()
    assert not obj.dqik.use_balance
    assert not any(pb.dqik.use_target for pb in obj.pose.bones)


def test_a_keyed_setting_of_a_deleted_or_renamed_bone_does_not_stop_solving(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj, frames=(1, 5))
    for bone in ("breast.L", "breast.R"):
        obj.keyframe_insert(f'pose.bones["{bone}"].dqik.stiffness', frame=1)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    obj.pose.bones["breast.R"].name = "chest_R"
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.ops.object.mode_set(mode='EDIT')
    obj.data.edit_bones.remove(obj.data.edit_bones["breast.L"])
    bpy.ops.object.mode_set(mode='POSE')
    assert bpy.ops.dqik.solve() == {'FINISHED'}
