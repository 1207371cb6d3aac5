"""Task kinds, one module each (``kind`` gives the protocol), and the task set of a solve."""

from .aim import Aim
from .axes_position import AxesPosition
from .balance import Balance, Body
from .kind import TaskKind
from .loop import Loop, LoopOrientation
from .orientation import Orientation
from .position import Position
from .task import Task
from .task_set import TaskSet

__all__ = ["Aim", "AxesPosition", "Balance", "Body", "Loop", "LoopOrientation", "Orientation", "Position", "Task", "TaskKind", "TaskSet"]
