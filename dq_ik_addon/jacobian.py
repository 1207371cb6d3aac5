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


def task_jacobian(axes, centres, points, joint_masks, joints, orientation=True):
    """Position and orientation Jacobians over the variable joints ``joints``.

    ``points`` (T,3) are the task points, ``joint_masks`` (T,n) says which joints move which task.
    Returns ``(J_pos, J_rot)``, each (T, 3, 3·len(joints)), columns ordered joint-major (x, y, z);
    ``J_rot`` is None unless ``orientation``.
    """
    a = axes.take(joints, axis=0)                                 # (m, 3 xyz, 3 axes)
    lever = points[:, None, :] - centres.take(joints, axis=0)[None, :, :]   # (T,m,3)
    mask = joint_masks.take(joints, axis=1)[:, :, None, None]
    # (a_k × lever) by components, batched over tasks, joints and axes: (T, m, 3 xyz, 3 axes)
    j_pos = (a.take(_NEXT, axis=1) * lever.take(_AFTER, axis=2)[..., None]
             - a.take(_AFTER, axis=1) * lever.take(_NEXT, axis=2)[..., None]) * mask
    t, m = j_pos.shape[:2]
    j_pos = np.transpose(j_pos, (0, 2, 1, 3)).reshape(t, 3, 3 * m)
    if not orientation:
        return j_pos, None
    return j_pos, np.transpose(a[None] * mask, (0, 2, 1, 3)).reshape(t, 3, 3 * m)


_NEXT, _AFTER = np.array([1, 2, 0]), np.array([2, 0, 1])   # (u × v)_i = u_{i+1} v_{i+2} − u_{i+2} v_{i+1}
