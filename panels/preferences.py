"""Preferences › Add-ons › DQ IK: the keys of live posing (``operators/live_keys.py``), drawn as
Blender draws its own key map items, so they can be remapped there. Every other DQ IK setting
belongs to an armature or a bone, and lives with it."""

import bpy
import rna_keymap_ui

from ..operators.live_keys import KEYMAP


class DQIK_AP_preferences(bpy.types.AddonPreferences):
    """The extension's preferences: the live posing key map."""

    bl_idname = __package__.rpartition(".")[0]     # the extension's package

    def draw(self, context):
        layout = self.layout
        layout.label(text="Live posing keys (pressed over a 3D Viewport while Start Live runs)")
        keyconfig = context.window_manager.keyconfigs.user
        keymap = keyconfig.keymaps.get(KEYMAP)
        if keymap is None:
            layout.label(text="The key map is not loaded", icon='ERROR')
            return
        col = layout.column()
        for item in keymap.keymap_items:
            rna_keymap_ui.draw_kmi([], keyconfig, keymap, item, col, 0)


CLASSES = (DQIK_AP_preferences,)
