"""Full-body live posing on the metarig with the Humanoid preset (a floating pelvis, the feet
Support) and the feet planted: dragging the head or the pelvis down bends the knees, and with
Balance on, dragging a hand far forward shifts the hips back while the centre of mass stays over
the feet."""

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from mathutils import Matrix, Quaternion

FEET = ("foot.L", "foot.R")
REACHED = 1e-4


def _planted_live(dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    feet = sp.plant_feet(obj, FEET)
    return obj, feet, dqik.dq_ik_addon.blender.solving.live_posing.LivePosing(obj)


def _settle(live, ticks=60):
    for _ in range(ticks):
        if live.tick() is None:
            break
    bpy.context.view_layer.update()


def _knee_bend(obj, side):
    return Quaternion(obj.pose.bones[f"shin.{side}"].rotation_quaternion).angle


@pytest.mark.parametrize("bone, drop", [("spine.006", 0.15), ("spine", 0.1)])
def test_dragging_the_head_or_the_pelvis_down_bends_the_knees(clean_scene, dqik, bone, drop):
    obj, feet, live = _planted_live(dqik)
    goal = sp.world_tail(obj, bone) - np.array([0.0, 0.0, drop])
    live.drag(bone, goal)
    _settle(live)
    assert np.linalg.norm(sp.world_tail(obj, bone) - goal) <= 1e-3
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) <= REACHED
    assert min(_knee_bend(obj, "L"), _knee_bend(obj, "R")) > np.radians(10.0)
    assert obj.pose.bones["spine"].location.length > 0.5 * drop    # the pelvis came down
    live.cancel()


def _reach_live(obj, live):
    """The hand's target (priority 3) moved a metre forward and 0.4 m up, 5 cm a tick, while
    live posing follows; returns the hips' (the pelvis head's) motion."""
    hips = np.array(obj.matrix_world @ obj.pose.bones["spine"].head)
    hand = sp.add_targets(obj, ["hand.L"], priority=3)["hand.L"]
    start = sp.world_tail(obj, "hand.L")
    for k in range(1, 21):
        hand.matrix_world = Matrix.Translation(start + np.array([0.0, -0.05, 0.02]) * k)
        live.tick()
    _settle(live)
    return np.array(obj.matrix_world @ obj.pose.bones["spine"].head) - hips, start


def test_reaching_far_forward_with_balance_shifts_the_hips_back(clean_scene, dqik):
    """Without balance the body leans out after the hand, hips first; with it (priority 2,
    above the hand) the centre of mass stays over the feet, the hips held back."""
    obj, feet, live = _planted_live(dqik)
    leaning, _ = _reach_live(obj, live)
    live.cancel()
    bpy.context.view_layer.update()
    obj.dqik.use_balance = True
    live = dqik.dq_ik_addon.blender.solving.live_posing.LivePosing(obj)
    balanced, start = _reach_live(obj, live)
    snapshot = live.session.last_result
    report = {task.name: task for task in snapshot.tasks}["Balance"]
    assert report.errors["balance"] <= 1e-3
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) <= REACHED
    assert balanced[1] > leaning[1] + 0.02      # back (+Y: the metarig faces −Y)
    assert sp.world_tail(obj, "hand.L")[1] < start[1] - 0.6      # the hand still reaches out
    live.cancel()


def test_a_hand_dragged_far_forward_with_balance_keeps_the_body_over_its_feet(clean_scene, dqik):
    """With Balance on, the drag sits right below the balance: dragging a hand a metre forward
    does not tip the body over (without Balance the drag is above every task)."""
    obj, feet, live = _planted_live(dqik)
    obj.dqik.use_balance = True
    hand = sp.world_tail(obj, "hand.L")
    for k in range(1, 21):
        live.drag("hand.L", hand + np.array([0.0, -0.05, 0.01]) * k)
        live.tick()
    _settle(live)
    report = {task.name: task for task in live.session.last_result.tasks}["Balance"]
    assert report.errors["balance"] <= 1e-3
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) <= REACHED
    assert sp.world_tail(obj, "hand.L")[1] < hand[1] - 0.5      # it still reaches out
    live.cancel()
