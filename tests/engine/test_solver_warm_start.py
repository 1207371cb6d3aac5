"""The solver's warm start from its last result: a settled solve is not repeated, a solve cut
short (and only one) resumes where it stopped, and a start at the last result continues from it
exactly."""

import numpy as np
from chains import identity_pose, random_pose_in_limits, straight_chain, uniform_limits

from dq_ik_addon.engine.limits import limit_violation
from dq_ik_addon.engine.quaternion import qexp, qmul
from dq_ik_addon.engine.solver import Solver, SolverSettings, solve
from dq_ik_addon.engine.tasks import Position, Task


def test_a_settled_unreachable_solve_is_not_repeated():
    """Solving again from the closest reachable pose, targets unchanged, returns it at once;
    a moved target, or a start the user changed, solves again."""
    model = straight_chain(3)
    limits = uniform_limits(3, swing=0.4, twist=0.2)
    solver = Solver(model, [Task(Position, 2, np.array([1.5, 1.0, 0.5]))], limits)
    first = solver.solve(identity_pose(3))
    assert not first.converged and first.iterations > 0
    again = solver.solve(first.rotations.astype(np.float32))       # through pose channels
    assert again.iterations == 0
    np.testing.assert_array_equal(again.rotations, first.rotations)
    np.testing.assert_array_equal(again.errors, first.errors)
    nudged = first.rotations.copy()
    nudged[0] = qmul(qexp(np.array([0.0, 0.0, 0.05])), nudged[0])
    assert solver.solve(nudged).iterations > 0
    solver.retarget([[1.4, 1.0, 0.5]])
    assert solver.solve(first.rotations).iterations > 0


def test_a_solve_cut_short_resumes_where_it_stopped():
    model = straight_chain(4)
    solver = Solver(model, [Task(Position, 3, np.array([1.0, 2.0, 1.0]))], uniform_limits(4),
                    settings=SolverSettings(max_iterations=1))
    first = solver.solve(identity_pose(4))
    assert first.cut_short and not first.converged
    second = solver.solve(first.rotations)
    assert second.iterations == 1
    assert second.errors[0] < first.errors[0]


def test_only_a_solve_stopped_by_its_budget_is_cut_short():
    model = straight_chain(4)
    reached = solve(model, identity_pose(4), [Task(Position, 3, np.array([1.0, 2.0, 1.0]))])
    beyond = solve(model, identity_pose(4), [Task(Position, 3, np.array([9.0, 2.0, 1.0]))])
    assert reached.converged and not reached.cut_short
    assert not beyond.converged and not beyond.cut_short


def test_a_warm_start_at_the_last_result_continues_from_it_exactly():
    """A start within float32 rounding of the last result (a round trip through pose channels)
    continues from the exact result: the same answer as a new solver started from the float64
    result. A start the user moved further is taken as given and projected onto the limits."""
    rng = np.random.default_rng(7)
    model = straight_chain(4)
    limits = uniform_limits(4)
    goal = model.tails(model.matrices(random_pose_in_limits(rng, limits)))[3]
    solver = Solver(model, [Task(Position, 3, goal)], limits)
    first = solver.solve(identity_pose(4))
    moved_goal = goal + np.array([0.03, -0.02, 0.01])
    solver.retarget([moved_goal])
    warm = solver.solve(first.rotations.astype(np.float32))
    fresh = Solver(model, [Task(Position, 3, moved_goal)], limits).solve(first.rotations)
    assert warm.iterations == fresh.iterations
    np.testing.assert_allclose(warm.rotations, fresh.rotations, rtol=0, atol=1e-9)
    outside = warm.rotations.copy()
    outside[1] = qmul(qexp(np.array([0.0, 0.0, 1.2])), outside[1])   # far past its swing limit
    again = solver.solve(outside)
    assert limit_violation(again.rotations, limits).max() <= 1e-6
