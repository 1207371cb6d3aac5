"""The hard constraint rows of one iteration, ``G Δ ≤ r``: joint-limit rows and contact rows.

Joint-limit rows touch one joint each (``(G Δ)_r = g_r · Δ_{owner_r}``); contact rows span every
joint above the contact point. The rows active from the start (``solution``: the equalities of
locked axes and penetrating contacts) are solved block by block (``joint_block_solution``) while
they are all limit rows, else together with one damped SVD:
``(C⁺ r, I − C⁺C)`` (Baerlocher §5.4, the constraints above every task). A row that joins the
active set later updates that solution instead of re-solving it (``with_rows``, a rank-one
update; in the row's 3 columns while only limit rows are active).
"""

import functools

import numpy as np

from .prioritized import LIMIT_RANK_TOLERANCE
from .quaternion import any_true, row_dots

# Contact rows of neighbouring sample points are nearly parallel and their right-hand sides need
# not agree, so their least-squares solution is damped and nearly dependent rows are dropped.
_CONTACT_RANK = 1e-6
_CONTACT_DAMPING = 1e-3
# A joint's limit rows can be nearly parallel too (a swing bound and the ellipse's, linearized at
# the same pose, 1e-6 apart with right-hand sides a few 1e-6 apart): undamped, such a row turns
# the joint by radians to meet both; damped, a row whose direction is new by ε moves it by at
# most r / (2 μ ‖g‖) for a disagreement r, and an independent row meets its bound within μ²
_LIMIT_DAMPING = 1e-3


class ConstraintRows:
    """Limit rows (owner, gradient) followed by dense contact rows (None: none), over ``3·joints``
    columns."""

    def __init__(self, joints, owner, gradient, dense=None):
        self.joints = joints
        self.owner, self.gradient = owner, gradient
        self.dense = dense
        self.count = owner.size + (0 if dense is None else dense.shape[0])

    def times(self, step):
        """``G Δ`` for every row. Limit rows go joint by joint (an elementwise product, not one
        product with the whole, mostly zero G: that is large enough for a multi-threaded BLAS,
        whose thread wake-ups cost more than the arithmetic on a busy machine)."""
        at_owner = step.reshape(-1, 3).take(self.owner, axis=0)
        joint_part = row_dots(self.gradient, at_owner)
        if self.dense is None or not len(self.dense):
            return joint_part
        return np.concatenate([joint_part, self.dense.dot(step)])

    def solution(self, active, rhs):
        """``(C⁺ r, I − C⁺C)`` of the active rows ``C Δ = r``."""
        limit_active, dense_active = active[:self.owner.size], active[self.owner.size:]
        size = 3 * self.joints
        if self.dense is None or not any_true(dense_active):
            return joint_block_solution(self.owner[limit_active], self.gradient[limit_active],
                                        rhs[:self.owner.size][limit_active], self.joints)
        owner = self.owner[limit_active]
        limit_rows = np.zeros((owner.size, size))
        limit_rows[np.arange(owner.size)[:, None], 3 * owner[:, None] + np.arange(3)] = \
            self.gradient[limit_active]
        rows = np.concatenate([limit_rows, self.dense[dense_active]])
        u, s, vt = np.linalg.svd(rows, full_matrices=False)
        keep = s > _CONTACT_RANK * s[0]
        if not keep.any():      # only rows no joint can move (a contact point on a fixed bone)
            return np.zeros(size), np.eye(size)
        u, s, vt = u[:, keep], s[keep], vt[keep]
        projector = np.eye(size) - vt.T.dot(vt)
        lam2 = (_CONTACT_DAMPING * s[0]) ** 2
        return vt.T.dot((s / (s * s + lam2)) * u.T.dot(rhs[active])), projector

    def with_rows(self, solution, added, rhs, block_diagonal):
        """``(C⁺ r, I − C⁺C)`` after the rows ``added`` (an index array) join the active rows of
        ``solution``, one at a time by Greville's rank-one update of the pseudo-inverse
        (Ben-Israel & Greville, Generalized Inverses, §7.5; exact, but for the damping μ, while
        the active system is consistent): with ``w = P g``,

            Δ ← Δ + w (r − g·Δ) / (g·w + μ² ‖g‖²),        P ← P − w wᵀ / (g·w).

        A row (numerically) in the span of the active ones, ``g·w ≤ (t ‖g‖)²``, changes nothing.
        Limit rows: ``t = LIMIT_RANK_TOLERANCE`` (as ``joint_block_solution``),
        ``μ = _LIMIT_DAMPING``.
        Contact rows, like ``solution``: ``t = _CONTACT_RANK``, ``μ = _CONTACT_DAMPING``
        (neighbouring samples' rows are nearly parallel, their right-hand sides need not agree).
        While P is ``block_diagonal`` (no contact row active), a limit row's update stays in its
        joint's 3 columns."""
        step, projector = solution[0].copy(), solution[1].copy()
        for row in added.tolist():
            if row < self.owner.size and block_diagonal:
                _join_block_row(step, projector, 3 * int(self.owner[row]),
                                self.gradient[row].tolist(), float(rhs[row]))
                continue
            if row < self.owner.size:
                columns = slice(3 * int(self.owner[row]), 3 * int(self.owner[row]) + 3)
                gradient, rank, damping = self.gradient[row], LIMIT_RANK_TOLERANCE, _LIMIT_DAMPING
            else:
                columns, block_diagonal = slice(None), False
                gradient, rank, damping = self.dense[row - self.owner.size], _CONTACT_RANK, \
                    _CONTACT_DAMPING
            square = float(gradient.dot(gradient))
            w = projector[:, columns].dot(gradient)
            norm2 = float(w.dot(w))
            if norm2 <= rank * rank * square:
                continue
            gain = (rhs[row] - gradient.dot(step[columns])) / (norm2 + damping * damping * square)
            step += w * gain
            projector -= w[:, None] * (w / norm2)
        return step, projector


