"""Balance (``Object.dqik.use_balance``): a body with its feet planted reaching far forward keeps
its centre of mass over its feet, measured on the pose Blender shows; without it, it tips over.
The Humanoid preset marks the feet Support; the snapshot gives the centre of mass and the
polygon; the overlay draws them; a rig without supports says so."""

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp

FEET = ("foot.L", "foot.R")


def _reaching(obj, forward):
    """Feet planted (position and rotation, priority 1, chains to the root), the left hand's
    target ``forward`` metres ahead of it (−Y) and 0.3 m lower at priority 3."""
    bpy.ops.dqik.apply_preset()
    feet = sp.plant_feet(obj, FEET)
    hand = sp.add_targets(obj, ["hand.L"], priority=3)["hand.L"]
    hand.location = sp.world_tail(obj, "hand.L") + np.array([0.0, -forward, -0.3])
    bpy.context.view_layer.update()
    return feet


def _outside(dqik, obj):
    return _outside_of(dqik, obj, FEET)


def _outside_of(dqik, obj, feet):
    """How far (m) the centre of mass of the pose Blender shows lies outside the support polygon
    of the ``feet`` and the bones they carry (toes, heels), on the ground (masses: the deforming
    bones' lengths, as Balance's automatic masses on a rig without a skinned mesh)."""
    engine = dqik.dq_ik_addon.engine
    ground = engine.tasks.ground_polygon
    bones = [pb for pb in obj.pose.bones if pb.bone.use_deform]
    world = np.array(obj.matrix_world)
    mids = np.array([world @ np.append(0.5 * (np.array(pb.head) + np.array(pb.tail)), 1.0)
                     for pb in bones])[:, :3]
    masses = np.array([pb.bone.length for pb in bones])
    centre = masses @ mids / masses.sum()
    carried = [pb.name for name in feet for pb in [obj.pose.bones[name],
                                                    *obj.pose.bones[name].children_recursive]]
    ends = np.array([sp.world_tail(obj, name) for name in carried]
                    + [np.array(obj.matrix_world @ obj.pose.bones[name].head) for name in carried])
    polygon, (u, v) = ground.support_polygon(ends, np.array([0.0, 0.0, 1.0]))
    d, _ = ground.polygon_distance(np.array([centre @ u, centre @ v]),
                                   np.stack([polygon @ u, polygon @ v], axis=1))
    return d, centre


@pytest.mark.parametrize("forward", [0.9, 1.1, 1.3])
def test_balance_keeps_the_centre_of_mass_over_the_feet(clean_scene, dqik, forward):
    obj = rigs.metarig("basic")
    feet = _reaching(obj, forward)
    assert all(obj.pose.bones[name].dqik.use_support for name in FEET)   # the preset's
    session = dqik.api.session_for(obj)
    session.tick()
    bpy.context.view_layer.update()
    tipped, _ = _outside(dqik, obj)
    assert tipped > 0.01                    # without balance the body leans out over its toes
    sp.clear_pose(obj)
    obj.dqik.use_balance = True
    assert obj.dqik.balance_priority == 2
    snapshot = session.tick()
    bpy.context.view_layer.update()
    outside, centre = _outside(dqik, obj)
    assert outside <= 1e-3
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) <= 1e-4
    assert np.linalg.norm(snapshot.center_of_mass - centre) <= 1e-4
    assert snapshot.support_polygon.shape[1] == 3 and len(snapshot.support_polygon) >= 3
    report = {task.name: task for task in snapshot.tasks}["Balance"]
    assert report.errors["balance"] <= 1e-3
    assert obj.pose.bones["spine"].location.length > 0.01       # the hips moved back


@pytest.mark.parametrize("forward", [1.0, 0.9])
def test_a_reach_held_at_a_corner_of_the_polygon_goes_on_along_the_edge(clean_scene, dqik,
                                                                        forward):
    """Balance holding the centre of mass on the front edge, a lean that would slide it past the
    front corner and out across the side edge holds that edge too: the hand 1 m forward and
    0.3 m down is met, where one row stopped it 321 mm short; 0.9 m forward the first descent
    leans the wrong way and an escape finds the lean that meets it (escapes were not tried
    while Balance held: 197 mm short). The centre of mass stays on the polygon."""
    obj = rigs.metarig("basic")
    feet = _reaching(obj, forward)
    obj.dqik.use_balance = True
    snapshot = dqik.api.session_for(obj).tick()
    bpy.context.view_layer.update()
    outside, _ = _outside(dqik, obj)
    assert outside <= 1e-3
    report = {task.name: task for task in snapshot.tasks}
    assert report["hand.L"].errors["position"] <= 1e-4, report["hand.L"].errors
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) <= 1e-4


