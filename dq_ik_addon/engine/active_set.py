"""The active set of one step: the hard rows (joint limits, contacts) a prioritized step keeps.

Primal active-set rule (Nocedal & Wright §16.5; Baerlocher §5.4.2 adds the limits one at a time
too): start with the rows active from the start (equalities, penetrating contacts), solve every
priority level under them, add the first row the step runs into, solve again, until the step
violates nothing. The set starts afresh every iteration, so a joint on its limit leaves it as soon
as the step points inward. Where the tasks fall into parts that share no joint
(``independent_parts``: limb chains), each part's first row joins in the same pass: four limbs
resting on their limits took a pass each, six decompositions a step, now three.

Each pass solves the levels from the rows' least-norm point ``C⁺ r``, which moves the joints
that hit their bounds alone. The levels above may not be able to make up for that with the
joints left (a balance step that ran the legs into their limits broke, to first order, the
planted feet it ranks below; no scale of it was kept), so a solve whose line search kept
nothing solves its further steps ``from_feasible``: from the feasible point the passes reached,
where the rows that joined lie on their bounds and every level is where the steps before took
it, less its part in the null space of the rows and every level (``_origin``: no level asks for
it; the rest pull decides it). Not from the start: the feasible point depends on the order the
rows were hit in, and bakes of redundant chains then turned the feet 5-8° between frames.
"""

import numpy as np

from .prioritized import PrioritizedBasis
from .quaternion import any_true

# More passes than this and the step is the last feasible point (none has been needed on a rig)
_MAX_PASSES = 24
# A row is violated when the step passes its bound by more than this (rounding of G Δ)
_VIOLATION_TOLERANCE = 1e-10
# Rows this close to their bound (radians, ellipse ratio or metres) that a step pushes against
# rest on it; rows a step hits within this fraction of its length after the first are hit with it
RESTING = 1e-4
SIMULTANEOUS = 1e-3


def active_set_steps(levels, rows, rhs, active, secondary, damping, max_motion, max_turn,
                     from_feasible=False, parts=None):
    """``(steps, active, start, basis, decompositions)``: ``prioritized_step`` of ``levels`` under the rows
    ``active`` from the start and those the step runs into (``first_blocking_rows``), the final
    active set, the point its levels started from (``C⁺ r``, or with ``from_feasible`` the
    feasible point, module docstring) with the rows' null-space projector ``I − C⁺C``, the
    ``PrioritizedBasis`` of the
    levels under them (None when the passes ran out and the step is the last feasible point), and
    how many ``PrioritizedBasis`` it built (one per pass). With ``parts`` (the
    ``IndependentParts`` of the tasks), every part's first blocking row joins in the same
    pass: the parts share no joint, and each is damped and clamped on its own (``prioritized``),
    so a row of one does not change another's step."""
    active = active.copy()
    joint_parts = None if parts is None else parts.joints
    if joint_parts is None:     # one part: every row, contacts' included
        row_parts, count = np.zeros(rows.count, dtype=np.int64), 1
    else:
        row_parts, count = joint_parts[rows.owner], parts.count
    start = rows.solution(active, rhs) if any_true(active) else \
        (np.zeros(3 * rows.joints), np.eye(3 * rows.joints))
    jacobians, errors = [jac for jac, _ in levels], [err for _, err in levels]
    limits = (secondary, damping, max_motion, max_turn)
    basis = PrioritizedBasis(jacobians, start[1], parts)
    origin = start[0]
    steps = basis.steps(errors, origin, *limits)
    feasible, at_feasible = start[0], None      # the feasible point's row values, once needed
    violated = rhs + _VIOLATION_TOLERANCE
    decompositions = 1
    for _ in range(_MAX_PASSES):
        at_end = rows.times(steps[-2])
        over = ~active & (at_end > violated)
        if not any_true(over):
            break
        if at_feasible is None:
            at_feasible = rows.times(feasible)
        blocking, alpha = first_blocking_rows(rhs, over, at_feasible, at_end, row_parts, count)
        if any_true(alpha > 0.0):     # (rows resting on their bound join where it starts)
            along, rows_along = (alpha[0], alpha[0]) if joint_parts is None else \
                (np.repeat(alpha[joint_parts], 3), alpha[row_parts])
            feasible = feasible + along * (steps[-2] - feasible)
            at_feasible = at_feasible + rows_along * (at_end - at_feasible)
        start = rows.with_rows(start, blocking, rhs, not any_true(active[rows.owner.size:]))
        active[blocking] = True
        basis = PrioritizedBasis(jacobians, start[1], parts)
        decompositions += 1
        origin = _origin(basis, start[0], feasible) if from_feasible else start[0]
        steps = basis.steps(errors, origin, *limits)
    else:
        steps, at_end, basis = [feasible] * len(steps), at_feasible, None
    if secondary is not None:
        steps[-1] = steps[-2] + fit_inside(rows, rhs, at_end, steps[-1] - steps[-2])
    return steps, active, (origin, start[1]), basis, decompositions


def _origin(basis, least, feasible):
    """``feasible`` less ``P_K (feasible − C⁺ r)``, its part in the null space of the rows and
    every level (``least``: C⁺ r; the two points differ in the rows' null space alone)."""
    return feasible - basis.null_space(feasible - least)


def first_blocking_rows(slack, over, at_start, at_end, row_parts, parts):
    """The indices of the rows hit first on the segment ``start → end`` in each of the ``parts``
    (``row_parts``: the part of each row), among the inactive rows ``over`` that ``end``
    violates, given the row values ``G·start`` and ``G·end``; and where (each part's α, 0 for a
    part with none).

    Only the first blocking row of a part joins the active set: adding every row the full step
    violates at once can pin joints that the optimum leaves free and turn the step uphill. Rows
    hit at the same place count as one: those within ``RESTING`` of their bound (a joint left on
    its limit by the last projection, a contact settled at the margin) all join at α = 0, and
    otherwise those hit within ``SIMULTANEOUS`` of the segment after the first join with it
    (neighbouring samples of a capsule meeting an obstacle), each of which would otherwise cost
    a pass that barely moves. The rows come part by part, each part's in index order.
    """
    candidates = over.nonzero()[0]
    part = row_parts[candidates]
    room = slack[candidates] - at_start[candidates]
    resting = room <= RESTING
    held = np.zeros(parts, dtype=bool)     # parts with rows at their bound: those join, α = 0
    held[part[resting]] = True
    along = room / np.where(resting, 1.0, at_end[candidates] - at_start[candidates])
    first = np.full(parts, np.inf)
    np.minimum.at(first, part, np.where(resting, np.inf, along))
    joins = np.where(held[part], resting, along <= first[part] + SIMULTANEOUS)
    blocking = candidates[joins]
    alpha = np.where(held | np.isinf(first), 0.0, np.clip(first, 0.0, 1.0))
    return blocking[np.argsort(part[joins], kind='stable')], alpha


def fit_inside(rows, slack, at_step, extra):
    """``α · extra`` with the largest α ∈ [0, 1] for which ``rows (step + α extra) ≤ slack``,
    given ``at_step = rows · step``.

    The rest pull is the lowest priority: it must not recruit limit rows the tasks did not
    need (their equality would then drag the task step), so it is shortened instead.
    """
    growth = rows.times(extra)
    room = slack + _VIOLATION_TOLERANCE - at_step
    limiting = growth > 1e-15
    if not any_true(limiting):
        return extra
    alpha = min(max(float((np.maximum(room[limiting], 0.0) / growth[limiting]).min()), 0.0), 1.0)
    return alpha * extra
