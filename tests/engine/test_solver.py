"""The solve end to end on synthetic chains (numpy only): targets made by FK inside the limits
are reached, also with a joint resting on its limit, and a folded target on a straight chain;
whatever the rig, tasks and obstacles, no NaN, the same result every time and the limits kept."""

import numpy as np
from chains import (
    ball,
    identity_pose,
    random_limits,
    random_pose_in_limits,
    random_tree,
    straight_chain,
    uniform_limits,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine.limits import limit_violation
from dq_ik_addon.engine.quaternion import qexp
from dq_ik_addon.engine.solver import Solver, SolverSettings, solve
from dq_ik_addon.engine.tasks import Aim, Orientation, Position, Task


def test_reaches_targets_made_by_fk_inside_limits():
    rng = np.random.default_rng(1)
    model = straight_chain(5)
    limits = uniform_limits(5)
    for _ in range(40):
        goal = model.tails(model.matrices(random_pose_in_limits(rng, limits)))[4]
        result = solve(model, identity_pose(5), [Task(Position, 4, goal)], limits=limits,
                       settings=SolverSettings(max_iterations=200))
        assert result.errors[0] < 1e-5
        assert limit_violation(result.rotations, limits).max() <= 1e-6


def test_limit_on_its_boundary_does_not_stop_the_others():
    """A target only reachable with the first joint resting on its limit is still reached."""
    model = straight_chain(3)
    limits = uniform_limits(3, swing=0.6)
    pose = identity_pose(3)
    pose[0] = qexp(np.array([0.0, 0.0, 0.3]))          # joint 0 at its 0.6 rad swing bound
    pose[1] = qexp(np.array([0.0, 0.0, -0.2]))
    pose[2] = qexp(np.array([0.15, 0.0, 0.1]))
    goal = model.tails(model.matrices(pose))[2]
    result = solve(model, identity_pose(3), [Task(Position, 2, goal)], limits=limits,
                   settings=SolverSettings(max_iterations=300))
    assert result.errors[0] < 1e-5
    assert limit_violation(result.rotations, limits).max() <= 1e-6


def test_folded_target_on_a_straight_chain_is_reached():
    model = straight_chain(4)
    result = solve(model, identity_pose(4), [Task(Position, 3, np.array([0.5, 1.0, 0.0]))],
                   settings=SolverSettings(max_iterations=200))
    assert result.errors[0] < 1e-5


def test_degenerate_inputs_never_give_nan():
    model = straight_chain(3, length=0.0)
    for goal in (np.zeros(3), np.array([1.0, 0.0, 0.0]),
                 np.array([np.nan, 0, 0])[:0].sum() + np.zeros(3)):
        result = solve(model, identity_pose(3),
                       [Task(Position, 2, goal),
                        Task(Orientation, 2, np.array([0.0, 0.0, 0.0, 1.0]))])
        assert np.isfinite(result.rotations).all()
    coincident = straight_chain(3)
    result = solve(coincident, identity_pose(3), [Task(Position, 2, np.array([0.0, 0.0, 0.0]))])
    assert np.isfinite(result.rotations).all()


def test_results_are_deterministic():
    rng = np.random.default_rng(9)
    model = random_tree(rng, 12)
    tasks = [Task(Position, 11, np.array([0.3, 0.5, 0.2])),
             Task(Position, 7, np.array([-0.4, 0.1, 0.9]), priority=2)]
    a = solve(model, identity_pose(12), tasks, limits=uniform_limits(12))
    b = solve(model, identity_pose(12), tasks, limits=uniform_limits(12))
    assert np.array_equal(a.rotations, b.rotations)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 12), tasks=st.integers(1, 4),
       obstacle=st.booleans(), self_collision=st.booleans())
def test_fuzz_limits_are_never_exceeded(seed, n, tasks, obstacle, self_collision):
    """Random trees (some bones of zero length), limits, stiffness, pose locations and tasks
    (position, orientation or both; near, far or on a joint; priorities 1–3, weights), with or
    without a ball obstacle and self-collision: no exception, no overflow, division by zero or
    invalid operation, no NaN, limits kept, also when solving again from the result."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, n)
    if rng.random() < 0.3:
        lengths = np.where(rng.random(n) < 0.3, 0.0, model.lengths)
        model = ChainModel(model.names, model.parents, model.rest_matrices, lengths,
                           model.connected)
    limits = random_limits(rng, n)
    task_list = []
    for _ in range(tasks):
        kind = int(rng.integers(0, 4))           # position, orientation, both, aim
        point = rng.normal(size=3) * rng.choice([0.1, 1.0, 5.0])
        if rng.random() < 0.1:
            point = model.rest_matrices[int(rng.integers(0, n)), :3, 3].copy()
        goals = [(Position, point, ())] * (kind in (0, 2)) \
            + [(Orientation, rng.normal(size=4), ())] * (kind in (1, 2)) \
            + [(Aim, point, tuple(rng.normal(size=3)))] * (kind == 3)
        bone, priority = int(rng.integers(0, n)), int(rng.integers(1, 4))
        weight, chain = float(rng.uniform(0.1, 2)), int(rng.integers(0, 5))
        task_list += [Task(goal_kind, bone, target, priority, weight, chain, options)
                      for goal_kind, target, options in goals]
    start = random_pose_in_limits(rng, limits)
    solver = Solver(model, task_list, limits=limits,
                    stiffness=rng.uniform(0, 1, n) * (rng.random(n) < 0.3),
                    settings=SolverSettings(max_iterations=30),
                    locations=rng.normal(scale=0.05, size=(n, 3)) if rng.random() < 0.3 else None,
                    obstacles=ball(rng.normal(size=3), 0.3) if obstacle else None,
                    radii=rng.uniform(0.0, 0.1, n) if obstacle or self_collision else None,
                    self_collision=self_collision)
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        result = solver.solve(start)
        again = solver.solve(result.rotations)
    for pose in (result.rotations, again.rotations):
        assert np.isfinite(pose).all()
        assert limit_violation(pose, limits).max(initial=0) <= 1e-6
