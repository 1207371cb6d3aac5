"""Live posing: what ``dqik.live`` does, without the modal shell, so that scripts and tests can
drive it (modal operators and timers do not run in background mode).

A ``LivePosing`` holds the armature's solving session (``session.py``) and the pose it started
from. ``tick()`` is one live tick (``Session.live_tick``: nothing when nothing moved, else a
solve within ``Object.dqik.time_budget_ms`` that goes on from the last result); the operator's
timer calls it about 60 times a second. ``follow()`` is the same tick taken after each of
Blender's depsgraph updates (``handlers.py``), when something moved: while Blender's own
transform tool or a gizmo moves a target, it runs in front of ``dqik.live`` and takes the
events, so the rig follows the target through those updates whether or not timer events reach
the operator meanwhile (Blender evaluates a pose written in the handler without calling the
handlers again, and a tick never starts inside another: ``session.ticking``). ``drag`` pulls
a bone's tail to a point as a temporary task above the others; ``pin`` gives a bone a target
where its tail stands; ``cancel`` takes the pins back and puts the starting pose back bit for
bit (every rotation,
location and scale channel and every rotation mode, as Blender stores them); ``confirm`` keeps
the pose and, with auto-keying on, keys the bones it changed on the current frame, as Blender's
own transform does. ``ended()`` says why live posing cannot go on (the armature was deleted,
hidden, or left Pose Mode), if it cannot.

Only one live posing runs at a time: starting one stops the others (``stop_all``), and file
load, undo and disabling the extension stop them too.
"""

import traceback

import bpy

from ..authoring.target_empties import add_target_empty
from ..errors import ArmatureError
from ..keys.auto_keying import auto_key
from ..rig.pose import PoseSnapshot
from .sessions import session_for

_RUNNING = []   # the LivePosing objects running (at most one)


