"""The partial position kind (``tasks.axes_position``): a tail held on a plane or a line through
its target (Baerlocher §7.2), its Jacobian and its free rows' against finite differences, and
solves under priorities and limits that keep the other components where they started, as far as
the tasks allow."""

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


@pytest.mark.parametrize("rows", ["task", "free"])
def test_the_jacobian_is_the_derivative_of_the_error(rows):
    """The task's rows ``P (t − p)`` and its free rows ``(I − P)(p₀ − p)`` (``free_rows``)."""
    rng = np.random.default_rng(4)
    model = straight_chain(4, 0.3)
    q = qexp(0.5 * rng.normal(scale=0.5, size=(4, 3)))
    axis = np.array([0.3, -0.4, 0.866])
    batch = AxesPosition(np.array([_target([0.2, 0.5, 0.1], [axis / np.linalg.norm(axis)])]), ())
    start = np.array([[0.1, 0.7, -0.2]])

    def at(rotations):
        world = model.matrices(rotations)
        return world, Effectors(world, np.array([3]), model.tails(world)[[3]])

    def error(rotations):
        effectors = at(rotations)[1]
        return batch.errors(effectors)[0] if rows == "task" else \
            batch.free_rows(effectors, start)[1][0]
    world, effectors = at(q)
    frame = JointFrames(model, np.arange(4))(world)
    jacobian = (batch.jacobian(frame, effectors, np.ones((1, 12))) if rows == "task" else
                batch.free_rows(effectors, start, frame, np.ones((1, 12)))[0])[0]
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


@pytest.mark.parametrize("axes", [[[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
@pytest.mark.parametrize("seed", range(6))
def test_what_the_axes_leave_free_stays_where_the_solve_started(axes, seed):
    """A bent chain's tail brought onto the plane normal to X, or the line along X, from a start
    off it, while a task above moves the chain's middle, under limits: the tail moves along the
    held axes alone (to the foot of its start on the plane or the line)."""
    rng = np.random.default_rng(seed)
    model = straight_chain(6, 0.3)
    limits = uniform_limits(6, swing=1.2, twist=0.6)
    start = random_pose_in_limits(rng, limits, scale=0.8)
    tails = model.tails(model.matrices(start))
    target = tails[5] + np.array([0.04, 0.03, -0.05])
    tasks = [Task(Position, 2, tails[2] + np.array([0.02, -0.02, 0.0]), priority=1),
             Task(AxesPosition, 5, _target(target, axes), priority=2)]
    result = Solver(model, tasks, limits).solve(start)
    assert result.converged
    reached = model.tails(model.matrices(result.rotations))[5]
    held = np.asarray(axes)
    assert np.abs((np.eye(3) - held.T @ held) @ (reached - tails[5])).max() < 1e-4
    assert np.abs(held @ (reached - target)).max() < 1e-5
    assert limit_violation(result.rotations, limits).max() <= 1e-6


def test_a_partial_position_of_weight_zero_holds_nothing():
    """A task of weight 0 adds nothing to the solve, its free components' hold included."""
    model = straight_chain(6, 0.3)
    start = identity_pose(6)
    tails = model.tails(model.matrices(start))
    reach = Task(Position, 3, tails[3] + np.array([0.2, -0.1, 0.0]))
    floor = Task(AxesPosition, 5, _target(tails[5], [[0.0, 0.0, 1.0]]), priority=2, weight=0.0)
    alone = Solver(model, [reach]).solve(start)
    with_floor = Solver(model, [reach, floor]).solve(start)
    assert alone.converged and with_floor.converged
    assert np.abs(model.tails(model.matrices(with_floor.rotations))
                  - model.tails(model.matrices(alone.rotations))).max() < 1e-9
