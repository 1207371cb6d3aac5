"""The IK solve: iterate prioritized, joint-limited steps from a warm start until the tasks settle.

Each iteration (DESIGN.md §4; Baerlocher Fig. 5.12 and §5.4.2):

1. FK of the current rotations (``MovingJointsFK``: bones no joint of the solve rotates ride
   rigidly on their nearest moving ancestor) and the task errors.
2. Jacobians of the tasks over the joints any task may move; orientation rows are scaled by the
   chain size L so that metres and radians weigh alike; rows weighted by √weight within a level.
   Each level's predicted motion is clamped to ``max_task_step`` (§5.2, see
   ``prioritized.prioritized_step``).
3. Joint stiffness as a weighted minimum norm: ``Δθ = W^½ y`` with ``W = diag(1 − stiffness)``;
   a joint whose limits leave one swing/twist parameter free (a knee) turns about that axis
   alone, its other two columns zeroed in W (``limit_constraints.turning_axes``).
4. Joint limits as an active set above every task: start with the equalities only (locked axes,
   penetrating contacts), solve, add the first row the task step runs into (with the rows it
   hits at the same place, ``_first_blocking_row``), solve again (a joint on its limit leaves it
   as soon as the step points inward, since the set starts afresh every iteration). A correction
   step (every task level within ``_POLISH`` × tolerance) starts from the rows active in the
   previous iteration that still rest on their bound, and is kept if it meets the tasks to first
   order (``Solver._polish_steps``). A correction within ``_CHORD`` × tolerance first tries a
   chord step instead: the last step's Jacobians and active rows with the new errors
   (``Solver._chord``).
5. The rest pull ``z = w · 2 log(q_pref ⊗ q*)`` in the remaining null space, with
   ``w = rest_weight · min(1, 0.05 L / ‖e‖)``: it fades in as the tasks near their goals, so it
   cannot drag a chain back into the local minimum it is leaving (e.g. a knee bent backwards).
   Correction steps carry none: they only take back the last step's second-order error, and
   their minimum-norm step already stays nearest where it starts.
6. The first step of a solve whose linear model meets the tasks (within ``_LINEAR``) is solved
   again for the errors less their second-order change along it (Chebyshev's method,
   ``Solver._corrected``; ``jacobian.second_order_motion``), and that step is tried first.
   Backtracking on the step length until the level errors do not get worse in priority order,
   then ``q ← project(exp(½ Δθ) ⊗ q)`` with ``w ≥ 0`` (unit to rounding); joints the step holds on
   a limit move their swing/twist parameters instead and stay on it exactly (``_apply``).
7. The solve ends when every task is met, when no level can progress (``_blocked``: the limits
   and contacts hold it), or when a contact held a step that did what it predicted and what
   further steps can gain is under ``_SETTLE`` of each unmet level (``_holds``).
"""

import time
from dataclasses import dataclass, field, replace

import numpy as np

from .chain_model import MovingJointsFK
from .jacobian import JointFrames, chain_order, column_mask, second_order_motion, task_jacobian
from .limit_constraints import LimitRows, turning_axes
from .limits import LimitProjection
from .constraint_rows import ConstraintRows
from .contacts import (MIN_RADIUS, CapsulePairs, Capsules, contact_rows, pair_clearances,
                       self_contact_rows)
from .prioritized import PrioritizedBasis
from .quaternion import (all_true, any_true, qcanonical, qconj, qexp, qlog, qmul, qnormalize,
                         row_dots)
from .swing_twist import (quat_from_swing_twist, swing_twist_array, swing_twist_jacobian,
                          swing_twist_params)
from .tasks import TaskSet

_MAX_ACTIVE_SET_PASSES = 24
_BACKTRACK_STEPS = 6
_VIOLATION_TOLERANCE = 1e-10
# Rows this close to their bound (radians, ellipse ratio or metres) that a step pushes against
# rest on it; rows a step hits within this fraction of its length after the first are hit with it
RESTING = 1e-4
SIMULTANEOUS = 1e-3
# Per escape: how far limited joints move towards their aim, and the aim's offset from the
# centre of each range (s_x, s_z, τ) in half-ranges: first halfway to the centre, then all the
# way, then to either side of it, so that repeated stalls start from different places.
_ESCAPE_AIMS = ((0.5, (0.0, 0.0, 0.0)), (1.0, (0.0, 0.0, 0.0)),
                (1.0, (0.4, 0.0, 0.4)), (1.0, (-0.4, 0.0, -0.4)))
_PULL_FADE = 0.05
_PROGRESS = 1e-3
_SAME_POSE = 1e-6  # quaternion components: a start this close to a remembered result is that result
_TRADE = 0.1
_TOUCH = 0.01  # a capsule this close (fraction of the chain size) to an obstacle is touching it
_UNFOLD_ANGLE = 0.15
_STRAIGHT_COSINE = np.cos(np.radians(2.0))
# A step is a correction when every task level is within _POLISH × tolerance; it may keep the last
# active rows when it meets every level to first order within _POLISHED × tolerance
_POLISH = 1000.0
_POLISHED = 0.1
_PARAMETER_SWING = 2.0  # radians: joints swung farther always step by the exponential map
# A correction step with every level within _CHORD × tolerance first tries the last step's
# Jacobians (a chord step); it is kept when it takes the first unmet level to _CHORD_GAIN of its
# error or less, and the next one tries it again while it takes it to _CHORD_RATE or less
_CHORD = 30.0
_CHORD_GAIN = 0.5
_CHORD_RATE = 0.25
# The first step of a solve is corrected to second order (``Solver._corrected``) when its linear
# model takes every task level to within _LINEAR of its error (or the tolerance): a step that
# limits or clamps hold short of that is no Newton step to correct
_LINEAR = 0.05
# A warm solve escapes again after futile escapes once an unmet task is this fraction closer
_FUTILE_CLOSER = 0.5
# An escape ends when its descent, extrapolated, stays this fraction above the best before it
_HOPELESS = 0.01
_SETTLE = 5e-3  # a solve held by a contact ends when steps can gain less than this of each unmet level


