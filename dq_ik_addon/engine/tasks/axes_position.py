"""Partial position task: the bone's tail onto a target point along some axes only.

Baerlocher's position tasks may control only some components of a point (thesis §7.2: point on
a line, point on a plane). With ``P = Σ_a u_a u_aᵀ`` over the controlled axes ``u_a`` (unit,
orthogonal: the target's own axes), the error is ``e = P (t − p)`` and its Jacobian ``P J_p``
(``jacobian.task_jacobian``), its second-order change ``P`` times the position's: one axis
keeps the tail on the plane through the target normal to that axis (a foot on a floor, free to
slide), two keep it on the line through the target along the third.

Targets are (k,12): the point, then ``P`` row by row. A target beyond the chain's reach is not
brought in (``Position``'s clamp is for points), and escapes do not treat it as a point to reach.

The free components stay where the solve started, p₀, as far as the tasks allow: the rows
``(I − P)(p₀ − p)``, Jacobian ``(I − P) J_p``, are soft (``free_rows``; ``stays``), solved below
every task. Left to the least joint motion, a foot on a floor slid 345 mm on the human metarig
for a pelvis lowered 5 cm with the other foot planted (a swing of the whole leg moves the joints
less than a bend of the knee); it stays now. The rows are a preference the descent follows
step by step, not a level it converges: where a step must move them far (both feet on a floor,
the pelvis dropped 10 cm in one solve from straight legs), they drift, and later steps bring
back only what the line search keeps.
"""

import numpy as np

from ..jacobian import second_order_motion, task_jacobian
from .kind import TaskKind


class AxesPosition(TaskKind):
    """Tails onto target points along the axes of a projector, targets (k,12), in metres."""

    target_width = 12
    leaves_free = True

    def _projectors(self):
        return self.targets[:, 3:].reshape(-1, 3, 3)

    def errors(self, effectors):
        offset = self.targets[:, :3] - effectors.tails
        return (self._projectors() @ offset[:, :, None])[:, :, 0]

    def jacobian(self, frame, effectors, mask):
        return self._projectors() @ task_jacobian(frame, effectors.tails, mask, False,
                                                  self.kept(effectors))[0]

    def free_rows(self, effectors, starts, frame=None, mask=None):
        """``((I − P) J_p or None without ``frame``, (I − P)(p₀ − p))`` with p₀ the tails
        ``starts`` (k,3) (module docstring)."""
        free = np.eye(3) - self._projectors()
        errors = (free @ (starts - effectors.tails)[:, :, None])[:, :, 0]
        if frame is None:
            return None, errors
        return free @ task_jacobian(frame, effectors.tails, mask, False,
                                    self.kept(effectors))[0], errors

    def second_order(self, motion, effectors, errors):
        change = second_order_motion(motion.frame, effectors.tails, motion.delta, motion.chain,
                                     motion.ancestors)[0]
        return (self._projectors() @ change[:, :, None])[:, :, 0]