def test_the_overlay_draws_the_polygon_and_the_centre_of_mass(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _reaching(obj, 0.9)
    obj.dqik.use_balance = True
    dqik.api.session_for(obj).tick()
    layers = dqik.panels.overlay.layers
    lines, _ = layers.overlay_lines(obj, ("balance",), _refreshed(dqik, obj))
    assert len(lines["balance"]) >= 2 * (3 + 6 + 1)      # outline, two crosses, the drop line
    obj.dqik.use_balance = False
    dqik.api.session_for(obj).tick()
    lines, _ = layers.overlay_lines(obj, ("balance",), _refreshed(dqik, obj))
    assert "balance" not in lines


def _refreshed(dqik, obj):
    layers = dqik.panels.overlay.layers
    rig = layers.RigCache()
    rig.refresh(obj, dqik.dq_ik_addon.blender.rig.model_reader.rig_key(obj))
    return rig


def test_balance_without_supports_says_so(clean_scene, dqik):
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"], chain_count=3)["hand.L"].location = (0.3, -0.4, 1.0)
    obj.dqik.use_balance = True
    snapshot = dqik.api.session_for(obj).tick()
    assert any("no bone carries the weight" in warning for warning in snapshot.warnings)
    assert snapshot.balance is None


def test_balance_without_other_tasks_says_so(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    obj.dqik.use_balance = True
    with pytest.raises(RuntimeError, match="no other task"):
        bpy.ops.dqik.solve()


def test_a_support_no_task_holds_is_left_out_of_the_polygon_and_named(clean_scene, dqik):
    """The right foot marked Support with its target off: the solve moves it freely, so it bears
    no weight; the polygon is the left foot's alone (the right one had swung 250 mm and lifted
    58-83 mm while still counted), a warning names it, and the centre of mass stays over the
    left foot. Held on a line (Position Axes X and Y) it may lift, and is left out too; on a
    floor (Z) it counts. With neither foot held, balance is skipped and says so."""
    obj = rigs.metarig("basic")
    _reaching(obj, 0.6)
    obj.pose.bones["foot.R"].dqik.use_target = False
    obj.dqik.use_balance = True
    snapshot = dqik.api.session_for(obj).tick()
    assert "foot.R: marked Support but no position task holds it (its target is off, missing " \
        "or skipped, or it has no Position holding its height); left out of the support " \
        "polygon" in snapshot.warnings
    bpy.context.view_layer.update()
    left = (obj.pose.bones["foot.L"], *obj.pose.bones["foot.L"].children_recursive)
    ends = np.array([np.array(obj.matrix_world @ end)[:2] for pb in left
                     for end in (pb.head, pb.tail)])
    polygon = np.array(snapshot.support_polygon)[:, :2]
    assert np.linalg.norm(polygon[:, None] - ends[None], axis=2).min(axis=1).max() <= 1e-4
    outside, _ = _outside_of(dqik, obj, ("foot.L",))
    assert outside <= 1e-3
    settings = obj.pose.bones["foot.R"].dqik
    settings.use_target, settings.position_axes = True, {'X', 'Y'}   # on an upright line
    settings.target.rotation_mode = 'XYZ'
    settings.target.rotation_euler = (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    snapshot = dqik.api.session_for(obj).tick()
    assert any(warning.startswith("foot.R: marked Support") for warning in snapshot.warnings)
    settings.position_axes = {'Z'}        # on a floor: holds its height
    snapshot = dqik.api.session_for(obj).tick()
    assert not any("marked Support" in warning for warning in snapshot.warnings)
    for name in FEET:
        obj.pose.bones[name].dqik.use_target = False
    snapshot = dqik.api.session_for(obj).tick()
    assert any("no task holds a bone marked Support" in warning for warning in snapshot.warnings)
    assert snapshot.balance is None


def test_the_body_read_before_any_balanced_tick_stands_on_every_support(clean_scene, dqik):
    """``BalanceSetup.shown`` with Balance off (what the demo draws for the pose without it): the
    body read from the rig stands on every bone marked Support until a balanced tick finds which
    ones its tasks hold."""
    obj = rigs.metarig("basic")
    _reaching(obj, 0.9)
    session = dqik.api.session_for(obj)
    session.tick()
    session.balance.body_of(obj, session.model, session.obstacles.cache, session.unit)
    pose = dqik.dq_ik_addon.blender.rig.arrays.evaluated_matrices(obj.pose.bones)
    centre, polygon = session.balance.shown(obj, session.model, pose)
    assert np.all(np.isfinite(centre)) and len(polygon) >= 4


def test_a_toe_planted_on_its_own_bears_weight(clean_scene, dqik):
    """The right foot's target off but its toe planted: the foot is named and left out, the toe
    (which the foot carries) stands in the polygon."""
    obj = rigs.metarig("basic")
    _reaching(obj, 0.6)
    obj.pose.bones["foot.R"].dqik.use_target = False
    sp.plant_feet(obj, ["toe.R"])
    obj.dqik.use_balance = True
    snapshot = dqik.api.session_for(obj).tick()
    assert any(warning.startswith("foot.R: marked Support") for warning in snapshot.warnings)
    bpy.context.view_layer.update()
    toe = np.array([np.array(obj.matrix_world @ end)[:2] for end in (
        obj.pose.bones["toe.R"].head, obj.pose.bones["toe.R"].tail)])
    polygon = np.array(snapshot.support_polygon)[:, :2]
    assert np.linalg.norm(polygon[:, None] - toe[None], axis=2).min() <= 1e-4
