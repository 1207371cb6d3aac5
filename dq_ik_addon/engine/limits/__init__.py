"""Joint-limit kinds, one module each (``kind`` gives the protocol)."""

from .kind import JointLimits
from .swing_twist import SwingTwistJoints, SwingTwistLimits
from .swing_twist_projection import limit_violation

__all__ = ["JointLimits", "SwingTwistJoints", "SwingTwistLimits", "limit_violation"]
