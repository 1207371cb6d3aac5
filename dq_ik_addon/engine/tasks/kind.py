"""The protocol every task kind implements, over a batch of tasks of that kind.

A task kind is one module of this package with one class derived from ``TaskKind``. The solver
builds one instance per kind present in a solve, holding every task of that kind (a batch of k),
and asks it, per iteration, for arrays over the whole batch:

- ``errors(effectors)``: the (k, 3) error rows e, such that the task is met when ‖e‖ = 0 (a
  kind whose target is a point may bring a far target in to ``effectors.reach``, see
  ``Position``; ``effectors.reach`` is None when the true errors are asked for);
- ``jacobian(frame, effectors, mask)``: the (k, 3, 3m) rows J with ``e(Δθ) ≈ e − J Δθ`` over
  the 3m joint columns of ``jacobian.JointFrames`` (``mask``: (k, 3m), which columns move each
  task: its chain);
- ``arm(frame, effectors, delta)`` and ``disarm()``: for an inequality kind, the row of a
  bound that a step would cross, held for that step solved again (``Balance``); the others
  have none;
- ``second_order(motion, effectors, errors)``: the (k, 3) second-order change s of the errors
  under a step, ``e(Δθ) = e − J Δθ − s + O(‖Δθ‖³)``, or None when the kind has none (its rows
  then take Newton's step in the solver's Chebyshev correction);
- ``free_rows(effectors, starts, frame, mask)``, for a kind that ``leaves_free`` components of
  its tail: the soft rows ``(J_s (k,3,3m), e_s (k,3))`` that keep them where the solve started,
  the tails ``starts`` (k,3) (``AxesPosition``; J_s None without ``frame``).

``angular`` kinds give radians, which the solver weighs against metres by the chain size L;
``reaches_point`` kinds pull the effector's tail onto a target point (the escapes test whether
that point is within the chain's reach). ``Task.options`` carries constants of one task the
kind needs beside its target (an aim axis, say).
"""

import numpy as np

from ..kept_rotations import KeptColumns


class TaskKind:
    """A batch of tasks of one kind: their targets (k, target_width) and options."""

    angular = False
    reaches_point = False
    leaves_free = False
    target_width = 3
    kept_columns = None     # ``KeptColumns`` of a model with keepers (``bind``)

    def __init__(self, targets, options):
        self.targets = np.zeros((len(targets), self.target_width))
        self.set_targets(targets)
        self.options = options

    def set_targets(self, targets):
        """Take new targets for the same tasks (one row per task, in the batch's order)."""
        self.targets[:] = targets

    def errors(self, effectors):
        raise NotImplementedError

    def jacobian(self, frame, effectors, mask):
        raise NotImplementedError

    def second_order(self, motion, effectors, errors):
        return None

    def newton_errors(self, effectors, errors):
        """The errors a Newton step solves for at ``effectors`` (``errors``: this batch's
        ``errors`` there): these, unless the kind knows the root is multiple (``Position``)."""
        return errors

    def holds(self, effectors):
        """True when an inequality task of the batch rests on its bound at the pose (a balance
        on its support polygon's edge): that may hold the other tasks short (``escapes``)."""
        return False

    def arm(self, frame, effectors, delta):
        """Hold an inequality task that the joint step ``delta`` (3m,) would take across its
        bound, from inside, on that bound for the step solved again (its ``errors`` and
        ``jacobian`` then give that row, until ``disarm``); True when any is armed."""
        return False

    def disarm(self):
        """Back to the rows of the pose alone (``arm``)."""

    def bind(self, model, columns, moves, keepers):
        """Take what the kind needs of the solve once its Jacobian columns are known (the
        sub-``model``, ``Problem.column_joints``, the model's ``descendants_mask``): the effect
        on the columns (``kept_rotations.KeptColumns``) of the ``keepers`` the solve's FK turns
        (sorted indices), when there are any."""
        self.kept_columns = KeptColumns(model, columns, moves, keepers) if keepers.size else None

    def kept(self, effectors):
        """``(G, F, heads)`` of the keepers above the batch's bones at the pose of
        ``effectors`` (``KeptColumns``, for ``jacobian.task_jacobian``), or None."""
        kept = self.kept_columns
        if kept is None:
            return None
        return (*kept.factors(effectors.bones),
                effectors.world.take(kept.keepers, axis=0)[:, :3, 3])


class Effectors:
    """What the task kinds read of a pose for their batch: the pose matrices ``world`` (n,4,4)
    of the solve's bones, the batch's ``bones``, their tails (k,3), and for a solve (None for a
    report of the true errors) the heads of their chains' roots ``origins`` (k,3) with the
    ``reach`` (k,) beyond which a target point counts as far, the distance ``aim`` (k,) it is
    solved for at then, and the ``soft`` width (k,) over which it is eased in below that
    (``TaskSet.set_reach``), and ``straight`` (k,), the exact reach where the chain reaches it
    straight (turns freely, slides no bone; 0 elsewhere)."""

    __slots__ = ("world", "bones", "tails", "origins", "reach", "aim", "soft", "straight")

    def __init__(self, world, bones, tails, origins=None, reach=None, aim=None, soft=None,
                 straight=None):
        self.world, self.bones, self.tails = world, bones, tails
        self.origins, self.reach, self.aim, self.soft = origins, reach, aim, soft
        self.straight = straight

    def frames(self):
        """The batch's bone matrices (k,4,4)."""
        return self.world.take(self.bones, axis=0)


class StepMotion:
    """A joint step Δθ (m,3) with what ``jacobian.second_order_motion`` needs of a batch: the
    Jacobian ``frame`` and, per task, its chain and ancestor masks (``jacobian.chain_order``)."""

    __slots__ = ("frame", "delta", "chain", "ancestors")

    def __init__(self, frame, delta, chain, ancestors):
        self.frame, self.delta, self.chain, self.ancestors = frame, delta, chain, ancestors
