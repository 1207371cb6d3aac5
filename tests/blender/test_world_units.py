"""Errors, Tolerance, Margin and Clean Up in world metres on a scaled armature (a Mixamo FBX
import has object scale 0.01): the solve works in armature units, the user sees and sets metres."""

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp

ARM = ["hand.L", "forearm.L", "upper_arm.L"]
SCALES = [0.01, 100.0]


def _scaled_metarig(scale):
    """The basic metarig with object scale ``scale``, solved once unscaled first (so its session
    has a solver built for scale 1 that the scale change must replace)."""
    obj = rigs.metarig("basic")
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    empties["hand.L"].location = sp.world_tail(obj, "hand.L") + np.array([0.0, -0.05, 0.0])
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    sp.clear_pose(obj)
    obj.scale = (scale,) * 3
    bpy.context.view_layer.update()
    return obj, empties["hand.L"]


def _hand_report(dqik, obj):
    return next(task for task in dqik.api.session_for(obj).last_result.tasks
                if task.name == "hand.L")


@pytest.mark.parametrize("scale", SCALES)
def test_an_unreachable_target_is_reported_at_its_world_distance(clean_scene, dqik, scale):
    """The hand's target 0.3 armature lengths of the arm beyond its reach, straight out from
    the shoulder: the arm stretches towards it and the report gives the world distance left, in
    metres, as Blender shows it."""
    obj, empty = _scaled_metarig(scale)
    bones = obj.data.bones
    reach = sum(bones[name].length for name in ARM) * scale
    shoulder = np.array(obj.matrix_world @ bones["upper_arm.L"].head_local)
    direction = np.array([1.0, -0.3, 0.2]) / np.linalg.norm([1.0, -0.3, 0.2])
    beyond = 0.3 * reach
    empty.location = shoulder + direction * (reach + beyond)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    report = _hand_report(dqik, obj)
    shown = sp.effector_errors(obj, {"hand.L": empty})[0]
    assert report.status == 'CLOSEST'
    assert report.position_error == pytest.approx(shown, rel=1e-6)
    # the arm is solved straight to within 1e-4 of its reach (``TaskSet.set_reach``) and the
    # Tolerance (world metres)
    assert report.position_error == pytest.approx(beyond, abs=2e-4 * reach + obj.dqik.tolerance)


@pytest.mark.parametrize("scale, tolerance", [(0.01, 1e-7), (100.0, 1e-3)])
def test_a_reachable_target_is_met_within_the_world_tolerance(clean_scene, dqik, scale,
                                                              tolerance):
    """FK targets of in-limit poses of both arms and legs, met to the Tolerance in world
    metres: every report 'MET' with its error (metres) within it, as measured in the pose Blender
    shows."""
    obj, empty = _scaled_metarig(scale)
    bpy.data.objects.remove(empty)
    assert bpy.ops.dqik.apply_preset(preset='HUMANOID') == {'FINISHED'}
    obj.dqik.tolerance = tolerance
    empties = sp.add_targets(obj, sp.EFFECTORS, chain_count=0)
    for targets in sp.fk_targets(obj, dqik, 5, seed=31):
        sp.clear_pose(obj)
        sp.place_targets(empties, targets)
        assert bpy.ops.dqik.solve() == {'FINISHED'}
        reports = dqik.api.session_for(obj).last_result.tasks
        shown = sp.effector_errors(obj, empties)
        assert all(task.status == 'MET' and task.position_error <= tolerance for task in reports)
        assert shown.max() <= tolerance + 1e-6 * scale     # Blender's float32 pose
        np.testing.assert_allclose([task.position_error for task in reports], shown,
                                   atol=1e-6 * scale)


@pytest.mark.parametrize("scale", SCALES)
def test_the_margin_is_kept_in_world_metres(clean_scene, dqik, scale):
    """The hand pulled behind a wall stops with its capsules the Margin (metres) off the wall:
    the reported clearances are in metres past it, and none is deeper than the tolerance."""
    obj, empty = _scaled_metarig(scale)
    colliders = sp.collider_collection(clean_scene, obj)
    tail = sp.world_tail(obj, "hand.L")
    size = 0.15 * scale
    sp.box("wall", tail + np.array([-4, -1.4, -4]) * size, tail + np.array([4, -1.0, 4]) * size,
           colliders)
    obj.dqik.margin = 0.2 * size
    empty.location = tail + np.array([0.0, -2.0, 0.0]) * size
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    contacts = dqik.api.session_for(obj).last_result.contacts
    assert "hand.L" in contacts.bones
    assert contacts.clearances.min() == pytest.approx(0.0, abs=0.01 * size)
    assert sp.deepest_clearance(obj, dqik, ARM) == pytest.approx(0.0, abs=0.01 * size)
