"""Swing/twist joint limits of DESIGN.md §2: four quarter-ellipses for the swing, an interval for the twist.

With ``(s_x, s_z, τ) = swing_twist_params(q)`` the swing is allowed iff
``(s_x/a)² + (s_z/b)² ≤ 1``, ``a = swing_x_max`` if ``s_x ≥ 0`` else ``−swing_x_min`` (``b``
likewise for z), and the twist iff ``twist_min ≤ τ ≤ twist_max``.  A zero semi-axis locks that
half-axis (the quarter-ellipse degenerates to a segment on the other axis; up to
``LOCKED_TOLERANCE`` of rounding counts as on the axis).  The set is convex:
adjacent quarter-ellipses share their axis vertex and tangent there.  This is Baerlocher's
spherical-ellipse swing limit (§3.6.1) with the planar projection of §3.7.2 / App. D, done in
the full-angle (s_x, s_z) plane.
"""

from typing import NamedTuple

import numpy as np

from .swing_twist import quat_from_swing_twist, swing_twist_params

_NEWTON_ITERATIONS = 64
_CONVERGED = 4.0 * np.finfo(float).eps
LOCKED_TOLERANCE = 1e-12  # radians
ROUNDING = 1e-12  # radians: how far outside its limits a rotation may be left (rounding)


class SwingTwistLimits(NamedTuple):
    """Per-bone limits, ``(n,)`` arrays in radians relative to rest; ``enabled`` is a bool mask.

    Requires ``swing_x_min ≤ 0 ≤ swing_x_max``, ``swing_z_min ≤ 0 ≤ swing_z_max`` and
    ``twist_min ≤ 0 ≤ twist_max``.  Disabled bones are never reported or changed.
    """

    swing_x_min: np.ndarray
    swing_x_max: np.ndarray
    swing_z_min: np.ndarray
    swing_z_max: np.ndarray
    twist_min: np.ndarray
    twist_max: np.ndarray
    enabled: np.ndarray


def _semi_axes(s_x, s_z, limits):
    """Semi-axes ``(a, b)`` of the quarter-ellipse in the quadrant of ``(s_x, s_z)``."""
    a = np.where(s_x >= 0.0, limits.swing_x_max, -np.asarray(limits.swing_x_min, dtype=float))
    b = np.where(s_z >= 0.0, limits.swing_z_max, -np.asarray(limits.swing_z_min, dtype=float))
    return a, b


def _inverse_square(a):
    """``1/a²`` of semi-axes ``a ≥ 0``, 0 for a locked half-axis (``a`` = 0): there ``|s|`` up to
    ``LOCKED_TOLERANCE`` counts as 0 (rounding of a projected hinge) and more is outside."""
    return np.where(a > 0.0, 1.0 / np.where(a > 0.0, a, 1.0) ** 2, 0.0)


def quadrant_inverse_squares(limits):
    """``[(x_pos, x_neg), (z_pos, z_neg)]``: ``_inverse_square`` of each half-axis's semi-axis
    (``swing_x_max``, ``−swing_x_min``, likewise for z), to pick per quadrant by the swing's signs."""
    return [(_inverse_square(np.asarray(high, dtype=float)),
             _inverse_square(-np.asarray(low, dtype=float)))
            for low, high in ((limits.swing_x_min, limits.swing_x_max),
                              (limits.swing_z_min, limits.swing_z_max))]


def _swing_inside(u, v, a, b):
    """``(u/a)² + (v/b)² ≤ 1`` for the swing magnitudes ``u = |s_x|``, ``v = |s_z|`` and the
    semi-axes of their quadrant (``_inverse_square`` and its rule for a locked half-axis)."""
    return (u * u * _inverse_square(a) + v * v * _inverse_square(b) <= 1.0) \
        & ((a > 0.0) | (u <= LOCKED_TOLERANCE)) & ((b > 0.0) | (v <= LOCKED_TOLERANCE))


