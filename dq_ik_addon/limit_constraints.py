"""Joint limits as linear inequality rows for the active set (Baerlocher §5.4.2–5.4.3).

For every limited joint, with ``(s_x, s_z, τ)`` its swing/twist parameters and
``S = ∂(s_x, s_z, τ)/∂Δθ`` (central differences of the exact decomposition, batched over
joints), the candidate rows ``G Δθ ≤ r`` are

    twist:    S_τ Δθ ≤ τ_max − τ,         −S_τ Δθ ≤ τ − τ_min
    swing:    ∇f · S_s Δθ ≤ 1 − f,        f = (s_x/a)² + (s_z/b)²  (quarter-ellipse of the quadrant)
    locked half-axis (bound 0):   ±S_x Δθ ≤ ∓s_x  (and likewise for z)

i.e. the swing ellipse is linearized at the current swing (Baerlocher §5.4.3), the twist and the
locked half-axes are exact to first order. A tangent at the current swing alone lets a long step
slide along it far out of a neighbouring quarter-ellipse, so the rows also hold the tangents of
every quarter-ellipse at ``_TANGENT_ANGLES``: with quadrant signs (σ_x, σ_z) and its semi-axes
(a, b), ``(σ_x cos φ / a, σ_z sin φ / b) · (s + S_s Δθ) ≤ 1``, an outer polygon of the convex
swing set. The active set adds the rows a step would violate; the projection after the step
removes what is left of the curvature error.
"""

import numpy as np

from .quaternion import qexp, qmul
from .swing_twist import swing_twist_params

_FD_STEP = 1e-6
_TANGENT_ANGLES = np.linspace(0.0, np.pi / 2, 7)


def swing_twist_jacobian(q):
    """``(params (m,3), S (m,3,3))``: ``(s_x, s_z, τ)`` and its derivative w.r.t. ``Δθ`` (left update).

    Central differences of the exact decomposition, the base point and the six perturbed
    rotations of every joint in one batched evaluation.
    """
    m = q.shape[0]
    h = np.concatenate([np.zeros((1, 3)), np.eye(3), -np.eye(3)]) * (0.5 * _FD_STEP)
    rotated = qmul(qexp(np.broadcast_to(h, (m, 7, 3))), q[:, None, :])      # (m, 7, 4)
    values = np.stack(swing_twist_params(rotated), axis=-1)                  # (m, 7, 3)
    derivative = (values[:, 1:4] - values[:, 4:7]) / (2.0 * _FD_STEP)       # (m, 3 dθ, 3)
    return values[:, 0], np.swapaxes(derivative, 1, 2)


def limit_margin(q, limits):
    """A lower bound, in radians of (s_x, s_z, τ), of each joint's distance to its limit boundary.

    Twist: the distance to the nearer bound. Swing: with ``f = (s_x/a)² + (s_z/b)²``, the point
    lies on the ellipse scaled by √f, at least ``(1 − √f) · min(a, b)`` inside; 0 where a
    half-axis is locked (those rows always count). Disabled joints: ∞.
    """
    s_x, s_z, tau = swing_twist_params(q)
    a = np.where(s_x >= 0.0, limits.swing_x_max, -np.asarray(limits.swing_x_min, dtype=float))
    b = np.where(s_z >= 0.0, limits.swing_z_max, -np.asarray(limits.swing_z_min, dtype=float))
    bounds = np.stack([limits.swing_x_min, limits.swing_x_max, limits.swing_z_min,
                       limits.swing_z_max])
    locked = np.any(bounds == 0.0, axis=0)
    f = (s_x / np.where(a > 0.0, a, 1.0)) ** 2 + (s_z / np.where(b > 0.0, b, 1.0)) ** 2
    swing = np.where(locked, 0.0, np.maximum(1.0 - np.sqrt(f), 0.0) * np.minimum(a, b))
    twist = np.minimum(limits.twist_max - tau, tau - np.asarray(limits.twist_min, dtype=float))
    return np.where(limits.enabled, np.minimum(swing, np.maximum(twist, 0.0)), np.inf)


