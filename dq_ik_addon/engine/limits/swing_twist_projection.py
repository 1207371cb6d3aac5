"""Swing/twist joint limits (the README's limit semantics): four quarter-ellipses for the swing, an
interval for the twist.

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

from ..quaternion import all_true, any_true, row_dots
from ..swing_twist import quat_from_swing_twist, swing_twist_array, swing_twist_params

_NEWTON_ITERATIONS = 64  # far more than monotone Newton needs from its start (a safety cap)
_CONVERGED = 4.0 * np.finfo(float).eps  # relative step of t at which Newton has converged
LOCKED_TOLERANCE = 1e-12  # radians
ROUNDING = 1e-12  # radians: how far outside its limits a rotation may be left (rounding)


class SwingTwistRanges(NamedTuple):
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


def _closest_on_ellipse(uv, ab):
    """Closest point to ``uv = (u, v)`` (first quadrant, outside) on the ellipse with semi-axes
    ``ab = (a, b) > 0``; ``(k, 2)`` arrays.

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
    c = (ab * uv) ** 2
    d = ab * ab
    excess = (c / (d * d)).dot(_PAIR) - 1.0
    tangent = excess / (2.0 * (c / (d * d * d)).dot(_PAIR))
    t = np.maximum(np.maximum.reduce(ab * uv - d, axis=1), np.maximum(tangent, 0.0))
    scale = _CONVERGED * np.maximum.reduce(d, axis=1)
    for _ in range(_NEWTON_ITERATIONS):
        shifted = t[:, None] + d
        f = c / (shifted * shifted)
        h = 1.0 / np.sqrt(f.dot(_PAIR))
        dh = (f / shifted).dot(_PAIR) * (h * h * h)
        step = np.maximum((1.0 - h) / dh, 0.0)
        t = t + step
        if all_true(step <= _CONVERGED * t + scale):
            break
    return d * uv / (t[:, None] + d)


_PAIR = np.ones(2)


def _ellipse_ratio(swing, positive_side, negative_side):
    """``(s_x/a)² + (s_z/b)²`` of (k,2) swings, with each quadrant's ``1/a², 1/b²`` taken from the
    (k,2) ``positive_side`` or ``negative_side`` by the swing's signs
    (``quadrant_inverse_squares``)."""
    return (swing * swing * np.where(swing >= 0.0, positive_side, negative_side)).dot(_PAIR)


def project_swing(s_x, s_z, limits):
    """Closest point of the quarter-ellipse swing set to ``(s_x, s_z)`` (Euclidean, radians).

    Inside points are returned unchanged.  The closest point lies in the point's own closed
    quadrant (the outward normal there has the quadrant's signs), so it is the closest point of
    the full ellipse with that quadrant's semi-axes ``(a, b)``; with ``a = 0`` it is
    ``(0, min(|s_z|, b))``, with ``b = 0`` ``(min(|s_x|, a), 0)``.  Ignores ``limits.enabled``.
    """
    s_x, s_z = np.broadcast_arrays(np.asarray(s_x, dtype=float), np.asarray(s_z, dtype=float))
    a, b = _semi_axes(s_x, s_z, limits)
    a, b = np.broadcast_to(a, s_x.shape), np.broadcast_to(b, s_x.shape)
    swing = np.stack([s_x, s_z], axis=-1).reshape(-1, 2)
    uv = np.abs(swing)
    projected = _project_quadrant(swing, uv, np.stack([a, b], axis=-1).reshape(-1, 2),
                                  _swing_inside(uv[:, 0], uv[:, 1], a.ravel(), b.ravel()))
    return projected[:, 0].reshape(s_x.shape), projected[:, 1].reshape(s_x.shape)


def _project_quadrant(swing, uv, ab, inside):
    """``project_swing`` of ``(k, 2)`` swings given their magnitudes ``uv = |swing|``, the
    semi-axes ``ab`` of their quadrant and which points are inside."""
    both = np.logical_and.reduce(ab > 0.0, axis=1) & ~inside
    projected = np.minimum(uv, ab)
    if any_true(both):
        projected[both] = _closest_on_ellipse(uv[both], ab[both])
    return np.copysign(np.where(inside[:, None], uv, projected), swing)


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
    return LimitProjection(SwingTwistRanges(*(np.broadcast_to(np.asarray(v), shape)
                                              for v in limits)))(q)


