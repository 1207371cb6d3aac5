"""3D Viewport sidebar (N) → DQ IK tab: the armature's solver and collision settings, and actions."""

import bpy


class DQIK_PT_sidebar(bpy.types.Panel):
    bl_label = "DQ IK"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "DQ IK"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == 'ARMATURE'

    def draw(self, context):
        settings = context.active_object.dqik
        layout = self.layout
        layout.use_property_split = True
        col = layout.column(align=True)
        col.operator("dqik.solve", icon='CON_KINEMATIC')
        col.operator("dqik.add_target", icon='EMPTY_AXIS')
        col.operator("dqik.build_chain", icon='ARMATURE_DATA')
        row = col.row(align=True)
        row.operator("dqik.apply_preset", text="Humanoid Limits", icon='OUTLINER_OB_ARMATURE')
        row.operator("dqik.import_limits", text="Import Limits", icon='IMPORT')

        col = layout.column(heading="Solver")
        col.prop(settings, "max_iterations")
        col.prop(settings, "tolerance")
        col.prop(settings, "damping")
        col.prop(settings, "rest_weight")

        col = layout.column(heading="Collision")
        col.prop(settings, "colliders")
        col.prop(settings, "margin")
        col.prop(settings, "use_self_collision")


CLASSES = (DQIK_PT_sidebar,)