def limit_rows(q, limits, near=None):
    """Candidate rows for joints with rotations ``q`` (m,4) and limits given per joint (m,).

    Only joints in the boolean mask ``near`` (default: every enabled joint) get rows.
    Returns ``(owner, gradient, slack)``: the index of each row's joint in ``q``, the
    (rows,3) gradient over that joint's Δθ, and r ≥ 0 inside the limits.
    """
    enabled = np.asarray(limits.enabled, dtype=bool)
    if near is not None:
        enabled = enabled & near
    if not enabled.any():
        return np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0)
    idx = np.nonzero(enabled)[0]
    params, sens = swing_twist_jacobian(q[idx])
    s_x, s_z, tau = params.T
    lim = {name: np.asarray(getattr(limits, name), dtype=float)[idx]
           for name in ("swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max",
                        "twist_min", "twist_max")}
    owners, grads, slacks = [idx, idx], [sens[:, 2], -sens[:, 2]], \
        [lim["twist_max"] - tau, tau - lim["twist_min"]]
    a = np.where(s_x >= 0.0, lim["swing_x_max"], -lim["swing_x_min"])
    b = np.where(s_z >= 0.0, lim["swing_z_max"], -lim["swing_z_min"])
    inv_a2 = np.where(a > 0.0, 1.0 / np.where(a > 0.0, a, 1.0) ** 2, 0.0)
    inv_b2 = np.where(b > 0.0, 1.0 / np.where(b > 0.0, b, 1.0) ** 2, 0.0)
    ellipse = (a > 0.0) | (b > 0.0)
    f = s_x * s_x * inv_a2 + s_z * s_z * inv_b2
    grad_f = (2.0 * s_x * inv_a2)[:, None] * sens[:, 0] + (2.0 * s_z * inv_b2)[:, None] * sens[:, 1]
    owners.append(idx[ellipse])
    grads.append(grad_f[ellipse])
    slacks.append((1.0 - f)[ellipse])
    tangent_owner, tangent_grad, tangent_slack = _tangent_rows(s_x, s_z, sens, lim)
    owners.append(idx[tangent_owner])
    grads.append(tangent_grad)
    slacks.append(tangent_slack)
    for value, row, low, high in ((s_x, sens[:, 0], lim["swing_x_min"], lim["swing_x_max"]),
                                  (s_z, sens[:, 1], lim["swing_z_min"], lim["swing_z_max"])):
        upper_locked, lower_locked = high <= 0.0, low >= 0.0
        owners += [idx[upper_locked], idx[lower_locked]]
        grads += [row[upper_locked], -row[lower_locked]]
        slacks += [-value[upper_locked], value[lower_locked]]
    return np.concatenate(owners), np.concatenate(grads), np.concatenate(slacks)


_QUADRANTS = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])


def _tangent_rows(s_x, s_z, sens, lim):
    """Rows of the outer tangent polygon of the four quarter-ellipses (see the module docstring)."""
    cos, sin = np.cos(_TANGENT_ANGLES), np.sin(_TANGENT_ANGLES)
    sign_x, sign_z = _QUADRANTS[:, 0], _QUADRANTS[:, 1]
    a = np.where(sign_x > 0, lim["swing_x_max"][:, None], -lim["swing_x_min"][:, None])  # (m,4)
    b = np.where(sign_z > 0, lim["swing_z_max"][:, None], -lim["swing_z_min"][:, None])
    valid = (((a[..., None] > 0.0) | (cos < 1e-12)) & ((b[..., None] > 0.0) | (sin < 1e-12)))
    n_x = sign_x[:, None] * cos / np.where(a > 0.0, a, np.inf)[..., None]            # (m,4,K)
    n_z = sign_z[:, None] * sin / np.where(b > 0.0, b, np.inf)[..., None]
    joint, quadrant, k = np.nonzero(valid)
    n_x, n_z = n_x[joint, quadrant, k], n_z[joint, quadrant, k]
    gradient = n_x[:, None] * sens[joint, 0] + n_z[:, None] * sens[joint, 1]
    return joint, gradient, 1.0 - n_x * s_x[joint] - n_z * s_z[joint]
