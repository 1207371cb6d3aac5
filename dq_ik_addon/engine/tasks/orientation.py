"""Orientation task: the bone's rotation onto a target rotation.

The error is the short-way rotation vector ``e = 2 log(q_target ⊗ q_bone*)``, the product
canonicalized to ``w ≥ 0`` (van den Bergen, "shortest arc"; Baerlocher §4.5.2), so q and −q give
the same, smallest error. Its Jacobian columns are the joint axes a_jk themselves (Baerlocher
Table 4.1), and its second-order change is ``jacobian.second_order_motion``'s rotational term
(Baker–Campbell–Hausdorff).
"""

from ..jacobian import second_order_motion, turn_jacobian
from ..quaternion import (
    matrix_to_quat,
    qcanonical,
    qconj,
    qmul,
    qnormalize,
    quat_to_rotvec,
)
from .kind import TaskKind


class Orientation(TaskKind):
    """Bone rotations onto target rotations (k,4), w-first, in radians."""

    angular = True
    target_width = 4

    def set_targets(self, targets):
        self.targets[:] = qnormalize(targets)

    def errors(self, effectors):
        return rotation_errors(self.targets, effectors)

    def jacobian(self, frame, effectors, mask):
        return turn_jacobian(frame, mask, self.kept(effectors))

    def second_order(self, motion, effectors, errors):
        return second_order_motion(motion.frame, None, motion.delta, motion.chain,
                                   motion.ancestors, errors)[1]


def rotation_errors(targets, effectors):
    """(k,3) the short-way rotation vectors ``2 log(q_target ⊗ q_bone*)`` (module docstring) from
    the batch's bones to the rotations ``targets`` (k,4)."""
    bone_rotation = matrix_to_quat(effectors.frames()[:, :3, :3])
    return quat_to_rotvec(qcanonical(qmul(targets, qconj(bone_rotation))))
