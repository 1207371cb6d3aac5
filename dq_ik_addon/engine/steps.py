"""The step kinds of an iteration, in joint units (each component of Δθ times ``column_scale``).

- **Full step** (Baerlocher Fig. 5.12, §5.4.2): the prioritized damped-least-squares step of
  every task level (``prioritized.PrioritizedBasis``; each level's predicted motion clamped,
  §5.2) under the hard rows found by the active set (``active_set``), with the soft rows and the
  rest pull in the remaining null space (``null_space_goals``; a correction and a chord step
  have the soft rows alone). A step that would carry an inequality task across its bound (a
  balance's centre of mass out of its polygon) is solved again with that task held on the
  bound (``TaskSet.arm``), and gets no Chebyshev step.
- **Correction** (every task level within ``_POLISH`` × tolerance): no rest pull, and it first
  tries the limit rows that the previous iteration ended on and that still rest on their bound,
  kept if it meets every level to first order (``_polished``).
- **Chebyshev step**: the first step of a solve whose linear model meets the tasks (within
  ``_LINEAR``) is solved again for the errors less their second-order change along it
  (``TaskSet.second_order``), and tried first: it leaves a third-order error instead of
  Newton's second-order one (Traub 1964, §5.4).
- **Chord step** (a correction within ``_CHORD`` × tolerance, no contacts): the last full step's
  decompositions with the new errors (Kelley, Iterative Methods for Linear and Nonlinear
  Equations, §5.4): linear convergence at a quarter to a third of an iteration's cost.
"""

import numpy as np

from .acceptance import RESTORED_WITHIN, SETTLING_PASSES, better, compare_levels, first_unmet
from .active_set import RESTING, active_set_steps
from .constraint_rows import ConstraintRows
from .null_space_goals import held_rows, null_space_goal, rest_pull
from .prioritized import PrioritizedBasis
from .quaternion import any_true
from .slides import FIRST_ITERATIONS, FIRST_WEIGHT
from .straightening import newton_levels

# A step is a correction when every task level is within _POLISH × tolerance; it may keep the last
# active rows when it meets every level to first order within _POLISHED × tolerance
_POLISH = 1000.0  # 10 mm at the default tolerance: well inside a Newton step's quadratic range
_POLISHED = 0.1
# A correction with every level within _CHORD × tolerance first tries a chord step; it is kept
# when it takes the first unmet level to _CHORD_GAIN of its error or less, and the next one tries
# it again while it takes it to _CHORD_RATE or less
_CHORD = 30.0  # where one chord (rate ~ the last step's length) usually meets the tolerance
_CHORD_GAIN = 0.5
_CHORD_RATE = 0.25
# The first step is corrected to second order when its linear model takes every task level to
# within _LINEAR of its error (or the tolerance): a step that limits or clamps hold short of that
# is no Newton step to correct
_LINEAR = 0.05


