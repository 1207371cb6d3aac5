"""Swing/twist joint limits as a limit kind (``kind.JointLimits``).

The settings are ``SwingTwistLimits`` (the ranges of the README's limit semantics, one per
bone). Over a solve's joints they give the linear rows of ``swing_twist_rows.LimitRows``
(Baerlocher §5.4.2–5.4.3), the projection of ``swing_twist_projection.LimitProjection``
(§3.7.2 / App. D) with every unlimited joint's ranges open, so that one projection also retracts
any joint that steps in parameter space, and the escape starts towards the centre of each range
(and the fold start, a little way towards it, of a hinge or a joint resting on a swing bound).
"""

import numpy as np

from ..quaternion import row_dots
from ..swing_twist import (
    quat_from_swing_twist,
    swing_twist_array,
    swing_twist_jacobian,
    swing_twist_params,
)
from .kind import JointLimits
from .swing_twist_projection import LimitProjection, SwingTwistRanges
from .swing_twist_rows import LimitRows, turning_axes

# radians: joints swung farther step by the exponential map (the parameters are singular at π)
_PARAMETER_SWING = 2.0
# Per escape: how far limited joints move towards their aim, and the aim's offset from the
# centre of each range (s_x, s_z, τ) in half-ranges: first halfway to the centre, then all the
# way, then to either side of it, so that repeated stalls start from different places; later
# escapes aim at offsets within ±_ESCAPE_SPREAD spread over the ranges (``_spread_offsets``),
# one per joint and parameter: 4 fixed aims left 9 of 1,000 random reachable problems on the
# basic metarig unsolved, the aims after them none of 3,000.
_ESCAPE_AIMS = ((0.5, (0.0, 0.0, 0.0)), (1.0, (0.0, 0.0, 0.0)),
                (1.0, (0.4, 0.0, 0.4)), (1.0, (-0.4, 0.0, -0.4)))
_ESCAPE_SPREAD = 0.8
_GOLDEN = (5.0 ** 0.5 - 1.0) / 2.0
# A fresh start swings a hinge (or a joint on a swing bound) in the chain of an unmet target this
# share of the way to the centre of its swing ranges (``fold_start``): on the 159-bone metarig
# with keyed targets and nothing animated (``benchmarks/frame_change.py``'s paths, four seeds)
# 0.05 left some frames escaping, 0.1 none, 0.3 brought back a 169° turn between frames
_FOLD = 0.1
# a swing this close to a bound (radians, or of the ellipse's 1) rests on it
_RESTING = 1e-6


class SwingTwistLimits(SwingTwistRanges):
    """Per-bone swing/twist ranges, ``(n,)`` arrays in radians relative to rest, and ``enabled``.

    Requires ``swing_x_min ≤ 0 ≤ swing_x_max``, ``swing_z_min ≤ 0 ≤ swing_z_max`` and
    ``twist_min ≤ 0 ≤ twist_max``. Disabled bones are never reported or changed."""

    __slots__ = ()

    def for_joints(self, bones, column_weights):
        """The ``SwingTwistJoints`` of the joints ``bones``."""
        return SwingTwistJoints(SwingTwistRanges(*(np.asarray(values)[bones] for values in self)),
                                column_weights)


