"""Joint limits as linear inequality rows for the active set (Baerlocher §5.4.2–5.4.3).

For every limited joint, with ``(s_x, s_z, τ)`` its swing/twist parameters and
``S = ∂(s_x, s_z, τ)/∂Δθ`` (``swing_twist_jacobian``, analytic), the candidate rows ``G Δθ ≤ r`` are

    twist:    S_τ Δθ ≤ τ_max − τ,         −S_τ Δθ ≤ τ − τ_min
    swing:    ∇f · S_s Δθ ≤ 1 − f,        f = (s_x/a)² + (s_z/b)²  (quarter-ellipse of the quadrant)
    locked half-axis (bound 0):   ±S_x Δθ ≤ ∓s_x  (and likewise for z)
    locked axis (both bounds 0):  the equality S_x Δθ = −s_x (likewise for z and τ)

i.e. the swing ellipse is linearized at the current swing (Baerlocher §5.4.3), the twist and the
locked half-axes are exact to first order. A tangent at the current swing alone lets a long step
slide along it far out of a neighbouring quarter-ellipse, so the rows also hold the tangents of
every quarter-ellipse at ``_TANGENT_ANGLES``: with quadrant signs (σ_x, σ_z) and its semi-axes
(a, b), ``(σ_x cos φ / a, σ_z sin φ / b) · (s + S_s Δθ) ≤ 1``, an outer polygon of the convex
swing set. The active set adds the rows a step would violate; the projection after the step
removes what is left of the curvature error.

Every row is ``c · (p + S Δθ) ≤ d`` for a coefficient vector c over ``p = (s_x, s_z, τ)``: all
but the ellipse rows have constant c and d (built once per limit set, ``LimitRows``); an ellipse
row holds ``c = ½∇f = (s_x/a², s_z/b², 0)``, so that ``c · p = f``, and its gradient is
``2 S^T c``. An iteration only evaluates ``S``, the ellipse rows' c and two batched products.
"""

import numpy as np

from ..swing_twist import swing_twist_jacobian
from .swing_twist_projection import quadrant_inverse_squares

# 7 tangents per quarter-ellipse: fewer (3) let long steps cut far into the neighbouring quadrant
# and cost 20 % more iterations on the replays
_TANGENT_ANGLES = np.linspace(0.0, np.pi / 2, 7)


class LimitRows:
    """The limit rows of joints with fixed limits (m,), evaluated at any rotations ``q`` (m,4)."""

    def __init__(self, limits, column_scale=None):
        """Rows of the enabled joints of ``limits``; ``column_scale`` (m,3), if given, scales each
        joint's Δθ columns of the gradients (the solver's stiffness weighting)."""
        enabled = np.asarray(limits.enabled, dtype=bool)
        self.joints = np.nonzero(enabled)[0]
        lim = type(limits)(
            *(np.asarray(values, dtype=float)[self.joints] for values in limits[:-1]),
            np.ones(self.joints.size, dtype=bool))
        local = np.arange(self.joints.size)
        unit = np.eye(3)
        twist_locked = (lim.twist_max <= 0.0) & (lim.twist_min >= 0.0)
        owners, coefficients, bounds = [local, local], [np.tile(unit[2], (local.size, 1)),
                                                        np.tile(-unit[2], (local.size, 1))], \
            [lim.twist_max, -lim.twist_min]
        equalities = [twist_locked, np.zeros(local.size, bool)]
        tangent_owner, tangent_coefficients = _tangent_polygon(lim)
        owners.append(tangent_owner)
        coefficients.append(tangent_coefficients)
        bounds.append(np.ones(tangent_owner.size))
        equalities.append(np.zeros(tangent_owner.size, bool))
        for axis, low, high in ((0, lim.swing_x_min, lim.swing_x_max),
                                (1, lim.swing_z_min, lim.swing_z_max)):
            upper_locked, lower_locked = high <= 0.0, low >= 0.0
            owners += [local[upper_locked], local[lower_locked]]
            coefficients += [np.tile(unit[axis], (int(upper_locked.sum()), 1)),
                             np.tile(-unit[axis], (int(lower_locked.sum()), 1))]
            bounds += [np.zeros(int(upper_locked.sum())), np.zeros(int(lower_locked.sum()))]
            equalities += [lower_locked[upper_locked], np.zeros(int(lower_locked.sum()), bool)]
        # last, one ellipse row per joint: its coefficients change with the swing (``__call__``);
        # in a quadrant with both half-axes locked they are 0 and the row never binds
        owners.append(local)
        coefficients.append(np.zeros((local.size, 3)))
        bounds.append(np.ones(local.size))
        equalities.append(np.zeros(local.size, bool))
        self.owner = np.concatenate(owners)
        self.bounds = np.concatenate(bounds)
        self.equality = np.concatenate(equalities)
        self.joint_of_row = self.joints[self.owner]
        # the coefficients joint by joint, (joints, most rows of one joint, 3) padded with zeros,
        # so that every row's c · S and c · p come from two batched products; ``rows`` picks each
        # row (in row order) out of them; the ellipse rows' slots are rewritten by every call
        order = np.argsort(self.owner, kind="stable")
        slot = np.empty(self.owner.size, dtype=np.int64)
        slot[order] = np.arange(order.size) - np.searchsorted(self.owner[order], self.owner[order])
        self.padded = np.zeros((local.size, int(slot.max(initial=0)) + 1, 3))
        self.padded[self.owner, slot] = np.concatenate(coefficients)
        self.rows = self.owner * self.padded.shape[1] + slot
        self.ellipse_slot = slot[-local.size:]
        self.local = local
        # c · p is f for the ellipse row's coefficients c = ½∇f, so its gradient is twice S^T c
        self.gradient_factor = np.where(np.arange(self.owner.size) < self.owner.size - local.size,
                                        1.0, 2.0)[:, None]
        if column_scale is not None:
            self.gradient_factor = self.gradient_factor * column_scale[self.joint_of_row]
        # the ellipse row's 1/a², 1/b² per quadrant side (s ≥ 0, s < 0); 0 on a locked half-axis
        self.inverse_squares = quadrant_inverse_squares(lim)
        # a joint that turns about one axis only (``turning_axes``) keeps the rows of its free
        # parameter: those of its locked ones would be 0 over its one column, and its ellipse
        # degenerates to the tangent rows' bounds of the free one
        locked, single = _single_parameter(lim)
        support = np.concatenate(coefficients) != 0.0
        keep = ~single[self.owner] | (support & ~locked[self.owner]).any(axis=1)
        self.owner, self.bounds, self.equality, self.joint_of_row, self.rows, \
            self.gradient_factor = (values[keep] for values in (
                self.owner, self.bounds, self.equality, self.joint_of_row, self.rows,
                self.gradient_factor))

    def __call__(self, q, terms=None):
        """``(owner, gradient, slack, equality)`` at rotations ``q``: the index of each row's joint
        in ``q``, the (rows,3) gradient ``S^T c`` over that joint's Δθ, the slack ``d − c · p``
        (≥ 0 inside the limits), and True for the rows of a locked axis (both bounds 0: its two
        opposite rows are one equality, ``S Δθ = −s``, marked on the upper row) that belong in
        the active set from the start. ``terms``: the limited joints' (``joints``) parameters p
        (k,3) and ``S`` (k,3,3) when already known (``swing_twist_jacobian`` of those joints'
        rotations; then ``q`` is not read)."""
        if self.joints.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0), np.zeros(0, bool)
        params, sens = swing_twist_jacobian(q.take(self.joints, axis=0)) if terms is None else terms
        (x_pos, x_neg), (z_pos, z_neg) = self.inverse_squares
        self.padded[self.local, self.ellipse_slot, 0] = \
            params[:, 0] * np.where(params[:, 0] >= 0.0, x_pos, x_neg)
        self.padded[self.local, self.ellipse_slot, 1] = \
            params[:, 1] * np.where(params[:, 1] >= 0.0, z_pos, z_neg)
        gradient = np.matmul(self.padded, sens).reshape(-1, 3).take(self.rows, axis=0)
        slack = self.bounds - np.matmul(self.padded, params[:, :, None]).reshape(-1).take(self.rows)
        return self.joint_of_row, gradient * self.gradient_factor, slack, self.equality


