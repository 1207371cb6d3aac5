"""``dqik.import_limits``: Blender's IK limits, Limit Rotation and IK constraints become DQ IK settings."""

import math

import bpy
import pytest
import rigs

DEG = math.radians(1)


def empty(name):
    obj = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def limit_rotation(pb, space='LOCAL', **limits):
    """A Limit Rotation constraint; ``x=(min°, max°)`` etc. switch that axis on."""
    con = pb.constraints.new('LIMIT_ROTATION')
    con.owner_space = space
    for axis, (lo, hi) in limits.items():
        setattr(con, f"use_limit_{axis}", True)
        setattr(con, f"min_{axis}", lo * DEG)
        setattr(con, f"max_{axis}", hi * DEG)
    return con


def control_rig():
    """A separate armature with one control bone, ``foot_ik.L``, to aim IK at."""
    obj = bpy.data.objects.new("Controls", bpy.data.armatures.new("Controls"))
    bpy.context.scene.collection.objects.link(obj)
    active, mode = bpy.context.view_layer.objects.active, bpy.context.mode
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='EDIT')
    bone = obj.data.edit_bones.new("foot_ik.L")
    bone.head, bone.tail = (0.1, 0.1, 0.0), (0.1, 0.3, 0.0)
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.context.view_layer.objects.active = active
    bpy.ops.object.mode_set(mode='POSE' if mode == 'POSE' else 'OBJECT')
    return obj


def ik(pb, target, **settings):
    con = pb.constraints.new('IK')
    con.target = target
    for key, value in settings.items():
        setattr(con, key, value)
    return con


def report_of(capfd):
    out = capfd.readouterr()
    return out.out + out.err


def bounds(pb):
    d = pb.dqik
    return [round(math.degrees(v), 3) for v in (d.swing_x_min, d.swing_x_max, d.swing_z_min,
                                                d.swing_z_max, d.twist_min, d.twist_max)]


@pytest.fixture
def rig(clean_scene, dqik):
    """The basic metarig with Blender IK settings of every kind on several bones."""
    obj = rigs.metarig("basic")
    pb = obj.pose.bones
    forearm = pb["forearm.L"]  # an elbow: X hinge 0..150°, twist ±80°, Z locked
    forearm.lock_ik_z = True
    forearm.use_ik_limit_x, forearm.ik_min_x, forearm.ik_max_x = True, 0.0, 150 * DEG
    forearm.use_ik_limit_y, forearm.ik_min_y, forearm.ik_max_y = True, -80 * DEG, 80 * DEG
    forearm.ik_stiffness_x, forearm.ik_stiffness_y, forearm.ik_stiffness_z = 0.3, 0.1, 0.9
    upper = pb["upper_arm.L"]  # IK limits on X and Z, tightened on X by a Limit Rotation
    upper.use_ik_limit_x, upper.ik_min_x, upper.ik_max_x = True, -60 * DEG, 170 * DEG
    upper.use_ik_limit_z, upper.ik_min_z, upper.ik_max_z = True, -90 * DEG, 90 * DEG
    limit_rotation(upper, x=(-30, 90))
    shin = pb["shin.L"]  # a knee: Y and Z locked
    shin.lock_ik_y = shin.lock_ik_z = True
    shin.use_ik_limit_x, shin.ik_min_x, shin.ik_max_x = True, 0.0, 140 * DEG
    limit_rotation(pb["hand.L"], x=(-70, 80), z=(-20, 30))
    limit_rotation(pb["hand.R"], space='WORLD', x=(-10, 10))
    pb["hand.R"].ik_stiffness_x = pb["hand.R"].ik_stiffness_y = pb["hand.R"].ik_stiffness_z = 0.5
    limit_rotation(pb["foot.L"], x=(10, 40))  # does not contain the rest pose
    ik(forearm, empty("HandGoal"), chain_count=2, weight=0.7, use_rotation=True, orient_weight=0.7,
       pole_target=empty("ElbowPole"))
    ik(shin, control_rig(), subtarget="foot_ik.L", chain_count=2)
    ik(pb["spine.003"], None)  # targetless IK cannot become a task
    bpy.context.view_layer.objects.active = obj
    return obj


def test_limits_locks_and_stiffness_round_trip(rig, capfd):
    assert bpy.ops.dqik.import_limits() == {'FINISHED'}
    pb = rig.pose.bones
    assert bounds(pb["forearm.L"]) == [0, 150, 0, 0, -80, 80]
    assert pb["forearm.L"].dqik.use_limits
    assert pb["forearm.L"].dqik.stiffness == pytest.approx(0.2)  # mean of X and Y; Z is locked
    assert bounds(pb["upper_arm.L"]) == [-30, 90, -90, 90, -180, 180]
    assert bounds(pb["shin.L"]) == [0, 140, 0, 0, 0, 0]
    assert bounds(pb["hand.L"]) == [-70, 80, -20, 30, -180, 180]
    assert pb["hand.R"].dqik.stiffness == pytest.approx(0.5)
    assert not pb["hand.R"].dqik.use_limits  # World-space Limit Rotation is not converted
    assert not pb["thigh.L"].dqik.use_limits and pb["thigh.L"].dqik.stiffness == 0.0
    report = report_of(capfd)
    assert "imported limits of 5 bones" in report
    assert "stiffness of 2 bones" in report
    assert "2 tasks" in report


def test_unrepresentable_range_is_widened_and_reported(rig, capfd):
    bpy.ops.dqik.import_limits()
    foot = rig.pose.bones["foot.L"]
    assert foot.dqik.use_limits
    assert bounds(foot)[:2] == [0, 40]
    assert "Limit Rotation X on foot.L (10°..40° → 0°..40°)" in report_of(capfd)


