"""The line search part by part, where a solve's tasks fall into parts that share no moved joint.

Tasks are linked when some moved joint (a Jacobian column) moves both bones, at any priority
level: a joint of either chain, or one above a chain that still carries it (a pelvis pinned
above two arms on Chain Length 2 turns their targets' chains about it, and moves the heads
their reach is measured from). The connected components of that relation (``connected``) are the
solve's parts: four limb chains of two bones below still bones make four. A part's task errors
are a function of its own columns only, so one measure of a step gives each part's errors under
its own share of the step, whatever the other parts' shares are. Each part then runs its own
line search (``acceptance.step_search``), all of them in step: every trial combines each part's
current candidate (or the step it has kept) into one step, measured once, and each search is
sent its part's level errors (the sums of its groups' errors, ``Problem.level_errors``). A part
held on its limits (a foot out of reach under them) halves its own step, not the others': with
one scale for all, a hand beside it converged linearly, by a quarter of its step per iteration,
and frames of a motion capture clip under the HUMANOID limits took 21–119 iterations.

The combined step is kept when it makes no level worse in priority order, as ``line_search``
would; otherwise (a second-order restoration inside the trial, ``Steps.restored``, acts on every
part at once) the whole step goes through ``line_search`` instead. When no part keeps any share
of its step, there is none (the whole step's first trial was not kept either). Solves with
contacts (their penetration is one total), loop tasks (a loop's error reads its partner's chain
too), keepers (a bone turned as another, ``kept_rotations``) or a balance (its centre of mass
moves with every limb) are searched whole.
"""

import numpy as np

from .acceptance import _TRADE, better, compare_levels, line_search, step_search
from .jacobian import column_mask


def connected(linked):
    """The transitive closure of the symmetric, reflexive relation ``linked`` (T,T) bool (at
    most log2(T) squarings): row t marks the tasks of t's connected component."""
    while True:
        closed = (linked.astype(np.int64) @ linked.astype(np.int64)) > 0
        if np.array_equal(closed, linked):
            return linked
        linked = closed


class IndependentParts:
    """The parts of one solve's tasks (module docstring): each part's step components and the
    matrix that sums its groups' errors into its level errors."""

    def __init__(self, masks, group_sums, group_levels, column_rows, level_tasks):
        """``masks`` (T, 3C): the step components that move each task's bone (``column_mask``
        of the columns that are the bone or its ancestors);
        ``group_sums`` (G, T) and ``group_levels`` (L, G): ``Problem``'s groups of tasks and the
        levels they are on; ``column_rows`` (C,): the row of the solve's state each column
        moves (a turning joint's rotation, a sliding bone's location); ``level_tasks``: per
        level, the task of each of its three error rows (``Problem.level_task_errors``)."""
        parts = np.unique(connected((masks.astype(np.int64) @ masks.T.astype(np.int64)) > 0
                                    | np.eye(len(masks), dtype=bool)), axis=0)
        self.count = len(parts)
        self.components = [masks[part].any(axis=0) for part in parts]   # (3C,) each
        # for the damping part by part (``PrioritizedBasis``): each column's part (3C, P); per
        # level each part's error rows (P, rows), and the rows' order part by part with its inverse
        self.column_parts = np.array(self.components, dtype=float).T
        self.level_rows = [parts[:, tasks].astype(float) for tasks in level_tasks]
        orders = [np.argsort(np.argmax(rows, axis=0), kind='stable') for rows in self.level_rows]
        self.level_orders = [(order, np.argsort(order)) for order in orders]
        self.rows = [column_rows[c.reshape(-1, 3).any(axis=1)] for c in self.components]
        self.joints = np.argmax([c.reshape(-1, 3).any(axis=1) for c in self.components],
                                axis=0)    # (C,): the part of each column's joint
        member = (parts.astype(float) @ group_sums.T) > 0.0            # (P, G)
        self.levels = group_levels[None, :, :] * member[:, None, :]     # (P, L, G)

    @classmethod
    def of(cls, problem):
        """The parts of ``problem``'s tasks, or None when there are fewer than two or the solve
        is searched whole (module docstring)."""
        tasks = problem.tasks
        if problem.contacts is not None or problem.keepers.size or len(tasks) < 2 or any(
                t.partner >= 0 or t.body is not None for t in tasks.tasks):
            return None
        turning = problem.joints.size
        rows = np.concatenate([problem.joints, len(problem.model) + np.arange(
            problem.column_joints.size - turning)])
        parts = cls(column_mask(problem.moves[:, tasks.bones].T, problem.column_joints),
                    problem.group_sums, problem.group_levels, rows,
                    [np.repeat(level, 3) for level in problem.level_tasks])
        return parts if parts.count > 1 else None

    def line_search(self, trial, groups_of, step_scale, steps, current, predicted, corrected,
                    tolerance, current_groups, predicted_groups):
        """``line_search``'s accepted trial, or None, searched part by part (module docstring):
        ``groups_of(state)``: a trial's group errors; ``current_groups``, ``predicted_groups``:
        the groups' errors now and after the full step to first order."""
        now, after = self.levels.dot(current_groups), self.levels.dot(predicted_groups)
        searches = [step_search(step_scale, [part * step for step in steps], now[p], after[p],
                                None if corrected is None else part * corrected, tolerance)
                    for p, part in enumerate(self.components)]
        tried = [[] for _ in searches]     # each part's candidates, in the order it asked
        chosen = [None] * self.count        # each part's kept candidate (None: no step)
        pending = {p: next(search) for p, search in enumerate(searches)}
        state, combined = None, None
        while pending:
            for p, candidate in pending.items():
                tried[p].append(candidate)
            combined = [pending.get(p, chosen[p]) for p in range(self.count)]
            state = trial(_sum(combined), 1.0)
            errors = self.levels.dot(groups_of(state))
            for p in list(pending):
                try:
                    pending[p] = searches[p].send(errors[p])
                except StopIteration as stop:
                    del pending[p]
                    chosen[p] = None if stop.value is None else tried[p][stop.value]
        if all(candidate is None for candidate in chosen):
            return None
        if any(a is not b for a, b in zip(chosen, combined)):
            state = trial(_sum(chosen), 1.0)
        if compare_levels(state[-1], current, tolerance * 1e-3, 0.5 * tolerance, _TRADE) <= 0:
            return state
        return line_search(trial, step_scale, steps, current, predicted, corrected, tolerance)


