"""DQ IK engine: the armature as a chain model and prioritized IK, on numpy alone (no bpy).

This package's names are the whole of what the Blender side uses (a test checks that it imports
nothing from the engine's modules directly), as Blender's ``intern/iksolver`` gives the rest of
Blender a handful of calls (``IK_SolverAddGoal``, ``IK_Solve``):

- **Build.** ``ChainModel.from_bones`` (with ``BoneFlags``, ``INHERIT_SCALE_MODES``) and
  ``.matrices`` / ``.forward``; tasks (``Task`` of a kind: ``Position``, ``AxesPosition``,
  ``Orientation``, ``Aim``, ``Loop``, ``LoopOrientation``, ``Balance`` of a ``Body``,
  measured by ``center_of_mass`` over a ``support_polygon``), limits (``SwingTwistLimits``)
  and ``SolverSettings``; ``involved_bones`` and ``Solver(model, tasks, limits, ...)``.
- **Retarget, solve, reset.** ``Solver.retarget`` (new targets, given pose and obstacles),
  ``Solver.solve`` → ``SolveResult``, ``Solver.reset``.
- **Measure.** ``Solver.measure`` (task errors and contact penetration of given rotations or
  pose matrices, optionally as an earlier solve saw them: ``Solver.state`` → ``SolveState``),
  ``Solver.pose_matrices``.
- **Per-bone data** for reports and the overlay: ``Solver.bones`` (the modelled bones),
  ``moved_mask``, ``modelled_mask``, ``computed_mask``, ``capsule_bones``, ``fixed_tasks``,
  ``sliding_tasks``;
  ``chain_size``, ``MIN_RADIUS``, ``joint_masks``.
- **Maths** the Blender side shares with the engine: quaternions (w first), Euler orders,
  swing/twist, closest points of segments and triangles.

A task kind is one module of ``tasks`` and a limit kind one module of ``limits``; the solver's
loop (``solver``) is built from ``problem``, ``steps``, ``active_set``, ``acceptance``,
``pose_update`` and ``escapes``.
"""

from .bone_parent_transform import INHERIT_SCALE_MODES
from .chain_model import BoneFlags, ChainModel
from .contacts import MIN_RADIUS, nearest_between_one
from .euler import euler_to_quat, quat_to_euler
from .limits import SwingTwistLimits
from .measure import Measure, SolveResult, SolveState
from .quaternion import (
    matrix_to_quat,
    qnormalize,
    qrotate,
    quat_from_axis_angle,
    quat_to_matrix,
    row_dots,
)
from .solver import Solver, SolverSettings, involved_bones, solve
from .solver_settings import chain_size
from .swing_twist import quat_from_swing_twist, swing_twist_array
from .tasks import (
    Aim,
    AxesPosition,
    Balance,
    Body,
    Loop,
    LoopOrientation,
    Orientation,
    Position,
    Task,
    TaskKind,
)
from .tasks.balance import center_of_mass
from .tasks.ground_polygon import support_polygon
from .tasks.task import joint_masks
from .triangles import closest_segment_one_triangle

__all__ = [
    "INHERIT_SCALE_MODES", "MIN_RADIUS", "Aim", "AxesPosition", "Balance", "Body", "BoneFlags",
    "ChainModel", "center_of_mass", "support_polygon",
    "Loop", "LoopOrientation", "Measure",
    "Orientation", "Position", "SolveResult", "SolveState", "Solver", "SolverSettings",
    "SwingTwistLimits", "Task", "TaskKind", "chain_size", "closest_segment_one_triangle",
    "euler_to_quat", "involved_bones", "joint_masks", "matrix_to_quat", "nearest_between_one",
    "qnormalize", "qrotate", "quat_from_axis_angle", "quat_from_swing_twist", "quat_to_euler",
    "quat_to_matrix", "row_dots", "solve", "swing_twist_array",
]
