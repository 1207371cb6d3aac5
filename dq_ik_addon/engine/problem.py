"""What a solve is built from, once per solver, and how it measures a pose.

The solve models only the bones its tasks depend on (``involved_bones``: task bones, capsule
bones the tasks move, and their ancestors), moves only the joints some task may move and that are
not locked by stiffness 1 (``joints``), and weighs every Jacobian column by the joint's stiffness
and the axes its limits leave free (``column_scale``: Δθ = W^½ y with W = diag(1 − stiffness),
a weighted minimum norm). Task rows are weighted by √weight within a level, and angular rows
(radians) are multiplied by the chain size L so that metres and radians weigh alike.
"""

from dataclasses import replace

import numpy as np

from .acceptance import predicted_errors
from .contact_set import ContactSet
from .independent_parts import IndependentParts, connected
from .involved_bones import involved_bones
from .jacobian import JointFrames, chain_order, column_mask
from .moving_joints_fk import MovingJointsFK
from .quaternion import row_dots
from .reach_bound import ReachBound, chain_roots
from .slides import Slides
from .solver_settings import chain_size
from .tasks import TaskSet


class Problem:
    """The sub-model, tasks, joints, limits and contacts of one solver, and the measures of a
    pose: FK, task errors, level and group errors (contacts first), convergence."""

    def __init__(self, model, tasks, limits, stiffness, settings, obstacles, radii, collision,
                 self_collision, translation=None, local_sources=None):
        self.bones = involved_bones(model, tasks, obstacles, radii, collision, self_collision)
        sub_index = np.full(len(model), -1, dtype=np.int64)
        sub_index[self.bones] = np.arange(self.bones.size)
        self.model = model.subset(self.bones)
        self.tasks = TaskSet(self.model, [replace(t, bone=int(sub_index[t.bone]), partner=int(
            sub_index[t.partner]) if t.partner >= 0 else -1, body=None if t.body is None else
            t.body.take(self.bones)) for t in tasks])
        self.settings = settings
        self.size = chain_size(model)
        stiffness = np.zeros(len(self.model)) if stiffness is None else \
            np.clip(np.asarray(stiffness, float)[self.bones], 0, 1)
        moved = self.tasks.joint_masks.any(axis=0) & (stiffness < 1.0)
        self.joints = np.nonzero(moved)[0]
        self.moved_bones = self.bones[self.joints]
        self.moved_mask = np.isin(np.arange(len(model)), self.moved_bones)   # over the model
        self.slides = Slides(self.model, self.tasks.joint_masks, None if translation is None
                             else np.asarray(translation, float)[self.bones], self.size)
        # the Jacobian's columns: 3 per turning joint, then 3 per sliding bone
        self.column_joints = np.concatenate([self.joints, self.slides.bones])
        copied = None if local_sources is None else np.asarray(local_sources)[self.bones]
        self.fk = MovingJointsFK(self.model, self.joints, self.slides.bones, None if copied is None
                                 else (copied >= 0) & ~np.isin(copied, self.bones[
                                     self.column_joints]))
        self.keepers = np.union1d(self.fk.keepers, self.fk.part_keepers)   # those the FK turns
        self.joint_frames = JointFrames(self.model, self.joints, self.slides.bones)
        weights = np.sqrt(1.0 - stiffness[self.joints])
        self.limits = None if limits is None else limits.for_joints(self.moved_bones, weights)
        if self.limits is not None and not self.limits.limited.any():
            self.limits = None      # no joint limited: no rows, no projection
        self.column_scale = np.concatenate([(weights[:, None] * np.ones(3) if self.limits is None
                                             else self.limits.column_scale).ravel(),
                                            self.slides.column_scale()])
        # a step's components in radians, a slide's as a fraction of L (``max_joint_step``)
        self.step_units = np.concatenate([np.ones(3 * self.joints.size),
                                          np.full(3 * self.slides.count, 1.0 / self.size)])
        self.moves = self.model.descendants_mask()
        self.chain_roots, inner = chain_roots(self.tasks.joint_masks)
        # of the still bones, the reach reads the evaluated pose of the chains' and task bones'
        # ancestors only
        self.reach = ReachBound(self.model, self.tasks.bones, inner, self.fk.still & self.moves[
            :, np.union1d(np.flatnonzero(inner.any(axis=0)), self.tasks.bones)].any(axis=1))
        free = np.zeros(len(self.model), dtype=bool)     # joints free to turn every way
        free[self.joints] = True if self.limits is None else ~self.limits.limited
        # reach: straight (a chain that slides: not only by turning)
        self.free_chains = ~(self.tasks.joint_masks & ~free).any(axis=1) & ~self.slides.moves_task
        self._reach_key = self.chain_reach = self.exact_reach = None    # (``hang``)
        tasks = self.tasks
        self.task_columns = tasks.by_batch(column_mask(tasks.joint_masks, self.column_joints))
        for batch in tasks.batches:
            batch.bind(self.model, self.column_joints, self.moves, self.keepers)
        chain, ancestors = chain_order(tasks.joint_masks, self.moves, self.column_joints)
        self.chain_orders = list(zip(tasks.by_batch(chain), tasks.by_batch(ancestors)))
        self.contacts = None
        if obstacles is not None or self_collision:
            self.contacts = ContactSet(
                self.model, self.column_joints, self.moves, np.asarray(radii, np.float64)[self.bones],
                np.ones(self.bones.size, bool) if collision is None else
                np.asarray(collision, dtype=bool)[self.bones],
                obstacles, self_collision, settings.margin, self.size)
            self.seat_targets()
        self.level_rows = [tasks.priorities == level for level in tasks.levels]
        self.level_sums = np.array(self.level_rows, dtype=float)   # (levels, tasks) 0/1
        self.level_weights = self.level_sums * tasks.weights
        self.group_sums = self._groups()   # (groups, tasks) 0/1
        self.split = len(self.group_sums) > len(self.level_sums)
        self.group_weights = self.group_sums * tasks.weights
        self.group_levels = (self.level_sums.dot(self.group_sums.T) > 0.0).astype(float)
        self._groups_of = (None, None)   # (task errors, their group errors) of the last call
        root_w = np.sqrt(tasks.weights)
        # per level and batch: its rows in the batch, √weight (rows of e) and √weight times the
        # column scales (rows of J; angular rows in units of ``size``)
        self.level_parts = [[(b, rows, root_w[index[rows]][:, None],
                              root_w[index[rows]][:, None, None] * self.column_scale
                              * (self.size if batch.angular else 1.0))
                             for b, (batch, index) in enumerate(zip(tasks.batches, tasks.index))
                             for rows in [np.flatnonzero(tasks.priorities[index] == level)]
                             if rows.size]
                            for level in tasks.levels]
        # each level's tasks in the order of its rows (``level_task_errors``, batch by batch), and
        # each task's place in the rows of all levels
        self.level_tasks = [np.concatenate([tasks.index[b][rows] for b, rows, _, _ in parts])
                            for parts in self.level_parts]
        self.level_order = np.concatenate(self.level_tasks or [np.zeros(0, np.int64)])
        self.parts = IndependentParts.of(self)     # searched part by part (None: whole)

    def seat_targets(self):
        """Give the contacts the position tasks' targets (``ContactSet.seat``): call again after
        new targets or obstacles."""
        if self.contacts is not None:
            tasks = self.tasks
            self.contacts.seat(tasks.bones[tasks.reaches_point], tasks.goals()[tasks.reaches_point])

    def hang(self, given):
        """Take the given pose ``given`` (``moving_joints_fk.GivenPose``) the chains hang from,
        and with it each task's upper bound of its reach from its chain root's head over every
        rotation of the joints (``reach_bound``; ``TaskSet.set_reach``; escapes), taken again
        only when the part of the given pose it reads changes (``ReachBound.key``): the scale of
        the still ancestors of the chains and task bones in the evaluated pose, the locations of
        the bones below chain roots and the scales."""
        still_scale = self.reach.still_scale(given)
        key = self.reach.key(given, still_scale)
        if key == self._reach_key:
            return
        self._reach_key = key
        reach, exact = self.reach(given, still_scale)
        allowance = self.slides.allowance()
        self.chain_reach = reach + allowance
        self.exact_reach = exact & (allowance == 0.0) & (reach > 0.0)
        self.tasks.set_reach(self.chain_roots, self.chain_reach, self.free_chains,
                             self.settings.soft_reach, self.exact_reach, ~self.slides.moves_task)

    def given_key(self, given):
        """The given pose ``given`` as bytes (``GivenPose.key``), less what the solve moves:
        the evaluated pose of the bones it moves and the locations of the bones it slides; with
        the version of the local channels its FK takes (``MovingJointsFK.locals_key``)."""
        return given.key(self.fk.still, self.slides.bones), self.fk.locals_key(given)

    def _groups(self):
        """The tasks of each level split into groups that share no moved joint, even through
        other tasks of the group (connected components), level by level in priority order.
        A level's least-squares problem is then independent groups (coupled only through the
        null spaces of the levels above), each with its own error: a group's progress is not
        measured against another's, e.g. a hand 0.25 mm from its target against the other
        hand's target metres beyond its reach (``level_errors``, ``group_errors``)."""
        tasks = self.tasks
        masks = tasks.joint_masks[:, self.column_joints].astype(np.int64)
        linked = ((masks @ masks.T) > 0) | np.eye(len(tasks), dtype=bool)
        linked = connected(linked & (tasks.priorities[:, None] == tasks.priorities[None, :]))
        groups = [row for level in tasks.levels
                  for row in np.unique(linked[tasks.priorities == level], axis=0)[::-1]]
        return np.array(groups, dtype=float).reshape(-1, len(tasks))

    def errors(self, rotations, world=None):
        """FK (``world`` if given) and each batch's task errors at ``rotations``."""
        world = self.fk(rotations) if world is None else world
        return world, self.tasks.errors(world)

    def level_errors(self, world, errors):
        """The error of each priority level, preceded by the total contact penetration when
        there are contacts (they rank above every task). A level's error is the norm of its
        weighted task errors, or, when its tasks fall into groups that share no moved joint
        (``_groups``), the sum of its groups' norms: a step is then kept for what it gains on
        one group though another group's error rises by less, e.g. a hand reaching its target
        while the other arm, stretched towards a target metres beyond its reach, shifts by
        microns (a norm over both would not see the first hand's last millimetre under the
        second one's metres)."""
        if self.split:
            groups = self.group_errors(world, errors)
            if self.contacts is None:
                return self.group_levels.dot(groups)
            return np.concatenate([groups[:1], self.group_levels.dot(groups[1:])])
        levels = np.sqrt(self.level_weights.dot(self.tasks.squares(errors, self.size)))
        if self.contacts is not None:
            return np.concatenate([[self.contacts.penetration(world)], levels])
        return levels

    def group_errors(self, world, errors):
        """The error of each group of tasks (``_groups``) in priority order, preceded by the total
        contact penetration when there are contacts: the level errors when every level is one
        group."""
        if errors is self._groups_of[0]:
            return self._groups_of[1]
        groups = np.sqrt(self.group_weights.dot(self.tasks.squares(errors, self.size)))
        if self.contacts is not None:
            groups = np.concatenate([[self.contacts.penetration(world)], groups])
        self._groups_of = (errors, groups)
        return groups

    def state_groups(self, state):
        """The group errors of a solve's state ``(q, world, errors, level errors)``: its level
        errors when every level is one group."""
        return self.group_errors(state[1], state[2]) if self.split else state[3]

    def predicted(self, levels, step):
        """``(level errors, group errors)`` after ``step`` to first order, ``‖e_k − J_k Δ‖``
        (task levels and groups only; ``levels``: each level's ``(J_k, e_k)``); a level's error
        is the sum of its groups' (``level_errors``). The group errors are None when every level
        is one group."""
        if not self.split:
            return predicted_errors(levels, step), None
        residual = np.concatenate([err - jac.dot(step) for jac, err in levels]).reshape(-1, 3)
        squares = np.empty(len(self.tasks))
        squares[self.level_order] = row_dots(residual, residual)
        groups = np.sqrt(self.group_sums.dot(squares))
        return self.group_levels.dot(groups), groups

    def weigh_slides(self, weight):
        """Weigh the slides' columns as a turn per ``weight`` × L (``slides``): their column
        scales and the levels' row scales made from them."""
        k, slides = 3 * self.slides.count, self.slides
        if not k or weight == slides.weight:
            return
        old = self.column_scale[-k:].copy()
        slides.weight = weight
        self.column_scale[-k:] = slides.column_scale()
        ratio = np.divide(self.column_scale[-k:], old, out=np.zeros(k), where=old > 0.0)
        for parts in self.level_parts:
            for _, _, _, row_scale in parts:
                row_scale[..., -k:] *= ratio

    def level_jacobians(self, world, frame):
        """``J_k`` per priority level: each task's rows times √weight, columns scaled."""
        jacobians = self.tasks.jacobians(frame, world, self.task_columns)
        width = self.column_scale.size
        levels = []
        for parts in self.level_parts:
            rows = [(jacobians[b].take(rows, axis=0) * row_scale).reshape(-1, width)
                    for b, rows, _, row_scale in parts]
            levels.append(rows[0] if len(rows) == 1 else np.concatenate(rows))
        return levels

    def level_task_errors(self, errors):
        """``e_k`` per priority level: each task's rows times √weight, angular rows in units of
        ``size`` (radians × chain size, comparable to metres)."""
        if self.tasks.any_angular:
            errors = [e * self.size if batch.angular else e
                      for batch, e in zip(self.tasks.batches, errors)]
        levels = []
        for parts in self.level_parts:
            rows = [(errors[b].take(rows, axis=0) * root_w).ravel() for b, rows, root_w, _ in parts]
            levels.append(rows[0] if len(rows) == 1 else np.concatenate(rows))
        return levels

    def step_limits(self):
        """``prioritized_step``'s damping ε and task-motion clamp (fractions of the chain size)
        and joint-motion clamp."""
        settings = self.settings
        return (settings.damping * self.size, settings.max_task_step * self.size,
                settings.max_joint_step)

    def step_scale(self, step):
        """The factor that shortens ``step`` to at most ``max_joint_step`` per component (a
        slide's as a fraction of the chain size, ``step_units``)."""
        longest = np.abs(step * self.step_units).max(initial=0.0)
        limit = self.settings.max_joint_step
        return 1.0 if longest <= limit else limit / longest

    def converged(self, errors, levels):
        """Every task within its tolerance (``SolverSettings.task_tolerance``), and no contact
        deeper than ``tolerance``."""
        settings = self.settings
        if self.contacts is not None and levels[0] > settings.tolerance:
            return False
        angular = float(settings.task_tolerance(True))
        for e, batch in zip(errors, self.tasks.batches):
            tol = angular if batch.angular else settings.tolerance
            if np.maximum.reduce(np.abs(e), axis=None, initial=0.0) >= tol:
                return False       # (a component past the tolerance: so is the norm)
            if row_dots(e, e).max(initial=0.0) >= tol * tol:
                return False
        return True

    def met(self, norms):
        """True when every task's error norm (T,), as reported (towards its target as it is),
        is within its tolerance: a target beyond reach, solved for at the chain's reach, is
        not met."""
        settings = self.settings
        tolerance = np.where(self.tasks.angular, settings.task_tolerance(True), settings.tolerance)
        return bool((norms < tolerance).all())

    def task_levels(self):
        """How many of the level errors are task levels (the rest, first, are contacts)."""
        return len(self.level_rows)
