"""Geometric Jacobian of task points and orientations with respect to incremental joint rotations.

Each joint j is updated as ``q_j ← exp(½ Δθ_j) ⊗ q_j`` (the left update, Bartelink §4.3), so Δθ_j is
a rotation vector in the frame ``F_j = M_parent · (B_p⁻¹ B_j) · T(l_j)``, the bone's frame before
its own rotation. With world axes ``a_jk = R(F_j) e_k = R(M_j) R(q_j)ᵀ e_k`` and joint centre
``c_j`` (the head), the columns are (Baerlocher Table 4.1; van den Bergen's Plücker form)

    ∂p/∂θ_jk = a_jk × (p − c_j),        ∂ω/∂θ_jk = a_jk.

This equals Bartelink's exp-map derivative at Δθ = 0 (digest §4.6, "equivalent geometric form").
"""

import numpy as np

from .quaternion import row_dots


class JointFrames:
    """What the Jacobians need of the joints ``joints`` of ``model`` at any pose: per joint the
    rotation of its pre-rotation frame ``F_j = M_parent · (B_p⁻¹ B_j) · T(l_j)``, i.e.
    ``R(M_parent) R(B_p⁻¹ B_j)`` (the rest offset's rotation is constant; a root's parent frame is
    the armature's), equal to ``R(M_j) R(q_j)ᵀ`` without converting the rotations again. A
    joint that does not inherit rotation turns in its parent's rest frame instead, ``R(B_p)``
    (``bone_parent_transform``); axes are normalized, so scaled parents give unit axes."""

    def __init__(self, model, joints):
        self.joints = np.asarray(joints, dtype=np.int64)
        parents = model.parents[self.joints]
        self.rooted = (parents < 0).nonzero()[0]
        self.parents = np.where(parents < 0, 0, parents)
        self.offsets = model.rest_offsets[self.joints, :3, :3]
        self.hinged = ((parents >= 0) & ~model.flags.inherit_rotation[self.joints]).nonzero()[0]
        self.hinge_frames = model.rest_matrices[self.parents[self.hinged], :3, :3]

    def __call__(self, world):
        """``(columns, heads)`` per Jacobian column (3j+k for a_jk): the world axes
        ``a_jk = R(F_j) e_k`` as (3, 3m) and each column's joint centre c_j as (3m, 3)."""
        parent = world.take(self.parents, axis=0)[:, :3, :3]
        if self.rooted.size:
            parent[self.rooted] = _IDENTITY
        if self.hinged.size:
            parent[self.hinged] = self.hinge_frames
        axes = parent @ self.offsets
        squares = np.einsum('jik,jik->jk', axes, axes)
        if np.abs(squares - 1.0).max(initial=0.0) > 1e-9:     # scaled parents
            axes /= np.sqrt(squares)[:, None, :]
        heads = world.take(self.joints, axis=0)[:, :3, 3]
        return axes.transpose(1, 0, 2).reshape(3, 3 * self.joints.size), heads.repeat(3, axis=0)


def column_mask(joint_masks, joints):
    """(T, 3m) mask of the columns of ``joints`` that move each point, from its (T, n) mask of the
    joints that move it."""
    return np.repeat(joint_masks.take(joints, axis=1), 3, axis=1)


def task_jacobian(columns, heads, points, mask, orientation=True):
    """Position and orientation Jacobians of the (T,3) task ``points`` over the joints of
    ``columns, heads`` (``JointFrames``), with ``mask`` (``column_mask``) saying which columns
    move which point. Returns ``(J_pos, J_rot)``, each (T, 3, 3m); ``J_rot`` is None unless
    ``orientation``."""
    t, size = len(points), columns.shape[1]
    # a × v = K v with K[l, i, c] = Σ_j ε_ijl a_j (c: the column); a_c × (p − c_j) = K_c p − K_c c_j
    cross = _CROSS_ROWS.dot(columns)                               # (3·3, 3m): rows (l, i)
    j_pos = (points.dot(cross.reshape(3, 3 * size)).reshape(t, 3, size)
             - (cross.reshape(3, 3, size) * heads.T[:, None, :]).sum(axis=0)) * mask[:, None, :]
    if not orientation:
        return j_pos, None
    return j_pos, columns * mask[:, None, :]