def _closest_on_ellipse(u, v, a, b):
    """Closest point to ``(u, v)`` (first quadrant, outside) on the ellipse with semi-axes ``a, b > 0``.

    The point is ``(a²u/(t + a²), b²v/(t + b²))`` where ``t ≥ 0`` solves
    ``(au/(t + a²))² + (bv/(t + b²))² = 1`` (Eberly, "Distance from a point to an ellipse", 2013).
    Newton runs on ``h(t) = ((au)²/(t + a²)² + (bv)²/(t + b²)²)^(-1/2) = 1``: h is a weighted
    power mean (exponent −2) of ``t + a², t + b²``, hence increasing and concave, so Newton from
    any ``t₀ ≤ t*`` increases monotonically to the root. ``t₀`` is the largest of
    ``au − a², bv − b², 0`` and the root of the tangent at 0 of the convex, decreasing
    ``G = h⁻²`` (which lies below G): ``(G(0) − 1)/(−G'(0))``, nearly exact for the points just
    outside that a solver step leaves, so Newton ends in one or two steps.  Points on an axis
    and very eccentric ellipses need no special case.
    """
    c1, c2 = (a * u) ** 2, (b * v) ** 2
    d1, d2 = a * a, b * b
    excess = c1 / (d1 * d1) + c2 / (d2 * d2) - 1.0
    tangent = excess / (2.0 * (c1 / (d1 * d1 * d1) + c2 / (d2 * d2 * d2)))
    t = np.maximum(np.maximum(a * u - d1, b * v - d2), np.maximum(tangent, 0.0))
    scale = _CONVERGED * np.maximum(d1, d2)
    for _ in range(_NEWTON_ITERATIONS):
        f1, f2 = c1 / ((t + d1) * (t + d1)), c2 / ((t + d2) * (t + d2))
        h = 1.0 / np.sqrt(f1 + f2)
        dh = (f1 / (t + d1) + f2 / (t + d2)) * (h * h * h)
        step = np.maximum((1.0 - h) / dh, 0.0)
        t = t + step
        if (step <= _CONVERGED * t + scale).all():
            break
    return d1 * u / (t + d1), d2 * v / (t + d2)


def project_swing(s_x, s_z, limits):
    """Closest point of the quarter-ellipse swing set to ``(s_x, s_z)`` (Euclidean, radians).

    Inside points are returned unchanged.  The closest point lies in the point's own closed
    quadrant (the outward normal there has the quadrant's signs), so it is the closest point of
    the full ellipse with that quadrant's semi-axes ``(a, b)``; with ``a = 0`` it is
    ``(0, min(|s_z|, b))``, with ``b = 0`` ``(min(|s_x|, a), 0)``.  Ignores ``limits.enabled``.
    """
    s_x = np.asarray(s_x, dtype=float)
    s_z = np.asarray(s_z, dtype=float)
    a, b = _semi_axes(s_x, s_z, limits)
    u, v = np.abs(s_x), np.abs(s_z)
    return _project_quadrant(s_x, s_z, u, v, a, b, _swing_inside(u, v, a, b))


def _project_quadrant(s_x, s_z, u, v, a, b, inside):
    """``project_swing`` given the magnitudes ``u = |s_x|``, ``v = |s_z|``, the semi-axes of
    their quadrant and which points are inside."""
    both = (a > 0.0) & (b > 0.0) & ~inside
    pu, pv = np.minimum(u, a), np.minimum(v, b)
    if both.any():
        pu[both], pv[both] = _closest_on_ellipse(u[both], v[both], a[both], b[both])
    pu, pv = np.where(inside, u, pu), np.where(inside, v, pv)
    return np.copysign(pu, s_x), np.copysign(pv, s_z)


def limit_violation(q, limits):
    """Per-bone violation in radians, 0 inside: ``max(‖s − P(s)‖, twist_min − τ, τ − twist_max, 0)``.

    ``s = (s_x, s_z)`` and ``P`` is ``project_swing``; 0 for disabled bones.
    """
    s_x, s_z, tau = swing_twist_params(q)
    p_x, p_z = project_swing(s_x, s_z, limits)
    swing = np.hypot(s_x - p_x, s_z - p_z)
    twist = np.maximum(limits.twist_min - tau, tau - np.asarray(limits.twist_max, dtype=float))
    return np.where(limits.enabled, np.maximum(np.maximum(swing, twist), 0.0), 0.0)


