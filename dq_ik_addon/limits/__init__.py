"""Joint-limit kinds, one module each (``kind`` gives the protocol)."""

from .kind import JointLimits
from .swing_twist import SwingTwistJoints, SwingTwistLimits
from .swing_twist_projection import (LOCKED_TOLERANCE, LimitProjection, limit_violation,
                                     project_to_limits)

__all__ = ["JointLimits", "LOCKED_TOLERANCE", "LimitProjection", "SwingTwistJoints",
           "SwingTwistLimits", "limit_violation", "project_to_limits"]