class SwingTwistJoints(JointLimits):
    """Swing/twist limits of a solve's m moving joints."""

    def __init__(self, ranges, column_weights):
        self.ranges = ranges
        self.limited = np.asarray(ranges.enabled, dtype=bool)
        self.column_scale = np.asarray(column_weights, float)[:, None] * turning_axes(ranges)
        self.limit_rows = LimitRows(ranges, self.column_scale)
        self.row_joint = self.limit_rows.joint_of_row
        # each row's right-hand side is max(slack, floor): an equality's may be negative
        self.rhs_floor = np.where(self.limit_rows.equality, -np.inf, 0.0)
        count = ranges.enabled.size
        self.projection = LimitProjection(SwingTwistRanges(
            *(np.where(ranges.enabled, values, bound)
              for values, bound in zip(ranges[:-1], (-np.inf, np.inf) * 3)),
            np.ones(count, bool)))
        self._retract_every = self.projection.retraction(np.arange(count))   # the chord's case

    def rows(self, params, sens):
        limited = self.limit_rows.joints
        owner, gradient, slack, equality = self.limit_rows(
            None, (params.take(limited, axis=0), sens.take(limited, axis=0)))
        return owner, gradient, np.maximum(slack, self.rhs_floor), equality

    def terms(self, q):
        return swing_twist_jacobian(q)

    def parameters(self, q):
        return swing_twist_array(q)

    def project(self, q, params=None):
        return self.projection(q, params)

    def retraction(self, joints):
        if joints.size == self.ranges.enabled.size:
            return self._retract_every
        return self.projection.retraction(joints)

    def tracks_parameters(self, params):
        return row_dots(params[:, :2], params[:, :2]) <= _PARAMETER_SWING ** 2

    def escape_start(self, q, moved, attempt):
        if attempt < len(_ESCAPE_AIMS):
            fraction, offsets = _ESCAPE_AIMS[attempt]
        else:
            fraction, offsets = 1.0, _spread_offsets(attempt - len(_ESCAPE_AIMS) + 1, len(q))
        return self._towards(q, moved & self.ranges.enabled, fraction, offsets)

    def fold_start(self, q, folding):
        """``q`` with the joints that are hinges (one swing axis locked: a knee, an elbow) or
        rest on a swing bound swung ``folding`` (m,) in [0, 1] times ``_FOLD`` of the way to the
        centre of their swing ranges (their twist kept), or None when there is none to move."""
        lim = self.ranges
        s_x, s_z, _ = swing_twist_params(q)
        locked_x = (lim.swing_x_min == 0.0) & (lim.swing_x_max == 0.0)
        locked_z = (lim.swing_z_min == 0.0) & (lim.swing_z_max == 0.0)
        a = np.where(s_x >= 0.0, lim.swing_x_max, -lim.swing_x_min)    # the quadrant's axes
        b = np.where(s_z >= 0.0, lim.swing_z_max, -lim.swing_z_min)
        ellipse = np.divide(s_x, a, out=np.zeros_like(s_x), where=a > 0.0) ** 2 \
            + np.divide(s_z, b, out=np.zeros_like(s_z), where=b > 0.0) ** 2
        bound = (ellipse >= 1.0 - _RESTING) \
            | ~locked_x & _on_closed_half(s_x, lim.swing_x_min, lim.swing_x_max) \
            | ~locked_z & _on_closed_half(s_z, lim.swing_z_min, lim.swing_z_max)
        moved = (folding > 0.0) & lim.enabled & ((locked_x != locked_z) | bound)
        if not moved.any():
            return None
        return self._towards(q, moved, _FOLD * folding, np.zeros((3, len(q))), twist=False)

    def _towards(self, q, shift, fraction, offsets, twist=True):
        """``q`` with the joints ``shift`` moved ``fraction`` (a number, or one per joint) of
        the way (in swing and, with ``twist``, twist parameters) to their aims, ``offsets``
        (3,m) half-ranges from the centre of each range; inside the limits."""
        lim = self.ranges
        aims = [(np.asarray(lo) + np.asarray(hi)) / 2 + o * (np.asarray(hi) - np.asarray(lo)) / 2
                for (lo, hi), o in zip(((lim.swing_x_min, lim.swing_x_max),
                                        (lim.swing_z_min, lim.swing_z_max),
                                        (lim.twist_min, lim.twist_max)), offsets)]
        shares = (fraction, fraction, fraction if twist else 0.0)
        moved_to = quat_from_swing_twist(*(v + share * (aim - v) for v, aim, share
                                           in zip(swing_twist_params(q), aims, shares)))
        return self.project(np.where(shift[:, None], moved_to, q))


def _on_closed_half(values, low, high):
    """The swings ``values`` that rest on a half-axis closed by a bound of 0 (a hinge's straight
    end, ``swing_x_min`` 0): at it, or past it by at most ``_RESTING``."""
    return (low >= 0.0) & (values <= _RESTING) | (high <= 0.0) & (values >= -_RESTING)


def _spread_offsets(index, count):
    """The aims (3, count) of the escapes after the fixed ones, in half-ranges: the ``index``-th
    point of Halton's low-discrepancy sequence in bases 2, 3 and 5 (s_x, s_z, τ), each joint's
    shifted by ``j φ (1, 2, 3)`` modulo 1 (Cranley and Patterson's rotation; φ the golden
    ratio's fraction) so that the joints of a chain do not aim alike, scaled to
    ±``_ESCAPE_SPREAD``. Independent uniform aims (seeded by the attempt) cover the ranges less
    evenly: on 900 random reachable problems of the basic metarig's four limbs on Chain Length 2
    under the HUMANOID limits they left 14 short after 16 escapes, these 6, in 6 % fewer
    iterations."""
    point = np.array([_radical_inverse(index, base) for base in (2, 3, 5)])
    shifted = (point[:, None] + np.outer((1.0, 2.0, 3.0), np.arange(count)) * _GOLDEN) % 1.0
    return (2.0 * shifted - 1.0) * _ESCAPE_SPREAD


def _radical_inverse(index, base):
    """Van der Corput's radical inverse of ``index`` in ``base``: its digits mirrored about the
    radix point (0.1, 0.01, … in that base)."""
    value, scale = 0.0, 1.0
    while index:
        index, digit = divmod(index, base)
        scale /= base
        value += digit * scale
    return value
