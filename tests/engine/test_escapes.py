"""``escapes``: a level with a target out of reach settles at its compromise without escapes,
escapes that found nothing are not repeated while the target stays out of reach, and escapes end
once they keep finding the compromise they escaped from."""

from types import SimpleNamespace

import numpy as np
from chains import (
    identity_pose,
    random_limits,
    random_pose_in_limits,
    random_tree,
    straight_chain,
    uniform_limits,
)

from dq_ik_addon.engine import escapes as escapes_module
from dq_ik_addon.engine.escapes import RETURNS, Stalls, kept_start
from dq_ik_addon.engine.limits import limit_violation
from dq_ik_addon.engine.solver import Solver
from dq_ik_addon.engine.tasks import Position, Task


def test_a_level_with_a_target_out_of_reach_settles_at_its_compromise_without_escapes():
    """A target dragged beyond reach with a reachable task on its level (a shared root): every
    warm solve settles at the weighted compromise, stretched towards the far target, without
    escaping (an escape restarts from the middle of the ranges: the pose would jump between
    compromises at every step, each costing all the escapes)."""
    rng = np.random.default_rng(11)
    model = random_tree(rng, 9)
    limits = random_limits(rng, 9)
    leaves = [i for i in range(9) if i not in set(model.parents.tolist())][:2]
    reachable = model.tails(model.matrices(random_pose_in_limits(rng, limits)))[leaves[1]]
    far = 20.0 * np.array([1.0, 0.5, 0.2])
    solver = Solver(model, [Task(Position, leaves[0], far), Task(Position, leaves[1], reachable)],
                    limits)
    first = solver.solve(identity_pose(9))
    q, escapes, iterations = first.rotations, [first.steps["escapes"]], []
    for step in range(8):
        solver.retarget([far * (1.0 + 0.01 * step), reachable])
        result = solver.solve(q)
        q = result.rotations
        iterations.append(result.iterations)
        escapes.append(result.steps["escapes"])
        assert np.isfinite(result.rotations).all()
        assert limit_violation(q, limits).max() <= 1e-6
    assert not any(escapes)
    assert max(iterations) <= 20


def test_escapes_that_found_nothing_are_not_repeated_while_the_target_stays_out_of_reach():
    """A target inside the chain's rest-length reach but out of reach under its limits: the
    first solve escapes and finds nothing better; dragged on, the warm solves settle at once
    instead of repeating the escapes at every step. Once a solve converges they are forgotten:
    the same target out of reach again escapes again."""
    model = straight_chain(3)
    limits = uniform_limits(3, swing=0.3, twist=0.1)
    solver = Solver(model, [Task(Position, 2, np.zeros(3))], limits)
    q, iterations, escapes = identity_pose(3), [], []
    goals = [[1.8 + 0.05 * k, 1.5, 0.0] for k in range(5)] + [[0.3, 2.95, 0.0], [1.8, 1.5, 0.0]]
    for goal in goals:
        solver.retarget([goal])
        result = solver.solve(q)
        q = result.rotations
        iterations.append(result.iterations)
        escapes.append(result.steps["escapes"])
        assert limit_violation(q, limits).max() <= 1e-6
    assert escapes[0] > 0 and escapes[1:5] == [0, 0, 0, 0] and max(iterations[1:5]) <= 3
    assert escapes[5] == 0 and iterations[5] > 0      # reachable again: converges
    assert escapes[6] > 0


