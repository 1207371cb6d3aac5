"""The aim (look-at) task kind: its error, its Jacobian, and reachable aims solved."""

import numpy as np
import pytest
from chains import (
    identity_pose,
    random_limits,
    random_pose_in_limits,
    random_tree,
    straight_chain,
    turned_both_ways,
    uniform_limits,
)

from dq_ik_addon.engine.jacobian import JointFrames, column_mask
from dq_ik_addon.engine.limits import limit_violation
from dq_ik_addon.engine.quaternion import qexp, qmul
from dq_ik_addon.engine.solver import Solver
from dq_ik_addon.engine.tasks import Aim, Position, Task, TaskSet

AXES = {"Y": (0.0, 1.0, 0.0), "-Z": (0.0, 0.0, -1.0), "X": (1.0, 0.0, 0.0)}


def aim_direction(world, bone, axis):
    return world[bone, :3, :3] @ np.asarray(axis) / np.linalg.norm(axis)


def test_the_error_is_the_turn_from_the_axis_to_the_target():
    model = straight_chain(2)
    world = model.matrices(identity_pose(2))
    head = world[1, :3, 3]
    for target, expected in ((head + [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]),
                             (head + [1.0, 0.0, 0.0], [0.0, 0.0, -np.pi / 2]),
                             (head + [0.0, 0.0, 3.0], [np.pi / 2, 0.0, 0.0])):
        error, = TaskSet(model, [Task(Aim, 1, target, options=AXES["Y"])]).errors(world)
        np.testing.assert_allclose(error[0], expected, atol=1e-12)
    behind, = TaskSet(model, [Task(Aim, 1, head - [0.0, 1.0, 0.0], options=AXES["Y"])]).errors(
        world)
    assert abs(np.linalg.norm(behind[0]) - np.pi) < 1e-12 and abs(behind[0, 1]) < 1e-12
    on_head, = TaskSet(model, [Task(Aim, 1, head, options=AXES["Y"])]).errors(world)
    assert not on_head.any()


@pytest.mark.parametrize("axis", sorted(AXES))
def test_jacobian_matches_central_differences(axis):
    """``e(Δθ) ≈ e − J Δθ``: J against central differences of the error where the aim is met
    (the head moves too: the target direction turns), and the solver's linear model
    ``e − J Δθ`` against a small step from a pose a little off the target."""
    rng = np.random.default_rng(4)
    model = random_tree(rng, 7)
    q = random_pose_in_limits(rng, uniform_limits(7))
    world = model.matrices(q)
    bone = 6
    target = world[bone, :3, 3] + 1.5 * aim_direction(world, bone, AXES[axis])
    tasks = TaskSet(model, [Task(Aim, bone, target, options=AXES[axis])])
    joints = np.arange(7)
    jacobian, = tasks.jacobians(JointFrames(model, joints)(world), world,
                                [column_mask(tasks.joint_masks, joints)])
    h = 1e-6
    for j in joints:
        for k in range(3):
            plus, minus = turned_both_ways(q, j, k, h)
            moved = [TaskSet(model, tasks.tasks).errors(model.matrices(pose))[0][0]
                     for pose in (plus, minus)]
            np.testing.assert_allclose(-(moved[0] - moved[1]) / (2 * h),
                                       jacobian[0, :, 3 * j + k], atol=1e-6)
    off = TaskSet(model, [Task(Aim, bone, target + 0.01 * rng.normal(size=3), options=AXES[axis])])
    error, = off.errors(world)
    step = 1e-3 * rng.normal(size=(7, 3))
    moved = model.matrices(qmul(qexp(0.5 * step), q))
    jacobian, = off.jacobians(JointFrames(model, joints)(world), world,
                              [column_mask(off.joint_masks, joints)])
    linear = error[0] - jacobian[0].dot(step.ravel())
    after, = off.errors(moved)
    assert np.linalg.norm(after[0] - linear) < 0.05 * np.linalg.norm(after[0] - error[0])


@pytest.mark.parametrize("seed", range(12))
def test_reachable_aims_are_met_under_limits_and_priorities(seed):
    """Targets by FK of a random pose inside the limits: a position task at priority 1 (a foot)
    and an aim at priority 2 on another branch (a head), solved from rest: both met, limits kept."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 10)
    limits = random_limits(rng, 10)
    leaves = [i for i in range(10) if i not in set(model.parents.tolist())]
    axis = AXES[sorted(AXES)[seed % 3]]
    world = model.matrices(random_pose_in_limits(rng, limits))
    foot, head = leaves[0], leaves[-1]
    target = world[head, :3, 3] + rng.uniform(0.5, 3.0) * aim_direction(world, head, axis)
    tasks = [Task(Position, foot, model.tails(world)[foot], priority=1),
             Task(Aim, head, target, priority=2, options=axis)]
    result = Solver(model, tasks, limits).solve(identity_pose(10))
    assert result.converged and result.errors[0] < 1e-5 and result.errors[1] < 1e-5
    solved = model.matrices(result.rotations)
    to_target = target - solved[head, :3, 3]
    cosine = aim_direction(solved, head, axis).dot(to_target) / np.linalg.norm(to_target)
    assert cosine > np.cos(1e-4)
    assert limit_violation(result.rotations, limits).max() <= 1e-6
