"""Whether a step is kept and whether a solve goes on: priority comparison, line search and the
stop tests, as functions of the level errors they read.

Level errors come in priority order (the total contact penetration first when there are
contacts, then one error per task level); ``predicted`` holds the task levels' errors after a
step to first order, ``‖e_k − J_k Δ‖``. The stop tests (``blocked``, ``holds``, ``stalled``) are
given the errors of the groups of tasks that share no moved joint instead
(``Problem._groups``; the same as the levels' when every level is one group): a level's progress
is then each of its groups' own, so a hand's last millimetre is not lost under 0.1 % of the
metres of another arm's target out of reach on its level.
"""

import time

import numpy as np

from .quaternion import all_true, any_true

# Restorations of a trading step in the last iteration a time budget allows (``TimeBudget``)
SETTLING_PASSES = 5
# A level this many tolerances off or less is restored with the met ones (``Steps.restored``)
RESTORED_WITHIN = 10.0
# A step is halved at most this often before the iteration counts as stalled
_BACKTRACK_STEPS = 6
# Higher levels may lose this fraction of what the first improving level gains (``compare_levels``)
_TRADE = 0.1
# A level that cannot lose more than this fraction of its error in a step is blocked
_PROGRESS = 1e-3
# A solve held by a contact ends when steps can gain less than this of each unmet level
_SETTLE = 5e-3
# An escape ends when its descent, extrapolated, stays this fraction above the best before it
_HOPELESS = 0.01
# ... judged from this many iterations into it: earlier, an escape that would reach its targets
# (14 of 2,800 random reachable problems from rest) was often cut short
_HOPELESS_AFTER = 5
# A level that loses less than 0.1 % of its error over this many iterations has stalled
_STALL_WINDOW = 4
_STALL_RATIO = 0.999


def compare_levels(new, old, eps, reached=0.0, trade=0.0):
    """−1 if ``new`` is better in priority order, +1 if worse, 0 if equal.

    Two errors are equal within ``eps``, or when both are below ``reached`` (a level that has met
    the tolerance may trade its last digits for the progress of the levels below it). With
    ``trade`` > 0, higher levels may lose up to ``trade`` times what the first improving level
    gains: a lower level's null-space motion disturbs the higher ones only to second order,
    and the next iteration's compensation takes that back (Baerlocher §5.3.2), whereas strict
    order would shrink the step until the lower level crawls.
    """
    lost = 0.0
    for a, b in zip(new.tolist(), old.tolist()):
        if a < reached and b < reached:
            continue
        if a < b - eps:
            return -1 if lost <= trade * (b - a) else 1
        if a > b + eps:
            if trade == 0.0:
                return 1
            lost += a - b
    return 0 if lost == 0.0 else 1


def better(new, old, tolerance, margin=0.0):
    """``new`` is better than ``old`` in strict priority order (levels below half the tolerance
    count as met; errors within ``margin`` of each other as equal)."""
    return compare_levels(new, old, margin, 0.5 * tolerance) < 0


def first_unmet(errors, tolerance):
    """The index of the first level in ``errors`` (priority order) above ``tolerance``, or None."""
    return next((k for k, error in enumerate(errors.tolist()) if error > tolerance), None)


def predicted_errors(levels, step):
    """Each level's error after ``step`` to first order, ``‖e_k − J_k Δ‖``."""
    residuals = [err - jac.dot(step) for jac, err in levels]
    return np.sqrt([residual.dot(residual) for residual in residuals])


def line_search(trial, step_scale, steps, current, predicted, corrected, tolerance):
    """The accepted ``trial(step, scale)`` (whose last item is the level errors) or None: the
    trials ``step_search`` asks for, made in turn."""
    search, attempts = step_search(step_scale, steps, current, predicted, corrected, tolerance), []
    try:
        step, scale = next(search)
        while True:
            attempts.append(trial(step, scale))
            step, scale = search.send(attempts[-1][-1])
    except StopIteration as stop:
        return None if stop.value is None else attempts[stop.value]