def test_escapes_end_once_they_keep_finding_the_compromise_they_escaped_from(monkeypatch):
    """A target inside the chain's rest-length reach but out of reach under its limits, whose
    escapes fall back into the first stall's compromise twice: with ``RETURNS`` at 2 the solve
    settles there after two escapes, at the compromise that all 16 escapes end at, in a fraction
    of their iterations (``RETURNS`` is 3: at 2, three of 300 reachable problems on two-bone
    limbs under the HUMANOID limits were left short, their escapes stopped too soon)."""
    model = straight_chain(3)
    limits = uniform_limits(3, swing=0.3, twist=0.1)
    results = []
    for returns in (2, escapes_module.ATTEMPTS + 1):
        monkeypatch.setattr(escapes_module, "RETURNS", returns)
        solver = Solver(model, [Task(Position, 2, np.array([1.8, 1.5, 0.0]))], limits)
        results.append(solver.solve(identity_pose(3)))
    settled, exhausted = results
    assert settled.steps["escapes"] == 2
    assert exhausted.steps["escapes"] == escapes_module.ATTEMPTS
    assert abs(settled.errors[0] - exhausted.errors[0]) <= 1e-6
    assert settled.iterations * 4 <= exhausted.iterations
    assert limit_violation(settled.rotations, limits).max() <= 1e-6


def test_a_fold_is_kept_only_when_it_meets_the_tasks_or_beats_the_start_by_the_tolerance():
    """``kept_start``: the state solved from a folded start is kept when it meets every task or
    is better than the unfolded start by more than the tolerance in priority order; otherwise
    the unfolded start (a closest reachable pose solved again stays where it was)."""
    tol = 1e-5
    problem = SimpleNamespace(converged=lambda errors, levels: levels.max() <= tol)
    start = ("start", None, None, np.array([0.0, 0.30]))
    assert kept_start(problem, start, None, tol) is start
    for levels, kept in (([0.0, 0.0], "best"), ([0.0, 0.29], "best"),
                         ([0.0, 0.300005], "start"), ([0.0, 0.299995], "start")):
        best = ("best", None, None, np.array(levels))
        assert kept_start(problem, best, start, tol)[0] == kept


def test_returns_count_the_same_compromise_found_again_and_a_better_one_starts_over():
    """``Stalls.enough``: a stall after an escape counts as a return when its level errors are
    those of the best state the escape left (within a tenth of the tolerance) and nothing better
    was found meanwhile; a better compromise voids the count; escapes end at ``RETURNS``."""
    tol = 1e-5
    stalls = Stalls(SimpleNamespace(parts=None), tol)
    first = np.array([0.0, 0.30])
    assert not stalls.enough((None, None, None, first), None, first)   # before any escape
    stalls.left = first
    assert not stalls.enough((None, None, None, first + [0.0, 0.05 * tol]), None, first)
    assert not stalls.enough((None, None, None, first + [0.0, 0.5 * tol]), None, first)  # apart
    assert stalls.count == 1
    better = np.array([0.0, 0.20])
    stalls.left = first
    assert not stalls.enough((None, None, None, better), None, better)   # found better: void
    assert stalls.count == 0
    stalls.left = better
    for _ in range(RETURNS):
        ended = stalls.enough((None, None, None, better.copy()), None, better)
        stalls.left = better
    assert ended and stalls.count == RETURNS



def test_a_best_state_a_restoration_made_is_unexplored_once():
    """``Stalls.settled`` notes a restored stall that became the best state (``Steps.settled``);
    ``unexplored`` says so once (the solve then descends from it once more: the balance tests'
    body reaching 1.7 m forward); ``first`` keeps the best state at the first stall."""
    problem = SimpleNamespace(parts=None, size=1.0,
                              tasks=SimpleNamespace(squares=lambda errors, size: errors))
    stalls = Stalls(problem, 1e-5)
    state, best, restored = ((None, None, np.full(1, value), np.full(1, value))
                             for value in (4.0, 1.0, 0.25))
    assert stalls.settled(best, state, best) is best and not stalls.unexplored(best)
    assert stalls.first[1].tolist() == [1.0]     # the first stall's best: the futility memory
    assert stalls.settled(state, state, best) is state and not stalls.unexplored(state)
    assert stalls.settled(restored, state, best) is restored
    assert not stalls.unexplored(best)
    assert stalls.unexplored(restored) and stalls.final and not stalls.unexplored(restored)
