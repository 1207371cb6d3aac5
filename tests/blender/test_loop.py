"""Loop tasks in Blender: a bone whose target is another bone of the same armature (``target`` =
the armature, ``subtarget`` = that bone) is held on that bone's head, two hands on one stick;
with Match Rotation, on its orientation too. A target on the bone's own chain still moves with
the solve and is skipped (``test_target_cycles.py``)."""

import bpy
import numpy as np
import rigs
import solve_problems as sp


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