@dataclass
class SolverSettings:
    """``tolerance`` in metres (orientation tasks: radians); ``damping``, ``max_task_step`` and
    ``contact_band`` (how far beyond ``margin`` contacts are detected; as long as the largest task
    motion of one step, so that no step can jump over an obstacle unseen) are fractions of the
    chain size; ``margin`` (clearance from obstacles) in metres; ``max_joint_step`` in radians."""

    max_iterations: int = 100
    tolerance: float = 1e-5
    damping: float = 0.05
    rest_weight: float = 0.1
    max_task_step: float = 0.25
    max_joint_step: float = 0.6
    time_budget_ms: float = None
    margin: float = 0.01
    contact_band: float = 0.25


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

    def __init__(self, model, tasks, limits=None, stiffness=None, settings=None, locations=None,
                 obstacles=None, radii=None, collision=None, self_collision=False):
        """Solver of ``tasks`` on the part of ``model`` they depend on (task bones and ancestors):
        FK and everything per iteration run on that sub-model only.

        ``obstacles(points, max_distance) -> (signed distance, outward normal)`` in armature space
        (for points inside an obstacle or within ``max_distance`` outside it, else ``inf``)
        turns on contacts for the bones with ``collision`` and a ``radii`` > 0 (see ``contacts``);
        ``self_collision`` keeps those capsules apart from each other too.
        """
        self.bones = involved_bones(model, tasks, obstacles, radii, collision, self_collision)
        sub_index = np.full(len(model), -1, dtype=np.int64)
        sub_index[self.bones] = np.arange(self.bones.size)
        self.model = model.subset(self.bones)
        self.tasks = TaskSet(self.model, [replace(t, bone=int(sub_index[t.bone])) for t in tasks])
        self.settings = settings or SolverSettings()
        self.locations = self._pose_locations(locations)
        self.size = chain_size(model)
        n = len(self.model)
        stiffness = np.zeros(n) if stiffness is None else \
            np.clip(np.asarray(stiffness, float)[self.bones], 0, 1)
        moved = self.tasks.joint_masks.any(axis=0) & (stiffness < 1.0)
        self.joints = np.nonzero(moved)[0]
        self.moved_bones = self.bones[self.joints]
        self.moved_mask = np.zeros(len(model), dtype=bool)   # the same, over the whole model
        self.moved_mask[self.moved_bones] = True
        self.fk = MovingJointsFK(self.model, self.joints)
        self.task_columns = column_mask(self.tasks.joint_masks, self.joints)
        self.joint_frames = JointFrames(self.model, self.joints)
        self.limits_of_joints = None if limits is None else type(limits)(
            *(np.asarray(field_values)[self.moved_bones] for field_values in limits))
        axes = np.ones((self.joints.size, 3)) if limits is None else \
            turning_axes(self.limits_of_joints)
        self.column_scale = (np.sqrt(1.0 - stiffness[self.joints])[:, None] * axes).ravel()
        self.limit_rows = None if limits is None else \
            LimitRows(self.limits_of_joints, self.column_scale.reshape(-1, 3))
        self.project_to_limits = None
        if limits is not None:
            # every joint's limits, the unlimited joints' ranges open (so the projection leaves
            # them alone): also the ``retraction`` of any joints that move by their swing/twist
            # parameters (``_held_joints``)
            lim = self.limits_of_joints
            self.project_to_limits = LimitProjection(type(lim)(
                *(np.where(lim.enabled, values, bound)
                  for values, bound in zip(lim[:-1], (-np.inf, np.inf) * 3)),
                np.ones(self.joints.size, bool)))
            every = np.arange(self.joints.size)
            self._every_joint = every, self.project_to_limits.retraction(every)
        # each limit row's right-hand side is max(slack, floor): an equality's may be negative
        self.limit_rhs_floor = np.where(self.limit_rows.equality, -np.inf, 0.0) \
            if limits is not None else np.zeros(0)
        self.chain_roots, self.chain_reach = self._chains()
        self.obstacles = obstacles
        self.moves = self.model.descendants_mask()
        self.chain_order = chain_order(self.tasks.joint_masks, self.moves, self.joints)
        self.capsules = self.pairs = None
        if obstacles is not None or self_collision:
            radii = np.asarray(radii, dtype=np.float64)[self.bones]
            collision = np.ones(radii.size, bool) if collision is None else \
                np.asarray(collision, dtype=bool)[self.bones]
            if obstacles is not None:  # only capsules the solve can move out of the way
                moved = self.moves[self.joints].any(axis=0)
                self.capsules = Capsules(self.model, radii, collision & moved)
                self.capsule_columns = column_mask(self.moves[:, self.capsules.owner].T,
                                                   self.joints)
            if self_collision:
                self.pairs = CapsulePairs(self.model, radii, collision, self.moves[self.joints],
                                          self.settings.margin)
                self.pair_columns = tuple(column_mask(self.moves[:, bones].T, self.joints)
                                          for bones in (self.pairs.a, self.pairs.b))
        self.level_rows = [self.tasks.priorities == level for level in self.tasks.levels]
        self.level_sums = np.array(self.level_rows, dtype=float)   # (levels, tasks) 0/1
        self.level_weights = self.level_sums * self.tasks.weights   # each task's weight in its level
        root_w = np.sqrt(self.tasks.weights)[:, None]
        # per level: its position tasks and rotation tasks, each with √weight (rows of e) and
        # √weight times the column scales (rows of J; orientation rows in units of ``size``)
        self.level_tasks = [[(kind, np.flatnonzero(rows & has), root_w[rows & has],
                              root_w[rows & has][:, :, None] * self.column_scale * scale)
                             for kind, has, scale in ((0, self.tasks.has_position, 1.0),
                                                      (1, self.tasks.has_rotation, self.size))
                             if (rows & has).any()]
                            for rows in self.level_rows]
        self._memo = None  # (targets, locations, obstacles; the result's rotations; the result)
        self._last = None  # (the last result's rotations, its FK, the pose locations it had)
        self._queried = None  # (pose, obstacles, bounds, answer) of the last obstacle query
        self._held_for = None  # (the step's active limit rows, {every: ``_held_joints``})
        # (rotations, every joint's swing/twist params, S or None) of the last ``_apply``: the
        # next limit rows or chord at that very pose (the next iteration's, or the next solve's
        # that goes on from it)
        self._terms = None
        self._tangent = None  # (params, S) of every joint at this iteration's step
        self._futile = None  # each task's error at a stall whose escapes found nothing better

    def retarget(self, tasks, locations=None, obstacles=None):
        """Solve the same tasks (bones, kinds, priorities, weights, chains; in the same order)
        towards new targets, from new pose ``locations`` and with a new ``obstacles`` query,
        keeping everything built from the rig, its limits and its settings."""
        self.tasks.set_targets(tasks)
        self.locations = self._pose_locations(locations)
        if obstacles is not None:
            self.obstacles = obstacles

    def _pose_locations(self, locations):
        """The involved bones' pose locations, or None when there are none (all zero: FK then
        skips them)."""
        if locations is None:
            return None
        locations = np.asarray(locations, dtype=np.float64).take(self.bones, axis=0)
        return locations if any_true(locations) else None

    def _chains(self):
        """Per task: the root joint of its chain and an upper bound of its reach from that head
        (rest distances between successive heads along the chain, plus the effector's length)."""
        model, tasks = self.model, self.tasks
        heads = model.rest_matrices[:, :3, 3]
        hop = np.zeros(len(model))
        child = model.parents >= 0
        hop[child] = np.linalg.norm(heads[child] - heads[model.parents[child]], axis=1)
        roots = np.array([np.nonzero(mask)[0][0] for mask in tasks.joint_masks], dtype=np.int64)
        inner = tasks.joint_masks.copy()
        inner[np.arange(len(tasks)), roots] = False
        reach = inner.astype(float) @ hop + model.lengths[tasks.bones]
        return roots, reach

    # -- errors -----------------------------------------------------------------------------
    def _errors(self, rotations, world=None):
        """FK (``world`` if given) and the task errors at ``rotations``."""
        world = self.fk(rotations, self.locations) if world is None else world
        position, rotation = self.tasks.errors(world)
        return world, position, rotation

    def _level_errors(self, world, position, rotation):
        """The error of each priority level, preceded by the total contact penetration when
        there are contacts (they rank above every task)."""
        levels = np.sqrt(self.level_weights.dot(self._task_squares(position, rotation)))
        if self.capsules is not None or self.pairs is not None:
            return np.concatenate([[self._penetration(world)], levels])
        return levels

    def _penetration(self, world):
        """Sum of the depths by which capsules sink into obstacles or each other past ``margin``."""
        margin, depth = self.settings.margin, 0.0
        if self.capsules is not None and len(self.capsules):
            distance, _ = self._obstacle_query(world)(self.capsules.points(world),
                                                      self.capsules.radii + margin)
            depth += np.sum(np.maximum(self.capsules.radii + margin - distance, 0.0))
        if self.pairs is not None:
            depth += np.sum(np.maximum(-pair_clearances(self.pairs, world, margin), 0.0))
        return float(depth)

    # -- one step ---------------------------------------------------------------------------
    def _levels(self, world, frame, position, rotation):
        """``[(J_k, e_k)]`` per priority level: each task's 3 rows, √weight times its Jacobian
        (joint columns scaled by ``column_scale``) and error (``_task_errors``)."""
        tasks = self.tasks
        jacobians = task_jacobian(*frame, tasks.tails(world), self.task_columns,
                                  tasks.any_rotation)
        level_jacobians = []
        for parts in self.level_tasks:
            jac = [(jacobians[kind].take(rows, axis=0) * row_scale).reshape(
                -1, self.column_scale.size) for kind, rows, _, row_scale in parts]
            level_jacobians.append(jac[0] if len(parts) == 1 else np.concatenate(jac))
        return list(zip(level_jacobians, self._task_errors(position, rotation)))

    def _task_errors(self, position, rotation):
        """``e_k`` per priority level: each task's 3 rows times √weight, orientation rows in
        units of ``size`` (radians × chain size, comparable to metres)."""
        errors = (position, rotation * self.size if self.tasks.any_rotation else rotation)
        level_errors = []
        for parts in self.level_tasks:
            err = [(errors[kind].take(rows, axis=0) * root_w).ravel() for kind, rows, root_w, _ in parts]
            level_errors.append(err[0] if len(parts) == 1 else np.concatenate(err))
        return level_errors

    def _step(self, world, rotations, position, rotation, preferred, polish=False):
        """The steps of this iteration (``prioritized_step``'s list, in joint units), each task
        level's predicted error after it, and the full step with its second-order correction
        (``_corrected``; None when there is none). A ``polish`` step (every task level within
        ``_POLISH`` × tolerance) first tries the last active rows (``_polish_steps``) and has no
        rest pull (module docstring, step 5). The ``PrioritizedBasis`` of the levels' Jacobians
        under the final active rows stays in ``_chord_basis``."""
        frame = self.joint_frames(world)
        levels = self._levels(world, frame, position, rotation)
        secondary = None if preferred is rotations or polish else \
            self._rest_pull(rotations, preferred, levels)
        options = (secondary, *self._step_limits())
        rows, rhs, pinned = self._constraint_rows(world, rotations, frame)
        predicted = None
        if rows is None:
            start, basis = None, PrioritizedBasis([jac for jac, _ in levels])
            steps = basis.steps([err for _, err in levels], None, *options)
            self._touched = False
        else:
            polished = self._polish_steps(levels, rows, rhs, pinned, options) if polish else None
            if polished is not None:
                steps, active, start, basis, predicted = polished
            else:
                steps, active, start, basis = _active_set_steps(levels, rows, rhs, pinned,
                                                                *options)
            self._held = active[:rows.owner.size]
            self._touched = any_true(active[rows.owner.size:])
        self._chord_basis = basis
        if predicted is None:
            predicted = _predicted(levels, steps[-2])
        corrected = None if secondary is not None or polish or basis is None else \
            self._corrected(world, frame, levels, predicted, position, rotation, steps[-1], basis,
                            start)
        return [self.column_scale * y for y in steps], predicted, corrected

    def _corrected(self, world, frame, levels, predicted, position, rotation, step, basis, start):
        """The step (joint units) of Chebyshev's method, or None: ``step`` solved again, with the
        same Jacobians and active rows, for the errors less their second-order change under it
        (``second_order_motion``), so that it leaves a third-order error instead of Newton's
        second-order one. Only when the step's linear model meets every level within ``_LINEAR``
        (``_step`` asks on the first step of a solve: no rest pull, no polish). A warm solve's
        first step then usually lands within a chord step's reach (``_chord``) or meets the
        tolerance outright."""
        tol = self.settings.tolerance
        if any(p > max(tol, _LINEAR * float(np.sqrt(err.dot(err))))
               for p, (_, err) in zip(predicted.tolist(), levels)):
            return None
        s_pos, s_rot = second_order_motion(
            *frame, self.tasks.tails(world), (self.column_scale * step).reshape(-1, 3),
            *self.chain_order, rotation if self.tasks.any_rotation else None)
        errors = self._task_errors(position - s_pos, rotation if s_rot is None else rotation - s_rot)
        return self.column_scale * basis.steps(errors, None if start is None else start[0], None,
                                               *self._step_limits())[-1]

    def _polish_steps(self, levels, rows, rhs, pinned, options):
        """``(steps, active, start, basis, predicted)`` of a correction step that starts from the
        limit rows active at the end of the previous iteration that still rest on their bound
        (slack ≤ ``RESTING``) instead of finding them again pass by pass, or None. The step is
        kept when it meets every level to first order (≤ ``_POLISHED`` × tolerance), which is
        all a correction needs; otherwise the iteration is solved afresh and polishing ends for
        this solve. A new solve (new targets) always starts afresh, so a joint never stays on its
        limit just because it was there."""
        if self._held is None:
            return None
        count = rows.owner.size
        held = self._held & (rhs[:count] <= RESTING)
        if rows.count > count:
            held = np.concatenate([held, np.zeros(rows.count - count, bool)])
        held &= ~pinned
        if not any_true(held):
            return None
        steps, active, start, basis = _active_set_steps(levels, rows, rhs, pinned | held, *options)
        predicted = _predicted(levels, steps[-2])
        if (predicted <= _POLISHED * self.settings.tolerance).all():
            return steps, active, start, basis, predicted
        self._polishing = False
        return None

    def _step_limits(self):
        """``prioritized_step``'s damping ε and task-motion clamp (fractions of the chain size)
        and joint-motion clamp."""
        settings = self.settings
        return (settings.damping * self.size, settings.max_task_step * self.size,
                settings.max_joint_step)

    def _chord(self, q, position, rotation, current):
        """The accepted chord step from ``q`` as ``(q, world, position, rotation, errors)``, or
        None (then the iteration takes a full step).

        The chord (simplified Newton) method reuses the last full step's linearization, the
        decompositions of its Jacobians under its active rows (``_chord_basis``), with the errors
        at ``q`` (Kelley, Iterative Methods for Linear and Nonlinear Equations, §5.4; Deuflhard,
        Newton Methods for Nonlinear Problems, §2.1.4): it converges linearly, at a rate of the
        order of the last step's length, so it is tried only on a correction whose every level is
        within ``_CHORD`` × tolerance, where one chord usually meets the tolerance and costs a
        quarter to a third of an iteration (no Jacobian, limit rows, active set or decomposition).
        It is kept when it takes the first unmet level to ``_CHORD_GAIN`` of its error or less
        without making any level worse, and the basis is kept for the next correction while it
        gets to ``_CHORD_RATE`` or less.
        The held joints stay on their limits as in a full step (``_apply``); the step carries no
        rest pull. Not used with contacts, whose rows change with every step."""
        tol = self.settings.tolerance
        if self._chord_basis is None or self.capsules is not None or self.pairs is not None \
                or max(current.tolist()) > _CHORD * tol:
            return None
        basis, self._chord_basis = self._chord_basis, None
        step = self.column_scale * basis.steps(self._task_errors(position, rotation), None, None,
                                               *self._step_limits())[-1]
        new = self._apply(q, step, 1.0, current_parameters=True)
        world, position, rotation = self._errors(new)
        errors = self._level_errors(world, position, rotation)
        first = _first_unmet(current, tol)
        gain = 0.0 if first is None else float(errors[first]) / float(current[first])
        if gain > _CHORD_GAIN or _compare_levels(errors, current, tol * 1e-3, 0.5 * tol) >= 0:
            return None
        if gain <= _CHORD_RATE:
            self._chord_basis = basis
        return new, world, position, rotation, errors

    def _rest_pull(self, rotations, preferred, levels):
        """The secondary task ``w · 2 log(q_pref ⊗ q*)`` of step 5 (module docstring), in the scaled
        joint columns; ``_step`` skips it at the preferred pose itself, where it is 0, and in
        polish steps."""
        q = rotations.take(self.joints, axis=0)
        pull = 2.0 * qlog(qcanonical(qmul(preferred.take(self.joints, axis=0), qconj(q)))).ravel()
        remaining = np.sqrt(sum(float(err.dot(err)) for _, err in levels))
        weight = self.settings.rest_weight * min(1.0, _PULL_FADE * self.size / max(remaining, 1e-300))
        return weight * pull * self.column_scale

    def _constraint_rows(self, world, rotations, frame):
        """``(rows, rhs, pinned)`` of this iteration (``None`` when there are none): limit rows of
        the limited joints, contact rows of the capsule points near an obstacle; ``pinned`` marks
        the equalities (locked axes) and penetrating contacts, active from the start."""
        if self.limits_of_joints is None and self.capsules is None and self.pairs is None:
            return None, None, None
        owner, gradient, slack, equality = np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros(0), \
            np.zeros(0, bool)
        if self.limits_of_joints is not None:
            self._tangent = params, sens = self._joint_terms(rotations)
            limited = self.limit_rows.joints
            owner, gradient, slack, equality = self.limit_rows(
                None, (params.take(limited, axis=0), sens.take(limited, axis=0)))
        band = self.settings.contact_band * self.size
        contacts = []
        if self.capsules is not None:
            contacts.append(contact_rows(self.capsules, world, frame, self.capsule_columns,
                                         self._obstacle_query(world), self.settings.margin, band))
        if self.pairs is not None:
            contacts.append(self_contact_rows(self.pairs, world, frame, self.pair_columns,
                                              self.settings.margin, band))
        limit_rhs = np.maximum(slack, self.limit_rhs_floor)
        if contacts:
            dense = np.concatenate([found for found, _ in contacts]) * self.column_scale
            contact_rhs = np.concatenate([found_rhs for _, found_rhs in contacts])
            rows = ConstraintRows(self.joints.size, owner, gradient, dense)
            rhs = np.concatenate([limit_rhs, contact_rhs])
            pinned = np.concatenate([equality, contact_rhs < 0.0])
        else:
            rows, rhs, pinned = ConstraintRows(self.joints.size, owner, gradient), limit_rhs, equality
        if rows.count == 0:
            return None, None, None
        return rows, rhs, pinned

    def _apply(self, rotations, step, scale, current_parameters=False):
        """``rotations`` after the step ``scale · step``, projected onto the limits.

        Joints turn by ``q ← exp(½Δθ) ⊗ q``, except the limited joints the step holds on a limit
        (an active limit row in ``_held``): those move their swing/twist parameters,
        ``p ← p + S Δθ`` (this iteration's ``S = ∂p/∂Δθ``, the same motion to first order), so
        the bounds they rest on, linear in p (twist, locked half-axes, the tangent polygon), hold
        exactly; the twist and locked half-axes are then clamped and a swing outside the ellipse
        scaled back onto it (``LimitProjection.retraction``). Only what is left outside goes through
        the projection (Baerlocher §3.7.2), usually nothing: a joint on a limit no longer drifts
        off it by the exponential map's second-order terms. With ``current_parameters`` (a chord
        step, from a pose after this iteration's) p is evaluated at ``rotations``, and every
        joint moves that way (``_held_joints(every=True)``; an unlimited one's ranges are open):
        a chord step is tiny, so the two motions differ by nothing it would notice, and the new
        pose's parameters are then known and inside the limits, with none to recompute and
        nothing to project."""
        new = rotations.copy()
        delta = (scale * step).reshape(-1, 3)
        if self.limits_of_joints is None:
            new[self.joints] = _turned(rotations.take(self.joints, axis=0), delta)
            return new
        held, params, sens, retract = self._held_joints(every=current_parameters)
        every = 0 < held.size == self.joints.size
        if held.size:
            if current_parameters:
                params = self._joint_terms(rotations, sensitivities=False)[0].take(held, axis=0)
            along = delta if every else delta.take(held, axis=0)
            turned_held, retracted = retract(params + np.einsum('kij,kj->ki', sens, along))
        if every:
            moved = turned_held
            if current_parameters:      # every joint is inside its limits: nothing to project
                new[self.joints] = moved
                self._terms = (new, retracted, None)
                return new
        else:
            moved = _turned(rotations.take(self.joints, axis=0), delta)
            if held.size:
                moved[held] = turned_held
        # every joint's parameters at the new pose serve the projection's inside test and, if the
        # pose is kept as it is, the next limit rows or chord step
        params = swing_twist_array(moved)
        projected = self.project_to_limits(moved, params)
        new[self.joints] = projected
        self._terms = (new, params, None) if projected is moved else None
        return new

    def _joint_terms(self, rotations, sensitivities=True):
        """``(params, S)`` of every joint at ``rotations`` (``swing_twist_jacobian``; S is None
        unless ``sensitivities``): the parameters the last ``_apply`` found when it made this
        very pose, and S once computed there (a trial whose pose a chord step or the tolerance
        ends on needs none), else computed."""
        known = self._terms
        here = known is not None and known[0] is rotations
        if here and (known[2] is not None or not sensitivities):
            return known[1], known[2]
        turned = rotations.take(self.joints, axis=0)
        if not sensitivities:
            return swing_twist_array(turned), None
        terms = swing_twist_jacobian(turned)
        if here:
            self._terms = (rotations, *terms)
        return terms

    def _held_joints(self, every=False):
        """``(held, params, S, retract)`` of this iteration's step: the joints (indices into
        ``joints``) with a limit row active at the end of the step (``every``: all joints),
        swung less than ``_PARAMETER_SWING`` (the parameters are singular at a swing of π); their
        parameters and S at the step's pose (``_tangent``); and ``LimitProjection.retraction``
        of them. Computed once per step, for every ``_apply``."""
        rows = self._held
        if self._held_for is None or self._held_for[0] is not rows:     # a new step
            self._held_for = (rows, {})
        known = self._held_for[1]
        if every in known:
            return known[every]
        if rows is None:
            known[every] = (np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), None)
            return known[every]
        params, sens = self._tangent
        held = np.zeros(self.joints.size, bool)
        if every:
            held[:] = True
        else:
            held[self.limit_rows.joint_of_row[rows]] = True
        held &= row_dots(params[:, :2], params[:, :2]) <= _PARAMETER_SWING ** 2
        if all_true(held):      # every joint (a chord step, as a rule): no subsets to take
            known[every] = (self._every_joint[0], params, sens, self._every_joint[1])
            return known[every]
        held = held.nonzero()[0]
        known[every] = (held, params.take(held, axis=0), sens.take(held, axis=0),
                        self.project_to_limits.retraction(held))
        return known[every]

    # -- the loop ---------------------------------------------------------------------------
    def solve(self, rotations, preferred=None):
        """Iterate from ``rotations``; on a stall short of a reachable target, escape and go on.

        The best state seen, in priority order, is returned, so escapes never make it worse. After
        an escape the rest pull aims at the escaped pose, not back into the stall.

        A solve that settled short of its targets (not one cut short by ``max_iterations`` or the
        time budget) is remembered: solving again from its result
        (within ``_SAME_POSE``, e.g. after a round trip through float32 pose channels) with the
        same targets, pose locations and obstacle query returns it at once, with 0 iterations,
        instead of repeating every escape. A start within ``_SAME_POSE`` of the last result, with
        the same pose locations, continues from that result exactly (``_continued``); such a
        warm solve does not escape again while the last escapes found nothing better and its
        targets stay as far (``_futile_here``).
        """
        settings = self.settings
        start = time.perf_counter()
        full = np.array(rotations, dtype=np.float64)
        last = self._continued(full[self.bones])
        if last is not None:
            q, world = last
        else:
            q = qcanonical(qnormalize(full[self.bones]))
            if self.limits_of_joints is not None:
                q[self.joints] = self.project_to_limits(q[self.joints])
            world = self.fk.start(q, self.locations)
        memo_key = (self.tasks.positions.tobytes(), self.tasks.rotations.tobytes(),
                    None if self.locations is None else self.locations.tobytes(), self.obstacles)
        if preferred is None and self._memo is not None and self._memo[0] == memo_key \
                and _same_pose(q, self._memo[1]):
            full[self.bones] = self._memo[1]
            return replace(self._memo[2], rotations=full, iterations=0)
        unremembered, settled = preferred is None, False
        preferred = q if preferred is None else \
            qnormalize(np.asarray(preferred, float)[self.bones])
        world, position, rotation = self._errors(q, world)
        current = self._level_errors(world, position, rotation)
        history = [current]
        best = (q, world, position, rotation, current)
        iterations, escapes, stall = 0, 0, None
        self._held, self._polishing, self._chord_basis = None, True, None
        while iterations < settings.max_iterations and len(self.joints):
            if self._converged(position, rotation, current):
                break
            if settings.time_budget_ms is not None and \
                    (time.perf_counter() - start) * 1e3 >= settings.time_budget_ms:
                break
            polish = self._polishing and max(current[len(current) - len(self.level_rows):]
                                             .tolist()) <= _POLISH * settings.tolerance
            chorded = self._chord(q, position, rotation, current) if polish else None
            if chorded is not None:
                iterations += 1
                q, world, position, rotation, current = chorded
                history.append(current)
                if _compare_levels(current, best[4], 0.0, 0.5 * settings.tolerance) < 0:
                    best = chorded
                continue
            steps, predicted, corrected = self._step(world, q, position, rotation, preferred,
                                                     polish)
            if not all_true(np.isfinite(steps[-1])):
                break
            iterations += 1
            blocked = self._blocked(current, predicted)
            trial = None if blocked else self._line_search(q, steps, current, predicted, corrected)
            if trial is not None:
                before = current
                q, world, position, rotation, current, _ = trial
                history.append(current)
                blocked = self._holds(history, before, current, predicted)
                if _compare_levels(current, best[4], 0.0, 0.5 * settings.tolerance) < 0:
                    best = (q, world, position, rotation, current)
            if blocked or trial is None or self._stalled(history) or (
                    escapes and self._hopeless(history, best[4])):
                if stall is None:
                    stall = (current, np.sqrt(self._task_squares(position, rotation)))
                escaped = self._escape(q, world, position, rotation, escapes) \
                    if escapes < len(_ESCAPE_AIMS) and not (
                        last is not None and self._futile_here(stall[1])) else None
                if escaped is None:
                    settled = True  # nothing left to try: the closest reachable pose
                    break
                escapes += 1
                q = preferred = escaped
                self._held = self._chord_basis = None
                world, position, rotation = self._errors(q)
                current = self._level_errors(world, position, rotation)
                history = [current]
        q, world, position, rotation, current = best
        converged = self._converged(position, rotation, current)
        if converged:
            self._futile = None
        elif escapes:   # futile when they found nothing better than the first stall
            better = _compare_levels(current, stall[0], 0.0, 0.5 * settings.tolerance) < 0
            self._futile = None if better else stall[1]
        self._last = (q, world, self.locations)
        full[self.bones] = q
        result = SolveResult(full, iterations, np.sqrt(row_dots(position, position)),
                             np.sqrt(row_dots(rotation, rotation)), converged, history)
        self._memo = (memo_key, q, result) if unremembered and settled else None
        return result

    def _task_squares(self, position, rotation):
        """Each task's squared error, ``‖e_p‖² + L²‖e_r‖²``."""
        squares = row_dots(position, position)
        if self.tasks.any_rotation:
            squares = squares + self.size ** 2 * row_dots(rotation, rotation)
        return squares

    def _futile_here(self, errors):
        """True when the escapes of an earlier stall found nothing better (``_futile``, kept
        until a solve converges) and every task unmet now was unmet then and is no closer than
        ``_FUTILE_CLOSER`` (half) its error of then: a target dragged on beyond what the chain
        can reach under its limits (inside the rest-length bound of ``_chains``, which only a
        straight chain attains), where escaping again at every warm step would only repeat them.
        A task met then but not now, or one that came much closer, may be in a new local
        minimum: escapes run."""
        if self._futile is None:
            return False
        tol = self.settings.tolerance
        unmet = errors > tol
        return bool(np.all(~unmet | ((self._futile > tol)
                                     & (errors >= _FUTILE_CLOSER * self._futile))))

    def _continued(self, start):
        """``(rotations, FK)`` of the last result when ``start`` (the involved bones' rotations)
        is that result within ``_SAME_POSE`` (e.g. after a round trip through float32 pose
        channels) and the pose locations are unchanged: a warm solve then goes on from the exact
        result, already inside the limits, with its FK (and ``MovingJointsFK``'s offsets, taken
        from a start whose other bones it shares). Else None."""
        if self._last is None:
            return None
        q, world, locations = self._last
        same_locations = locations is self.locations or (
            locations is not None and self.locations is not None
            and np.array_equal(locations, self.locations))
        if not same_locations or not _same_pose(start, q):
            return None
        return q, world

    def _trial(self, q, step, scale):
        new = self._apply(q, step, scale)
        world, position, rotation = self._errors(new)
        return new, world, position, rotation, self._level_errors(world, position, rotation)

    def _line_search(self, q, steps, current, predicted, corrected=None):
        """The accepted trial ``(q, world, position, rotation, errors, verdict)`` or None.

        ``steps`` holds the step truncated after each level and the full step with the rest pull;
        ``predicted`` the task levels' errors after it to first order (contacts: none left).
        The ``corrected`` step (``_corrected``), if any, is tried first, then the full step; each is
        kept when it achieves at least half of the first unmet level's predicted
        reduction (the ratio test of trust-region methods, Nocedal & Wright §4.1) and makes no
        level worse. Otherwise the lower levels are what spoils it (their null-space
        motion disturbs the higher levels to second order, e.g. a hand pressing on a curved
        obstacle sinks into it; the rest pull would keep a floor of error that way), so the steps
        without the pull and truncated after that level are tried too, and the best in priority
        order is kept. The kept step is halved until no level gets worse.
        """
        eps = self.settings.tolerance * 1e-3
        reached = 0.5 * self.settings.tolerance
        levels = current.tolist()
        first = _first_unmet(current, self.settings.tolerance)
        expected = [0.0] * (len(levels) - len(predicted)) + predicted.tolist()

        def kept(errors):
            return first is None or (
                levels[first] - float(errors[first]) >= 0.5 * (levels[first] - expected[first])
                and _compare_levels(errors, current, eps, reached, _TRADE) <= 0)

        if corrected is not None and self._step_scale(corrected) == 1.0:
            trial = self._trial(q, corrected, 1.0)
            if kept(trial[4]):
                return (*trial, _compare_levels(trial[4], current, eps, reached, _TRADE))
        step = steps[-1]
        scale = self._step_scale(step)
        trial = self._trial(q, step, scale)
        if not kept(trial[4]):
            first_task_level = max(first - (len(levels) - len(self.level_rows)), 0)
            for candidate in {len(steps) - 2: steps[-2],
                              first_task_level: steps[first_task_level]}.values():
                candidate_scale = self._step_scale(candidate)
                other = self._trial(q, candidate, candidate_scale)
                if _compare_levels(other[4], trial[4], eps, reached, _TRADE) < 0:
                    step, trial, scale = candidate, other, candidate_scale
        for _ in range(_BACKTRACK_STEPS):
            verdict = _compare_levels(trial[4], current, eps, reached, _TRADE)
            if verdict <= 0:
                return (*trial, verdict)
            scale *= 0.5
            trial = self._trial(q, step, scale)
        return None

    def _step_scale(self, step):
        """The factor that shortens ``step`` to at most ``max_joint_step`` per component."""
        longest = np.abs(step).max(initial=0.0)
        limit = self.settings.max_joint_step
        return 1.0 if longest <= limit else limit / longest

    def _escape(self, q, world, position, rotation, attempt):
        """A new start for stalled tasks whose target is within their chain's reach, or None.

        Joint-limited IK has local minima (a knee bent backwards onto its hyperextension limit;
        a straight chain asked to fold, which the Jacobian cannot see, Baerlocher §4.5.6). For
        every such task, limited joints of its chain move towards the centre of their swing/twist
        box (inside the limits: the set is convex and holds that centre), each attempt to a
        different aim (``_ESCAPE_AIMS``), and unlimited joints of a straight chain bend by
        ``_UNFOLD_ANGLE`` about local X.

        A level with a target out of its chain's reach cannot be met: its tasks settle at their
        weighted compromise, the chain stretched towards that target, and are not escaped from.
        An escape restarts from the middle of the ranges, so escaping there would make a target
        dragged beyond reach jump between compromises and cost every escape at every step.
        """
        tasks = self.tasks
        tol = self.settings.tolerance
        if self._touching(world):
            return None  # held by an obstacle, not by a local minimum of the limits
        tails = tasks.tails(world)
        root_heads = world[self.chain_roots, :3, 3]
        distance = np.linalg.norm(tasks.positions - root_heads, axis=1)
        unmet = (np.linalg.norm(position, axis=1) >= tol) | (np.linalg.norm(rotation, axis=1) >= tol)
        out_of_reach = tasks.has_position & (distance >= self.chain_reach - tol)
        compromised = (self.level_sums.dot(out_of_reach) > 0.0).dot(self.level_sums) > 0.0
        stalled = unmet & ~compromised
        if not stalled.any():
            return None
        moved = tasks.joint_masks[stalled].any(axis=0)[self.joints]
        reach = tails - root_heads
        alignment = np.einsum('tj,tk,jk->tj', tasks.joint_masks.astype(float), reach,
                              world[:, :3, 1])
        straight = np.all(~tasks.joint_masks | (alignment >= _STRAIGHT_COSINE
                                                * np.linalg.norm(reach, axis=1)[:, None]), axis=1)
        bend = tasks.joint_masks[stalled & straight].any(axis=0)[self.joints]
        new = q.copy()
        delta = np.zeros((self.joints.size, 3))
        delta[:, 0] = np.where(bend, _UNFOLD_ANGLE, 0.0)
        new[self.joints] = qcanonical(qmul(qexp(0.5 * delta), q[self.joints]))
        if self.limits_of_joints is not None:
            lim = self.limits_of_joints
            shift = moved & lim.enabled
            s_x, s_z, tau = swing_twist_params(new[self.joints])
            fraction, offsets = _ESCAPE_AIMS[attempt]
            aims = [(np.asarray(lo) + np.asarray(hi)) / 2 + o * (np.asarray(hi) - np.asarray(lo)) / 2
                    for (lo, hi), o in zip(((lim.swing_x_min, lim.swing_x_max),
                                            (lim.swing_z_min, lim.swing_z_max),
                                            (lim.twist_min, lim.twist_max)), offsets)]
            moved_to = quat_from_swing_twist(*(v + fraction * (aim - v)
                                               for v, aim in zip((s_x, s_z, tau), aims)))
            new[self.joints] = np.where(shift[:, None], moved_to, new[self.joints])
            new[self.joints] = self.project_to_limits(new[self.joints])
        return new if not np.array_equal(new, q) else None

    def _obstacle_query(self, world):
        """``obstacles`` for the capsule points at ``world``, answering from its last answer when
        asked again at the same pose and obstacles for no farther (every caller looks only within
        its own bounds, so the farther answer serves): an escape's touching test reuses the
        step's contact detection."""
        def query(points, max_distance):
            memo = self._queried
            if memo is not None and memo[0] is world and memo[1] is self.obstacles \
                    and np.all(memo[2] >= max_distance):
                return memo[3]
            found = self.obstacles(points, max_distance)
            self._queried = (world, self.obstacles, max_distance, found)
            return found
        return query

    def _touching(self, world):
        """True when a capsule is within ``_TOUCH`` of an obstacle or of another capsule."""
        margin, touch = self.settings.margin, _TOUCH * self.size
        if self.capsules is not None and len(self.capsules):
            bound = self.capsules.radii + margin + touch
            distance, _ = self._obstacle_query(world)(self.capsules.points(world), bound)
            if np.any(distance <= bound):
                return True
        return self.pairs is not None and bool(np.any(pair_clearances(self.pairs, world, margin)
                                                      <= touch))

    def _blocked(self, current, predicted):
        """True when no unmet task level can progress by more than ``_PROGRESS`` of its error in
        this step (its predicted error ``‖e_k − J_k Δ‖``): the active limits and contacts hold it
        (a constrained optimum, or a local minimum that only an escape leaves), while no contact
        is deeper than the tolerance (pushing out of it is progress too)."""
        tol = self.settings.tolerance
        first = len(current) - len(predicted)
        if first and current[0] > tol:
            return False
        unmet = [(p, c) for p, c in zip(predicted.tolist(), current[first:].tolist()) if c > tol]
        return bool(unmet) and all(p >= (1.0 - _PROGRESS) * c for p, c in unmet)

    def _holds(self, history, before, after, predicted):
        """True when a contact held the step just taken (``before`` → ``after``, the last of
        ``history``) short of an unmet task level, the step did at least half of what it
        predicted (``predicted``: the linear model is accurate there), and what further steps
        can still gain is under ``_SETTLE`` of every unmet level's error: either this step's
        predicted gain already was (the pose is at the obstacle's constrained optimum to first
        order, so the next step would be ``_blocked``), or the gains shrink geometrically,
        ``g_k = ρ g_{k−1}``, and their sum ``g_k ρ/(1 − ρ)`` is (Aitken's extrapolation of a
        linearly converging sequence). The steps that would follow need not be
        computed: the hand of an arm pressed on an obstacle ends within ``_SETTLE`` of its
        error from where it would settle."""
        tol = self.settings.tolerance
        first = len(before) - len(predicted)
        unmet = after[first:] > tol
        if not self._touched or not any_true(unmet) or after[0] > tol:
            return False
        was, now, expected = before[first:][unmet], after[first:][unmet], predicted[unmet]
        gain = was - expected
        if not all_true(was - now >= 0.5 * gain):
            return False
        if all_true(gain <= _SETTLE * was):
            return True
        if len(history) < 3:
            return False
        left = _gain_left(history[-3][first:][unmet] - was, was - now)
        return all_true(left <= _SETTLE * now)

    def _hopeless(self, history, best):
        """True when the descent since an escape cannot beat ``best`` (the best errors before
        it): the first level unmet in ``best``, extrapolated to where its shrinking gains lead
        (``_gain_left``), stays above its best error by more than ``_HOPELESS`` of it. The
        escape then ends as a stalled one does, instead of descending all the way to a
        compromise no better than the one already found (a target out of reach under the
        limits settles after its escapes in a third of the iterations)."""
        if len(history) < 3:
            return False
        first = _first_unmet(best, self.settings.tolerance)
        if first is None:
            return False
        older, old, now = (float(errors[first]) for errors in history[-3:])
        left = float(_gain_left(older - old, old - now))
        return now - left > (1.0 + _HOPELESS) * float(best[first])

    def _stalled(self, history, window=4):
        """Less than 0.1 % progress of the first unmet level over ``window`` iterations."""
        if len(history) <= window:
            return False
        old, new = history[-window - 1], history[-1]
        first = _first_unmet(old, self.settings.tolerance)
        return first is not None and bool(new[first] > 0.999 * old[first])

    def _converged(self, position, rotation, errors):
        """Every task within tolerance, and no contact deeper than it."""
        tol = self.settings.tolerance
        contact_ok = self.capsules is None and self.pairs is None or errors[0] <= tol
        if not contact_ok or np.maximum.reduce(np.abs(position), axis=None) >= tol:
            return False       # (a component past the tolerance: so is the norm)
        return bool(row_dots(position, position).max(initial=0.0) < tol * tol
                    and (not self.tasks.any_rotation
                         or row_dots(rotation, rotation).max(initial=0.0) < tol * tol))


