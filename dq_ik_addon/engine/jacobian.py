"""Geometric Jacobian of task points and orientations with respect to incremental joint rotations
and the translations of sliding bones.

Each joint j is updated as ``q_j ← exp(½ Δθ_j) ⊗ q_j`` (the left update, Bartelink §4.3), so Δθ_j is
a rotation vector in the frame ``F_j = M_parent · (B_p⁻¹ B_j) · T(l_j)``, the bone's frame before
its own rotation. With world axes ``a_jk = R(F_j) e_k = R(M_j) R(q_j)ᵀ e_k`` and joint centre
``c_j`` (the head), the columns are (Baerlocher Table 4.1; van den Bergen's Plücker form)

    ∂p/∂θ_jk = a_jk × (p − c_j),        ∂ω/∂θ_jk = a_jk.

This equals Bartelink's exp-map derivative at Δθ = 0 (his §4.6, the equivalent geometric form).

A *sliding* bone (Bartelink §7.1's virtual root joint, a floating pelvis) also moves its pose
location l, which Blender applies in the same frame, ``M = F · T(l) · R(q) · S(s)``: its columns
move every point it carries by ``d_k = R(F) e_k`` (with the parent's scale: not normalized) and
turn nothing. Both kinds are the Plücker columns of van den Bergen's talk, an angular part ω and
a moment m with ``∂p/∂y = ω × p − m``: ``(a_jk, a_jk × c_j)`` for a turn, ``(0, −d_k)`` for a
slide.
"""

from typing import NamedTuple

import numpy as np

from .quaternion import row_dots


class JointFrame(NamedTuple):
    """The Jacobian columns at one pose (module docstring), 3 per joint then 3 per sliding bone:
    ``axes`` ω (3, 3M), ``moments`` m (3M, 3), each column's joint ``heads`` (3M, 3), and
    ``slides`` k, how many of the joints, last, are sliding bones."""

    axes: np.ndarray
    moments: np.ndarray
    heads: np.ndarray
    slides: int


class JointFrames:
    """What the Jacobians need of the joints ``joints`` and the sliding bones ``sliders`` of
    ``model`` at any pose: per joint the rotation of its pre-rotation frame
    ``F_j = M_parent · (B_p⁻¹ B_j) · T(l_j)``, i.e. ``R(M_parent) R(B_p⁻¹ B_j)`` (the rest
    offset's rotation is constant; a root's parent frame is the armature's), equal to
    ``R(M_j) R(q_j)ᵀ`` without converting the rotations again. A joint that does not inherit
    rotation turns in its parent's rest frame instead, ``R(B_p)`` (``bone_parent_transform``);
    axes are normalized, so scaled parents give unit axes. A sliding bone's location moves along
    the same frame's axes, scaled as its parent is (exact for a bone that inherits rotation and
    scale)."""

    def __init__(self, model, joints, sliders=()):
        self.slides = len(sliders)
        self.turning = len(joints)
        self.joints = np.concatenate([np.asarray(joints, dtype=np.int64),
                                      np.asarray(sliders, dtype=np.int64)])
        parents = model.parents[self.joints]
        self.rooted = (parents < 0).nonzero()[0]
        self.parents = np.where(parents < 0, 0, parents)
        self.offsets = model.rest_offsets[self.joints, :3, :3]
        self.hinged = ((parents >= 0) & ~model.flags.inherit_rotation[self.joints]).nonzero()[0]
        self.hinge_frames = model.rest_matrices[self.parents[self.hinged], :3, :3]

    def __call__(self, world):
        """The ``JointFrame`` at the pose matrices ``world``: column 3j+k is a_jk (a turn) or
        d_k of a sliding bone."""
        parent = world.take(self.parents, axis=0)[:, :3, :3]
        if self.rooted.size:
            parent[self.rooted] = _IDENTITY
        if self.hinged.size:
            parent[self.hinged] = self.hinge_frames
        frames = parent @ self.offsets
        turning = self.turning
        axes = frames[:turning]
        squares = np.einsum('jik,jik->jk', axes, axes)
        if np.abs(squares - 1.0).max(initial=0.0) > 1e-9:     # scaled parents
            axes = axes / np.sqrt(squares)[:, None, :]
        heads = world.take(self.joints, axis=0)[:, :3, 3].repeat(3, axis=0)
        turns = turn_frame(axes.transpose(1, 0, 2).reshape(3, 3 * turning), heads[:3 * turning])
        if not self.slides:
            return turns
        slides = frames[turning:].transpose(1, 0, 2).reshape(3, 3 * self.slides)
        return JointFrame(np.concatenate([turns.axes, np.zeros_like(slides)], axis=1),
                          np.concatenate([turns.moments, -slides.T]), heads, self.slides)


