"""DQ IK engine: dual-quaternion chain model and prioritized IK, on numpy alone (no bpy)."""

from .chain_model import ChainModel

__all__ = ["ChainModel"]

from .dual_quaternion import (
    dq_conj,
    dq_exp,
    dq_from_matrix,
    dq_from_rotation_translation,
    dq_log,
    dq_mul,
    dq_normalize,
    dq_rotation,
    dq_to_matrix,
    dq_transform_point,
    dq_translation,
)
from .limits import SwingTwistLimits, limit_violation, project_swing, project_to_limits
from .quaternion import (
    matrix_to_quat,
    qcanonical,
    qconj,
    qexp,
    qlog,
    qmul,
    qnormalize,
    qrotate,
    quat_from_axis_angle,
    quat_from_rotvec,
    quat_to_matrix,
    quat_to_rotvec,
)
from .swing_twist import quat_from_swing_twist, swing_twist, swing_twist_params

__all__ += [
    "qmul", "qconj", "qnormalize", "qcanonical", "qrotate", "qexp", "qlog",
    "quat_from_rotvec", "quat_to_rotvec", "quat_to_matrix", "matrix_to_quat", "quat_from_axis_angle",
    "dq_from_rotation_translation", "dq_rotation", "dq_translation", "dq_mul", "dq_conj", "dq_normalize",
    "dq_to_matrix", "dq_from_matrix", "dq_transform_point", "dq_log", "dq_exp",
    "swing_twist", "swing_twist_params", "quat_from_swing_twist",
    "SwingTwistLimits", "limit_violation", "project_swing", "project_to_limits",
]