def chain_order(joint_masks, descendants, joints):
    """``(chain (T,m), ancestors (T,m,m))`` as floats for ``second_order_motion``: which of
    ``joints`` move each task (from its (T,n) ``joint_masks``), and ``ancestors[t, j, i]`` = 1
    when joint i is a proper ancestor of joint j and both are in task t's chain (from the model's
    ``descendants_mask``)."""
    chain = joint_masks.take(joints, axis=1)
    above = descendants[np.ix_(joints, joints)].T & ~np.eye(joints.size, dtype=bool)
    return chain.astype(float), (above[None] & chain[:, None, :] & chain[:, :, None]).astype(float)


def second_order_motion(columns, heads, points, delta, chain, ancestors, rotation=None):
    """The second-order terms ``(s_pos, s_rot)`` (T,3) of the task errors' change under the joint
    step ``delta`` (m,3), so that ``e(Δ) = e − J Δ − s + O(‖Δ‖³)``; ``s_rot`` is None unless the
    orientation errors ``rotation`` are given.

    Each joint turns everything below it about its head ``c_j`` by the world rotation vector
    ``v_j = Σ_k a_jk Δθ_jk`` (the columns of ``JointFrames``), and the turns compose from the
    root down as rotations about the start pose's axes, ``p(Δ) = G_1 ⋯ G_n p`` with
    ``G_j x = c_j + exp([v_j]×)(x − c_j)`` (the left update of Bartelink §4.3 conjugated into
    world space). Expanding ``exp([v]×) = I + [v]× + ½[v]×²`` and the product to second order:

        p(Δ) = p + Σ_j v_j × r_j + Σ_j (½ v_j + Σ_{i<j} v_i) × (v_j × r_j),    r_j = p − c_j,

    with ``i < j`` the ancestors of j in the task's chain (``ancestors[t, j, i]``; ``chain[t, j]``
    marks the chain's joints). The orientation turns by ``ω + ½ Σ_{i<j} v_i × v_j``, ``ω = Σ_j v_j``
    (Baker–Campbell–Hausdorff, ``log(e^X e^Y) = X + Y + ½[X, Y] + …``), and its error
    ``log(exp(e) exp(−ω'))`` loses a further ``½ e × ω``. These are the terms Chebyshev's method
    adds to Newton's (Traub, Iterative Methods for the Solution of Equations, 1964, §5.4;
    Ortega & Rheinboldt §7): a step solved for ``J Δ = e − s(Δ)`` leaves a third-order error.
    """
    t, m = chain.shape
    turns = row_dots(columns.reshape(3, m, 3), delta).T                         # v_j (m,3)
    above = ancestors.dot(turns)                                                # Σ_{i<j} v_i (T,m,3)
    lever = above + 0.5 * turns                                                 # W_tj
    # W × (v × r) = v (W·r) − r (W·v), with r = p − c_j, summed over the chain's joints
    along_turn = row_dots(lever, turns) * chain                                 # W·v
    along_arm = row_dots(lever, points[:, None, :] - heads[::3]) * chain        # W·r
    s_pos = along_arm.dot(turns) - points * along_turn.sum(axis=1)[:, None] \
        + along_turn.dot(heads[::3])
    if rotation is None:
        return s_pos, None
    bracket = _cross(above.reshape(-1, 3), np.broadcast_to(turns, (t, m, 3)).reshape(-1, 3))
    return s_pos, 0.5 * (bracket.reshape(t, m, 3).sum(axis=1) + _cross(rotation, chain.dot(turns)))


def normal_jacobian(columns, heads, points, normals, mask):
    """``nᵀ J_p`` (P, 3m) of each point p along its unit direction n: the rate of its motion along
    n, as ``task_jacobian``'s positional rows contracted with n, without forming them.

    By the scalar triple product, ``n · (a_c × (p − c_j)) = a_c · (p × n) − n · (a_c × c_j)``: one
    (P × 3)·(3 × 3m) product with ``p × n`` and one with the columns' fixed ``a_c × c_j``.
    """
    moments = _cross(columns.T, heads)                            # (3m, 3): a_c × c_j
    return (_cross(points, normals).dot(columns) - normals.dot(moments.T)) * mask


def _cross(u, v):
    """Row-wise cross products of two (k, 3) arrays."""
    return u.take(_NEXT, axis=1) * v.take(_AFTER, axis=1) \
        - u.take(_AFTER, axis=1) * v.take(_NEXT, axis=1)


_NEXT, _AFTER = np.array([1, 2, 0]), np.array([2, 0, 1])
_IDENTITY = np.eye(3)
_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0
_CROSS_ROWS = _LEVI_CIVITA.transpose(2, 0, 1).reshape(9, 3)   # [(l, i), j] = ε_ijl