def project_to_limits(q, limits):
    """Project each rotation onto its limit set: swing → ``project_swing``, twist → clamp.

    Inside (or disabled) rotations are returned bit-for-bit, and so are those outside by no more
    than ``ROUNDING`` (twist; the ellipse ratio by ``2·ROUNDING``), such as a rotation projected
    before and renormalized since.  Others are rebuilt with
    ``quat_from_swing_twist``, unit length, with the sign that keeps ``q'·q ≥ 0``.  Clamping
    swing and twist separately is Baerlocher §3.7.2 steps 2–4 (constant twist range).
    """
    q = np.asarray(q, dtype=float)
    shape = q.shape[:-1]
    return LimitProjection(SwingTwistLimits(*(np.broadcast_to(np.asarray(v), shape)
                                              for v in limits)))(q)


class LimitProjection:
    """``project_to_limits`` for one limit set of ``(m,)`` arrays, with what the inside test
    needs of the limits computed once: each quadrant's squared inverse semi-axes and the box
    ``low ≤ (s_x, s_z, τ) ≤ high`` that holds the twist range and the locked half-axes (within
    ``LOCKED_TOLERANCE``), each widened by ``ROUNDING``."""

    def __init__(self, limits):
        self.enabled = np.asarray(limits.enabled, dtype=bool)
        self.every_bone = bool(self.enabled.all())
        self.semi_axes = [(np.asarray(high, dtype=float), -np.asarray(low, dtype=float))
                          for low, high in ((limits.swing_x_min, limits.swing_x_max),
                                            (limits.swing_z_min, limits.swing_z_max))]
        self.inverse_squares = quadrant_inverse_squares(limits)
        self.twist = np.asarray(limits.twist_min, dtype=float), \
            np.asarray(limits.twist_max, dtype=float)
        # a free half-axis is bounded by the ellipse test already: only locked ones need the box
        reach = [np.where(a > 0.0, np.inf, LOCKED_TOLERANCE) for pair in self.semi_axes
                 for a in pair]
        self.box = (np.stack([-reach[1], -reach[3], self.twist[0]], axis=-1) - ROUNDING,
                    np.stack([reach[0], reach[2], self.twist[1]], axis=-1) + ROUNDING)

    def __call__(self, q):
        """Rotations ``q`` (m,4) projected onto the limits (see ``project_to_limits``)."""
        q = np.asarray(q, dtype=float)
        s_x, s_z, tau = params = swing_twist_params(q)
        east, north = s_x >= 0.0, s_z >= 0.0
        (x_pos, x_neg), (z_pos, z_neg) = self.inverse_squares
        ratio = s_x * s_x * np.where(east, x_pos, x_neg) + s_z * s_z * np.where(north, z_pos, z_neg)
        params = np.stack(params, axis=-1)
        low, high = self.box
        moved = (ratio > 1.0 + 2.0 * ROUNDING) | ((params < low) | (params > high)).any(axis=-1)
        if not self.every_bone:
            moved &= self.enabled
        if not moved.any():
            return q
        rows = moved.nonzero()[0]
        (a_pos, a_neg), (b_pos, b_neg) = self.semi_axes
        s_x, s_z = s_x[rows], s_z[rows]
        swing = params.take(rows, axis=0)[:, :2]
        swing_inside = (ratio[rows] <= 1.0) & ((swing >= low[rows, :2])
                                               & (swing <= high[rows, :2])).all(axis=-1)
        p_x, p_z = _project_quadrant(s_x, s_z, np.abs(s_x), np.abs(s_z),
                                     np.where(east[rows], a_pos[rows], a_neg[rows]),
                                     np.where(north[rows], b_pos[rows], b_neg[rows]),
                                     swing_inside)
        twist_min, twist_max = self.twist
        projected = quat_from_swing_twist(
            p_x, p_z, np.minimum(np.maximum(tau[rows], twist_min[rows]), twist_max[rows]))
        same_side = np.einsum('ij,ij->i', projected, q.take(rows, axis=0))
        result = q.copy()
        result[rows] = projected * np.where(same_side < 0.0, -1.0, 1.0)[:, None]
        return result
