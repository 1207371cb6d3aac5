"""``acceptance``: a step is kept only when it does not make the levels worse, so an unreachable
target settles without oscillation; a descent after an escape that cannot beat the best pose
ends early (``hopeless``)."""

import numpy as np
import pytest
from chains import random_pose_in_limits, straight_chain, uniform_limits

from dq_ik_addon.engine.acceptance import hopeless, line_search, stalled
from dq_ik_addon.engine.solver import SolverSettings, solve
from dq_ik_addon.engine.tasks import Position, Task


def test_unreachable_target_settles_without_oscillation():
    model = straight_chain(4)
    goal = np.array([3.0, 4.0, 2.0])
    start = random_pose_in_limits(np.random.default_rng(5), uniform_limits(4))
    result = solve(model, start, [Task(Position, 3, goal)],
                   settings=SolverSettings(max_iterations=100))
    history = np.array([h[0] for h in result.level_errors])
    assert np.isfinite(history).all()
    assert np.all(np.diff(history[10:]) <= 1e-6)
    assert result.errors[0] == pytest.approx(np.linalg.norm(goal) - 4.0, abs=1e-3)
    assert history[-1] <= 1e-5     # solved for the point at the reach (1 − 1e-4 of it): met
    assert not result.converged and result.iterations <= 20


def test_an_escape_that_cannot_beat_the_best_pose_ends_early():
    """``acceptance.hopeless``: after an escape, a descent whose shrinking gains (Aitken's
    extrapolation) cannot take the first level unmet in the best pose below its best error ends;
    one that can, one whose gains do not shrink (no extrapolation; no progress at all is a
    stall), one too young to judge, or one after a best pose with every level met, goes on."""
    tol = SolverSettings().tolerance
    best = np.array([0.050])

    def descent(*errors):
        return [np.array([0.3]), np.array([0.2])] + [np.array([error]) for error in errors]
    history = descent(0.100, 0.090, 0.085)          # heads for 0.080
    assert hopeless(history, best, tol)
    assert not hopeless(history[2:], best, tol)     # three iterations in: too early to tell
    assert not hopeless(descent(0.100, 0.060, 0.040), best, tol)     # heads for 0.020
    assert not hopeless(descent(0.100, 0.095, 0.085), best, tol)     # gains not shrinking
    assert not hopeless(history, np.array([1e-6]), tol)


def test_a_descent_going_round_three_states_has_stalled():
    """The feet level 0.09 ↔ 0.11 mm and a hand 0.806 ↔ 0.808 m, round and round (a random
    reachable problem ran its 300 iterations so): the best of each window is no better than
    the best of the window before, whatever phase the last step is in. A descent still gaining
    on the hand has not stalled."""
    cycle = [np.array([9e-5, 0.8075]), np.array([1.1e-4, 0.80597]), np.array([9e-5, 0.80648])]
    going_round = [cycle[k % 3] - np.array([0.0, 1e-6 * k]) for k in range(12)]
    assert all(stalled(going_round[:n], 1e-5) for n in range(9, 13))
    gaining = [np.array([9e-5, 0.8 - 0.01 * k]) for k in range(12)]
    assert not any(stalled(gaining[:n], 1e-5) for n in range(2, 13))


@pytest.mark.parametrize("pulled", [False, True])
def test_a_fallback_equal_to_the_step_tried_is_not_tried_again(pulled):
    """``step_search``: when the full step is not kept, the steps without the pull and
    truncated after the first unmet level are tried, but not one equal to the step already
    measured (no pull: the first step of a solve; the balanced Rigify live tick measured its
    step twice, each with its restoration). The outcome is the same."""
    tried = []
    full = np.array([1.0, 0.0])
    without_pull = full + np.array([0.5 if pulled else 0.0, 0.0])   # no pull: a copy
    truncated = np.array([0.5, 0.0])

    def trial(step, scale):
        tried.append((tuple(step), scale))
        # the level gets worse past a quarter of the first component
        return (np.array([0.9 if scale * step[0] <= 0.25 else 1.1]),)
    kept = line_search(trial, lambda step: 1.0, [truncated, without_pull, full],
                       np.array([1.0, 1.0]), np.array([0.0, 0.0]), None, 1e-3)
    assert kept is not None and kept[-1][0] == 0.9
    candidates = [((1.0, 0.0), 1.0)] + ([((1.5, 0.0), 1.0)] if pulled else []) + \
        [((0.5, 0.0), 1.0)]
    assert tried[:len(candidates)] == candidates
    assert tried.count(((1.0, 0.0), 1.0)) == 1
