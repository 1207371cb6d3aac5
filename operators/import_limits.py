"""``dqik.import_limits``: turn Blender's own IK settings into DQ IK settings (what is converted
and how: ``dq_ik_addon/blender/authoring/ik_import.py``)."""

import bpy
from bpy.props import BoolProperty

from ..dq_ik_addon.blender.authoring.ik_import import (
    ImportNotes,
    import_aim_task,
    import_bone_limits,
    import_ik_task,
    shown,
)
from ..dq_ik_addon.blender.errors import run_reported
from ..dq_ik_addon.blender.rig.objects import active_armature, target_pose_bones
from .poll import editable_armature


class DQIK_OT_import_limits(bpy.types.Operator):
    """Turn Blender's IK limits, locks and stiffness, Limit Rotation, IK, Damped Track and Track To constraints into DQ IK limits and tasks"""

    bl_idname = "dqik.import_limits"
    bl_label = "Import IK Limits"
    bl_options = {'REGISTER', 'UNDO'}

    poll = classmethod(editable_armature)

    only_selected: BoolProperty(
        name="Only Selected",
        description="Import only the selected bones' settings",
        default=False,
    )
    mute_constraints: BoolProperty(
        name="Mute Converted Constraints",
        description="Mute the IK and tracking constraints turned into DQ IK tasks, so they do "
        "not fight DQ IK (unmute them to go back)",
        default=True,
    )

    def execute(self, context):
        return run_reported(self, lambda: self._import(context))

    def _import(self, context):
        obj = active_armature(context)
        notes = ImportNotes()
        for pb in target_pose_bones(obj, self.only_selected):
            import_bone_limits(pb, notes)
            mechanism = not shown(pb.bone)
            for con in pb.constraints:
                if con.mute:
                    continue
                if mechanism and con.type in {'IK', 'DAMPED_TRACK', 'TRACK_TO'}:
                    notes.left.append(f"{pb.name} ({con.name})")
                elif con.type == 'IK':
                    import_ik_task(pb, con, self.mute_constraints, notes)
                elif con.type in {'DAMPED_TRACK', 'TRACK_TO'}:
                    import_aim_task(pb, con, self.mute_constraints, notes)
        if not notes.changed():
            self.report({'WARNING'}, notes.summary(obj.name) + " (nothing to import)")
            return {'CANCELLED'}
        self.report({'WARNING'} if notes.widened or notes.lost else {'INFO'}, notes.summary(obj.name))
        return {'FINISHED'}


CLASSES = (DQIK_OT_import_limits,)
