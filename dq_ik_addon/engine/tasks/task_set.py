"""The tasks of a solve: one batch per task kind, with their reach (``set_reach``, ``anchor``)."""

import numpy as np

from ..quaternion import any_true, row_dots
from .kind import Effectors, StepMotion
from .task import joint_masks

# A target beyond its chain's reach is solved for at a point along its direction (``set_reach``):
# where every joint of the chain turns freely, the reach bound is exact (the chain reaches it
# straight), and the point is ``_SHORT`` short of it: the closest point the chain reaches, met
# in as few iterations as a reachable target. Elsewhere (limits, bones that do not turn), the
# bound may be out of reach, and the point is ``_BEYOND`` past it, so that the chain stretches
# towards it as for any target out of reach.
_SHORT = 1e-4
_BEYOND = 0.1
# Soft Reach narrowed to nothing for a target the animation holds at its full reach (``anchor``):
# a width this small of the aim eases every point beyond it onto the aim
_LEAST_SOFT = 1e-9


class TaskSet:
    """All tasks of a solve as arrays, grouped into one ``TaskKind`` batch per kind (in the
    order the kinds first appear), with the joints each task may move."""

    def __init__(self, model, tasks):
        tasks = [t for t in tasks if t.target is not None]
        self.tasks = tasks
        self.bones = np.array([t.bone for t in tasks], dtype=np.int64)
        self.priorities = np.array([t.priority for t in tasks], dtype=np.int64)
        self.weights = np.array([max(t.weight, 0.0) for t in tasks], dtype=np.float64)
        self.levels = sorted(set(self.priorities.tolist()))
        self.joint_masks = joint_masks(model, tasks)
        self.lengths = model.lengths[self.bones][:, None]
        kinds = list(dict.fromkeys(t.kind for t in tasks))
        self.index = [np.array([i for i, t in enumerate(tasks) if t.kind is kind], np.int64)
                      for kind in kinds]
        self.batches = [kind(np.array([tasks[i].target for i in index], dtype=np.float64),
                             [tasks[i].options for i in index])
                        for kind, index in zip(kinds, self.index)]
        for batch, index in zip(self.batches, self.index):
            batch.partners = np.array([tasks[i].partner for i in index], dtype=np.int64)
            batch.bodies = [tasks[i].body for i in index]
        self.whole = len(self.batches) == 1   # one batch in task order: no rows to pick
        self.angular = np.zeros(len(tasks), bool)
        self.reaches_point = np.zeros(len(tasks), bool)
        for batch, index in zip(self.batches, self.index):
            self.angular[index], self.reaches_point[index] = batch.angular, batch.reaches_point
        self.any_angular = bool(self.angular.any())
        self.leave_free = any(batch.leaves_free for batch in self.batches)
        self.origins = self.reach = self.aim = self.soft = self.straight = None  # (``set_reach``)
        self.aimed = self.eased = None    # ... before ``anchor`` narrows them
        self.anchored, self.anchors, self.starts = None, None, None    # (``anchor``)
        self._tails_of = (None, None)  # (pose matrices, their task tails) of the last ``tails``
        self._effectors_of = (None, None)  # (pose matrices, each batch's ``Effectors``)

    def set_reach(self, roots, reach, free, soft=0.0, exact=None, easable=None):
        """Each task's chain root (bone index) and an upper bound of its reach from that root's
        head, and whether its chain turns freely (``free``, (T,)): the solve takes a target point
        beyond it (free) or beyond ``(1 + _BEYOND)`` times it as ``(1 − _SHORT)`` or ``(1 +
        _BEYOND)`` times it along its direction (``Effectors``, ``Position``). On a chain that
        slides no bone (``easable``, (T,); None: the free ones), ``soft`` (a fraction of the reach)
        eases targets in over the last part of the reach towards ``(1 − _SHORT)`` times the bound
        (``Position``): a limited chain that can straighten reaches it; one whose limits keep it
        from a target settles at a compromise with the eased point. Where the bound is ``exact`` (a
        chain of one bone, whose tail stays on the sphere of that radius), every target point is
        taken on the sphere, along its direction: the closest point the chain reaches, nearer
        targets too."""
        self.origins, reach = np.asarray(roots, dtype=np.int64), np.asarray(reach, float)
        exact = np.zeros(reach.shape, bool) if exact is None else exact
        easable = free if easable is None else easable
        eased = easable & ~exact & (soft > 0.0)
        self.reach = np.where(exact, 0.0, np.where(free, 1.0, 1.0 + _BEYOND) * reach)  # far beyond
        self.aim = self.aimed = np.where(exact, reach, np.where(
            free | eased, 1.0 - _SHORT, 1.0 + _BEYOND) * reach)
        self.soft = self.eased = np.where(eased, soft, 0.0) * self.aim
        self.straight = np.where(free & easable & ~exact, reach, 0.0)

    def anchor(self, tasks, world, animated=None, held=None):
        """Measure the reach of ``tasks`` (a (T,) mask, or None: none) from where their chain
        roots' heads are in the pose matrices ``world`` (the start of a solve), not from where
        they are as the solve goes on: a chain that slides carries its root along, and a far
        target brought in from a moving root would move with it.

        The task tails in ``world`` are where partial positions' free components stay (``stays``).
        A task whose chain's bones are all ``animated`` ((n,) mask, or None: none) is eased only
        beyond where the animation holds its tail, d₀ from the chain root's head in the pose
        matrices ``held()`` gives (the animated pose, computed only then; None: ``world``, a frame
        change's or a bake's start): its aim is ``max(A, d₀)`` and its Soft Reach width ``min(s, A
        − d₀)`` (at least ``_LEAST_SOFT`` of the aim), so a target the animation meets is met where
        it is, and every solve of the frame (live posing, Solve) eases as its frame change did (a
        kick whose legs work within the last 5 % of their reach ended its feet up to 14.5 mm short
        of the targets its own motion keyed, its legs 10.7° off, at Soft Reach 5 %).
        """
        self.anchored = tasks if tasks is not None and tasks.any() else None
        self.starts = self.tails(world)     # (``stays``)
        if self.anchored is not None:
            self.anchors = world.take(self.origins, axis=0)[:, :3, 3]
        self.soft, self.aim = self.eased, self.aimed
        narrowed = None if animated is None or self.eased is None else \
            ~(self.joint_masks & ~animated).any(axis=1) & (self.eased > 0.0)
        if narrowed is not None and any_true(narrowed):
            held = world if held is None else held()
            stands = self.tails(held) - held.take(self.origins, axis=0)[:, :3, 3]
            reached = np.sqrt(row_dots(stands, stands))
            self.aim = np.where(narrowed, np.maximum(self.aimed, reached), self.aimed)
            self.soft = np.where(narrowed, np.maximum(np.minimum(
                self.eased, self.aim - reached), _LEAST_SOFT * self.aim), self.eased)
        self._effectors_of = (None, None)

    def eased_key(self):
        """The aims and Soft Reach widths as bytes (the solver's memo compares them)."""
        return None if self.aim is None else self.aim.tobytes() + self.soft.tobytes()

    def set_targets(self, targets):
        """New targets for the same tasks: one per task, in the order the tasks were given."""
        for batch, index in zip(self.batches, self.index):
            batch.set_targets(np.asarray(targets, dtype=np.float64) if self.whole else
                              np.array([targets[i] for i in index], dtype=np.float64))

    def target_key(self):
        """Every target as bytes (the solver's memo compares them)."""
        return b"".join(batch.targets.tobytes() for batch in self.batches)

    def __len__(self):
        return len(self.tasks)

    def tails(self, world):
        """The task bones' tails (T,3) from the pose matrices ``world`` (``ChainModel.tails``);
        the last answer again for the same ``world`` array (a solve asks up to five times per
        pose: errors, Jacobian, correction, escape)."""
        if world is self._tails_of[0]:
            return self._tails_of[1]
        frames = world.take(self.bones, axis=0)
        tails = frames[:, :3, 3] + frames[:, :3, 1] * self.lengths
        tails.flags.writeable = False
        self._tails_of = (world, tails)
        return tails

    def _effectors(self, world):
        """Each batch's ``Effectors`` at ``world`` (the last answer again for the same array)."""
        if world is self._effectors_of[0]:
            return self._effectors_of[1]
        tails = self.tails(world)
        origins = None if self.origins is None else world.take(self.origins, axis=0)[:, :3, 3]
        if self.anchored is not None:
            origins[self.anchored] = self.anchors[self.anchored]
        if self.whole:
            effectors = [Effectors(world, self.bones, tails, origins, self.reach, self.aim,
                                   self.soft, self.straight)]
        else:
            effectors = [Effectors(world, self.bones.take(index), tails.take(index, axis=0),
                                   None if origins is None else origins.take(index, axis=0),
                                   *(None if origins is None else values.take(index)
                                     for values in (self.reach, self.aim, self.soft,
                                                    self.straight)))
                         for index in self.index]
        self._effectors_of = (world, effectors)
        return effectors

    def errors(self, world):
        """Each batch's error rows (k,3) at the pose matrices ``world``, far targets brought in
        to their chain's reach (``set_reach``)."""
        effectors = self._effectors(world)
        if self.whole:
            return [self.batches[0].errors(effectors[0])]
        return [batch.errors(at) for batch, at in zip(self.batches, effectors)]

    def newton_errors(self, world, errors):
        """``errors`` (each batch's rows at ``world``) as a Newton step solves for them
        (``TaskKind.newton_errors``: chains that reach straight), ``errors`` itself when no
        chain does."""
        if self.straight is None or not any_true(self.straight > 0.0):
            return errors
        return [batch.newton_errors(at, error)
                for batch, at, error in zip(self.batches, self._effectors(world), errors)]

    def holding(self, world):
        """True when an inequality task rests on its bound at ``world`` (``TaskKind.holds``)."""
        return any(batch.holds(at) for batch, at in zip(self.batches, self._effectors(world)))

    def arm(self, world, frame, delta, errors):
        """``errors`` (each batch's rows at ``world``) with the inequality tasks that the joint
        step ``delta`` would take across their bound held on it (``TaskKind.arm``), or None
        when there are none; ``disarm`` when the step is solved again."""
        effectors = self._effectors(world)
        armed = [batch.arm(frame, at, delta) for batch, at in zip(self.batches, effectors)]
        if not any(armed):
            return None
        return [batch.errors(at) if hit else error
                for batch, at, hit, error in zip(self.batches, effectors, armed, errors)]

    def disarm(self):
        for batch in self.batches:
            batch.disarm()

    def true_errors(self, world):
        """Each batch's error rows at ``world`` towards the targets as they are (for reports)."""
        return [batch.errors(Effectors(world, at.bones, at.tails))
                for batch, at in zip(self.batches, self._effectors(world))]

    def jacobians(self, frame, world, masks):
        """Each batch's Jacobian rows (k,3,3m); ``masks``: each batch's (k,3m) column masks."""
        return [batch.jacobian(frame, effectors, mask) for batch, effectors, mask
                in zip(self.batches, self._effectors(world), masks)]

    def stays(self, world, frame=None, masks=None):
        """``(J_s (r,3m) over ``masks``' columns (per batch, (k,3m)) at ``frame`` or None, e_s
        (r,))``: the soft rows at ``world`` of the batches that leave components free
        (``TaskKind.free_rows``), from where the solve started (``anchor``), or None."""
        if not self.leave_free or self.starts is None:
            return None
        rows = [(batch.free_rows(at, self.starts.take(index, axis=0), frame, masks and masks[b]),
                 self.weights.take(index) > 0.0)       # (a task of weight 0 holds nothing)
                for b, (batch, at, index) in enumerate(zip(self.batches, self._effectors(world),
                                                           self.index)) if batch.leaves_free]
        errors = np.concatenate([(err * held[:, None]).ravel() for (_, err), held in rows])
        return None if frame is None else np.concatenate(
            [(jac * held[:, None, None]).reshape(-1, jac.shape[-1])
             for (jac, _), held in rows]), errors

    def second_order(self, frame, world, delta, orders, errors):
        """Each batch's second-order error change under the joint step ``delta`` (m,3), zero for
        the kinds that have none; ``orders``: each batch's (chain, ancestors)."""
        changes = []
        for batch, effectors, order, error in zip(self.batches, self._effectors(world), orders,
                                                  errors):
            change = batch.second_order(StepMotion(frame, delta, *order), effectors, error)
            changes.append(np.zeros_like(error) if change is None else change)
        return changes

    def by_batch(self, per_task):
        """Rows of a per-task array, one array per batch."""
        return [per_task] if self.whole else [per_task.take(index, axis=0) for index in self.index]

    def squares(self, errors, size):
        """Each task's squared error (T,), angular ones in units of the chain ``size``:
        ``‖e‖²`` or ``L²‖e‖²``."""
        if self.whole and not self.any_angular:
            return row_dots(errors[0], errors[0])
        squares = [row_dots(e, e) * (size * size) if batch.angular else row_dots(e, e)
                   for batch, e in zip(self.batches, errors)]
        return squares[0] if self.whole else self._in_task_order(squares)

    def norms(self, errors):
        """Each task's error ‖e‖ (T,), in metres or radians."""
        norms = [np.sqrt(row_dots(e, e)) for e in errors]
        return norms[0] if self.whole else self._in_task_order(norms)

    def _in_task_order(self, per_batch):
        out = np.empty(len(self.tasks))
        for index, values in zip(self.index, per_batch):
            out[index] = values
        return out

    def goals(self):
        """(T,3) target points of the tasks that reach a point (``reaches_point``; 0 for the
        others)."""
        goals = np.zeros((len(self.tasks), 3))
        for batch, index in zip(self.batches, self.index):
            if batch.reaches_point:
                goals[index] = batch.targets
        return goals
