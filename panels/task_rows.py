"""The rows of the sidebar's task list: which pose bones are tasks, in what order, and each
one's status light and error from the armature's last solve.

A bone is a task when it has ``use_target`` on or a target set (a task switched off keeps its
row, so it can be switched on again). Rows are sorted by priority (1 first), then by bone name,
so tasks of one priority level stand together. The UIList (``sidebar.DQIK_UL_tasks``) feeds
``filter_items`` from ``list_order`` and draws each row from ``row_status``; neither reads the
rig, only the bones' ``dqik`` settings and ``session.last_result_of`` (once per draw, through
``reports_by_name``). Which bones are tasks, and their priorities, are read in one pass over
the pose bones only when a setting was edited (``settings.edits.settings_edits``) or the bones
changed, not on every redraw of the list (a live tick or a frame change redraws it).
"""

import fnmatch
import math
from typing import NamedTuple

import numpy as np

from ..dq_ik_addon.blender.settings.edits import settings_edits
from ..dq_ik_addon.blender.solving.sessions import last_result_of
from ..dq_ik_addon.blender.solving.snapshot import format_error

# Blender's sequencer strip colours read as traffic lights (present in 4.5 and 5.0)
STATUS_ICONS = {'MET': 'STRIP_COLOR_04',        # green: within the tolerance
                'CLOSEST': 'STRIP_COLOR_02',    # orange: the closest reachable pose
                'MISSING': 'STRIP_COLOR_01',    # red: no target, or it could not be found
                'SKIPPED': 'STRIP_COLOR_01',    # red: its target moves with the solve
                'ERROR': 'STRIP_COLOR_01',      # red: the last solve failed
                'NONE': 'STRIP_COLOR_09',       # grey: not solved since it was switched on
                'OFF': 'STRIP_COLOR_09'}        # grey: switched off


class TaskRow(NamedTuple):
    """One task: its pose bone's index and name, and what its row shows."""

    index: int
    name: str
    enabled: bool
    priority: int
    status: str
    error: str


def is_task(settings):
    """The bone's ``PoseBone.dqik`` makes it a task (on, or off with a target kept)."""
    return settings.use_target or settings.target is not None


_REPORTS = {"snapshot": None, "by_name": {}}


def reports_by_name(snapshot):
    """``{bone name: TaskReport}`` of ``snapshot`` (None: empty), built once per snapshot."""
    if snapshot is None:
        return {}
    if _REPORTS["snapshot"] is not snapshot:
        _REPORTS["snapshot"], _REPORTS["by_name"] = snapshot, {t.name: t for t in snapshot.tasks}
    return _REPORTS["by_name"]


def error_text(report):
    """A report's errors for a row, each kind's as it reads (``snapshot.format_error``):
    ``0.0123 mm``, ``1.2°`` or both."""
    return " ".join(format_error(kind, value) for kind, value in report.errors.items()
                    if math.isfinite(value))


def row_status(name, settings, snapshot, reports):
    """``(status, error)`` of the task of bone ``name`` (``settings``: its ``PoseBone.dqik``)
    after ``snapshot``, the armature's last solve (or None; ``reports``: its
    ``reports_by_name``). Status is a key of ``STATUS_ICONS``."""
    if not settings.use_target:
        return 'OFF', ""
    if settings.target is None:
        return 'MISSING', "no target"
    if snapshot is None:
        return 'NONE', ""
    if snapshot.error:
        return 'ERROR', "solve failed"
    report = reports.get(name)
    if report is None:
        return 'NONE', ""
    if report.status == 'MISSING':
        return 'MISSING', "target missing"
    if report.status == 'SKIPPED':
        return 'SKIPPED', "skipped"
    return report.status, error_text(report)


def _matches(name, pattern):
    """The UIList's name filter, as Blender's own lists apply it (``*pattern*``, any case)."""
    return fnmatch.fnmatchcase(name.lower(), f"*{pattern.lower()}*")


_TASKS = {"key": None, "tasks": []}


def _tasks_of(obj):
    """``[(priority, name, index)]`` of every task of ``obj`` sorted, read again only when
    ``obj``, its bones' names or a setting (``settings.edits.settings_edits``) changed."""
    pose_bones = obj.pose.bones
    key = (obj.as_pointer(), settings_edits(obj), tuple(pose_bones.keys()))
    if _TASKS["key"] != key:
        _TASKS["key"], _TASKS["tasks"] = key, sorted(
            (pose_bone.dqik.priority, pose_bone.name, index)
            for index, pose_bone in enumerate(pose_bones) if is_task(pose_bone.dqik))
    return _TASKS["tasks"]


def list_order(obj, name_filter="", invert=False):
    """The tasks of armature ``obj`` in list order: the pose-bone indices of every task whose
    name passes ``name_filter`` (inverted with ``invert``), sorted by priority then name."""
    tasks = _tasks_of(obj)
    if name_filter:
        tasks = [task for task in tasks if _matches(task[1], name_filter) != invert]
    return [index for _, _, index in tasks]


def filter_flags(obj, shown, bitflag):
    """``UIList.filter_items``' answer for ``obj.pose.bones`` when ``shown`` (``list_order``) are
    the rows: flags (``bitflag`` for a shown bone) and each bone's new position (the shown
    ones first, in their order; the others after them, in pose-bone order)."""
    count = len(obj.pose.bones)
    shown = np.asarray(shown, dtype=int)
    flags, order = np.zeros(count, dtype=int), np.empty(count, dtype=int)
    flags[shown] = bitflag
    others = np.ones(count, dtype=bool)
    others[shown] = False
    order[shown] = np.arange(len(shown))
    order[others] = np.arange(len(shown), count)
    return flags.tolist(), order.tolist()


def task_rows(obj):
    """Every ``TaskRow`` of armature ``obj``, in list order, with its status from the last solve
    (what the task list shows; for scripts and tests)."""
    snapshot = last_result_of(obj)
    reports = reports_by_name(snapshot)
    rows = []
    for index in list_order(obj):
        pose_bone = obj.pose.bones[index]
        settings = pose_bone.dqik
        status, error = row_status(pose_bone.name, settings, snapshot, reports)
        rows.append(TaskRow(index, pose_bone.name, settings.use_target, settings.priority,
                            status, error))
    return rows