def involved_bones(model, tasks, obstacles=None, radii=None, collision=None, self_collision=False):
    """Sorted bones the solve must model: the task bones; with contacts also every capsule bone
    (radius at least ``contacts.MIN_RADIUS``) the tasks move (whole limbs, fingers included);
    with self-collision every capsule bone; and all their ancestors."""
    if obstacles is None and not self_collision:
        return model.with_ancestors([t.bone for t in tasks])
    bones = np.zeros(len(model), dtype=bool)
    bones[[t.bone for t in tasks]] = True
    capsule = np.asarray(radii, dtype=np.float64) >= MIN_RADIUS
    if collision is not None:
        capsule &= np.asarray(collision, dtype=bool)
    moved = model.descendants_mask()[TaskSet(model, tasks).joint_masks.any(axis=0)].any(axis=0)
    bones |= capsule & (moved | self_collision)
    return model.with_ancestors(np.nonzero(bones)[0])


def _active_set_steps(levels, rows, rhs, active, secondary, damping, max_motion, max_turn):
    """``(steps, active, start, basis)``: ``prioritized_step`` of ``levels`` under the rows
    ``active`` from the start and those the step runs into (``_first_blocking_row``), the final
    active set, the solution ``(C⁺ r, I − C⁺C)`` of its rows and the ``PrioritizedBasis`` of the
    levels under them (None when the passes ran out and the step is the last feasible point)."""
    active = active.copy()
    start = rows.solution(active, rhs) if any_true(active) else \
        (np.zeros(3 * rows.joints), np.eye(3 * rows.joints))
    jacobians, errors = [jac for jac, _ in levels], [err for _, err in levels]
    limits = (secondary, damping, max_motion, max_turn)
    basis = PrioritizedBasis(jacobians, start[1])
    steps = basis.steps(errors, start[0], *limits)
    feasible, at_feasible = start[0], None      # the feasible point's row values, once needed
    violated = rhs + _VIOLATION_TOLERANCE
    for _ in range(_MAX_ACTIVE_SET_PASSES):
        at_end = rows.times(steps[-2])
        over = ~active & (at_end > violated)
        if not any_true(over):
            break
        if at_feasible is None:
            at_feasible = rows.times(feasible)
        blocking, alpha = _first_blocking_row(rhs, over, at_feasible, at_end)
        if alpha > 0.0:     # (rows resting on their bound join where the segment starts)
            feasible = feasible + alpha * (steps[-2] - feasible)
            at_feasible = at_feasible + alpha * (at_end - at_feasible)
        start = rows.with_rows(start, blocking, rhs, not any_true(active[rows.owner.size:]))
        active[blocking] = True
        basis = PrioritizedBasis(jacobians, start[1])
        steps = basis.steps(errors, start[0], *limits)
    else:
        steps, at_end, basis = [feasible] * len(steps), at_feasible, None
    if secondary is not None:
        steps[-1] = steps[-2] + _fit_inside(rows, rhs, at_end, steps[-1] - steps[-2])
    return steps, active, start, basis


