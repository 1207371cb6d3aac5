"""Geometric Jacobian of task points and orientations with respect to incremental joint rotations.

Each joint j is updated as ``q_j ← exp(½ Δθ_j) ⊗ q_j`` (DESIGN.md §4; Bartelink §4.3), so Δθ_j is
a rotation vector in the frame ``F_j = M_parent · (B_p⁻¹ B_j) · T(l_j)``, the bone's frame before
its own rotation. With world axes ``a_jk = R(F_j) e_k = R(M_j) R(q_j)ᵀ e_k`` and joint centre
``c_j`` (the head), the columns are (Baerlocher Table 4.1; van den Bergen's Plücker form)

    ∂p/∂θ_jk = a_jk × (p − c_j),        ∂ω/∂θ_jk = a_jk.

This equals Bartelink's exp-map derivative at Δθ = 0 (digest §4.6, "equivalent geometric form").
"""

import numpy as np

from .quaternion import quat_to_matrix


def joint_axes(world, rotations):
    """(n,3,3) world axes of each joint's Δθ: column k is ``a_jk``."""
    return world[:, :3, :3] @ np.swapaxes(quat_to_matrix(rotations), -1, -2)


def task_jacobian(axes, centres, points, joint_masks, joints):
    """Position and orientation Jacobians over the variable joints ``joints``.

    ``points`` (T,3) are the task points, ``joint_masks`` (T,n) says which joints move which task.
    Returns ``(J_pos, J_rot)``, each (T, 3, 3·len(joints)), columns ordered joint-major (x, y, z).
    """
    a = axes.take(joints, axis=0)                                 # (m, 3 xyz, 3 axes)
    lever = (points[:, None, :] - centres.take(joints, axis=0)[None, :, :])[..., None]  # (T,m,3,1)
    # (a_k × lever) by components, batched over tasks, joints and axes: (T, m, 3 xyz, 3 axes)
    j_pos = a[:, _NEXT] * lever[:, :, _AFTER] - a[:, _AFTER] * lever[:, :, _NEXT]
    mask = joint_masks.take(joints, axis=1)[:, :, None, None]
    j_pos = j_pos * mask
    j_rot = a[None] * mask
    t, m = j_pos.shape[:2]
    return (np.transpose(j_pos, (0, 2, 1, 3)).reshape(t, 3, 3 * m),
            np.transpose(j_rot, (0, 2, 1, 3)).reshape(t, 3, 3 * m))


_NEXT, _AFTER = [1, 2, 0], [2, 0, 1]   # (u × v)_i = u_{i+1} v_{i+2} − u_{i+2} v_{i+1}