def turning_axes(limits):
    """(m,3) per joint and Δθ axis (x, y, z): 0 for the axes a joint cannot turn about because its
    limits lock every swing/twist parameter but one (both bounds 0), else 1. Such a joint, a knee
    for one, stays on ``q = exp(½ s e_k)`` (k: the free parameter's axis, x for s_x, z for s_z,
    y for τ) exactly when Δθ has only that component, since ``exp(½ δ e_k) ⊗ exp(½ s e_k)`` is
    ``exp(½ (s + δ) e_k)``: the solver then zeroes the other two columns instead of holding two
    equality rows on them. Disabled joints and joints with two or more free parameters get 1."""
    locked, single = _single_parameter(limits)
    single &= np.asarray(limits.enabled, dtype=bool)
    return np.where(single[:, None], ~locked, True)[:, [0, 2, 1]].astype(float)


def _single_parameter(limits):
    """``(locked (m,3), single (m,))`` per joint: which of (s_x, s_z, τ) are locked (both
    bounds 0), and whether at most one is free."""
    locked = np.stack([(np.asarray(low) >= 0.0) & (np.asarray(high) <= 0.0)
                       for low, high in ((limits.swing_x_min, limits.swing_x_max),
                                         (limits.swing_z_min, limits.swing_z_max),
                                         (limits.twist_min, limits.twist_max))], axis=1)
    return locked, locked.sum(axis=1) >= 2


_QUADRANTS = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])


def _tangent_polygon(lim):
    """``(owner, coefficients)`` of the outer tangent polygon of the four quarter-ellipses (see the
    module docstring): ``(σ_x cos φ / a, σ_z sin φ / b, 0) · p ≤ 1``."""
    cos, sin = np.cos(_TANGENT_ANGLES), np.sin(_TANGENT_ANGLES)
    sign_x, sign_z = _QUADRANTS[:, 0], _QUADRANTS[:, 1]
    a = np.where(sign_x > 0, lim.swing_x_max[:, None], -lim.swing_x_min[:, None])  # (m,4)
    b = np.where(sign_z > 0, lim.swing_z_max[:, None], -lim.swing_z_min[:, None])
    valid = (((a[..., None] > 0.0) | (cos < 1e-12)) & ((b[..., None] > 0.0) | (sin < 1e-12)))
    n_x = sign_x[:, None] * cos / np.where(a > 0.0, a, np.inf)[..., None]            # (m,4,K)
    n_z = sign_z[:, None] * sin / np.where(b > 0.0, b, np.inf)[..., None]
    joint, quadrant, k = np.nonzero(valid)
    coefficients = np.zeros((joint.size, 3))
    coefficients[:, 0] = n_x[joint, quadrant, k]
    coefficients[:, 1] = n_z[joint, quadrant, k]
    return joint, coefficients
