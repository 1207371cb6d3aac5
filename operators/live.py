"""``dqik.live``: the modal live solver, a thin shell over ``dq_ik_addon/blender/solving/live_posing.py``.

A window timer at about 60 Hz drives the ticks; every other event passes through, so the user
navigates, selects and grabs targets while it runs (the pattern of Blender's
``templates_py/operator_modal_timer.py``). While Blender's transform tool or a gizmo runs in
front of it, the rig follows through Blender's depsgraph updates (``LivePosing.follow``). Keys
it takes, from the **DQ IK Live** key map (``live_keys``: remappable in Preferences ›
Add-ons › DQ IK; defaults in brackets):

- **Cancel Live Pose** (Esc): put the starting pose back and stop; **Keep Live Pose** (Enter):
  keep the pose (one undo step; keys with auto-keying on) and stop;
- **Drag Bone** (Shift Alt D): drag the active bone: its tail follows the mouse (in the view
  plane through the tail) as a temporary task above the others; a click, the key again or
  Cancel lets go of it, keeping the pose;
- **Pin Bone** (Shift Alt P): pin the active bone: a target where its tail stands
  (``dqik.add_target``); again on a bone pinned in this session takes the pin back.

These keys act only when pressed over a 3D Viewport's main region, not repeated by a held key:
a window-level modal handler sees every key before the editors do (``wm_handlers_do``,
``source/blender/windowmanager/intern/wm_event_system.cc``), so typing in the Text Editor or the
Python Console, or Enter in the console, pass through to them, and so does Cancel while an
animation plays (Esc stops the playback). While a bone is dragged, navigation and every other
event pass through too; a click over a viewport lets go and is not passed on, so it does not
select.

The header shows the largest task error, the iterations and the milliseconds of the last tick;
it is cleared in every 3D Viewport when live posing stops, however it stops (the extension
disabled frees the operator without calling ``cancel``: ``WM_operator_handlers_clear``).
"""

import traceback

import bpy
from bpy_extras import view3d_utils

from ..dq_ik_addon.blender.errors import ArmatureError
from ..dq_ik_addon.blender.rig.objects import active_armature
from ..dq_ik_addon.blender.solving import live_posing
from .live_keys import action
from .poll import editable_armature

_TICK_SECONDS = 1.0 / 60.0
_KEYS = "keys in Preferences > Add-ons > DQ IK (Esc cancel, Enter keep, Shift Alt D drag, " \
        "Shift Alt P pin)"
_NEEDS_VIEWPORT = ("DQ IK Live needs a 3D Viewport: start it there (Pose Mode, sidebar > DQ IK > "
                   "Live); a script ticks dq_ik_addon.blender.solving.live_posing.LivePosing instead")
_RELEASE_CLICKS = {'LEFTMOUSE', 'RIGHTMOUSE'}


