"""Swing/twist joint limits as a limit kind (``kind.JointLimits``).

The settings are ``SwingTwistLimits`` (the ranges of the README's limit semantics, one per
bone). Over a solve's joints they give the linear rows of ``swing_twist_rows.LimitRows``
(Baerlocher §5.4.2–5.4.3), the projection of ``swing_twist_projection.LimitProjection``
(§3.7.2 / App. D) with every unlimited joint's ranges open, so that one projection also retracts
any joint that steps in parameter space, and the escape starts towards the centre of each range.
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
# escapes aim at random offsets within ±_ESCAPE_SPREAD (seeded by the attempt: deterministic),
# one per joint and parameter: 4 fixed aims left 9 of 1,000 random reachable problems on the
# basic metarig unsolved, the random ones after them none of 3,000.
_ESCAPE_AIMS = ((0.5, (0.0, 0.0, 0.0)), (1.0, (0.0, 0.0, 0.0)),
                (1.0, (0.4, 0.0, 0.4)), (1.0, (-0.4, 0.0, -0.4)))
_ESCAPE_SPREAD = 0.8


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
        lim = self.ranges
        shift = moved & lim.enabled
        s_x, s_z, tau = swing_twist_params(q)
        if attempt < len(_ESCAPE_AIMS):
            fraction, offsets = _ESCAPE_AIMS[attempt]
        else:
            fraction, offsets = 1.0, np.random.default_rng(attempt).uniform(
                -_ESCAPE_SPREAD, _ESCAPE_SPREAD, (3, len(q)))
        aims = [(np.asarray(lo) + np.asarray(hi)) / 2 + o * (np.asarray(hi) - np.asarray(lo)) / 2
                for (lo, hi), o in zip(((lim.swing_x_min, lim.swing_x_max),
                                        (lim.swing_z_min, lim.swing_z_max),
                                        (lim.twist_min, lim.twist_max)), offsets)]
        moved_to = quat_from_swing_twist(*(v + fraction * (aim - v)
                                           for v, aim in zip((s_x, s_z, tau), aims)))
        return self.project(np.where(shift[:, None], moved_to, q))
