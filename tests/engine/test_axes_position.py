"""The partial position kind (``tasks.axes_position``): a tail held on a plane or a line through
its target (Baerlocher §7.2), its Jacobian against finite differences, and solves under
priorities and limits that leave the other components free."""

import numpy as np
import pytest
from chains import identity_pose, random_pose_in_limits, straight_chain, uniform_limits

from dq_ik_addon.engine.jacobian import JointFrames
from dq_ik_addon.engine.limits import limit_violation
from dq_ik_addon.engine.quaternion import qexp, qmul
from dq_ik_addon.engine.solver import Solver
from dq_ik_addon.engine.tasks import AxesPosition, Position, Task
from dq_ik_addon.engine.tasks.kind import Effectors


def _target(point, axes):
    """(12,) the point and the projector onto the unit ``axes`` (rows)."""
    axes = np.asarray(axes, dtype=np.float64)
    return np.concatenate([point, (axes.T @ axes).ravel()])


def test_the_jacobian_is_the_derivative_of_the_error():
    rng = np.random.default_rng(4)
    model = straight_chain(4, 0.3)
    q = qexp(0.5 * rng.normal(scale=0.5, size=(4, 3)))
    axis = np.array([0.3, -0.4, 0.866])
    batch = AxesPosition(np.array([_target([0.2, 0.5, 0.1], [axis / np.linalg.norm(axis)])]), ())
    joints = np.arange(4)

    def error(rotations):
        world = model.matrices(rotations)
        return batch.errors(Effectors(world, np.array([3]), model.tails(world)[[3]]))[0]
    world = model.matrices(q)
    frame = JointFrames(model, joints)(world)
    jacobian = batch.jacobian(frame, Effectors(world, np.array([3]), model.tails(world)[[3]]),
                              np.ones((1, 12)))[0]
    step = 1e-6
    for column in range(12):
        delta = np.zeros((4, 3))
        delta[column // 3, column % 3] = step
        turned = qmul(qexp(0.5 * delta), q)
        numeric = (error(q) - error(turned)) / step        # e(Δθ) ≈ e − J Δθ
        assert numeric == pytest.approx(jacobian[:, column], abs=1e-5)


@pytest.mark.parametrize("axes", [[[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
def test_a_tail_is_held_on_a_plane_or_a_line_under_limits(axes):
    """Z alone: the tail on the target's plane; X and Y: on the target's line along Z."""
    rng = np.random.default_rng(9)
    model = straight_chain(5, 0.4)
    limits = uniform_limits(5, swing=0.9, twist=0.4)
    tails = model.tails(model.matrices(random_pose_in_limits(rng, limits)))
    target = tails[4] + np.array([0.05, -0.03, 0.02])
    tasks = [Task(Position, 1, tails[1], priority=1),
             Task(AxesPosition, 4, _target(target, axes), priority=2)]
    result = Solver(model, tasks, limits).solve(identity_pose(5))
    assert result.converged and result.errors.max() < 1e-5
    reached = model.tails(model.matrices(result.rotations))[4]
    held = np.asarray(axes) @ (reached - target)
    assert np.abs(held).max() < 1e-5
    assert limit_violation(result.rotations, limits).max() <= 1e-6