def _turned(q, delta):
    """``exp(½Δθ) ⊗ q`` with ``w ≥ 0`` (the left update of DESIGN.md §4): a product of unit
    quaternions, unit to rounding (every consumer is scale-invariant or normalizes: FK's
    ``quat_to_matrix``, the homogeneous swing/twist terms, the solve's start)."""
    return qcanonical(qmul(qexp(0.5 * delta), q))


def _gain_left(got_before, got):
    """What a linearly converging descent can still gain after two successive gains
    ``got_before`` then ``got``: ``g ρ/(1 − ρ)`` with ``ρ = got/got_before`` (the geometric series
    of Aitken's Δ² extrapolation), or inf unless ``got_before`` > 0 and ρ < 1."""
    rate = got / np.where(got_before > 0.0, got_before, np.inf)
    return np.where((got_before > 0.0) & (rate < 1.0),
                    got * rate / (1.0 - np.minimum(rate, 1.0 - 1e-12)), np.inf)


def _first_unmet(errors, tolerance):
    """The index of the first level in ``errors`` (priority order) above ``tolerance``, or None."""
    return next((k for k, error in enumerate(errors.tolist()) if error > tolerance), None)


def _same_pose(a, b):
    """Rotations ``a`` and ``b`` agree within ``_SAME_POSE`` in every quaternion component."""
    return bool(np.abs(a - b).max(initial=0.0) <= _SAME_POSE)


