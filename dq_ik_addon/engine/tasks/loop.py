"""Loop tasks: a bone held on another bone of the same armature, such as two hands on one stick.

Baerlocher's loop task (thesis §4.4) keeps two effectors together. Here the bone's tail is held
on its *partner*'s head (``Task.partner``), whose place the same solve computes on every
iteration: ``e = h_partner − t``. The task moves only its own chain less the joints it shares
with the partner (``task_set.joint_masks``: the common ancestors' columns are zeroed, as in
§4.4), so over its columns the partner's head does not move and the Jacobian is the tail's,
``J_p`` (``jacobian.task_jacobian``), as a position task's, and a partner beyond the chain's
reach is brought in as a position target is (``position.toward``; on a chain of one bone, onto
its sphere, with the arc as the error). The partner moves by its
own tasks, and the loop follows it. ``LoopOrientation`` holds the bone's rotation on its
partner's in the same way (``orientation.rotation_errors``, ``Orientation``'s Jacobian). Neither
has a target of its own: targets are (k,0), and a new target set leaves them as they are.
"""

import numpy as np

from ..quaternion import matrix_to_quat
from .orientation import Orientation, rotation_errors
from .position import Position, toward


class _Partnered:
    """A kind whose target is its partner bone: no target of its own, and none to take."""

    target_width = 0

    def set_targets(self, targets):
        """A loop's partner is its target: nothing to take."""


class Loop(_Partnered, Position):
    """Tails onto the heads of partner bones (``partners``, set by the task set), in metres."""

    reaches_point = False

    def errors(self, effectors):
        heads = np.ascontiguousarray(effectors.world[self.partners, :3, 3])
        return toward(heads, effectors) - effectors.tails


class LoopOrientation(_Partnered, Orientation):
    """Bone rotations onto their partner bones' rotations, in radians."""

    def errors(self, effectors):
        return rotation_errors(matrix_to_quat(effectors.world[self.partners, :3, :3]), effectors)
