"""The hard constraint rows of one iteration, ``G Δ ≤ r``: joint-limit rows and contact rows.

Joint-limit rows touch one joint each (``(G Δ)_r = g_r · Δ_{owner_r}``), so while only they are
active the constraint level is solved block by block (``joint_block_solution``); contact rows span
every joint above the contact point, and once one is active the active rows are solved together
with one SVD: ``(C⁺ r, I − C⁺C)`` (Baerlocher §5.4, the constraints above every task).
"""

import numpy as np

from .prioritized import joint_block_solution, rank_truncated_svd


class ConstraintRows:
    """Limit rows (owner, gradient) followed by dense contact rows, over ``3·joints`` columns."""

    def __init__(self, joints, owner, gradient, dense=None):
        self.joints = joints
        self.owner, self.gradient = owner, gradient
        self.dense = np.zeros((0, 3 * joints)) if dense is None else dense
        self.count = owner.size + self.dense.shape[0]

    def times(self, step):
        """``G Δ`` for every row."""
        joint_part = np.einsum('ri,ri->r', self.gradient, step.reshape(-1, 3)[self.owner])
        return np.concatenate([joint_part, self.dense @ step])

    def solution(self, active, rhs):
        """``(C⁺ r, I − C⁺C)`` of the active rows ``C Δ = r``."""
        limit_active, dense_active = active[:self.owner.size], active[self.owner.size:]
        if not dense_active.any():
            return joint_block_solution(self.owner[limit_active], self.gradient[limit_active],
                                        rhs[:self.owner.size][limit_active], self.joints)
        size = 3 * self.joints
        limit_rows = np.zeros((int(limit_active.sum()), size))
        owner = self.owner[limit_active]
        cols = 3 * owner[:, None] + np.arange(3)
        limit_rows[np.arange(owner.size)[:, None], cols] = self.gradient[limit_active]
        rows = np.concatenate([limit_rows, self.dense[dense_active]])
        u, s, vt = rank_truncated_svd(rows)
        projector = np.eye(size) - vt.T @ vt
        return vt.T @ ((u.T @ rhs[active]) / s), projector