class LivePosing:
    """Live posing of the armature ``obj`` (see the module docstring)."""

    def __init__(self, obj):
        stop_all()
        self.obj = obj
        self.session = session_for(obj)
        self.session.armature_updated()     # what changed before it started, no update noted
        self.start = PoseSnapshot(obj)
        self.stopped = False
        self.failure = None     # why ``follow`` ended it, if it did
        self.last = None
        self.on_stop = None     # called once when it stops (the operator removes its timer)
        self.pins = []          # (bone, its earlier (target, subtarget, use_target), new Empty)
        _RUNNING.append(self)

    def tick(self, after_update=False):
        """One live tick; returns the new ``SolveSnapshot``, or None when nothing moved (or,
        ``after_update``, the tick ``follow`` takes, when only a solve cut short is left to go
        on with). A tick that does not solve measures the last tick's errors on the pose Blender
        shows, if they wait for it (``measure``); one that solves replaces them unseen (the
        header and ``last`` show its own), so it skips that measure (0.4 ms on a generated Rigify
        rig, whose constraints keep every tick's errors waiting)."""
        snapshot = self.session.live_tick(self.obj.dqik.time_budget_ms, after_update)
        if snapshot is None:
            self.measure()
        else:
            self.last = snapshot
        return snapshot

    def follow(self):
        """The tick after a depsgraph update (``handlers.py``): a solve when something moved,
        else the last tick's errors measured on the pose Blender shows if they wait for it
        (``measure``).
        A rig the solver cannot work on is left to the timer's tick, which shows why in the
        header; an unexpected error is printed once and ends live posing (``ended`` says
        why)."""
        if self.ended() is not None:
            return
        try:
            self.tick(after_update=True)
        except ArmatureError:
            pass
        except Exception as err:  # noqa: BLE001  (a handler must not raise on every update)
            traceback.print_exc()
            self.failure = f"{type(err).__name__}: {err}"
            self.stop()

    def measure(self):
        """When the last tick's errors wait for Blender's evaluation (``Session.unmeasured``: a
        constraint or driver may move the bones with tasks after the solve), evaluate the pose
        (Blender would before its next redraw) and measure them on what it shows."""
        measured = self.session.measure_unmeasured()
        if measured is not None:
            self.last = measured

    def drag(self, bone, point):
        """Pull ``bone``'s tail to the world ``point`` from the next tick on (None: release)."""
        self.session.drag(bone, point)

    def pin(self, bone):
        """Give ``bone`` a target where its tail stands now (an Empty, ``add_target``), or, if
        this live posing pinned it already, take that pin back (``unpin``); a dragged bone is
        released first. ``cancel`` takes every pin back. Returns the new Empty, or None when
        the bone was unpinned; an unknown bone is refused (``ArmatureError``)."""
        if not isinstance(bone, str) or bone not in self.obj.pose.bones:
            raise ArmatureError(f"'{self.obj.name}' has no bone {bone!r} to pin (a bone's name)")
        if self.session.dragged is not None and self.session.dragged[0] == bone:
            self.session.drag(None, None)
        if any(pinned == bone for pinned, _, _ in self.pins):
            self.unpin(bone)
            return None
        settings = self.obj.pose.bones[bone].dqik
        before = (settings.target, settings.subtarget, settings.use_target)
        empty = add_target_empty(self.obj, self.obj.pose.bones[bone])
        self.pins.append((bone, before, empty))
        self.session.invalidate()
        return empty

    def unpin(self, bone):
        """Take back the pin of ``bone``: its earlier target settings, the pin's Empty removed
        (an Empty or earlier target deleted meanwhile is passed over). The pose stays."""
        kept = []
        for pin in self.pins:
            if pin[0] == bone:
                _take_back(self.obj, *pin)
            else:
                kept.append(pin)
        self.pins = kept
        self.session.invalidate()

    def cancel(self):
        """Take back the pins (``unpin``), put the starting pose back, bit for bit, and end."""
        for pin in reversed(self.pins):
            _take_back(self.obj, *pin)
        self.pins.clear()
        self.start.restore(self.obj)
        self.stop()

    def confirm(self, context):
        """Keep the pose and end; with auto-keying on, key the bones the live posing changed on
        the current frame with the scene's auto-keying settings, as Blender's transform does
        (``auto_keying``). Returns those bones."""
        changed = self.start.changed_bones(self.obj)
        auto_key(context, self.obj, changed, self.start.changed_bones(self.obj, ("location",)))
        self.stop()
        return changed

    def ended(self):
        """Why live posing cannot go on, or None."""
        if self.stopped:
            return self.failure or "stopped"
        try:
            obj = self.obj
            mode, shown = obj.mode, obj.visible_get()
        except (ReferenceError, RuntimeError):
            return "the armature was deleted"
        if mode != 'POSE':
            return f"'{obj.name}' left Pose Mode"
        if not shown:
            return f"'{obj.name}' was hidden"
        return None

    def stop(self):
        """End live posing here, keeping the pose (a drag lets go)."""
        if self.session.dragged is not None:
            self.session.drag(None, None)
        self.stopped = True
        if self in _RUNNING:
            _RUNNING.remove(self)
        on_stop, self.on_stop = self.on_stop, None
        if on_stop is not None:
            on_stop()


def _take_back(obj, bone, before, empty):
    """``bone``'s target settings back to ``before`` and the pin's ``empty`` removed."""
    target, subtarget, use_target = before
    settings = obj.pose.bones[bone].dqik
    try:
        settings.target = target
    except ReferenceError:      # the earlier target was deleted meanwhile
        settings.target = None
    settings.subtarget, settings.use_target = subtarget, use_target
    try:
        bpy.data.objects.remove(empty)
    except ReferenceError:      # the user deleted the pin's Empty
        pass


def stop_all():
    """Stop every running live posing (a new one starts, a file is loaded, undo, the extension
    is disabled): each ends at its next event, keeping its pose."""
    for live in list(_RUNNING):
        live.stop()


def running():
    """The running ``LivePosing``, or None."""
    return _RUNNING[0] if _RUNNING else None


def follow_running():
    """``follow()`` of the running live posing, if any (after a depsgraph update)."""
    for live in list(_RUNNING):
        live.follow()


def note_updates(depsgraph):
    """Tell the running live posing's session when ``depsgraph``'s update reports its armature,
    object or data (``Session.armature_updated``): anything that changes the rig's set-up
    does (a bone option, a lock, a constraint, a driver, Edit Mode), besides a pose written
    outside a tick; a moved target or collider does not."""
    for live in _RUNNING:
        try:
            own = (live.obj, live.obj.data)
        except ReferenceError:
            continue
        if any(update.id.original in own for update in depsgraph.updates):
            live.session.armature_updated()
