"""Geometric Jacobian of task points and orientations with respect to incremental joint rotations.

Each joint j is updated as ``q_j ← exp(½ Δθ_j) ⊗ q_j`` (DESIGN.md §4; Bartelink §4.3), so Δθ_j is
a rotation vector in the frame ``F_j = M_parent · (B_p⁻¹ B_j) · T(l_j)``, the bone's frame before
its own rotation. With world axes ``a_jk = R(F_j) e_k = R(M_j) R(q_j)ᵀ e_k`` and joint centre
``c_j`` (the head), the columns are (Baerlocher Table 4.1; van den Bergen's Plücker form)

    ∂p/∂θ_jk = a_jk × (p − c_j),        ∂ω/∂θ_jk = a_jk.

This equals Bartelink's exp-map derivative at Δθ = 0 (digest §4.6, "equivalent geometric form").
"""

import numpy as np

from .quaternion import qnormalize, quat_to_matrix


def joint_axes(world, rotations):
    """(n,3,3) world axes of each joint's Δθ: column k is ``a_jk``."""
    return world[:, :3, :3] @ np.swapaxes(quat_to_matrix(qnormalize(rotations)), -1, -2)


def task_jacobian(axes, centres, points, joint_masks, joints):
    """Position and orientation Jacobians over the variable joints ``joints``.

    ``points`` (T,3) are the task points, ``joint_masks`` (T,n) says which joints move which task.
    Returns ``(J_pos, J_rot)``, each (T, 3, 3·len(joints)), columns ordered joint-major (x, y, z).
    """
    a = axes[joints]                                              # (m,3,3), columns = axes
    lever = points[:, None, :] - centres[joints][None, :, :]      # (T,m,3)
    axes_rows = np.swapaxes(a, -1, -2)                            # (m,3 axes,3 xyz)
    j_pos = np.cross(axes_rows[None, :, :, :], lever[:, :, None, :])   # (T,m,3 axes,3 xyz)
    mask = joint_masks[:, joints][:, :, None, None]
    j_pos = np.where(mask, j_pos, 0.0)
    j_rot = np.where(mask, np.broadcast_to(axes_rows[None], j_pos.shape), 0.0)
    t, m = j_pos.shape[:2]
    return (np.transpose(j_pos, (0, 3, 1, 2)).reshape(t, 3, 3 * m),
            np.transpose(j_rot, (0, 3, 1, 2)).reshape(t, 3, 3 * m))
