"""A floating pelvis (``PoseBone.dqik.use_translation``): the solve moves the pelvis's location, so
a body crouches between planted feet; the Humanoid preset turns it on; Lock Location holds an
axis; the location is written, baked and auto-keyed, and Cancel puts it back."""

import math

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp

FEET = ("foot.L", "foot.R")


def _planted(obj):
    """Both feet held where they stand, position and rotation, at priority 1, chains to the
    root; returns their Empties, placed on the feet's tails with the feet's rotations."""
    bpy.ops.dqik.apply_preset()
    return sp.plant_feet(obj, FEET, chain_count=0)


def _pelvis_target(obj, drop):
    empty = sp.add_targets(obj, ["spine"], priority=2, chain_count=0)["spine"]
    empty.location = sp.world_tail(obj, "spine") - np.array([0.0, 0.0, drop])
    bpy.context.view_layer.update()
    return empty


def _rotation_error(obj, name, empty):
    bone = (obj.matrix_world @ obj.pose.bones[name].matrix).to_quaternion()
    return bone.rotation_difference(empty.matrix_world.to_quaternion()).angle


@pytest.mark.parametrize("drop", [0.1, 0.2, 0.3])
def test_the_metarig_crouches_between_planted_feet(clean_scene, dqik, drop):
    """The pelvis straight down: the shins lean forward over the planted feet by more than the
    Humanoid ankle's 20° of dorsiflexion (measured without weight on the foot) below about
    0.2 m, so the feet get the 40° a planted foot has (the manual's full-body section)."""
    obj = rigs.metarig("basic")
    feet = _planted(obj)
    assert obj.pose.bones["spine"].dqik.use_translation     # the preset's floating pelvis
    for name in FEET:
        obj.pose.bones[name].dqik.swing_x_min = -math.radians(40.0)
    target = _pelvis_target(obj, drop)
    snapshot = dqik.api.session_for(obj).tick()
    assert snapshot.status == 'MET', snapshot.tasks
    bpy.context.view_layer.update()
    assert np.linalg.norm(sp.world_tail(obj, "spine") - np.array(target.location)) <= 1e-3
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) <= 1e-4
        assert _rotation_error(obj, name, empty) <= 1e-4
    assert obj.pose.bones["spine"].location.length > 0.5 * drop
    chains = sp.chain_bones(obj, [*FEET, "spine"])
    assert sp.limit_violation(obj, chains, dqik) <= 1e-5


def test_the_pelvis_dragged_down_on_its_height_alone_crouches_within_the_preset(clean_scene,
                                                                                  dqik):
    """With Position Axes Z alone the pelvis target sets its height and the pelvis may move back,
    as a crouch with the heels down does: 0.3 m within the Humanoid limits as they are."""
    obj = rigs.metarig("basic")
    feet = _planted(obj)
    target = _pelvis_target(obj, 0.3)
    obj.pose.bones["spine"].dqik.position_axes = {'Z'}
    assert dqik.api.session_for(obj).tick().status == 'MET'
    bpy.context.view_layer.update()
    assert abs(sp.world_tail(obj, "spine")[2] - target.location[2]) <= 1e-3
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) <= 1e-4
    assert sp.limit_violation(obj, sp.chain_bones(obj, [*FEET, "spine"]), dqik) <= 1e-5


def test_a_reach_the_arms_make_alone_leaves_the_pelvis_where_it_stands(clean_scene, dqik):
    """Both hands 30 cm in front of the chest, chains to the root, feet planted: the arms reach
    it, so the pelvis, which carries the whole body, barely slides (``slides``: a solve's first
    iterations weigh a slide as a turn per L/4; as a turn per L it slid 39 cm forward and the
    body leaned past its toes)."""
    obj = rigs.metarig("basic")
    _planted(obj)
    hands = sp.add_targets(obj, ["hand.L", "hand.R"], priority=3, chain_count=0)
    chest = np.array(obj.matrix_world @ obj.pose.bones["spine.003"].head)
    hands["hand.L"].location = chest + np.array([0.12, -0.3, -0.05])
    hands["hand.R"].location = chest + np.array([-0.12, -0.3, -0.05])
    bpy.context.view_layer.update()
    hips = np.array(obj.matrix_world @ obj.pose.bones["spine"].head)
    snapshot = dqik.api.session_for(obj).tick()
    assert snapshot.status == 'MET', snapshot.tasks
    bpy.context.view_layer.update()
    assert np.linalg.norm(np.array(obj.matrix_world @ obj.pose.bones["spine"].head) - hips) < 0.05


