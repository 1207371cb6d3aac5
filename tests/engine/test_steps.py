"""``steps`` along warm paths: chord steps, correction steps that start from the last step's
limits and Chebyshev's second-order correction each save full steps or decompositions, and the
solves still meet the tolerance inside the limits."""

import numpy as np
import pytest
from chains import (
    identity_pose,
    random_limits,
    random_pose_in_limits,
    random_tree,
    straight_chain,
    uniform_limits,
)

from dq_ik_addon.engine import steps as steps_module
from dq_ik_addon.engine.limits import limit_violation
from dq_ik_addon.engine.quaternion import qnormalize
from dq_ik_addon.engine.solver import Solver
from dq_ik_addon.engine.tasks import Position, Task


def test_small_corrections_reuse_the_last_linearization(monkeypatch):
    """Chord steps (``steps.Steps.chord``): along a warm path, corrections within ``_CHORD`` ×
    tolerance reuse the last step's Jacobians instead of a full step (Jacobian, limit rows,
    active set); the solves still meet the tolerance and keep the limits, with fewer full steps
    than without chords."""
    model = straight_chain(4, 0.5)
    limits = uniform_limits(4, swing=1.0, twist=0.5)
    rng = np.random.default_rng(21)
    poses = [random_pose_in_limits(rng, limits, scale=0.7) for _ in range(3)]
    path = [model.tails(model.matrices(qnormalize((1 - t) * a + t * b)))[3]
            for a, b in zip(poses, poses[1:]) for t in np.linspace(0, 1, 12)[1:]]
    counts = {}
    for label, bound in (("chords", steps_module._CHORD), ("full steps only", 0.0)):
        monkeypatch.setattr(steps_module, "_CHORD", bound)
        solver = Solver(model, [Task(Position, 3, path[0])], limits)
        q = identity_pose(4)
        for goal in path:
            solver.retarget([goal])
            result = solver.solve(q)
            assert result.converged and result.errors[0] < 1e-5
            assert limit_violation(result.rotations, limits).max() <= 1e-6
            q = result.rotations
            for kind in ("full", "chord"):
                counts[label, kind] = counts.get((label, kind), 0) + result.steps[kind]
    assert counts["chords", "chord"] > 0 and counts["full steps only", "chord"] == 0
    assert counts["chords", "full"] < counts["full steps only", "full"]


def test_a_correction_step_starts_from_the_limits_the_last_step_rested_on(monkeypatch):
    """Warm solves of a branched chain with three tasks near limits: a correction step (every level
    within ``_POLISH`` × tolerance) that starts from the rows the last step ended on, when it meets
    the tasks, needs fewer prioritized decompositions (one per active-set pass) than finding those
    rows again pass by pass, and reaches the targets inside the limits all the same."""
    def warm_solves(polish):
        monkeypatch.setattr(steps_module, "_POLISH", polish)
        rng = np.random.default_rng(5)
        model = random_tree(rng, 14)
        limits = random_limits(rng, 14)
        leaves = [i for i in range(14) if i not in set(model.parents.tolist())][:3]
        goals = model.tails(model.matrices(random_pose_in_limits(rng, limits)))[leaves]
        solver = Solver(model, [Task(Position, int(b), g) for b, g in zip(leaves, goals)], limits)
        rotations = solver.solve(identity_pose(14)).rotations
        decompositions, violations, converged = 0, [], []
        for _ in range(30):
            solver.retarget(goals + 0.02 * rng.normal(size=goals.shape))
            result = solver.solve(rotations)
            rotations = result.rotations
            decompositions += result.steps["decompositions"]
            violations.append(limit_violation(rotations, limits).max())
            converged.append(result.converged)
        return decompositions, max(violations), all(converged)

    polished, violation, reached = warm_solves(steps_module._POLISH)
    afresh, _, reached_afresh = warm_solves(0.0)
    assert polished < afresh
    assert reached and reached_afresh and violation <= 1e-6


@pytest.mark.parametrize("seed", [4, 7, 9])
def test_second_order_corrections_take_fewer_full_steps(monkeypatch, seed):
    """Chebyshev's correction (``steps.Steps``): along a warm path of a branched chain with
    two tasks, a first step solved for the errors less their second-order change lands close
    enough for a chord step or the tolerance, so the solves take fewer full steps and fewer
    iterations than with Newton's first steps alone (the correction switched off); they still
    meet the tolerance and keep the limits."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 10)
    limits = random_limits(rng, 10)
    leaves = [i for i in range(10) if i not in set(model.parents.tolist())][:2]
    poses = [random_pose_in_limits(rng, limits, scale=0.6) for _ in range(3)]
    path = [model.tails(model.matrices(qnormalize((1 - t) * a + t * b)))[leaves]
            for a, b in zip(poses, poses[1:]) for t in np.linspace(0, 1, 12)[1:]]
    counts = {}
    for label, corrected in (("corrected", steps_module.Steps._corrected),
                             ("Newton", lambda *arguments: None)):
        monkeypatch.setattr(steps_module.Steps, "_corrected", corrected)
        solver = Solver(model, [Task(Position, int(b), g) for b, g in zip(leaves, path[0])],
                        limits)
        q = solver.solve(identity_pose(10)).rotations
        counts[label] = np.zeros(2, int)
        for goals in path:
            solver.retarget(goals)
            result = solver.solve(q)
            assert result.converged and result.errors.max() < 1e-5
            assert limit_violation(result.rotations, limits).max() <= 1e-6
            q = result.rotations
            counts[label] += result.steps["full"], result.iterations
    assert (counts["corrected"] < counts["Newton"]).all()