class DQIK_OT_live(bpy.types.Operator):
    """Solve the active armature's DQ IK tasks live while you move targets or drag bones"""

    bl_idname = "dqik.live"
    bl_label = "Start Live"
    bl_options = {'UNDO'}   # not REGISTER: Repeat Last cannot start a modal session again

    @classmethod
    def poll(cls, context):
        if not editable_armature(cls, context):
            return False
        if context.active_object.mode != 'POSE':
            cls.poll_message_set("Live posing works in Pose Mode (Ctrl Tab)")
            return False
        return True

    def execute(self, _context):
        """Called from a script or in background mode, where no modal runs."""
        self.report({'ERROR'}, _NEEDS_VIEWPORT)
        return {'CANCELLED'}

    def invoke(self, context, _event):
        if bpy.app.background or context.window is None or context.area is None \
                or context.area.type != 'VIEW_3D':
            self.report({'ERROR'}, _NEEDS_VIEWPORT)
            return {'CANCELLED'}
        self.live = live_posing.LivePosing(active_armature(context))
        self.dragged, self.shown = None, None
        manager = context.window_manager
        timer = manager.event_timer_add(_TICK_SECONDS, window=context.window)

        def on_stop():
            manager.event_timer_remove(timer)
            _clear_headers(manager)
        self.live.on_stop = on_stop
        manager.modal_handler_add(self)
        _header(context, f"DQ IK Live: {_KEYS}")
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        """Every event: what it does (``_event``); anything unexpected stops live posing with a
        report, keeping the pose, instead of leaving its timer, header and drag behind."""
        try:
            return self._event(context, event)
        except Exception as err:  # a bug must not leave a dead live session behind
            traceback.print_exc()
            return self._finish({'CANCELLED'}, f"DQ IK Live stopped: {err}", 'ERROR')

    def _event(self, context, event):
        reason = self.live.ended()
        if reason is not None:     # stopped from outside (undo, load, another Live): no undo step
            return self._finish({'CANCELLED'}, None if reason == "stopped" else
                                f"DQ IK Live ended: {reason}")
        if event.type == 'TIMER':
            self._tick(context)
            return {'PASS_THROUGH'}
        pressed = event.value == 'PRESS' and not event.is_repeat
        region = _viewport_under(context, event) if pressed else None
        key = None if region is None else action(context, event)
        if key == "dqik.live_keep":
            keyed = self.live.confirm(context)
            return self._finish({'FINISHED'}, f"DQ IK Live: pose kept ({len(keyed)} bones "
                                              "changed)")
        if self.dragged is not None:
            return self._drag_event(context, event, region, key)
        if key == "dqik.live_cancel" and not context.screen.is_animation_playing:
            self.live.cancel()
            return self._finish({'CANCELLED'}, "DQ IK Live: pose restored")
        bone = context.active_pose_bone
        if key in {"dqik.live_drag", "dqik.live_pin"} and bone is not None \
                and bone.id_data == self.live.obj:
            if key == "dqik.live_drag":
                self.dragged = bone.name
                self._drag_to_mouse(region, event)
            else:
                empty = self.live.pin(bone.name)
                self.report({'INFO'}, f"DQ IK Live: unpinned {bone.name}" if empty is None else
                            f"DQ IK Live: pinned {bone.name} ('{empty.name}')")
            return {'RUNNING_MODAL'}
        return {'PASS_THROUGH'}

    def _drag_event(self, context, event, region, key):
        """While dragging: the mouse over a viewport moves the point; a click, the drag key or
        the cancel key over a viewport lets go, keeping the pose, and is not passed on (a click
        would select); everything else passes through (navigation included)."""
        if region is not None and (event.type in _RELEASE_CLICKS
                                   or key in {"dqik.live_drag", "dqik.live_cancel"}):
            self.live.drag(None, None)
            self.dragged = None
            return {'RUNNING_MODAL'}
        if event.type == 'MOUSEMOVE':
            moved_over = _viewport_under(context, event)
            if moved_over is not None:
                self._drag_to_mouse(moved_over, event)
        return {'PASS_THROUGH'}

    def _drag_to_mouse(self, region, event):
        """The drag point: the mouse in the view plane through the dragged bone's tail, in the
        viewport region ``region`` it is over (any 3D Viewport, any quad-view quadrant)."""
        obj = self.live.obj
        tail = obj.matrix_world @ obj.pose.bones[self.dragged].tail
        point = view3d_utils.region_2d_to_location_3d(
            region, region.data, (event.mouse_x - region.x, event.mouse_y - region.y), tail)
        self.live.drag(self.dragged, point)

    def _tick(self, context):
        """The timer's tick; the header shows the last solve, this tick's or one that followed a
        depsgraph update since (``LivePosing.follow``)."""
        try:
            self.live.tick()
        except ArmatureError as err:
            _header(context, f"DQ IK Live: {err} | {_KEYS}")
            return
        snapshot = self.live.last
        if snapshot is None or snapshot is self.shown:
            return
        self.shown = snapshot
        largest = snapshot.largest_distance()
        worst = "–" if largest is None else f"{largest * 1e3:.3g} mm"
        warned = "" if not snapshot.warnings else \
            f" | {len(snapshot.warnings)} warnings: {snapshot.warnings[0]}"
        _header(
            context, f"DQ IK Live: largest error {worst}, {snapshot.iterations} iterations, "
            f"{snapshot.ms:.1f} ms{' (continues)' if snapshot.cut_short else ''}{warned} | {_KEYS}")

    def _finish(self, result, message, level='INFO'):
        self.live.stop()
        if message:
            self.report({level}, message)
        return result

    def cancel(self, _context):
        """Blender ends the operator (window closed): stop, keeping the pose (the timer and
        the header text go with ``LivePosing.stop``)."""
        self.live.stop()


def _viewport_under(context, event):
    """The main region of a 3D Viewport of the event's window under the mouse (a quadrant in
    quad view), or None; not where another region of the area (the sidebar, the toolbar, a
    header) lies over it, as they do with Region Overlap."""
    x, y = event.mouse_x, event.mouse_y

    def under(region):
        return region.x <= x < region.x + region.width and region.y <= y < region.y + region.height
    for area in context.window.screen.areas:
        if area.type != 'VIEW_3D' or not (area.x <= x < area.x + area.width
                                          and area.y <= y < area.y + area.height):
            continue
        if any(region.type != 'WINDOW' and region.width > 1 and under(region)
               for region in area.regions):
            return None
        return next((region for region in area.regions
                     if region.type == 'WINDOW' and under(region)), None)
    return None


def _header(context, text):
    """Set the header text of the 3D Viewport the event came from, if any: the area is taken
    from each event's context, never kept, since a closed area is freed."""
    area = getattr(context, "area", None)
    if area is not None:
        area.header_text_set(text)


def _clear_headers(manager):
    """Blender's own header back in every 3D Viewport of every window."""
    for window in manager.windows:
        for area in window.screen.areas:
            if area.type == 'VIEW_3D':
                area.header_text_set(None)


CLASSES = (DQIK_OT_live,)