def test_without_translation_the_pelvis_stays(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _planted(obj)
    obj.pose.bones["spine"].dqik.use_translation = False
    target = _pelvis_target(obj, 0.3)
    dqik.api.session_for(obj).tick()
    bpy.context.view_layer.update()
    assert tuple(obj.pose.bones["spine"].location) == (0.0, 0.0, 0.0)
    assert np.linalg.norm(sp.world_tail(obj, "spine") - np.array(target.location)) > 0.05


def test_lock_location_holds_an_axis(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _planted(obj)
    pelvis = obj.pose.bones["spine"]
    pelvis.lock_location = (False, True, False)      # local Y: up the spine
    _pelvis_target(obj, 0.2)
    dqik.api.session_for(obj).tick()
    assert pelvis.location[1] == 0.0
    assert abs(pelvis.location[2]) > 1e-3 or abs(pelvis.location[0]) > 1e-3
    pelvis.lock_location = (True, True, True)        # nothing left to slide: said so
    pelvis.location = (0.0, 0.0, 0.0)
    snapshot = dqik.api.session_for(obj).tick()
    assert "spine: Translation is on but the bone has its location locked on every axis " \
        "(Transform > Lock); its location is kept" in snapshot.warnings
    assert tuple(pelvis.location) == (0.0, 0.0, 0.0)


def test_a_connected_bone_does_not_slide_and_says_why(clean_scene, dqik):
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"], chain_count=2)["hand.L"].location = (0.0, -1.0, 0.5)
    obj.pose.bones["forearm.L"].dqik.use_translation = True
    snapshot = dqik.api.session_for(obj).tick()
    assert any("forearm.L: Translation is on but the bone is connected" in warning
               for warning in snapshot.warnings)
    assert tuple(obj.pose.bones["forearm.L"].location) == (0.0, 0.0, 0.0)


def test_the_preset_finds_the_pelvis_of_each_rig_kind(clean_scene, dqik):
    roles = dqik.dq_ik_addon.blender.authoring.body_roles
    assert roles.pelvis_bone(rigs.metarig("basic")) == "spine"
    bpy.ops.object.mode_set(mode='OBJECT')
    human = rigs.metarig("human")
    assert roles.pelvis_bone(human) == "spine"
    for bone, name in (("spine", "mixamorig:Hips"), ("spine.001", "mixamorig:Spine")):
        human.pose.bones[bone].name = name
    assert roles.pelvis_bone(human) == "mixamorig:Hips"


def test_a_bake_keys_the_pelvis_location_and_puts_the_pose_back(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _planted(obj)
    target = _pelvis_target(obj, 0.0)
    for frame, drop in ((1, 0.0), (10, 0.15)):
        target.location = sp.world_tail(obj, "spine") - np.array([0.0, 0.0, drop])
        target.keyframe_insert("location", frame=frame)
    report = dqik.api.FrameBake(obj, bpy.context.scene, dqik.api.BakeOptions(1, 10)).finish()
    assert "spine" in report.bones
    assert tuple(obj.pose.bones["spine"].location) == (0.0, 0.0, 0.0)    # the pose put back
    curves = {(c.data_path, c.array_index): c for c in
              dqik.dq_ik_addon.blender.keys.action_slots.slot_fcurves(
                  obj.animation_data.action, obj.animation_data.action_slot)}
    located = [curves[('pose.bones["spine"].location', k)] for k in range(3)]
    assert all(len(curve.keyframe_points) == 10 for curve in located)
    bpy.context.scene.frame_set(10)
    depth = np.array([curve.evaluate(10) for curve in located])
    assert np.linalg.norm(depth) > 0.05
    for task in obj.pose.bones:
        task.dqik.use_target = False
    bpy.context.scene.frame_set(10)
    bpy.context.view_layer.update()
    assert np.linalg.norm(sp.world_tail(obj, "spine") - np.array(target.location)) <= 1e-3


def test_cancelled_live_posing_puts_the_location_back(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _planted(obj)
    _pelvis_target(obj, 0.15)
    live = dqik.dq_ik_addon.blender.solving.live_posing.LivePosing(obj)
    for _ in range(20):     # the straight knees' escape takes longer than a tick: the ticks go
        live.tick()         # on (the third without progress gets the time to settle)
        if not live.last.cut_short:
            break
    assert live.last.status == 'MET'
    assert obj.pose.bones["spine"].location.length > 0.05
    live.cancel()
    assert tuple(obj.pose.bones["spine"].location) == (0.0, 0.0, 0.0)


def test_a_bake_of_every_bone_keys_a_pelvis_that_slides_but_cannot_turn(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _planted(obj)
    pelvis = obj.pose.bones["spine"]
    pelvis.lock_rotation, pelvis.lock_rotation_w, pelvis.lock_rotations_4d = (True,) * 3, True, True
    target = _pelvis_target(obj, 0.0)
    for frame, drop in ((1, 0.0), (5, 0.1)):
        target.location = sp.world_tail(obj, "spine") - np.array([0.0, 0.0, drop])
        target.keyframe_insert("location", frame=frame)
    dqik.api.FrameBake(obj, bpy.context.scene, dqik.api.BakeOptions(1, 5, bones='ALL')).finish()
    paths = {c.data_path for c in dqik.dq_ik_addon.blender.keys.action_slots.slot_fcurves(
        obj.animation_data.action, obj.animation_data.action_slot)}
    channel = pelvis.path_from_id(dqik.dq_ik_addon.blender.rig.rotation_modes.channel_of(
        pelvis.rotation_mode))
    assert {pelvis.path_from_id("location"), pelvis.path_from_id("scale"), channel} <= paths
