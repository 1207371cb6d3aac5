"""Partial positions (``PoseBone.dqik.position_axes``): a foot with Z alone on a floor Empty stays
on the floor's plane, where it stands unless the body takes it along; X and Y alone keep a hand
on a line; no axis is named in the warning."""

import bpy
import numpy as np
import rigs
import solve_problems as sp


def test_a_foot_brought_down_onto_a_floor_plane_stays_on_it_near_where_it_stood(clean_scene,
                                                                                dqik):
    """The floor Empty 5 cm below the foot and elsewhere on its plane, turned about its normal
    (the same plane): the foot comes down onto it, not over to the Empty."""
    obj = rigs.metarig("basic")
    floor = sp.add_targets(obj, ["foot.L"], priority=1, chain_count=2)["foot.L"]
    obj.pose.bones["foot.L"].dqik.position_axes = {'Z'}
    start = sp.world_tail(obj, "foot.L")
    floor.location = (start[0] + 0.3, start[1] - 0.2, start[2] - 0.05)
    floor.rotation_euler = (0.0, 0.0, 0.7)
    snapshot = dqik.api.session_for(obj).tick()
    assert snapshot.status == 'MET'
    assert set(snapshot.tasks[0].errors) == {"position"}
    bpy.context.view_layer.update()
    foot = sp.world_tail(obj, "foot.L")
    assert abs(foot[2] - floor.location[2]) <= 1e-4
    assert np.linalg.norm((foot - start)[:2]) < 0.15