def step_search(step_scale, steps, current, predicted, corrected, tolerance):
    """The line search, as a generator: it yields each trial ``(step, scale)``, is sent that
    trial's level errors, and returns the number of the trial it keeps (from 0), or None.

    ``steps`` holds the step truncated after each level and the full step with the rest pull;
    ``predicted`` the task levels' errors after it to first order (contacts: none left).
    The ``corrected`` step, if any, is tried first, then the full step; each is kept when it
    achieves at least half of the first unmet level's predicted reduction (the ratio test of
    trust-region methods, Nocedal & Wright §4.1) and makes no level worse (with every level
    met: no level worse than half the tolerance). Otherwise the lower
    levels are what spoils it (their null-space motion disturbs the higher levels to second
    order, e.g. a hand pressing on a curved obstacle sinks into it; the rest pull would keep a
    floor of error that way), so the steps without the pull and truncated after that level are
    tried too (each once: without a pull the step without it is the step), and the best in
    priority order is kept. The kept step is halved (at most ``_BACKTRACK_STEPS`` times) until
    no level gets worse.
    """
    eps, reached = tolerance * 1e-3, 0.5 * tolerance
    levels = current.tolist()
    first = first_unmet(current, tolerance)
    expected = [0.0] * (len(levels) - len(predicted)) + predicted.tolist()

    def kept(errors):
        return (first is None or levels[first] - float(errors[first]) >= 0.5 * (
            levels[first] - expected[first])) and \
            compare_levels(errors, current, eps, reached, _TRADE) <= 0

    made = 0
    if corrected is not None and step_scale(corrected) == 1.0:
        made += 1
        if kept((yield corrected, 1.0)):
            return 0
    step = steps[-1]
    scale = step_scale(step)
    errors, chosen = (yield step, scale), made
    made += 1
    if not kept(errors):
        first_task_level = len(steps) - 2 if first is None else \
            max(first - (len(levels) - len(predicted)), 0)
        for candidate in {len(steps) - 2: steps[-2],
                          first_task_level: steps[first_task_level]}.values():
            if np.array_equal(candidate, step):
                continue    # the step tried (no pull: the first step of a solve): its errors
            candidate_scale = step_scale(candidate)
            other = yield candidate, candidate_scale
            if compare_levels(other, errors, eps, reached, _TRADE) < 0:
                step, errors, scale, chosen = candidate, other, candidate_scale, made
            made += 1
    for _ in range(_BACKTRACK_STEPS):
        if compare_levels(errors, current, eps, reached, _TRADE) <= 0:
            return chosen
        scale *= 0.5
        errors, chosen = (yield step, scale), made
        made += 1
    return None


def blocked(current, predicted, tolerance):
    """True when no unmet task level can progress by more than ``_PROGRESS`` of its error in
    this step (its ``predicted`` error): the active limits and contacts hold it (a constrained
    optimum, or a local minimum that only an escape leaves), while no contact is deeper than the
    tolerance (pushing out of it is progress too)."""
    first = len(current) - len(predicted)
    if first and current[0] > tolerance:
        return False
    unmet = [(p, c) for p, c in zip(predicted.tolist(), current[first:].tolist()) if c > tolerance]
    return bool(unmet) and all(p >= (1.0 - _PROGRESS) * c for p, c in unmet)


def holds(history, before, after, predicted, touched, tolerance):
    """True when a contact (``touched``: one was active in the step) held the step just taken
    (``before`` → ``after``, the last of ``history``) short of an unmet task level, the step did
    at least half of what it predicted (the linear model is accurate there), and what further
    steps can still gain is under ``_SETTLE`` of every unmet level's error: either this step's
    predicted gain already was (the pose is at the obstacle's constrained optimum to first
    order, so the next step would be ``blocked``), or the gains shrink geometrically,
    ``g_k = ρ g_{k−1}``, and their sum ``g_k ρ/(1 − ρ)`` is (Aitken's extrapolation of a
    linearly converging sequence). The hand of an arm pressed on an obstacle then ends within
    ``_SETTLE`` of its error from where it would settle, without the steps that would follow."""
    first = len(before) - len(predicted)
    unmet = after[first:] > tolerance
    if not touched or not any_true(unmet) or after[0] > tolerance:
        return False
    was, now, expected = before[first:][unmet], after[first:][unmet], predicted[unmet]
    gain = was - expected
    if not all_true(was - now >= 0.5 * gain):
        return False
    if all_true(gain <= _SETTLE * was):
        return True
    if len(history) < 3:
        return False
    left = gain_left(history[-3][first:][unmet] - was, was - now)
    return all_true(left <= _SETTLE * now)


def hopeless(history, best, tolerance):
    """True when the descent since an escape cannot beat ``best`` (the best errors before it):
    the first level unmet in ``best``, extrapolated to where its shrinking gains lead
    (``gain_left``), stays above its best error by more than ``_HOPELESS`` of it, once
    ``_HOPELESS_AFTER`` iterations of the escape have been taken. The escape
    then ends as a stalled one does, instead of descending all the way to a compromise no better
    than the one already found (a target out of reach under the limits settles after its
    escapes in a third of the iterations)."""
    if len(history) < _HOPELESS_AFTER:
        return False
    first = first_unmet(best, tolerance)
    if first is None:
        return False
    older, old, now = (float(errors[first]) for errors in history[-3:])
    left = float(gain_left(older - old, old - now))
    return now - left > (1.0 + _HOPELESS) * float(best[first])


