"""Position task: the bone's tail onto a target point.

``e = t − p`` with p the tail (armature space); its Jacobian column for joint axis a_jk about the
head c_j is ``a_jk × (p − c_j)`` (Baerlocher Table 4.1; ``jacobian.task_jacobian``), and its
second-order change under a step is ``jacobian.second_order_motion``'s positional term.
"""

from ..jacobian import second_order_motion, task_jacobian
from .kind import TaskKind


class Position(TaskKind):
    """Tails onto target points (k,3), in metres."""

    reaches_point = True

    def errors(self, effectors):
        return self.targets - effectors.tails

    def jacobian(self, frame, effectors, mask):
        return task_jacobian(*frame, effectors.tails, mask, False)[0]

    def second_order(self, motion, effectors, errors):
        return second_order_motion(*motion.frame, effectors.tails, motion.delta, motion.chain,
                                   motion.ancestors)[0]
