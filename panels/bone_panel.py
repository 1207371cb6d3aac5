"""Bone Properties → DQ IK: the active pose bone's task, limits, stiffness, translation and
capsule."""

import bpy

from ..dq_ik_addon.blender.settings import task_kinds


def _active_pose_bone(context):
    obj = context.object
    bone = context.bone
    if obj is None or obj.type != 'ARMATURE' or bone is None:
        return None
    return obj.pose.bones.get(bone.name)


def draw_task_settings(col, settings):
    """A task's settings (``PoseBone.dqik``) in ``col``, greyed while the task is off; the Bone
    Properties panel and the sidebar's Tasks panel draw them alike."""
    col.active = settings.use_target
    col.prop(settings, "target")
    if settings.target is not None and settings.target.type == 'ARMATURE':
        col.prop_search(settings, "subtarget", settings.target.data, "bones")
    col.prop(settings, "priority")
    col.prop(settings, "weight")
    col.prop(settings, "chain_count")
    row = col.row(heading="Match")
    for setting in dict.fromkeys(entry.setting for entry in task_kinds.TASK_KINDS):
        row.prop(settings, setting, toggle=True)
    for entry in task_kinds.TASK_KINDS:
        if entry.option_setting is not None:
            sub = col.row()
            sub.active = getattr(settings, entry.setting)
            sub.prop(settings, entry.option_setting, expand=True)


class DQIK_PT_bone(bpy.types.Panel):
    bl_label = "DQ IK"
    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = "bone"

    @classmethod
    def poll(cls, context):
        return _active_pose_bone(context) is not None

    def draw(self, context):
        settings = _active_pose_bone(context).dqik
        layout = self.layout
        layout.use_property_split = True

        box = layout.box()
        row = box.row()
        row.prop(settings, "use_target")
        row.operator("dqik.add_target", icon='EMPTY_AXIS')
        draw_task_settings(box.column(), settings)

        box = layout.box()
        box.prop(settings, "use_limits")
        col = box.column(align=True)
        col.active = settings.use_limits
        for name in ("swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max",
                     "twist_min", "twist_max"):
            col.prop(settings, name)

        layout.prop(settings, "stiffness", slider=True)
        layout.prop(settings, "use_translation")
        row = layout.row(heading="Balance")
        row.prop(settings, "use_support")
        row.prop(settings, "mass")
        row = layout.row(heading="Collision")
        row.prop(settings, "use_collision", text="")
        sub = row.row()
        sub.active = settings.use_collision
        sub.prop(settings, "radius")


CLASSES = (DQIK_PT_bone,)
