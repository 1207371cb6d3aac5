"""Priority levels and their weights: a level wins its conflict with the levels below, which are
minimized in its null space; within a level the weights set the compromise; the rest pull ranks
below every task."""

import numpy as np
import pytest
from chains import identity_pose, random_pose_in_limits, straight_chain, uniform_limits

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine.quaternion import qconj, qlog, qmul
from dq_ik_addon.engine.solver import SolverSettings, solve
from dq_ik_addon.engine.tasks import Position, Task


def _conflict(priority_a, priority_b, weight_a=1.0, weight_b=1.0):
    """Two tails of a branching rig pulled apart: both cannot be met."""
    rest = np.tile(np.eye(4), (3, 1, 1))
    rest[1, 1, 3] = 1.0
    rest[2, 1, 3] = 1.0
    model_parents = [-1, 0, 0]
    model = ChainModel.from_bones(["root", "a", "b"], model_parents, rest,
                                  lengths=np.ones(3), connected=[False, True, True])
    # both tails sit at distance 2 from the root's head, on the same point: only one goal can be met
    goal_a = 2.0 * np.array([np.sin(0.5), np.cos(0.5), 0.0])
    goal_b = 2.0 * np.array([-np.sin(0.5), np.cos(0.5), 0.0])
    tasks = [Task(Position, 1, goal_a, priority=priority_a, weight=weight_a, chain_count=2),
             Task(Position, 2, goal_b, priority=priority_b, weight=weight_b, chain_count=2)]
    stiff = np.array([0.0, 1.0, 1.0])  # only the shared root may move: a true conflict
    return solve(model, identity_pose(3), tasks, stiffness=stiff,
                 settings=SolverSettings(max_iterations=300)), model


def test_priority_one_wins_and_two_is_minimized_in_its_null_space():
    result, _ = _conflict(1, 2)
    assert result.errors[0] < 1e-5
    other, _ = _conflict(2, 1)
    assert other.errors[1] < 1e-5
    assert other.errors[0] > 0.1


def test_same_level_gives_the_weighted_compromise():
    result, _ = _conflict(1, 1)
    a, b = result.errors
    assert a > 1e-3 and b > 1e-3
    assert abs(a - b) < 1e-4  # equal weights, symmetric problem: the middle


def test_a_heavier_task_wins_more_of_a_same_level_conflict():
    """Within a level the tasks' weights set the compromise: weighted least squares over the one
    shared joint puts the root's turn φ at (3·0.5 − 0.5)/4 = 0.25 rad for weights 3 and 1, so
    the tails miss by 2·2·sin(0.125) and 2·2·sin(0.375) (chords of a radius-2 circle)."""
    result, _ = _conflict(1, 1, weight_a=3.0, weight_b=1.0)
    a, b = result.errors
    assert a == pytest.approx(4 * np.sin(0.125), rel=0.02)
    assert b == pytest.approx(4 * np.sin(0.375), rel=0.02)


def test_priority_secondary_task_uses_the_remaining_freedom():
    """A redundant arm: task 1 holds the tip, task 2 moves the middle as far as it can."""
    model = straight_chain(4)
    tip = model.tails(model.matrices(random_pose_in_limits(np.random.default_rng(3),
                                                           uniform_limits(4))))[3]
    tasks = [Task(Position, 3, tip, priority=1),
             Task(Position, 1, np.array([0.8, 1.5, 0.0]), priority=2)]
    both = solve(model, identity_pose(4), tasks, settings=SolverSettings(max_iterations=300))
    alone = solve(model, identity_pose(4), tasks[:1], settings=SolverSettings(max_iterations=300))
    assert both.errors[0] < 1e-5
    world = model.matrices(alone.rotations)
    alone_middle = np.linalg.norm(model.tails(world)[1] - tasks[1].target)
    assert both.errors[1] < alone_middle - 1e-3


@pytest.mark.parametrize("seed", range(11, 16))
def test_rest_pull_keeps_the_redundant_freedom_near_the_preferred_pose(seed):
    """The lowest level pulls the null space towards ``preferred`` (``rest_weight``): a redundant
    arm reaching the same target from the rest pose ends nearer that pose with the pull than
    without it, and the task is met either way (the pull ranks below every task)."""
    model = straight_chain(4)
    rng = np.random.default_rng(seed)
    preferred = random_pose_in_limits(rng, uniform_limits(4))
    goal = model.tails(model.matrices(random_pose_in_limits(rng, uniform_limits(4))))[3]

    def distance_to_preferred(rest_weight):
        result = solve(model, identity_pose(4), [Task(Position, 3, goal)], preferred=preferred,
                       settings=SolverSettings(rest_weight=rest_weight, max_iterations=300))
        assert result.errors[0] < 1e-5
        turn = qmul(preferred, qconj(result.rotations))
        return np.linalg.norm(2 * qlog(turn * np.sign(turn[:, :1])))

    assert distance_to_preferred(0.5) < 0.9 * distance_to_preferred(0.0)