class PartBests:
    """The best state each part of a solve came to rest in (``Solver.solve``: the stalls that it
    escapes from), in that part's own priority order, and the state that puts every part where
    it was best. An escape restarts every stalled chain at once, and the best state is chosen
    in priority order over all of them, so one that brings a hand much nearer while a foot on
    the level above ends a little farther is lost; the parts share no moved joint, so each can
    be taken from its own best stall (the basic metarig's four limbs on Chain Length 2 under
    the HUMANOID limits, every target out of reach: the hands 30-40 mm nearer on average)."""

    def __init__(self, parts, tolerance):
        self.parts, self.tolerance = parts, tolerance
        self.levels = [None] * parts.count     # each part's best level errors so far
        self.rows = [None] * parts.count       # ... and its state's rows then

    def see(self, state, groups):
        """Take the stalled ``state`` (``(q, world, errors, levels)``) with its group errors."""
        levels = self.parts.levels.dot(groups)
        for p, rows in enumerate(self.parts.rows):
            if self.levels[p] is None or compare_levels(levels[p], self.levels[p], 0.0,
                                                        0.5 * self.tolerance) < 0:
                self.levels[p], self.rows[p] = levels[p], state[0][rows]

    def composed(self, best, groups, measure):
        """``best`` (with its group errors ``groups``), or, when some part was better at a stall
        (by a tenth of the tolerance), the state with every such part as it was there, if that
        is better in priority order (``measure(q)``: a state of the rotations ``q``)."""
        tolerance, now = self.tolerance, self.parts.levels.dot(groups)
        nearer = [p for p, levels in enumerate(self.levels) if levels is not None
                  and compare_levels(levels, now[p], 0.1 * tolerance, 0.5 * tolerance) < 0]
        if not nearer:
            return best
        q = best[0].copy()
        for p in nearer:
            q[self.parts.rows[p]] = self.rows[p]
        state = measure(q)
        return state if better(state[3], best[3], tolerance) else best


def _sum(candidates):
    """The step of the parts' ``(step, scale)`` candidates (None: that part stays)."""
    return sum(scale * step for step, scale in (c for c in candidates if c is not None))


def search_step(problem, trial, steps, current, predicted, corrected, current_groups,
                predicted_groups):
    """``acceptance.line_search`` of a step of ``problem``'s solve, part by part when its tasks
    fall into parts (``Problem.parts``) and the first step tried is not kept whole (it usually
    is: then the parts would keep it too, and searching them costs more than the search; each
    step is measured once); ``current_groups``, ``predicted_groups``: its groups' errors now
    and after the full step to first order."""
    tolerance, parts = problem.settings.tolerance, problem.parts
    if parts is None:
        return line_search(trial, problem.step_scale, steps, current, predicted, corrected,
                           tolerance)
    trial = _measured_once(trial)
    whole = step_search(problem.step_scale, steps, current, predicted, corrected, tolerance)
    first = trial(*next(whole))
    try:
        whole.send(first[-1])
    except StopIteration:
        return first        # kept at once
    return parts.line_search(trial, problem.state_groups, problem.step_scale, steps, current,
                             predicted, corrected, tolerance, current_groups, predicted_groups)


def _measured_once(trial):
    """``trial`` that measures each step once: the parts' first combined step is usually the
    step tried whole."""
    measured = {}

    def once(step, scale):
        key = (scale * step).tobytes()
        if key not in measured:
            measured[key] = trial(step, scale)
        return measured[key]
    return once
