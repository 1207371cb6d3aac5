"""The aim (look-at) task in real Blender: a bone's axis points at its target, under limits and
priorities; Damped Track and Track To import as aims."""

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from mathutils import Vector

AXIS_VECTORS = {'TRACK_Y': (0, 1, 0), 'TRACK_NEGATIVE_Z': (0, 0, -1), 'TRACK_X': (1, 0, 0)}
AIM_TOLERANCE = 1e-4   # radians, what the evaluated pose meets (the solve's tolerance is 1e-5)
REACHED = 1e-4         # metres


def aim_angle(obj, name, target, axis):
    """Angle (rad) between the bone's ``axis`` in the evaluated pose and the direction from its
    head to ``target`` (world space)."""
    bpy.context.view_layer.update()
    matrix = obj.matrix_world @ obj.pose.bones[name].matrix
    pointing = (matrix.to_3x3() @ Vector(axis)).normalized()
    to_target = (Vector(target) - matrix.translation).normalized()
    return pointing.angle(to_target)


def empty_at(name, location):
    obj = bpy.data.objects.new(name, None)
    bpy.context.scene.collection.objects.link(obj)
    obj.location = location
    return obj


@pytest.mark.parametrize("seed,axis", [(1, 'TRACK_Y'), (2, 'TRACK_NEGATIVE_Z'), (3, 'TRACK_X')])
def test_a_reachable_aim_is_met_under_limits_with_the_feet_planted(clean_scene, dqik, seed,
                                                                      axis):
    """Feet held where they stand (priority 1); the head aims (priority 2, neck and head free to
    turn) at a point along its axis in a random pose inside the HUMANOID limits."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    rng = np.random.default_rng(seed)
    head_chain = ["spine.004", "spine.005", "spine.006"]
    sp.set_pose(obj, sp.random_pose_in_limits(obj, head_chain, rng, dqik))
    matrix = obj.matrix_world @ obj.pose.bones["spine.006"].matrix
    goal = matrix.translation + rng.uniform(0.5, 2.0) * (matrix.to_3x3() @ Vector(AXIS_VECTORS[axis]))
    feet = {name: sp.world_tail(obj, name) for name in ("foot.L", "foot.R")}
    sp.clear_pose(obj)
    for name, empty in sp.add_targets(obj, feet, priority=1).items():
        empty.location = feet[name]
    settings = obj.pose.bones["spine.006"].dqik
    settings.use_target, settings.target = True, empty_at("look here", goal)
    settings.use_position, settings.use_aim, settings.aim_axis = False, True, axis
    settings.priority, settings.chain_count = 2, 3
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    assert aim_angle(obj, "spine.006", goal, AXIS_VECTORS[axis]) <= AIM_TOLERANCE
    for name, tail in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - tail) <= REACHED
    assert sp.limit_violation(obj, head_chain, dqik) <= 1e-6
    snapshot = dqik.api.session_for(obj).last_result
    head = next(task for task in snapshot.tasks if task.name == "spine.006")
    assert head.status == 'MET' and head.position_error is None
    assert head.rotation_error <= obj.dqik.tolerance


def test_damped_track_and_track_to_import_as_aims(clean_scene, dqik, capfd):
    obj = rigs.metarig("basic")
    goal = empty_at("gaze", (0.3, -1.5, 1.7))
    head = obj.pose.bones["spine.006"].constraints.new('DAMPED_TRACK')
    head.target, head.track_axis = goal, 'TRACK_NEGATIVE_Z'
    hand = obj.pose.bones["hand.L"].constraints.new('TRACK_TO')
    hand.target, hand.track_axis, hand.up_axis = goal, 'TRACK_Y', 'UP_Z'
    assert bpy.ops.dqik.import_limits() == {'FINISHED'}
    report = capfd.readouterr()
    assert "up axis of Track To on hand.L" in report.out + report.err
    for pb, axis in ((obj.pose.bones["spine.006"], 'TRACK_NEGATIVE_Z'),
                     (obj.pose.bones["hand.L"], 'TRACK_Y')):
        settings = pb.dqik
        assert settings.use_target and settings.target == goal and settings.use_aim
        assert (settings.aim_axis, settings.chain_count) == (axis, 1)
        assert not (settings.use_position or settings.use_rotation)
        assert pb.constraints[-1].mute
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    assert aim_angle(obj, "spine.006", goal.location, (0, 0, -1)) <= AIM_TOLERANCE
    assert aim_angle(obj, "hand.L", goal.location, (0, 1, 0)) <= AIM_TOLERANCE
