"""Loop tasks in Blender: a bone whose target is another bone of the same armature (``target`` =
the armature, ``subtarget`` = that bone) is held on that bone's head, two hands on one stick;
with Match Rotation, on its orientation too. A target on the bone's own chain still moves with
the solve and is skipped (``test_target_cycles.py``)."""

import bpy
import numpy as np
import rigs
import solve_problems as sp
from mathutils import Vector


def _stick(dqik, rotation):
    obj = rigs.metarig("basic")
    right = sp.add_targets(obj, ["hand.R"], chain_count=3)["hand.R"]
    right.location = sp.world_tail(obj, "hand.R") + np.array([0.3, -0.2, -0.1])
    left = obj.pose.bones["hand.L"].dqik
    left.use_target, left.target, left.subtarget = True, obj, "hand.R"
    left.chain_count, left.priority, left.use_rotation = 4, 2, rotation
    return obj, right, dqik.api.session_for(obj).tick()


def test_the_left_hand_holds_the_right_hands_head_while_it_follows_its_target(clean_scene,
                                                                              dqik):
    obj, right, snapshot = _stick(dqik, False)
    assert snapshot.status == 'MET', snapshot.describe()
    bpy.context.view_layer.update()
    bones = obj.pose.bones
    assert np.linalg.norm(sp.world_tail(obj, "hand.R") - np.array(right.location)) <= 1e-4
    held = np.array(obj.matrix_world @ bones["hand.R"].head)
    assert np.linalg.norm(sp.world_tail(obj, "hand.L") - held) <= 1e-4
    assert not any("hand.L" in warning for warning in snapshot.warnings)


def test_with_match_rotation_the_hands_turn_alike(clean_scene, dqik):
    obj, _, snapshot = _stick(dqik, True)
    assert snapshot.status == 'MET', snapshot.describe()
    assert set({t.name: t for t in snapshot.tasks}["hand.L"].errors) == {"position", "rotation"}
    bpy.context.view_layer.update()
    left = (obj.matrix_world @ obj.pose.bones["hand.L"].matrix).to_quaternion()
    right = (obj.matrix_world @ obj.pose.bones["hand.R"].matrix).to_quaternion()
    assert left.rotation_difference(right).angle <= 1e-3


def test_a_loop_under_balance_from_a_body_tipped_over_its_toes_brings_it_back(clean_scene,
                                                                              dqik, monkeypatch):
    """Humanoid preset, the slides weighed as a turn per chain size throughout (as before
    ``slides.FIRST_WEIGHT``), feet planted, both hands posed 45 cm in front (the hips slide 39 cm
    forward and, Balance off, the centre of mass ends 325 mm out), then a grip bone on the left hand where the right hand's
    tail is, the right hand held on it (a loop), a pelvis target where the pelvis is (priority
    5) and Balance on: the first step
    that brought the centre of mass back ran the legs into their limits and, from the rows'
    least-norm point, broke the planted feet to first order, so the line search kept nothing
    and the solve gave up after one iteration with the body 325 mm out. Solved again from the
    feasible point, the body comes back over its feet (within 2 mm), the feet held."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet = sp.plant_feet(obj, ["foot.L", "foot.R"])
    hands = sp.add_targets(obj, ["hand.L", "hand.R"], priority=3)
    chest = np.array(obj.matrix_world @ obj.pose.bones["spine.003"].head)
    hands["hand.L"].location = chest + np.array([0.15, -0.45, -0.1])
    hands["hand.R"].location = chest + np.array([-0.15, -0.45, -0.1])
    bpy.context.view_layer.update()
    monkeypatch.setattr(dqik.dq_ik_addon.engine.steps, "FIRST_WEIGHT", 1.0)
    dqik.api.session_for(obj).tick()
    bpy.context.view_layer.update()
    hand = obj.pose.bones["hand.L"]
    to_rest = (obj.matrix_world @ hand.bone.matrix_local) @ (obj.matrix_world @ hand.matrix).inverted()
    grip = obj.matrix_world.inverted() @ (to_rest @ Vector(sp.world_tail(obj, "hand.R")))
    bpy.ops.object.mode_set(mode='EDIT')
    bone = obj.data.edit_bones.new("grip")
    bone.head, bone.tail, bone.parent = grip, grip + Vector((0.0, 0.0, 0.1)), \
        obj.data.edit_bones["hand.L"]
    bone.use_deform = False
    bpy.ops.object.mode_set(mode='POSE')
    right = obj.pose.bones["hand.R"].dqik
    right.target, right.subtarget = obj, "grip"
    pelvis = sp.add_targets(obj, ["spine"], priority=5)["spine"]
    pelvis.location = sp.world_tail(obj, "spine")          # the pelvis kept where it slid
    obj.dqik.use_balance = True
    bpy.context.view_layer.update()
    snapshot = dqik.api.session_for(obj).tick()
    report = {task.name: task for task in snapshot.tasks}
    assert report["Balance"].errors["balance"] <= 2e-3, snapshot.describe()
    bpy.context.view_layer.update()
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) <= 1e-4