def turn_frame(axes, heads):
    """The ``JointFrame`` of turning joints alone: world ``axes`` a (3, 3m) about the ``heads``
    c (3m, 3), moments ``a × c``."""
    return JointFrame(axes, cross_rows(axes.T, heads), heads, 0)


def column_mask(joint_masks, joints):
    """(T, 3m) mask of the columns of ``joints`` that move each point, from its (T, n) mask of the
    joints that move it."""
    return np.repeat(joint_masks.take(joints, axis=1), 3, axis=1)


def task_jacobian(frame, points, mask, orientation=True, kept=None):
    """Position and orientation Jacobians of the (T,3) task ``points`` over the columns of
    ``frame`` (``JointFrame``), with ``mask`` (``column_mask``) saying which columns move which
    point. Returns ``(J_pos, J_rot)``, each (T, 3, 3m); ``J_rot`` is None unless
    ``orientation``. ``kept``: ``(G, F, heads)`` of the keepers above the points
    (``TaskKind.kept``): a column then turns a point as if at ``q = p + Σ_k G (h_k − p)`` and
    its frame by ``F`` of its turn (``kept_rotations.KeptColumns``)."""
    columns = frame.axes
    t, size = len(points), columns.shape[1]
    # a × v = K v with K[l, i, c] = Σ_j ε_ijl a_j (c: the column); ∂p/∂y_c = K_c p − m_c
    cross = _CROSS_ROWS.dot(columns)                               # (3·3, 3m): rows (l, i)
    j_pos = points.dot(cross.reshape(3, 3 * size)).reshape(t, 3, size) - frame.moments.T
    if kept is not None:
        shares, _, heads = kept
        shift = np.einsum('tkc,tkd->tcd', shares, heads[None] - points[:, None])   # q − p
        j_pos = j_pos + np.cross(columns.T[None], shift).transpose(0, 2, 1)
    j_pos = j_pos * mask[:, None, :]
    if not orientation:
        return j_pos, None
    return j_pos, turn_jacobian(frame, mask, kept)


def turn_jacobian(frame, mask, kept=None):
    """(T, 3, 3m) the turn of each task's bone frame over the columns of ``frame``: its axes
    where ``mask`` says the column moves the task, times ``kept``'s F (``task_jacobian``)."""
    return frame.axes * (mask if kept is None else mask * kept[1])[:, None, :]


def chain_order(joint_masks, descendants, joints):
    """``(chain (T,m), ancestors (T,m,m))`` as floats for ``second_order_motion``: which of
    ``joints`` (the turning joints, then the sliding bones: ``JointFrames.joints``) move each
    task (from its (T,n) ``joint_masks``), and ``ancestors[t, j, i]`` = 1 when joint i is on a
    proper ancestor of joint j's bone and both are in task t's chain (from the model's
    ``descendants_mask``): a bone's own turn does not carry its slide."""
    chain = joint_masks.take(joints, axis=1)
    above = descendants[np.ix_(joints, joints)].T & (joints[:, None] != joints[None, :])
    return chain.astype(float), (above[None] & chain[:, None, :] & chain[:, :, None]).astype(float)