def test_a_foot_on_a_floor_stays_where_it_stands_and_slides_where_the_body_takes_it(clean_scene,
                                                                                     dqik):
    """foot.L on a floor Empty at its height elsewhere on the plane (Z alone), foot.R planted,
    the floating pelvis (Humanoid preset) lowered: the floor foot stays where it stood (what a
    partial position leaves free is held where the solve starts, below every task; the least
    joint motion slid it 345 mm for 5 cm and 500 mm for 10 cm); the pelvis taken 0.4 m aside
    takes it along, on the plane."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    sp.plant_feet(obj, ["foot.R"], chain_count=0)
    floor = sp.add_targets(obj, ["foot.L"], priority=1, chain_count=0)["foot.L"]
    obj.pose.bones["foot.L"].dqik.position_axes = {'Z'}
    start = sp.world_tail(obj, "foot.L")
    floor.location = (start[0] + 0.3, start[1] - 0.2, start[2])
    pelvis = sp.add_targets(obj, ["spine"], priority=2, chain_count=0)["spine"]
    top = sp.world_tail(obj, "spine")
    for offset in ((0.0, 0.0, -0.05), (0.0, 0.0, -0.1), (0.0, 0.4, -0.05)):
        pelvis.location = top + np.array(offset)
        bpy.context.view_layer.update()
        assert dqik.api.session_for(obj).tick().status == 'MET', offset
        bpy.context.view_layer.update()
        foot = sp.world_tail(obj, "foot.L")
        assert np.linalg.norm(sp.world_tail(obj, "spine") - np.array(pelvis.location)) <= 1e-3
        assert abs(foot[2] - floor.location[2]) <= 1e-4
        slid = np.linalg.norm((foot - start)[:2])
        assert slid <= 1e-4 if offset[1] == 0.0 else slid > 0.05, (offset, slid)


def test_a_floor_flattened_by_its_scale_keeps_its_plane_and_one_scaled_to_nothing_is_skipped(
        clean_scene, dqik):
    """A floor Empty scaled (1, 1, 0), the natural way to flatten one, still spans its XY plane:
    the foot ends on it as on the unscaled Empty (its Z axis had divided by zero: NaN errors, 300
    iterations, every other task left unsolved); scaled (1, 0, 1), its Z axis is the normal; scaled
    to nothing it has none: the foot's task is skipped with a warning and the hand's solved."""
    obj = rigs.metarig("basic")
    targets = sp.add_targets(obj, ["foot.L", "hand.L"], priority=1, chain_count=3)
    floor, hand = targets["foot.L"], targets["hand.L"]
    obj.pose.bones["foot.L"].dqik.position_axes = {'Z'}
    floor.location = sp.world_tail(obj, "foot.L") + np.array([0.1, 0.0, 0.03])
    floor.rotation_euler = (0.1, 0.0, 0.0)
    hand.location = sp.world_tail(obj, "hand.L") + np.array([0.0, -0.05, 0.03])
    tails = []
    for scale in ((1.0, 1.0, 1.0), (1.0, 1.0, 0.0)):
        floor.scale = scale
        bpy.context.view_layer.update()
        snapshot = dqik.api.session_for(obj).tick()
        assert snapshot.status == 'MET' and not snapshot.warnings, scale
        bpy.context.view_layer.update()
        tails.append(sp.world_tail(obj, "foot.L"))
    assert np.linalg.norm(tails[1] - tails[0]) <= 1e-5
    floor.scale = (1.0, 0.0, 1.0)     # its XY plane gone: Z alone is its own axis, as unscaled
    bpy.context.view_layer.update()
    assert dqik.api.session_for(obj).tick().status == 'MET'
    bpy.context.view_layer.update()
    assert abs((sp.world_tail(obj, "foot.L") - tails[0]) @ np.array(
        floor.matrix_world.col[2].xyz.normalized())) <= 1e-5
    floor.scale = (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    snapshot = dqik.api.session_for(obj).tick()
    assert [task.name for task in snapshot.tasks if task.status == 'MET'] == ["hand.L"]
    assert any(warning.startswith("foot.L: the target's axes are scaled to zero")
               for warning in snapshot.warnings)


def test_x_and_y_keep_a_hand_on_the_targets_line(clean_scene, dqik):
    obj = rigs.metarig("basic")
    rail = sp.add_targets(obj, ["hand.L"], chain_count=3)["hand.L"]
    obj.pose.bones["hand.L"].dqik.position_axes = {'X', 'Y'}
    rail.location = sp.world_tail(obj, "hand.L") + np.array([-0.15, -0.15, 0.05])
    rail.rotation_euler = (0.4, 0.0, 0.3)
    assert dqik.api.session_for(obj).tick().status == 'MET'
    bpy.context.view_layer.update()
    matrix = np.array(rail.matrix_world)
    line = matrix[:3, 2] / np.linalg.norm(matrix[:3, 2])
    offset = sp.world_tail(obj, "hand.L") - matrix[:3, 3]
    assert np.linalg.norm(offset - (offset @ line) * line) <= 1e-4


def test_position_with_no_axis_is_named_as_such(clean_scene, dqik):
    """Alone (the task is skipped) and beside Rotation (which is solved)."""
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L", "hand.R"], chain_count=3)
    for name in ("hand.L", "hand.R"):
        obj.pose.bones[name].dqik.position_axes = set()
    obj.pose.bones["hand.R"].dqik.use_rotation = True
    snapshot = dqik.api.session_for(obj).tick()
    said = "Position is on with no axis in Position Axes (X, Y or Z), so its position is not solved"
    assert f"hand.L: {said}; skipped" in snapshot.warnings
    assert f"hand.R: {said}" in snapshot.warnings
    assert [(task.name, set(task.errors)) for task in snapshot.tasks] == [("hand.R", {"rotation"})]


def test_a_supporting_foot_on_a_floor_lets_balance_and_the_pelvis_come_down(clean_scene, dqik):
    """Humanoid preset, feet planted, then the left foot on a floor Empty (Z alone, no rotation)
    with Balance on: a pelvis target lowered 10 cm, 5 mm a step, three live ticks each, is met,
    the centre of mass stays over the polygon the sliding foot moves (``tasks.balance``: the
    row takes the supports' motion; without it the pelvis stopped 88 mm short)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet = sp.plant_feet(obj, ["foot.L", "foot.R"])
    for name in feet:
        obj.pose.bones[name].dqik.swing_x_min = -np.radians(40.0)
    floor = bpy.data.objects.new("floor", None)
    bpy.context.scene.collection.objects.link(floor)
    floor.location = (0.0, 0.0, feet["foot.L"].location.z)
    settings = obj.pose.bones["foot.L"].dqik
    settings.target, settings.position_axes, settings.use_rotation = floor, {'Z'}, False
    pelvis = sp.add_targets(obj, ["spine"], priority=3)["spine"]
    start = sp.world_tail(obj, "spine")
    pelvis.location = start
    obj.dqik.use_balance = True
    bpy.context.view_layer.update()
    live = dqik.dq_ik_addon.blender.solving.live_posing.LivePosing(obj)
    for step in range(1, 21):
        pelvis.location = start - np.array([0.0, 0.0, 0.005 * step])
        bpy.context.view_layer.update()
        for _ in range(3):
            live.tick()
    report = {task.name: task for task in live.last.tasks}
    assert report["spine"].status == 'MET' and report["Balance"].status == 'MET', report
    bpy.context.view_layer.update()
    assert np.linalg.norm(sp.world_tail(obj, "spine") - np.array(pelvis.location)) <= 1e-3
    assert abs(sp.world_tail(obj, "foot.L")[2] - floor.location[2]) <= 1e-4
    live.stop()