def stalled(history, tolerance):
    """No progress over ``_STALL_WINDOW`` iterations: from the first level unmet then, no level
    lost more than 0.1 % of its error while the levels above it (from that first unmet one)
    lost at most ``_TRADE`` of that gain, the trade ``line_search`` accepts. A higher level
    that a trade step disturbed, e.g. planted feet a few millimetres off while a far hand
    stretches, is progress on the level below, not a stall. Nor, going round: the best state of
    the last window (in priority order) no better than the best of the window before it, so a
    descent cycling through two or three states (the feet 0.09 ↔ 0.11 mm, a hand 0.806 ↔
    0.808 m off, 300 iterations) stalls and escapes."""
    if len(history) <= _STALL_WINDOW:
        return False
    if len(history) > 2 * _STALL_WINDOW and _no_gain(
            _best(history[-2 * _STALL_WINDOW:-_STALL_WINDOW], tolerance),
            _best(history[-_STALL_WINDOW:], tolerance), tolerance):
        return True
    return _no_gain(history[-_STALL_WINDOW - 1], history[-1], tolerance)


def _best(states, tolerance):
    """The best of the level errors ``states`` in priority order."""
    best = states[0]
    for state in states[1:]:
        if better(state, best, tolerance):
            best = state
    return best


def _no_gain(old, new, tolerance):
    """``stalled``'s test of the level errors ``new`` against ``old``. A level already met (within
    the tolerance) gains nothing by converging on: a limb met at 6e-9 m going to 1e-16 beside a
    foot stalled 3.34 mm short under its limits kept that foot's frame from stalling for six
    iterations (eight trials each) on the mocap benchmark's HUMANOID row."""
    first = first_unmet(old, tolerance)
    if first is None:
        return False
    lost = 0.0
    for was, now in zip(old[first:].tolist(), new[first:].tolist()):
        gain = was - now
        if gain > (1.0 - _STALL_RATIO) * was and was > tolerance:
            return lost > _TRADE * gain
        lost += max(-gain, 0.0)
    return True


def gain_left(got_before, got):
    """What a linearly converging descent can still gain after two successive gains
    ``got_before`` then ``got``: ``g ρ/(1 − ρ)`` with ``ρ = got/got_before`` (the geometric series
    of Aitken's Δ² extrapolation), or inf unless ``got_before`` > 0 and ρ < 1."""
    rate = got / np.where(got_before > 0.0, got_before, np.inf)
    return np.where((got_before > 0.0) & (rate < 1.0),
                    got * rate / (1.0 - np.minimum(rate, 1.0 - 1e-12)), np.inf)


class TimeBudget:
    """A solve's time budget (``start``: ms, None for none) as its iterations spend it."""

    def __init__(self):
        self.iteration_ms = None    # the last solve's mean ms per iteration (``end``)
        self.budget = self.started = None

    def start(self, budget):
        self.budget, self.started = budget, time.perf_counter()

    def end(self, iterations):
        if iterations:
            self.iteration_ms = self._elapsed() / iterations

    def _elapsed(self):
        return (time.perf_counter() - self.started) * 1e3

    def out(self, iterations):
        """True when another iteration, as long as the mean of the ``iterations`` done so far,
        would end past the budget: a tick keeps to its budget instead of overrunning it by one
        iteration. The first iteration always runs, so every tick makes progress."""
        if self.budget is None or iterations == 0:
            return False
        return self._elapsed() * (iterations + 1) / iterations >= self.budget

    def settling(self, iterations):
        """How often a step that trades a higher level's last digits for a lower one's progress
        (``compare_levels``) is restored (``Steps.restored``) in the iteration under way, after
        ``iterations`` others: ``SETTLING_PASSES`` when it is the last the budget allows
        (``out`` after it, each iteration as long as their mean; none yet: the last solve's),
        else none. A solve returns its best state in priority order, so such a step is lost
        at the end of a tick, and where every tick's one iteration trades, as on a balanced
        Rigify rig whose hands are dragged past what leaning gives, live posing stayed where it
        was tick after tick (397 mm from where an untimed solve brought the hands within 21)."""
        if self.budget is None:
            return 0
        elapsed = self._elapsed()
        mean = elapsed / iterations if iterations else self.iteration_ms
        return SETTLING_PASSES if mean is not None and elapsed + 2.0 * mean >= self.budget else 0
