"""The IK solve: iterate prioritized, joint-limited steps from a warm start until the tasks settle.

Each iteration (DESIGN.md §4; Baerlocher Fig. 5.12 and §5.4.2):

1. FK of the current rotations; task errors, clamped per level to ``max_task_step`` (§5.2).
2. Jacobians of the tasks over the joints any task may move; orientation rows are scaled by the
   chain size L so that metres and radians weigh alike; rows weighted by √weight within a level.
3. Joint stiffness as a weighted minimum norm: ``Δθ = W^½ y`` with ``W = diag(1 − stiffness)``.
4. Joint limits as an active set above every task: start empty, solve, add every row the step
   violates, solve again (a joint on its limit leaves it as soon as the step points inward).
5. The rest pull ``z = rest_weight · 2 log(q_pref ⊗ q*)`` in the remaining null space.
6. Backtracking on the step length until the level errors do not get worse in priority order,
   then ``q ← project(exp(½ Δθ) ⊗ q)``, renormalized with ``w ≥ 0``.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from .jacobian import joint_axes, task_jacobian
from .limit_constraints import limit_rows
from .limits import project_to_limits
from .prioritized import prioritized_step
from .quaternion import qcanonical, qconj, qexp, qlog, qmul, qnormalize
from .tasks import TaskSet

_MAX_ACTIVE_SET_PASSES = 8
_BACKTRACK_STEPS = 6
_VIOLATION_TOLERANCE = 1e-10
_MAX_UNFOLDS = 3
_UNFOLD_ANGLE = 0.15
_STRAIGHT_COSINE = np.cos(np.radians(2.0))


@dataclass
class SolverSettings:
    """``tolerance`` in metres (orientation tasks: radians); ``damping`` and ``max_task_step`` are
    fractions of the chain size; ``max_joint_step`` in radians per iteration."""

    max_iterations: int = 100
    tolerance: float = 1e-5
    damping: float = 0.05
    rest_weight: float = 0.1
    max_task_step: float = 0.25
    max_joint_step: float = 0.6
    time_budget_ms: float = None


@dataclass
class SolveResult:
    rotations: np.ndarray
    iterations: int
    position_errors: np.ndarray
    rotation_errors: np.ndarray
    converged: bool
    level_errors: list = field(default_factory=list)


def chain_size(model):
    """L: the longest head-to-tail distance from a root, at rest (≥ 1 mm)."""
    heads = model.rest_matrices[:, :3, 3]
    tails = model.tails(model.rest_matrices)
    root_of = np.arange(len(model))
    for idx, parent_idx in model.levels:
        root_of[idx] = root_of[parent_idx]
    reach = np.linalg.norm(np.concatenate([heads, tails]) - np.concatenate([heads, heads])[
        np.concatenate([root_of, root_of])], axis=1)
    return max(float(reach.max(initial=0.0)), 1e-3)


class Solver:
    """Solves one set of tasks on one model; reusable across solves with new targets."""

    def __init__(self, model, tasks, limits=None, stiffness=None, settings=None, locations=None):
        self.model = model
        self.tasks = tasks if isinstance(tasks, TaskSet) else TaskSet(model, tasks)
        self.limits = limits
        self.settings = settings or SolverSettings()
        self.locations = None if locations is None else np.asarray(locations, dtype=np.float64)
        self.size = chain_size(model)
        n = len(model)
        stiffness = np.zeros(n) if stiffness is None else np.clip(np.asarray(stiffness, float), 0, 1)
        moved = self.tasks.joint_masks.any(axis=0) & (stiffness < 1.0)
        self.joints = np.nonzero(moved)[0]
        self.column_scale = np.repeat(np.sqrt(1.0 - stiffness[self.joints]), 3)
        self.limits_of_joints = None if limits is None else type(limits)(
            *(np.asarray(field_values)[self.joints] for field_values in limits))
        self.level_rows = [self.tasks.priorities == level for level in self.tasks.levels]

    # -- errors -----------------------------------------------------------------------------
    def _errors(self, rotations):
        world = self.model.matrices(rotations, self.locations)
        position, rotation = self.tasks.errors(self.model, world)
        return world, position, rotation

    def _level_errors(self, position, rotation):
        per_task = self.tasks.weights * (np.einsum('ij,ij->i', position, position)
                                         + self.size ** 2 * np.einsum('ij,ij->i', rotation, rotation))
        return np.array([np.sqrt(per_task[rows].sum()) for rows in self.level_rows])

    # -- one step ---------------------------------------------------------------------------
    def _levels(self, world, rotations, position, rotation):
        model, tasks = self.model, self.tasks
        axes = joint_axes(world, rotations)
        points = model.tails(world)[tasks.bones]
        j_pos, j_rot = task_jacobian(axes, world[:, :3, 3], points, tasks.joint_masks, self.joints)
        j_pos = j_pos * self.column_scale
        j_rot = j_rot * (self.column_scale * self.size)
        root_w = np.sqrt(tasks.weights)[:, None, None]
        max_step = self.settings.max_task_step * self.size
        levels = []
        for rows in self.level_rows:
            pos_rows = rows & tasks.has_position
            rot_rows = rows & tasks.has_rotation
            jac = np.concatenate([(root_w[pos_rows] * j_pos[pos_rows]).reshape(-1, j_pos.shape[-1]),
                                  (root_w[rot_rows] * j_rot[rot_rows]).reshape(-1, j_rot.shape[-1])])
            err = np.concatenate([(root_w[pos_rows, :, 0] * position[pos_rows]).ravel(),
                                  (root_w[rot_rows, :, 0] * rotation[rot_rows] * self.size).ravel()])
            norm = np.linalg.norm(err)
            if norm > max_step:
                err *= max_step / norm
            levels.append((jac, err))
        return levels

    def _constraint_matrix(self, owner, gradient):
        rows = np.zeros((owner.size, 3 * self.joints.size))
        cols = 3 * owner[:, None] + np.arange(3)
        rows[np.arange(owner.size)[:, None], cols] = gradient
        return rows * self.column_scale

    def _step(self, world, rotations, position, rotation, preferred):
        levels = self._levels(world, rotations, position, rotation)
        q = rotations[self.joints]
        pull = 2.0 * qlog(qcanonical(qmul(preferred[self.joints], qconj(q)))).ravel()
        secondary = self.settings.rest_weight * pull * self.column_scale
        damping = self.settings.damping * self.size
        if self.limits is None:
            return [self.column_scale * y for y in prioritized_step(levels, None, secondary, damping)]
        owner, gradient, slack = limit_rows(q, self.limits_of_joints)
        full = self._constraint_matrix(owner, gradient)
        active = np.zeros(owner.size, dtype=bool)
        for _ in range(_MAX_ACTIVE_SET_PASSES):
            constraint = (full[active], np.maximum(slack[active], 0.0))
            steps = prioritized_step(levels, constraint, secondary, damping)
            violated = ~active & (full @ steps[-1] > np.maximum(slack, 0.0) + _VIOLATION_TOLERANCE)
            if not violated.any():
                break
            active |= violated
        return [self.column_scale * y for y in steps]

    def _apply(self, rotations, step, scale):
        new = rotations.copy()
        delta = (scale * step).reshape(-1, 3)
        new[self.joints] = qcanonical(qnormalize(qmul(qexp(0.5 * delta), rotations[self.joints])))
        if self.limits is not None:
            new[self.joints] = project_to_limits(new[self.joints], self.limits_of_joints)
        return new

    # -- the loop ---------------------------------------------------------------------------
    def solve(self, rotations, preferred=None):
        settings = self.settings
        start = time.perf_counter()
        q = qcanonical(qnormalize(np.array(rotations, dtype=np.float64)))
        if self.limits is not None:
            q[self.joints] = project_to_limits(q[self.joints], self.limits_of_joints)
        preferred = q.copy() if preferred is None else qnormalize(np.asarray(preferred, float))
        world, position, rotation = self._errors(q)
        current = self._level_errors(position, rotation)
        history = [current]
        iterations, converged, unfolds = 0, False, 0
        while iterations < settings.max_iterations and len(self.joints):
            if self._converged(position, rotation):
                converged = True
                break
            if settings.time_budget_ms is not None and \
                    (time.perf_counter() - start) * 1e3 >= settings.time_budget_ms:
                break
            steps = self._step(world, q, position, rotation, preferred)
            if not np.all(np.isfinite(steps[-1])):
                break
            iterations += 1
            trial = self._line_search(q, steps, current)
            accepted = trial is not None
            if accepted:
                q, world, position, rotation, current, verdict = trial
                history.append(current)
            if not accepted or (verdict == 0 and self._settled(history)):
                unfolded = self._unfold(q, world) if unfolds < _MAX_UNFOLDS else None
                if unfolded is None:
                    break
                unfolds += 1
                q = unfolded
                world, position, rotation = self._errors(q)
                current = self._level_errors(position, rotation)
                history.append(current)
        converged = converged or self._converged(position, rotation)
        return SolveResult(q, iterations, np.linalg.norm(position, axis=1),
                           np.linalg.norm(rotation, axis=1), converged, history)

    def _trial(self, q, step, scale):
        new = self._apply(q, step, scale)
        world, position, rotation = self._errors(new)
        return new, world, position, rotation, self._level_errors(position, rotation)

    def _line_search(self, q, steps, current):
        """The accepted trial ``(q, world, position, rotation, errors, verdict)`` or None.

        The full step is kept unless it spoils the first unconverged level: if that level gains
        less than half of its error, the step truncated after that level is tried too and the
        better one in priority order is kept (lower levels then wait for the higher one). The
        step is then halved until the level errors are no worse in priority order.
        """
        eps = self.settings.tolerance * 1e-3
        unconverged = np.nonzero(current > self.settings.tolerance)[0]
        step = steps[-1]
        trial = self._trial(q, step, self._step_scale(step))
        if unconverged.size:
            first = unconverged[0]
            if trial[4][first] > 0.5 * current[first] and first < len(steps) - 1:
                truncated = steps[first]
                alternative = self._trial(q, truncated, self._step_scale(truncated))
                if _compare_levels(alternative[4][:first + 1], trial[4][:first + 1], eps) < 0:
                    step, trial = truncated, alternative
        scale = self._step_scale(step)
        reached = 0.5 * self.settings.tolerance
        for _ in range(_BACKTRACK_STEPS):
            verdict = _compare_levels(trial[4], current, eps, reached)
            if verdict <= 0:
                return (*trial, verdict)
            scale *= 0.5
            trial = self._trial(q, step, scale)
        return None

    def _step_scale(self, step):
        longest = np.abs(step).max(initial=0.0)
        return min(1.0, self.settings.max_joint_step / longest) if longest > 0 else 0.0

    def _unfold(self, q, world):
        """Bend the chains of position tasks stalled on a straight, singular chain, or None.

        A straight chain whose target is nearer its root than its tip can only fold, a motion the
        Jacobian does not see (Baerlocher §4.5.6): rotate its joints by ``_UNFOLD_ANGLE`` about
        local X, towards the wider side of their X swing range, then resume iterating.
        """
        tasks = self.tasks
        model = self.model
        tails = model.tails(world)[tasks.bones]
        chain_root = np.array([np.nonzero(mask)[0][0] for mask in tasks.joint_masks])
        root_heads = world[chain_root, :3, 3]
        reach = tails - root_heads
        reach_length = np.linalg.norm(reach, axis=1)
        bone_dirs = world[:, :3, 1]
        alignment = np.einsum('tj,tk,jk->tj', tasks.joint_masks.astype(float), reach, bone_dirs)
        straight = np.all(~tasks.joint_masks | (alignment >= _STRAIGHT_COSINE
                                                * reach_length[:, None]), axis=1)
        folding = tasks.has_position & straight & (
            np.linalg.norm(tasks.positions - root_heads, axis=1)
            < reach_length - self.settings.tolerance)
        if not folding.any():
            return None
        moved = tasks.joint_masks[folding].any(axis=0)[self.joints]
        side = np.ones(self.joints.size)
        if self.limits_of_joints is not None:
            lim = self.limits_of_joints
            wider_negative = lim.enabled & (-np.asarray(lim.swing_x_min) > np.asarray(lim.swing_x_max))
            side = np.where(wider_negative, -1.0, 1.0)
        delta = np.zeros((self.joints.size, 3))
        delta[:, 0] = np.where(moved, side * _UNFOLD_ANGLE, 0.0)
        return self._apply(q, delta.ravel(), 1.0)

    def _converged(self, position, rotation):
        tol = self.settings.tolerance
        return bool(np.all(np.linalg.norm(position, axis=1) < tol)
                    and np.all(np.linalg.norm(rotation, axis=1) < tol))

    @staticmethod
    def _settled(history, window=3):
        if len(history) <= window:
            return False
        recent = np.array(history[-window - 1:])
        return bool(np.all(np.abs(np.diff(recent, axis=0)) <= 1e-12 + 1e-9 * recent[:-1]))


def _compare_levels(new, old, eps, reached=0.0):
    """−1 if ``new`` is better in priority order, +1 if worse, 0 if equal.

    Two errors are equal within ``eps``, or when both are below ``reached`` (a level that has met
    the tolerance may trade its last digits for the progress of the levels below it).
    """
    for a, b in zip(new, old):
        if a < reached and b < reached:
            continue
        if a < b - eps:
            return -1
        if a > b + eps:
            return 1
    return 0


def solve(model, rotations, tasks, limits=None, stiffness=None, settings=None,
          locations=None, preferred=None):
    """Solve ``tasks`` from ``rotations`` (n,4) and return a ``SolveResult``."""
    solver = Solver(model, tasks, limits, stiffness, settings, locations)
    return solver.solve(rotations, preferred)
