"""``dqik.bake`` refusing what it cannot bake before it starts, changing nothing: the operator's
bad input (no target, an empty range; one undo step, and its run without a window), script options
out of their kind, a deleted armature."""

import bakes
import bpy
import pytest
import rigs


def test_the_operator_is_one_undo_step_and_refuses_bad_input_changing_nothing(clean_scene, dqik):
    assert dqik.operators.bake.DQIK_OT_bake.bl_options >= {'REGISTER', 'UNDO'}
    obj = rigs.metarig("basic")
    with pytest.raises(RuntimeError, match="no bone with an enabled DQ IK target"):
        bpy.ops.dqik.bake(frame_start=1, frame_end=10)
    bakes.animated_targets(obj, frames=(1, 10))
    with pytest.raises(RuntimeError, match="empty or reversed"):
        bpy.ops.dqik.bake(frame_start=10, frame_end=3)
    assert obj.animation_data is None
    assert all(not action.get("dqik_bake") for action in bpy.data.actions)
    # invoked without a window (background mode, a script) it runs to the end, the scene's
    # range when none is given
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 2, 9
    assert bpy.ops.dqik.bake('INVOKE_DEFAULT') == {'FINISHED'}
    frames = {k.co[0] for fc in bakes.fcurves(dqik, obj) for k in fc.keyframe_points}
    assert frames == set(range(2, 10))


@pytest.mark.parametrize("options", [dict(frame_start=1.5), dict(step=float("nan")),
                                     dict(cleanup_tolerance=float("nan")),
                                     dict(cleanup_tolerance=-1.0)])
def test_script_bake_options_out_of_their_kind_are_refused_changing_nothing(clean_scene, dqik,
                                                                           options):
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj, frames=(1, 5))
    given = {"frame_start": 1, "frame_end": 5, **options}
    start, end = given.pop("frame_start"), given.pop("frame_end")
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError):
        dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(start, end, **given))
    assert obj.animation_data is None or obj.animation_data.action is None


def test_a_deleted_armature_is_refused_by_name(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.data.objects.remove(obj)
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError, match="deleted"):
        dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 5))
