"""3D Viewport sidebar (N) → DQ IK tab: actions, the armature's last solve, and its solver and
collision settings."""

import bpy

from ..bridge.session import last_result_of

_STATUS_ICONS = {'MET': 'CHECKMARK', 'CLOSEST': 'INFO', 'ERROR': 'ERROR'}


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

        snapshot = last_result_of(context.active_object)
        if snapshot is not None:
            box = layout.box().column(align=True)
            box.label(text=f"Last solve, {snapshot.ms:.1f} ms", icon=_STATUS_ICONS[snapshot.status])
            if snapshot.error:
                box.label(text=snapshot.error)
            else:
                box.label(text=f"{snapshot.iterations} iterations")
                for task in snapshot.tasks:
                    box.label(text=task.describe())

        col = layout.column(heading="Solver")
        col.prop(settings, "max_iterations")
        col.prop(settings, "tolerance")
        col.prop(settings, "damping")
        col.prop(settings, "rest_weight")
        col.prop(settings, "use_solve_on_frame_change")

        col = layout.column(heading="Collision")
        col.prop(settings, "colliders")
        col.prop(settings, "margin")
        col.prop(settings, "use_self_collision")


CLASSES = (DQIK_PT_sidebar,)