class Steps:
    """The step kinds of one solver's iterations, with what one iteration leaves for the next:
    the final active rows (in ``update.held``), whether corrections may still reuse them, the
    last full step's decompositions for a chord step, whether a contact was active, and the
    last full step's predicted group errors (``Problem.predicted``; None when every level is
    one group)."""

    def __init__(self, problem, update):
        self.problem, self.update = problem, update
        self.parts = problem.parts    # the tasks' parts (``active_set``, ``prioritized``)
        self.touched = False
        self.predicted_groups = self.soft_rows = None
        self.begin()

    def begin(self):
        """Start a solve: corrections may reuse active rows again, the levels start from the
        rows' least-norm point again (``from_the_feasible_point``), and slides weigh as a turn
        per L/4 (``weigh``)."""
        self.restart()
        self.polishing = True
        self.from_feasible = False
        self.counts = {"full": 0, "chord": 0, "decompositions": 0}
        self.problem.weigh_slides(FIRST_WEIGHT)

    def weigh(self, iterations):
        """After the solve's first ``FIRST_ITERATIONS`` iterations, slides weigh as a turn per
        L (``slides``); the last decompositions, made with the first weight, are forgotten."""
        if iterations == FIRST_ITERATIONS and self.problem.slides.weight != 1.0:
            self.problem.weigh_slides(1.0)
            self.restart()

    def restart(self):
        """Forget the last iteration's active rows and decompositions (an escape restarts)."""
        self.update.held, self.chord_basis = None, None

    def from_the_feasible_point(self):
        """After a step of which the line search kept no scale, solve this solve's further steps
        with the levels started from the feasible point of the active set
        (``active_set_steps``' ``from_feasible``), and say so (True: try the iteration again);
        False when they are already, or the solve has no hard rows (no limits, no contacts:
        ``update.held`` is set by the first step that has them)."""
        if self.from_feasible or self.update.held is None:
            return False
        self.from_feasible = True
        return True

    def is_correction(self, current):
        """Every task level of ``current`` is within ``_POLISH`` × tolerance (and corrections
        have not failed in this solve)."""
        tasks = self.problem.task_levels()
        return self.polishing and max(current[len(current) - tasks:].tolist()) <= \
            _POLISH * self.problem.settings.tolerance

    def full(self, world, rotations, errors, preferred, polish=False):
        """``(steps, predicted, corrected)``: ``prioritized_step``'s list of steps (in joint
        units), each task level's predicted error after the full one, and the Chebyshev step
        (None when there is none). A step that would take an inequality task across its bound
        is solved again with that task held on it (``TaskSet.arm``), and has no Chebyshev
        step."""
        problem = self.problem
        frame = problem.joint_frames(world)
        levels = list(zip(problem.level_jacobians(world, frame), problem.level_task_errors(errors)))
        pull = None if preferred is rotations or polish else \
            rest_pull(problem, rotations, preferred, levels)
        self.soft_rows, secondary = null_space_goal(problem, world, frame, pull)
        options = (secondary, *problem.step_limits())
        rows, rhs, pinned = self._constraint_rows(world, rotations, frame)
        self.counts["full"] += 1
        steps, predicted, basis, start = self._solved(
            levels, rows, rhs, pinned, options, polish, newton_levels(problem, world, errors, levels))
        armed = problem.tasks.arm(world, frame, problem.column_scale * steps[-1], errors)
        if armed is not None:
            try:
                levels = list(zip(problem.level_jacobians(world, frame),
                                  problem.level_task_errors(armed)))
            finally:
                problem.tasks.disarm()
            steps, predicted, basis, start = self._solved(
                levels, rows, rhs, pinned, options,
                wanted=newton_levels(problem, world, armed, levels))
        corrected = None if pull is not None or polish or basis is None or armed else \
            self._corrected(world, frame, levels, predicted, errors, steps[-1], basis, start,
                            secondary)
        scale = problem.column_scale
        return [scale * y for y in steps], predicted, corrected

    def _solved(self, levels, rows, rhs, pinned, options, polish=False, wanted=None):
        """``(steps, predicted, basis, start)`` of the prioritized step of ``levels`` (or of
        ``wanted``, the same Jacobians with the errors a Newton step solves for, when given) under
        the hard ``rows`` (None: none) found by the active set, or kept from the last iteration in
        a correction (``_polished``), and the errors ``levels`` would have after it to first
        order; its decompositions kept for a chord step."""
        problem, predicted, start = self.problem, None, None
        wanted = levels if wanted is None else wanted
        if rows is None:
            basis = PrioritizedBasis([jac for jac, _ in wanted], None, self.parts)
            steps = basis.steps([err for _, err in wanted], None, *options)
            self.counts["decompositions"] += 1
            self.touched = False
        else:
            polished = self._polished(levels, wanted, rows, rhs, pinned, options) if polish \
                else None
            if polished is not None:
                steps, active, start, basis, predicted = polished
            else:
                steps, active, start, basis, built = active_set_steps(
                    wanted, rows, rhs, pinned, *options, self.from_feasible, self.parts)
                self.counts["decompositions"] += built
            self.update.held = active[:rows.owner.size]
            self.touched = any_true(active[rows.owner.size:])
        self.chord_basis = basis
        if predicted is None or problem.split:
            predicted, self.predicted_groups = problem.predicted(levels, steps[-2])
        return steps, predicted, basis, start

    def _corrected(self, world, frame, levels, predicted, errors, step, basis, start, goal):
        """The Chebyshev step (joint units), or None unless the step's linear model meets every
        level within ``_LINEAR``: ``step`` solved again, with the same Jacobians and active rows,
        for the errors less their second-order change under it, with the soft rows of ``goal``
        (the step's ``NullSpaceGoal``, which has no pull here, or None). A warm solve's first
        step then usually lands within a chord step's reach or meets the tolerance outright."""
        problem = self.problem
        tol = problem.settings.tolerance
        now = [float(np.sqrt(err.dot(err))) for _, err in levels] if not problem.split else \
            problem.level_errors(world, errors)[-len(levels):].tolist()
        if any(p > max(tol, _LINEAR * e) for p, e in zip(predicted.tolist(), now)):
            return None
        delta = (problem.column_scale * step).reshape(-1, 3)
        changes = problem.tasks.second_order(frame, world, delta, problem.chain_orders, errors)
        corrected = problem.level_task_errors([e - s for e, s in zip(errors, changes)])
        return problem.column_scale * basis.steps(
            corrected, None if start is None else start[0], goal, *problem.step_limits())[-1]

    def _polished(self, levels, wanted, rows, rhs, pinned, options):
        """``(steps, active, start, basis, predicted)`` of a correction (solving ``wanted``,
        predicting ``levels``, as ``_solved``) that starts from the limit rows active at the end
        of the previous iteration that still rest on their bound (slack ≤ ``RESTING``) instead
        of finding them again pass by pass, or None. The step is kept when it meets every level
        to first order (≤ ``_POLISHED`` × tolerance), which is all a correction needs; otherwise
        the iteration is solved afresh and polishing ends for this solve. A new solve always
        starts afresh, so a joint never stays on its limit just because it was there."""
        if self.update.held is None:
            return None
        count = rows.owner.size
        held = self.update.held & (rhs[:count] <= RESTING)
        if rows.count > count:
            held = np.concatenate([held, np.zeros(rows.count - count, bool)])
        held &= ~pinned
        if not any_true(held):
            return None
        steps, active, start, basis, built = active_set_steps(
            wanted, rows, rhs, pinned | held, *options, self.from_feasible, self.parts)
        self.counts["decompositions"] += built
        predicted = self.problem.predicted(levels, steps[-2])[0]
        if (predicted <= _POLISHED * self.problem.settings.tolerance).all():
            return steps, active, start, basis, predicted
        self.polishing = False
        return None

    def chord(self, state, measure):
        """The accepted chord step from the solve's ``state`` as ``measure``'s ``(q, world,
        errors, levels)``, or None (then the iteration takes a full step). Kept when it takes
        the first unmet level to ``_CHORD_GAIN`` of its error or less without making any level
        worse; the basis is kept for the next correction while it gets to ``_CHORD_RATE`` or
        less. The held joints stay on their limits as in a full step; the step carries no rest
        pull. Not used with contacts, whose rows change with every step."""
        problem, tol = self.problem, self.problem.settings.tolerance
        q, world, errors, current = state
        if self.chord_basis is None or problem.contacts is not None \
                or max(current.tolist()) > _CHORD * tol:
            return None
        basis, self.chord_basis = self.chord_basis, None
        step = problem.column_scale * basis.steps(
            problem.level_task_errors(problem.tasks.newton_errors(world, errors)), None,
            held_rows(problem, self.soft_rows, world),
            *problem.step_limits())[-1]
        state = measure(self.update(q, step, 1.0, current_parameters=True))
        levels = state[-1]
        first = first_unmet(current, tol)
        gain = 0.0 if first is None else float(levels[first]) / float(current[first])
        if gain > _CHORD_GAIN or compare_levels(levels, current, tol * 1e-3, 0.5 * tol) >= 0:
            return None
        if gain <= _CHORD_RATE:
            self.chord_basis = basis
        self.counts["chord"] += 1
        return state

    def restored(self, state, current, measure, passes=1):
        """``state`` (a trial of the last full step from levels ``current``), or it with the
        levels above ``current``'s first one more than ``RESTORED_WITHIN`` tolerances off (not
        left a few off for the next step to put back) restored by a second-order correction when
        that is better in priority order: the last full step's decompositions (``chord_basis``)
        solve them again for their errors at the trial, ``Δ_c = J⁺ e(x + Δ)`` truncated after
        them (Nocedal & Wright §15.6, the Maratos effect): a lower level's null-space motion
        drifts the levels above off their targets to second order (a pelvis dragged down between
        planted feet), for which the line search would halve the step. Up to ``passes``
        corrections, each from the last, while they improve it and those levels are unmet."""
        basis, tol = self.chord_basis, self.problem.settings.tolerance
        first = first_unmet(current, RESTORED_WITHIN * tol)
        tasks_from = len(current) - self.problem.task_levels()    # (contacts first)
        if basis is None or first is None or first <= tasks_from:
            return state
        above = first - tasks_from
        problem = self.problem
        for _ in range(passes):
            if max(state[-1][tasks_from:first].tolist()) <= 0.5 * tol:
                break
            fix = basis.steps(problem.level_task_errors(state[2]), None,
                              held_rows(problem, self.soft_rows, state[1]),
                              *problem.step_limits())[above - 1]
            fixed = measure(self.update(state[0], problem.column_scale * fix, 1.0,
                                        current_parameters=True))
            if compare_levels(fixed[-1], state[-1], 0.0, 0.5 * tol) >= 0:
                break
            state = fixed
        return state

    def settled(self, state, best, measure):
        """``best``, or the stalled ``state`` with the levels above ``best``'s first unmet one
        restored (``restored``, ``SETTLING_PASSES``) if that is better in priority order: a
        descent that traded their last digits for a lower one's progress stalls with them off
        (a hand 1.4 m forward and down under Balance: 1119 mm short, restored 455 mm)."""
        tol = self.problem.settings.tolerance
        settled = state if better(state[3], best[3], tol) else \
            self.restored(state, best[3], measure, SETTLING_PASSES)
        return settled if better(settled[3], best[3], tol) else best

    def _constraint_rows(self, world, rotations, frame):
        """``(rows, rhs, pinned)`` of this iteration (``None`` when there are none): limit rows of
        the limited joints, contact rows of the capsule points near an obstacle; ``pinned`` marks
        the equalities (locked axes) and penetrating contacts, active from the start."""
        problem = self.problem
        limits, contacts = problem.limits, problem.contacts
        if limits is None and contacts is None:
            return None, None, None
        owner, gradient, rhs, pinned = np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros(0), \
            np.zeros(0, bool)
        if limits is not None:
            self.update.tangent = params, sens = self.update.joint_terms(rotations)
            owner, gradient, rhs, pinned = limits.rows(params, sens)
        if contacts is not None:
            dense, contact_rhs = contacts.rows(world, frame,
                                               problem.settings.contact_band * problem.size)
            rows = ConstraintRows(problem.column_joints.size, owner, gradient,
                                  dense * problem.column_scale)
            rhs = np.concatenate([rhs, contact_rhs])
            pinned = np.concatenate([pinned, contact_rhs < 0.0])
        else:
            rows = ConstraintRows(problem.column_joints.size, owner, gradient)
        if rows.count == 0:
            return None, None, None
        return rows, rhs, pinned