def test_ik_constraints_become_tasks_and_are_muted(rig, capfd):
    bpy.ops.dqik.import_limits()
    forearm = rig.pose.bones["forearm.L"]
    task = forearm.dqik
    assert task.use_target and task.target.name == "HandGoal"
    assert task.chain_count == 2 and task.weight == pytest.approx(0.7)
    assert task.use_position and task.use_rotation
    shin = rig.pose.bones["shin.L"].dqik
    assert shin.use_target and shin.target.name == "Controls" and shin.subtarget == "foot_ik.L"
    assert shin.use_position and not shin.use_rotation
    assert forearm.constraints["IK"].mute and rig.pose.bones["shin.L"].constraints["IK"].mute
    spine = rig.pose.bones["spine.003"]
    assert not spine.dqik.use_target and not spine.constraints["IK"].mute
    report = report_of(capfd)
    assert "not converted: " in report
    for lost in ("pole target on forearm.L", "Limit Rotation in WORLD space on hand.R",
                 "IK without target on spine.003"):
        assert lost in report


def test_constraints_stay_active_when_asked(rig):
    bpy.ops.dqik.import_limits(mute_constraints=False)
    assert rig.pose.bones["forearm.L"].dqik.use_target
    assert not rig.pose.bones["forearm.L"].constraints["IK"].mute


def test_muted_constraints_are_skipped(rig):
    rig.pose.bones["forearm.L"].constraints["IK"].mute = True
    rig.pose.bones["upper_arm.L"].constraints["Limit Rotation"].mute = True
    bpy.ops.dqik.import_limits()
    assert not rig.pose.bones["forearm.L"].dqik.use_target
    assert bounds(rig.pose.bones["upper_arm.L"])[:2] == [-60, 170]


def test_rotation_only_ik_uses_the_orient_weight(clean_scene, dqik):
    obj = rigs.metarig("basic")
    ik(obj.pose.bones["hand.R"], empty("Goal"), use_location=False, use_rotation=True,
       orient_weight=0.4, weight=1.0)
    assert bpy.ops.dqik.import_limits() == {'FINISHED'}
    task = obj.pose.bones["hand.R"].dqik
    assert task.use_target and task.use_rotation and not task.use_position
    assert task.weight == pytest.approx(0.4)


def test_only_selected_bones(rig):
    for pb in rig.pose.bones:
        if hasattr(pb, "select"):
            pb.select = pb.name == "shin.L"
        else:
            pb.bone.select = pb.name == "shin.L"
    assert bpy.ops.dqik.import_limits(only_selected=True) == {'FINISHED'}
    assert rig.pose.bones["shin.L"].dqik.use_limits and rig.pose.bones["shin.L"].dqik.use_target
    assert not rig.pose.bones["forearm.L"].dqik.use_limits
    assert not rig.pose.bones["forearm.L"].constraints["IK"].mute


def test_nothing_to_import_changes_nothing(clean_scene, dqik, capfd):
    obj = rigs.metarig("basic")
    assert bpy.ops.dqik.import_limits() == {'CANCELLED'}
    assert "nothing to import" in report_of(capfd)
    assert not any(pb.dqik.use_limits or pb.dqik.use_target for pb in obj.pose.bones)


def test_no_armature_is_a_clear_error(clean_scene, dqik):
    bpy.ops.mesh.primitive_cube_add()
    with pytest.raises(RuntimeError, match="Select an armature"):
        bpy.ops.dqik.import_limits()


def test_a_bone_with_a_task_keeps_it_and_the_constraint_is_reported(clean_scene, dqik, capfd):
    """hand.R already has a DQ IK task: an IK constraint and a Damped Track on it are reported
    as not converted and left as they are; an IK influence below 1 is reported too."""
    obj = rigs.metarig("basic")
    mine = empty("Mine")
    settings = obj.pose.bones["hand.R"].dqik
    settings.target, settings.use_target, settings.chain_count = mine, True, 3
    ik(obj.pose.bones["hand.R"], empty("Goal"))
    track = obj.pose.bones["hand.R"].constraints.new('DAMPED_TRACK')
    track.target = empty("Look")
    ik(obj.pose.bones["hand.L"], empty("Other"), influence=0.2)
    assert bpy.ops.dqik.import_limits() == {'FINISHED'}
    assert settings.target == mine and settings.chain_count == 3 and settings.use_position
    assert not obj.pose.bones["hand.R"].constraints["IK"].mute and not track.mute
    report = report_of(capfd)
    assert "hand.R (the bone already has a DQ IK task, to 'Mine')" in report
    assert "influence 0.2 of the IK constraint on hand.L" in report


def test_limit_rotation_influence_and_reversed_ranges_are_reported(clean_scene, dqik, capfd):
    obj = rigs.metarig("basic")
    limit_rotation(obj.pose.bones["forearm.L"], x=(-30, 30)).influence = 0.0
    limit_rotation(obj.pose.bones["forearm.R"], x=(-30, 30)).influence = 0.5
    limit_rotation(obj.pose.bones["shin.L"], x=(40, -40))
    assert bpy.ops.dqik.import_limits() == {'FINISHED'}
    report = report_of(capfd)
    assert "Limit Rotation with influence 0 on forearm.L" in report
    assert "influence 0.5 of Limit Rotation on forearm.R" in report
    assert "minimum above maximum in Limit Rotation X on shin.L" in report
    assert bounds(obj.pose.bones["forearm.L"])[:2] != [-30.0, 30.0]     # not imported
    assert bounds(obj.pose.bones["forearm.R"])[:2] == [-30.0, 30.0]