class LimitProjection:
    """``project_to_limits`` for one limit set of ``(m,)`` arrays, with what the inside test
    needs of the limits computed once: each quadrant's squared inverse semi-axes and the box
    ``low ≤ (s_x, s_z, τ) ≤ high`` that holds the twist range and the locked half-axes (within
    ``LOCKED_TOLERANCE``), each widened by ``ROUNDING``."""

    def __init__(self, limits):
        self.enabled = np.asarray(limits.enabled, dtype=bool)
        self.every_bone = bool(self.enabled.all())
        # per joint, the semi-axes (a, b) and their 1/a², 1/b² on the positive / negative sides
        self.semi_axes = [np.stack([np.asarray(limits.swing_x_max, dtype=float),
                                    np.asarray(limits.swing_z_max, dtype=float)], axis=-1),
                          -np.stack([np.asarray(limits.swing_x_min, dtype=float),
                                     np.asarray(limits.swing_z_min, dtype=float)], axis=-1)]
        (x_pos, x_neg), (z_pos, z_neg) = quadrant_inverse_squares(limits)
        self.inverse_squares = np.stack([x_pos, z_pos], axis=-1), np.stack([x_neg, z_neg], axis=-1)
        self.twist = np.asarray(limits.twist_min, dtype=float), \
            np.asarray(limits.twist_max, dtype=float)
        # a free half-axis is bounded by the ellipse test already: only locked ones need the box
        reach = [np.where(side > 0.0, np.inf, LOCKED_TOLERANCE) for side in self.semi_axes]
        # (s_x, s_z, τ) bounds: the twist range, 0 on a locked half-axis (``retract``); and the box
        # that the inside test allows, those within LOCKED_TOLERANCE (locked) and ROUNDING
        self.bounds = tuple(np.concatenate([np.where(side > 0.0, np.inf, 0.0) * sign,
                                            twist[..., None]], axis=-1)
                            for side, sign, twist in ((self.semi_axes[1], -1.0, self.twist[0]),
                                                      (self.semi_axes[0], 1.0, self.twist[1])))
        self.box = (np.concatenate([-reach[1], self.twist[0][..., None]], axis=-1) - ROUNDING,
                    np.concatenate([reach[0], self.twist[1][..., None]], axis=-1) + ROUNDING)

    def retraction(self, rows):
        """``retract(params)`` of the joints ``rows``, their bounds taken once (the solver
        retracts the same joints at every trial of a step): the unit rotations (k,4), ``w ≥ 0``,
        of the swing/twist parameters ``params`` (k,3) brought inside the limits, and those
        parameters. The twist and the locked half-axes are clamped to their bounds, then a swing
        outside its quarter-ellipse is scaled onto it towards the origin (not the closest point,
        but within the square of the excess of it: for the solver's small steps off a bound it is
        a retraction like the projection, and needs no Newton)."""
        low, high = (bound.take(rows, axis=0) for bound in self.bounds)
        positive, negative = (side.take(rows, axis=0) for side in self.inverse_squares)

        def retract(params):
            params = np.minimum(np.maximum(params, low), high)
            swing = params[:, :2]
            ratio = _ellipse_ratio(swing, positive, negative)
            outside = ratio > 1.0
            if any_true(outside):
                params[:, :2] = swing / np.sqrt(np.where(outside, ratio, 1.0))[:, None]
            return quat_from_swing_twist(params[:, 0], params[:, 1], params[:, 2]), params
        return retract

    def __call__(self, q, params=None):
        """Rotations ``q`` (m,4) projected onto the limits (see ``project_to_limits``); ``q``
        itself when every rotation is inside. ``params``: their ``swing_twist_array`` if known
        (only the enabled joints' are read)."""
        q = np.asarray(q, dtype=float)
        params = swing_twist_array(q) if params is None else params
        swing = params[:, :2]
        ratio = _ellipse_ratio(swing, *self.inverse_squares)
        low, high = self.box
        moved = (ratio > 1.0 + 2.0 * ROUNDING) | np.logical_or.reduce((params < low)
                                                                      | (params > high), axis=1)
        if not self.every_bone:
            moved &= self.enabled
        if not any_true(moved):
            return q
        rows = moved.nonzero()[0]
        swing = swing.take(rows, axis=0)
        swing_inside = (ratio.take(rows) <= 1.0) & np.logical_and.reduce(
            (swing >= low[rows, :2]) & (swing <= high[rows, :2]), axis=1)
        semi_axes = np.where(swing >= 0.0, self.semi_axes[0].take(rows, axis=0),
                             self.semi_axes[1].take(rows, axis=0))
        projected_swing = _project_quadrant(swing, np.abs(swing), semi_axes, swing_inside)
        twist_min, twist_max = self.twist
        projected = quat_from_swing_twist(
            projected_swing[:, 0], projected_swing[:, 1],
            np.minimum(np.maximum(params[rows, 2], twist_min[rows]), twist_max[rows]))
        same_side = row_dots(projected, q.take(rows, axis=0))
        result = q.copy()
        result[rows] = projected * np.where(same_side < 0.0, -1.0, 1.0)[:, None]
        return result