def _predicted(levels, step):
    """Each level's error after ``step`` to first order, ``‖e_k − J_k Δ‖``."""
    residuals = [err - jac.dot(step) for jac, err in levels]
    return np.sqrt([residual.dot(residual) for residual in residuals])


def _first_blocking_row(slack, over, at_start, at_end):
    """The indices of the rows hit first on the segment ``start → end`` and where (α), among the
    inactive rows ``over`` that ``end`` violates, given the row values ``G·start`` and ``G·end``.

    Primal active-set rule (Nocedal & Wright §16.5; Baerlocher §5.4.2 adds the limits one at a
    time too): only the first blocking row joins the active set. Adding every row the full step
    violates at once can pin joints that the optimum leaves free and turn the step uphill. Rows
    hit at the same place count as one: those within ``RESTING`` of their bound (a joint left on
    its limit by the last projection, a contact settled at the margin) all join at α = 0, and
    otherwise those hit within ``SIMULTANEOUS`` of the segment after the first join with it
    (neighbouring samples of a capsule meeting an obstacle), each of which would otherwise cost a
    pass that barely moves.
    """
    candidates = over.nonzero()[0]
    room = slack[candidates] - at_start[candidates]
    resting = room <= RESTING
    if any_true(resting):  # rows the step leaves at once, already at their bound: all join, α = 0
        return candidates[resting], 0.0
    alpha = room / (at_end[candidates] - at_start[candidates])
    first = float(alpha.min())
    return candidates[alpha <= first + SIMULTANEOUS], min(max(first, 0.0), 1.0)


def _fit_inside(rows, slack, at_step, extra):
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


def _compare_levels(new, old, eps, reached=0.0, trade=0.0):
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


def solve(model, rotations, tasks, limits=None, stiffness=None, settings=None,
          locations=None, preferred=None):
    """Solve ``tasks`` from ``rotations`` (n,4) and return a ``SolveResult``."""
    solver = Solver(model, tasks, limits, stiffness, settings, locations)
    return solver.solve(rotations, preferred)
