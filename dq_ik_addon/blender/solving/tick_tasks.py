"""The tasks of one tick beyond the bones' own: a dragged bone's (live posing) and the balance
(``settings.balance``)."""

from dataclasses import replace

import numpy as np

from ...engine import Position, Task
from ..errors import ArmatureError
from ..settings.scene_tasks import solved_tasks
from ..settings.target_dependencies import mutual_targets


def tick_tasks(obj, model, sources, dragged, balance, cache, unit, view_layer=None):
    """``(tasks, names, kept, warnings, mutual)`` of a tick of ``obj`` (``model``, the task
    ``sources``): the enabled bones' tasks (``solved_tasks``: ``kept``, the sources left out),
    the ``dragged`` bone's (``(name, world point)`` or None) in place of its own, the balance
    (``BalanceSetup`` ``balance``; ``cache``: the colliders' cache, for the skin; ``unit``: the
    world unit), and the bones whose targets follow another rig that follows this one
    (``mutual_targets``); the targets are looked up in ``view_layer`` (None: the context's)."""
    tasks, names, kept, warnings = solved_tasks(obj, model, sources, view_layer)
    mutual, warned = mutual_targets(obj, kept)
    warnings += warned
    if dragged is not None:
        tasks, names = with_drag(obj, model, tasks, names, *dragged,
                                 below=obj.dqik.balance_priority if obj.dqik.use_balance else None)
    tasks, names = balance.tasks(obj, model, cache, unit, tasks, names, warnings)
    return tasks, names, kept, warnings, mutual


def checked_drag(obj, bone, point):
    """``(bone, point)`` of a drag of ``obj``'s ``bone`` to the world ``point`` ((3,) float),
    or ``ArmatureError`` for a bone it does not have or a point that is not three finite
    numbers."""
    if not isinstance(bone, str) or bone not in obj.pose.bones:
        raise ArmatureError(f"'{obj.name}' has no bone {bone!r} to drag (a bone's name)")
    try:
        point = np.asarray(point, dtype=np.float64).reshape(3)
    except (TypeError, ValueError):
        point = None
    if point is None or not np.isfinite(point).all():
        raise ArmatureError("A drag point is three finite numbers (world space)")
    return bone, point


def with_drag(obj, model, tasks, names, bone, point, below=None):
    """``tasks, names`` with the tasks of ``bone`` (a name) replaced by a position task that
    pulls its tail to ``point`` (world space), its chain to the root: above every other task,
    or, with ``below`` (the balance's priority, when Balance is on), right below that level and
    above every task below it, so that a dragged hand does not tip the body over (the tasks
    after it move down a level; only the order of the levels counts)."""
    index = model.index.get(bone)
    if index is None:
        raise ArmatureError(f"'{obj.name}' has no bone '{bone}' to drag")
    to_armature = np.linalg.inv(np.array(obj.matrix_world))
    kept = [(task, name) for task, name in zip(tasks, names) if task.bone != index]
    if below is None:
        level = min((task.priority for task, _ in kept), default=1) - 1
    else:
        level = below + 1
        kept = [(replace(task, priority=task.priority + 1) if task.priority > below else task,
                 name) for task, name in kept]
    drag = Task(Position, index, to_armature[:3, :3] @ point + to_armature[:3, 3], level)
    return [task for task, _ in kept] + [drag], [name for _, name in kept] + [bone]
