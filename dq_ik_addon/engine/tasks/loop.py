"""Loop tasks: a bone held on another bone of the same armature, such as two hands on one stick.

Baerlocher's loop task (thesis §4.4) keeps two effectors together. Here the bone's tail is held
on its *partner*'s head (``Task.partner``), whose place the same solve computes on every
iteration: ``e = h_partner − t``. The task moves its own chain as Chain Length says, the joints
it shares with the partner (the spine under two hands) included: such a joint moves both ends,
so its column is the difference of theirs, ``a × (t − h)`` for a turn (zero once the two meet,
where §4.4 zeroes it outright), and the Jacobian is ``J_t − J_h`` with ``J_h`` the head's over
the shared columns alone (``jacobian.task_jacobian``). Zeroed, the spine turned for the other
tasks alone, and a left hand looped onto a right hand reaching 0.4 m out and down under the
Humanoid limits stopped 172 mm short after 16 escapes. A partner beyond the chain's reach is
brought in as a position target is (``position.toward``; on a chain of one bone, onto its
sphere, with the arc as the error). The partner's own chain moves by its own tasks, and the
loop follows it. ``LoopOrientation`` holds the bone's rotation on its partner's in the same way
(``orientation.rotation_errors``; its shared columns cancel: both frames turn alike). Neither
has a target of its own: targets are (k,0), and a new target set leaves them as they are.
"""

import numpy as np

from ..jacobian import column_mask, task_jacobian, turn_jacobian
from ..quaternion import any_true, matrix_to_quat
from .orientation import Orientation, rotation_errors
from .position import Position, toward


class _Partnered:
    """A kind whose target is its partner bone: no target of its own, and none to take; the
    columns that move each partner (``shared``)."""

    target_width = 0

    def set_targets(self, targets):
        """A loop's partner is its target: nothing to take."""

    def bind(self, model, columns, moves, keepers):
        super().bind(model, columns, moves, keepers)
        self.partner_columns = column_mask(moves[:, self.partners].T, columns)

    def second_order(self, motion, effectors, errors):
        """None: the partner's second-order motion over the shared columns is not modelled, so
        the rows take Newton's step (``TaskKind.second_order``)."""
        return None

    def shared(self, effectors, mask):
        """``(mask of the task's columns that move its partner too, the partners' keeper
        factors)``, or None when the task shares none (``TaskKind.kept``)."""
        shared = mask * self.partner_columns
        if not any_true(shared):
            return None
        kept = self.kept_columns
        return shared, None if kept is None else (
            *kept.factors(self.partners), effectors.world.take(kept.keepers, axis=0)[:, :3, 3])


class Loop(_Partnered, Position):
    """Tails onto the heads of partner bones (``partners``, set by the task set), in metres."""

    reaches_point = False

    def errors(self, effectors):
        heads = np.ascontiguousarray(effectors.world[self.partners, :3, 3])
        return toward(heads, effectors) - effectors.tails

    def jacobian(self, frame, effectors, mask):
        own = super().jacobian(frame, effectors, mask)
        shared = self.shared(effectors, mask)
        if shared is None:
            return own
        heads = np.ascontiguousarray(effectors.world[self.partners, :3, 3])
        return own - task_jacobian(frame, heads, shared[0], False, shared[1])[0]

class LoopOrientation(_Partnered, Orientation):
    """Bone rotations onto their partner bones' rotations, in radians."""

    def errors(self, effectors):
        return rotation_errors(matrix_to_quat(effectors.world[self.partners, :3, :3]), effectors)

    def jacobian(self, frame, effectors, mask):
        own = super().jacobian(frame, effectors, mask)
        shared = self.shared(effectors, mask)
        return own if shared is None else own - turn_jacobian(frame, shared[0], shared[1])
