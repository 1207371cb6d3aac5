"""The hard constraint rows of one iteration, ``G Δ ≤ r``: joint-limit rows and contact rows.

Joint-limit rows touch one joint each (``(G Δ)_r = g_r · Δ_{owner_r}``), so while only they are
active the constraint level is solved block by block (``joint_block_solution``); contact rows span
every joint above the contact point, and once one is active the active rows are solved together
with one damped SVD: ``(C⁺ r, I − C⁺C)`` (Baerlocher §5.4, the constraints above every task).
"""

import numpy as np

from .prioritized import joint_block_solution

# Contact rows of neighbouring sample points are nearly parallel and their right-hand sides need
# not agree, so their least-squares solution is damped and nearly dependent rows are dropped.
_CONTACT_RANK = 1e-6
_CONTACT_DAMPING = 1e-3


class ConstraintRows:
    """Limit rows (owner, gradient) followed by dense contact rows, over ``3·joints`` columns."""

    def __init__(self, joints, owner, gradient, dense=None):
        self.joints = joints
        self.owner, self.gradient = owner, gradient
        dense = np.zeros((0, 3 * joints)) if dense is None else dense
        self.count = owner.size + dense.shape[0]
        self.matrix = np.zeros((self.count, 3 * joints))        # G, every row spelled out
        self.matrix[np.arange(owner.size)[:, None], 3 * owner[:, None] + np.arange(3)] = gradient
        self.matrix[owner.size:] = dense

    def times(self, step):
        """``G Δ`` for every row."""
        return self.matrix @ step

    def solution(self, active, rhs):
        """``(C⁺ r, I − C⁺C)`` of the active rows ``C Δ = r``."""
        limit_active, dense_active = active[:self.owner.size], active[self.owner.size:]
        if not dense_active.any():
            return joint_block_solution(self.owner[limit_active], self.gradient[limit_active],
                                        rhs[:self.owner.size][limit_active], self.joints)
        size = 3 * self.joints
        u, s, vt = np.linalg.svd(self.matrix[active], full_matrices=False)
        keep = s > _CONTACT_RANK * s[0]
        u, s, vt = u[:, keep], s[keep], vt[keep]
        projector = np.eye(size) - vt.T @ vt
        lam2 = (_CONTACT_DAMPING * s[0]) ** 2
        return vt.T @ ((s / (s * s + lam2)) * (u.T @ rhs[active])), projector
