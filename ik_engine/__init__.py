"""DQ IK engine: the armature as a chain model and prioritized IK, on numpy alone (no bpy).

Entry points: ``ChainModel.from_bones`` / ``.matrices`` / ``.forward``; ``Solver`` (build,
``retarget``, ``solve``, ``reset``) and ``solve`` with ``Task`` of the task kinds in ``tasks``
(``Position``, ``Orientation``, ``Aim``), ``SwingTwistLimits`` (``limits``) and
``SolverSettings``. A task kind is one module of ``tasks`` and a limit kind one module of
``limits``; the solver's loop (``solver``) is built from ``problem``, ``steps``,
``active_set``, ``acceptance``, ``pose_update`` and ``escapes``.
"""

from .chain_model import ChainModel
from .limits import SwingTwistLimits
from .solver import SolveResult, Solver, SolverSettings, solve
from .tasks import Aim, Orientation, Position, Task

__all__ = ["Aim", "ChainModel", "Orientation", "Position", "SolveResult", "Solver",
           "SolverSettings", "SwingTwistLimits", "Task", "solve"]