def second_order_motion(frame, points, delta, chain, ancestors, rotation=None):
    """The second-order terms ``(s_pos, s_rot)`` (T,3) of the task errors' change under the joint
    step ``delta`` (m,3) over the columns of ``frame`` (``JointFrame``), so that
    ``e(Δ) = e − J Δ − s + O(‖Δ‖³)``; ``s_pos`` is None without ``points``, ``s_rot`` unless the
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

    A sliding bone's slide ``w_j = Σ_k d_jk Δ_jk`` turns with the joints above it, ``G_i(x + w) =
    G_i x + exp([v_i]×) w``, which adds ``Σ_{i<j} v_i × w_j`` to the point; slides commute with
    each other and with the turns below them (each turns about a head that slides along).
    """
    t, m = chain.shape
    turns = step_turns(frame, delta)                                            # v_j (m,3)
    above = ancestors.dot(turns)                                                # Σ_{i<j} v_i (T,m,3)
    s_pos = None if points is None else _second_order_points(frame, points, delta, chain, turns,
                                                             above)
    if rotation is None:
        return s_pos, None
    bracket = cross_rows(above.reshape(-1, 3), np.broadcast_to(turns, (t, m, 3)).reshape(-1, 3))
    return s_pos, 0.5 * (bracket.reshape(t, m, 3).sum(axis=1)
                         + cross_rows(rotation, chain.dot(turns)))


def _second_order_points(frame, points, delta, chain, turns, above):
    """``second_order_motion``'s ``s_pos`` of the ``points`` from the turns ``v_j`` and their sums
    above each joint ``Σ_{i<j} v_i``."""
    heads = frame.heads[::3]
    t, m = chain.shape
    lever = above + 0.5 * turns                                                 # W_tj
    # W × (v × r) = v (W·r) − r (W·v), with r = p − c_j, summed over the chain's joints
    along_turn = row_dots(lever, turns) * chain                                 # W·v
    along_arm = row_dots(lever, points[:, None, :] - heads) * chain             # W·r
    s_pos = along_arm.dot(turns) - points * along_turn.sum(axis=1)[:, None] \
        + along_turn.dot(heads)
    if frame.slides:
        first = m - frame.slides
        carried = above[:, first:] * chain[:, first:, None]                     # (T,k,3)
        s_pos = s_pos + cross_rows(carried.reshape(-1, 3), np.broadcast_to(
            step_slides(frame, delta), carried.shape).reshape(-1, 3)).reshape(t, -1, 3).sum(axis=1)
    return s_pos


def step_turns(frame, delta):
    """Each column joint's world rotation vector ``v_j = Σ_k a_jk Δθ_jk`` (m,3) under the joint
    step ``delta`` (m,3) over the columns of ``frame`` (0 for a sliding bone's columns)."""
    return row_dots(frame.axes.reshape(3, len(delta), 3), delta).T


def step_slides(frame, delta):
    """Each sliding bone's slide ``w_j = Σ_k d_jk Δ_jk`` (k,3) under the joint step ``delta``
    (m,3), its columns the last ``frame.slides`` (``JointFrames``)."""
    first = len(delta) - frame.slides
    return -np.einsum('jkx,jk->jx', frame.moments[3 * first:].reshape(-1, 3, 3), delta[first:])


def normal_jacobian(frame, points, normals, mask):
    """``nᵀ J_p`` (P, 3m) of each point p along its unit direction n: the rate of its motion along
    n, as ``task_jacobian``'s positional rows contracted with n, without forming them.

    By the scalar triple product, ``n · (ω_c × p − m_c) = ω_c · (p × n) − n · m_c``: one
    (P × 3)·(3 × 3m) product with ``p × n`` and one with the columns' moments.
    """
    return (cross_rows(points, normals).dot(frame.axes) - normals.dot(frame.moments.T)) * mask


def cross_rows(u, v):
    """Row-wise cross products of two (k, 3) arrays."""
    return u.take(_NEXT, axis=1) * v.take(_AFTER, axis=1) \
        - u.take(_AFTER, axis=1) * v.take(_NEXT, axis=1)


_NEXT, _AFTER = np.array([1, 2, 0]), np.array([2, 0, 1])
_IDENTITY = np.eye(3)
_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0
_CROSS_ROWS = _LEVI_CIVITA.transpose(2, 0, 1).reshape(9, 3)   # [(l, i), j] = ε_ijl
