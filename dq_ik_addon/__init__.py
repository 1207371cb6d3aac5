"""DQ IK engine: dual-quaternion chain model and prioritized IK, on numpy alone (no bpy).

Entry points: ``ChainModel.from_bones`` / ``.matrices`` / ``.forward`` (DESIGN.md §2) and
``solve`` / ``Solver`` with ``Task``, ``SwingTwistLimits`` and ``SolverSettings``. The maths lives in
the submodules ``quaternion``, ``dual_quaternion``, ``swing_twist``, ``limits``, ``jacobian``,
``prioritized`` and ``limit_constraints``.
"""

from .chain_model import ChainModel
from .limits import SwingTwistLimits
from .solver import SolveResult, Solver, SolverSettings, solve
from .tasks import Task

__all__ = ["ChainModel", "SwingTwistLimits", "SolveResult", "Solver", "SolverSettings", "solve",
           "Task"]
