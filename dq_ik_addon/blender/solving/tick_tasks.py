"""The tasks of one tick beyond the bones' own: a dragged bone's (live posing) and the balance
(``settings.balance``)."""

import numpy as np

from ...engine import Position, Task
from ..errors import ArmatureError
from ..settings.scene_tasks import solved_tasks
from ..settings.target_dependencies import mutual_targets


def tick_tasks(obj, model, sources, dragged, balance, cache, unit):
    """``(tasks, names, kept, warnings, mutual)`` of a tick of ``obj`` (``model``, the task
    ``sources``): the enabled bones' tasks (``solved_tasks``: ``kept``, the sources left out),
    the ``dragged`` bone's (``(name, world point)`` or None) in place of its own, the balance
    (``BalanceSetup`` ``balance``; ``cache``: the colliders' cache, for the skin; ``unit``: the
    world unit), and the bones whose targets follow another rig that follows this one
    (``mutual_targets``)."""
    tasks, names, kept, warnings = solved_tasks(obj, model, sources)
    mutual, warned = mutual_targets(obj, kept)
    warnings += warned
    if dragged is not None:
        tasks, names = with_drag(obj, model, tasks, names, *dragged)
    tasks, names = balance.tasks(obj, model, cache, unit, tasks, names, warnings)
    return tasks, names, kept, warnings, mutual


def with_drag(obj, model, tasks, names, bone, point):
    """``tasks, names`` with the tasks of ``bone`` (a name) replaced by a position task that
    pulls its tail to ``point`` (world space) above every other, its chain to the root."""
    index = model.index.get(bone)
    if index is None:
        raise ArmatureError(f"'{obj.name}' has no bone '{bone}' to drag")
    to_armature = np.linalg.inv(np.array(obj.matrix_world))
    kept = [(task, name) for task, name in zip(tasks, names) if task.bone != index]
    top = min((task.priority for task, _ in kept), default=1) - 1
    drag = Task(Position, index, to_armature[:3, :3] @ point + to_armature[:3, 3], top)
    return [task for task, _ in kept] + [drag], [name for _, name in kept] + [bone]
