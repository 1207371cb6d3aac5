"""Properties › Object Data → DQ IK, for an armature: the armature-wide settings of the sidebar's
sub-panels (``sidebar.SETTINGS``: Solver, Collision, Balance, Solve on Frame Change, Overlay;
not Live, which starts over a 3D Viewport only), drawn by the same code, where Blender keeps an armature's own settings. The tasks and
actions stay in the sidebar, beside the bones they pose."""

import bpy

from .sidebar import settings_panels


class _DataPanel:
    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = "data"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == 'ARMATURE' and context.object == obj


class DQIK_PT_data(_DataPanel, bpy.types.Panel):
    """DQ IK's settings for this armature; its tasks and actions are in the 3D Viewport's sidebar
    (N) › DQ IK."""

    bl_label = "DQ IK"

    def draw(self, _context):
        self.layout.label(text="Tasks and actions: 3D Viewport › Sidebar (N) › DQ IK")


# Live starts only over a 3D Viewport: its panel stays in the sidebar
CLASSES = (DQIK_PT_data, *settings_panels("DQIK_PT_data", _DataPanel, "DQIK_PT_data",
                                          without=("live",)))
