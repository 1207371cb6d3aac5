"""``dqik.build_chain``: reports what it read; bad input gets a clear message, never a traceback."""

import bpy
import pytest
import rigs
import solve_problems as sp


def test_reports_in_plain_words_what_the_tasks_move(clean_scene, dqik, capfd):
    obj = rigs.metarig("basic")
    target = bpy.data.objects.new("Goal", None)
    clean_scene.collection.objects.link(target)
    hand = obj.pose.bones["hand.L"].dqik
    hand.use_target, hand.target = True, target
    forearm = obj.pose.bones["forearm.L"].dqik
    forearm.use_limits = True
    forearm.swing_z_min = forearm.swing_z_max = 0.0
    forearm.stiffness = 0.0
    obj.pose.bones["spine"].dqik.stiffness = 1.0
    walls = bpy.data.collections.new("Walls")
    clean_scene.collection.children.link(walls)
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    rigs.move_to_collection(cube, walls)
    obj.dqik.colliders = walls
    bpy.context.view_layer.objects.active = obj

    assert bpy.ops.dqik.build_chain() == {'FINISHED'}
    out = capfd.readouterr()
    report = out.out + out.err
    assert "29 bones, 1 tasks (hand.L)" in report
    assert "they can turn 7 bones" in report     # hand to root, less the stiff spine
    assert "1 colliders" in report
    assert "every setting can be solved" in report


def test_no_armature_is_a_clear_error(clean_scene, dqik):
    bpy.ops.mesh.primitive_cube_add()
    with pytest.raises(RuntimeError, match="Select an armature"):
        bpy.ops.dqik.build_chain()


def test_nothing_selected_is_a_clear_error(clean_scene, dqik):
    with pytest.raises(RuntimeError, match="Select an armature"):
        bpy.ops.dqik.build_chain()


def test_edit_mode_is_a_clear_error(clean_scene, dqik):
    rigs.metarig("basic")
    bpy.ops.object.mode_set(mode='EDIT')
    with pytest.raises(RuntimeError, match="Edit Mode"):
        bpy.ops.dqik.build_chain()


def test_pose_scale_is_accepted(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _hand_target(obj)
    obj.pose.bones["forearm.L"].scale = (1.0, 2.0, 1.0)
    assert bpy.ops.dqik.build_chain() == {'FINISHED'}


def test_nan_pose_is_rejected(clean_scene, dqik):
    obj = rigs.metarig("basic")
    obj.pose.bones["forearm.L"].rotation_quaternion = (float("nan"), 0, 0, 0)
    with pytest.raises(RuntimeError, match="NaN"):
        bpy.ops.dqik.build_chain()


def test_linked_armature_is_a_clear_error(clean_scene, dqik, tmp_path):
    rigs.metarig("basic")
    bpy.ops.object.mode_set(mode='OBJECT')
    library = str(tmp_path / "rig.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library)
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (src, dst):
        dst.objects = [name for name in src.objects]
    linked = dst.objects[0]
    bpy.context.scene.collection.objects.link(linked)
    bpy.context.view_layer.objects.active = linked
    with pytest.raises(RuntimeError, match="linked"):
        bpy.ops.dqik.build_chain()


@pytest.mark.parametrize("owner, name, value", [
    ("armature", "damping", float("nan")), ("armature", "tolerance", 0.0),
    ("armature", "max_iterations", 10 ** 9), ("bone", "swing_x_max", float("nan")),
    ("bone", "stiffness", 2.0), ("bone", "mass", float("nan"))])
def test_check_rig_refuses_what_solve_refuses(clean_scene, dqik, owner, name, value):
    """Raw ID property writes (no property callback checks them) that a solve refuses: Check
    Rig refuses them with the same message."""
    obj = rigs.metarig("basic")
    target = bpy.data.objects.new("Goal", None)
    clean_scene.collection.objects.link(target)
    hand = obj.pose.bones["hand.L"].dqik
    hand.use_target, hand.target = True, target
    obj.dqik.use_balance = True
    obj.pose.bones["foot.L"].dqik.use_support = True
    settings = obj.dqik if owner == "armature" else obj.pose.bones["forearm.L"].dqik
    if name == "swing_x_max":
        settings.use_limits = True
    settings[name] = value
    with pytest.raises(RuntimeError) as solved:
        bpy.ops.dqik.solve()
    with pytest.raises(RuntimeError) as checked:
        bpy.ops.dqik.build_chain()
    assert str(checked.value) == str(solved.value)


def _hand_target(obj):
    empty = sp.add_targets(obj, ["hand.L"], chain_count=3)["hand.L"]
    empty.location = sp.world_tail(obj, "hand.L")
    bpy.context.view_layer.update()
    return empty


def test_it_refuses_a_chain_through_a_bone_that_does_not_inherit_rotation(clean_scene, dqik):
    """As a solve does (it reported the set-up solvable)."""
    obj = rigs.metarig("basic")
    _hand_target(obj)
    obj.data.bones["forearm.L"].use_inherit_rotation = False
    with pytest.raises(RuntimeError, match="does not inherit rotation"):
        bpy.ops.dqik.build_chain()
    with pytest.raises(RuntimeError, match="does not inherit rotation"):
        bpy.ops.dqik.solve()


def test_it_refuses_a_rig_left_with_no_task(clean_scene, dqik):
    """A target at NaN leaves no task: refused with the reason, as a solve does (it reported
    0 tasks and every setting solvable)."""
    obj = rigs.metarig("basic")
    _hand_target(obj).location.x = float("nan")
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match="no bone with an enabled DQ IK target: .*not finite"):
        bpy.ops.dqik.build_chain()
