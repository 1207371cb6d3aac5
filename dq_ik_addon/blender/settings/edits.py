"""What setting a DQ IK property does beyond storing its value (its ``update`` callback), and
the count of settings edits that readers of every bone's settings compare (``settings_edits``).
``FINITE``: from Blender 5.0 a float property keeps its value when given NaN or ±inf
(``properties``' docstring)."""

import math

import bpy
from bpy.app.handlers import persistent

from ..lifecycle import render_lock
from ..rig.objects import select_only
from ..solving.sessions import invalidate
from . import animated_settings

_EDITS = [0]


def settings_edits(obj):
    """``(edits, objects, animated)``: how many times a DQ IK setting with ``settings_changed``
    was set (on any armature), or undo, redo or a file load may have changed settings
    (``note_settings_edit``), how many objects the file has (deleting a target clears its
    pointer without any update callback), and the values of ``obj``'s DQ IK settings that keys
    or drivers set (``animated_settings.values``; a frame change sets them with no callback):
    what reads every bone's settings (the overlay, the task list) reads them again only when
    this changed, not on every pose change. Settings written as raw ID properties are read at
    the next such change."""
    return _EDITS[0], len(bpy.data.objects), animated_settings.values(obj)


@persistent
def note_settings_edit(*_args):
    """Count a change of settings (also an ``undo_post``, ``redo_post`` or ``load_post``
    handler)."""
    _EDITS[0] += 1


def settings_changed(settings, _context):
    note_settings_edit()
    invalidate(settings.id_data)


def select_active_task(settings, _context):
    """A click on a row of the sidebar's task list selects that row's bone (and only it)."""
    obj = settings.id_data
    index = settings.active_task_index
    if obj.type == 'ARMATURE' and obj.pose is not None and 0 <= index < len(obj.pose.bones):
        try:
            select_only(obj, obj.pose.bones[index])
        except AttributeError:      # linked armature data: its selection cannot be written
            pass


def frame_change_switched(settings, _context):
    """Lock the interface while rendering where the option is switched on, and give the lock
    back where it is switched off on a scene's last armature (``lifecycle/render_lock.py``)."""
    if settings.use_solve_on_frame_change:
        render_lock.lock_for(settings.id_data)
    else:
        render_lock.give_back(settings.id_data.users_scene)


def _keep_when_not_finite(_settings, value, stored, _is_set):
    return value if math.isfinite(value) else stored


FINITE = {"set_transform": _keep_when_not_finite} if bpy.app.version >= (5, 0, 0) else {}