def joint_block_solution(owner, gradient, rhs, joints):
    """``(C⁺ r, I − C⁺C)`` over ``3·joints`` columns for rows that each touch one joint's 3
    columns (joint limits): C is block diagonal, so each joint's block is solved alone, by
    ``_greville_block`` row by row from ``(0, I)`` on Python floats (a joint has a few rows: this
    is cheaper than a batched SVD of the blocks), and written into the arrays at once. Exact,
    but for the damping ``_LIMIT_DAMPING`` (a relative 1e-6 of each row's right-hand side),
    while each joint's rows are consistent; a row dependent on the joint's earlier rows is
    skipped (``with_rows``)."""
    size = 3 * joints
    step, projector = np.zeros(size), np.eye(size)
    if owner.size == 0:
        return step, projector
    blocks = {}
    for joint, row, value in zip(owner.tolist(), gradient.tolist(), rhs.tolist()):
        block = blocks.get(joint)
        if block is None:
            block = blocks[joint] = ([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0])
        _greville_block(*block, row, value)
    solved = sorted(blocks)
    firsts = np.array(solved, dtype=np.int64) * 3
    step[(firsts[:, None] + _XYZ).ravel()] = [x for joint in solved for x in blocks[joint][1]]
    projector.reshape(-1)[_block_entries(firsts.tobytes(), size)] = \
        [x for joint in solved for x in blocks[joint][0]]
    return step, projector


_XYZ = np.arange(3)


@functools.lru_cache(maxsize=64)
def _block_entries(firsts_bytes, size):
    """Flat indices into a ``size × size`` matrix of the 3×3 diagonal blocks that start at the
    columns ``firsts`` (int64, as bytes: the same joints every iteration), row-major."""
    columns = np.frombuffer(firsts_bytes, dtype=np.int64)[:, None] + _XYZ
    return (columns[:, :, None] * size + columns[:, None, :]).ravel()


def _join_block_row(step, projector, first, gradient, rhs):
    """``ConstraintRows.with_rows`` for one limit row while P is block diagonal: the update stays
    in its joint's 3 columns from ``first`` (``_greville_block`` on the block, in place)."""
    block = projector[first:first + 3, first:first + 3]
    flat, part = block.ravel().tolist(), step[first:first + 3].tolist()
    if _greville_block(flat, part, gradient, rhs):
        step[first:first + 3] = part
        block[...] = flat[0:3], flat[3:6], flat[6:9]


def _greville_block(block, step, gradient, rhs):
    """Greville's update (``ConstraintRows.with_rows``) of one joint's 3×3 projector block
    (9 floats, row-major) and 3-vector step for the row ``gradient · Δ = rhs``, ``w = P_b g``, in
    place on Python lists, damped by ``_LIMIT_DAMPING``; False (nothing changed) for a row
    dependent on the block's rows."""
    a, b, c, d, e, f, g, h, k = block
    x, y, z = gradient
    w0, w1, w2 = a * x + b * y + c * z, d * x + e * y + f * z, g * x + h * y + k * z
    norm2 = x * w0 + y * w1 + z * w2
    square = x * x + y * y + z * z
    if norm2 <= LIMIT_RANK_TOLERANCE * LIMIT_RANK_TOLERANCE * square:
        return False
    s0, s1, s2 = step
    gain = (rhs - (x * s0 + y * s1 + z * s2)) / (norm2 + _LIMIT_DAMPING * _LIMIT_DAMPING * square)
    step[:] = s0 + w0 * gain, s1 + w1 * gain, s2 + w2 * gain
    v0, v1, v2 = w0 / norm2, w1 / norm2, w2 / norm2
    block[:] = (a - w0 * v0, b - w0 * v1, c - w0 * v2, d - w1 * v0, e - w1 * v1, f - w1 * v2,
                g - w2 * v0, h - w2 * v1, k - w2 * v2)
    return True
