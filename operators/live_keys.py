"""The keys of live posing (``dqik.live``), in a key map of their own (``KEYMAP``) that
Preferences › Add-ons › DQ IK shows and lets the user remap (``panels/preferences.py``).

Blender lets an add-on add no modal key map (``KeyConfig.keymaps.new(modal=True)`` is refused
for the add-on key configuration), so the key map is an ordinary one that no editor evaluates:
the live operator's modal handler, which sees every event first, matches each press against its
items in the user's key configuration (``action``), as a modal key map would be matched. Each
item names one of the operators below, which do the same from F3 or a button while live posing
runs.

Defaults: **Enter** keeps the pose, **Esc** puts it back, **Shift Alt D** drags the active bone,
**Shift Alt P** pins or unpins it: none of them is a key Blender's default key map gives the
3D Viewport in Pose Mode (D alone would take Blender's D-drag annotation away while live runs).
"""

import bpy

from ..dq_ik_addon.blender.solving import live_posing

KEYMAP = "DQ IK Live"
DEFAULT_KEYS = (("dqik.live_keep", 'RET', {}), ("dqik.live_keep", 'NUMPAD_ENTER', {}),
                ("dqik.live_cancel", 'ESC', {}),
                ("dqik.live_drag", 'D', {"shift": True, "alt": True}),
                ("dqik.live_pin", 'P', {"shift": True, "alt": True}))
_ADDED = []     # (key map, item) pairs this extension added


class _WhileLive:
    """An operator that acts on the live posing that runs on the active armature."""

    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        live = live_posing.running()
        if live is None or live.obj != context.active_object:
            cls.poll_message_set("Works while Start Live runs on the active armature")
            return False
        return True


class DQIK_OT_live_keep(_WhileLive, bpy.types.Operator):
    """Keep the live pose and stop live posing"""

    bl_idname = "dqik.live_keep"
    bl_label = "Keep Live Pose"

    def execute(self, context):
        changed = live_posing.running().confirm(context)
        self.report({'INFO'}, f"DQ IK Live: pose kept ({len(changed)} bones changed)")
        return {'FINISHED'}


class DQIK_OT_live_cancel(_WhileLive, bpy.types.Operator):
    """Put the pose back as it was when live posing started, and stop"""

    bl_idname = "dqik.live_cancel"
    bl_label = "Cancel Live Pose"

    def execute(self, _context):
        live_posing.running().cancel()
        self.report({'INFO'}, "DQ IK Live: pose restored")
        return {'FINISHED'}


class DQIK_OT_live_pin(_WhileLive, bpy.types.Operator):
    """Pin the active bone where its tail stands (a target), or take its pin back"""

    bl_idname = "dqik.live_pin"
    bl_label = "Pin Bone"

    def execute(self, context):
        bone = context.active_pose_bone
        if bone is None:
            self.report({'ERROR'}, "Select the bone to pin")
            return {'CANCELLED'}
        empty = live_posing.running().pin(bone.name)
        self.report({'INFO'}, f"DQ IK Live: unpinned {bone.name}" if empty is None else
                    f"DQ IK Live: pinned {bone.name} ('{empty.name}')")
        return {'FINISHED'}


class DQIK_OT_live_drag(_WhileLive, bpy.types.Operator):
    """Drag the active bone's tail with the mouse while live posing runs (its key, pressed over a
    3D Viewport); a click or the key again lets go, keeping the pose"""

    bl_idname = "dqik.live_drag"
    bl_label = "Drag Bone"

    def execute(self, _context):
        self.report({'INFO'}, "DQ IK Live: press the Drag Bone key over a 3D Viewport to drag the "
                              "active bone with the mouse")
        return {'CANCELLED'}


def action(context, event):
    """The ``bl_idname`` of the live key map's item that ``event`` presses (in the user's key
    configuration, so remapped keys count), or None."""
    keyconfigs = context.window_manager.keyconfigs
    keymap = keyconfigs.user.keymaps.get(KEYMAP) or keyconfigs.addon.keymaps.get(KEYMAP)
    if keymap is None or event.value != 'PRESS' or event.is_repeat:
        return None
    for item in keymap.keymap_items:
        if item.active and item.type == event.type and all(
                getattr(item, key) in (-1, getattr(event, key))
                for key in ("shift", "ctrl", "alt", "oskey")):
            return item.idname
    return None


def register_keymap():
    """Add the key map and its default items to the add-on key configuration (none in a
    Blender without one, as in background mode)."""
    keyconfig = bpy.context.window_manager.keyconfigs.addon
    if keyconfig is None:
        return
    keymap = keyconfig.keymaps.new(name=KEYMAP, space_type='EMPTY', region_type='WINDOW')
    for idname, key, modifiers in DEFAULT_KEYS:
        _ADDED.append((keymap, keymap.keymap_items.new(idname, key, 'PRESS', **modifiers)))


def unregister_keymap():
    for keymap, item in _ADDED:
        keymap.keymap_items.remove(item)
    _ADDED.clear()


CLASSES = (DQIK_OT_live_keep, DQIK_OT_live_cancel, DQIK_OT_live_pin, DQIK_OT_live_drag)
