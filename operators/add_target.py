"""``dqik.add_target``: an Empty at the active bone's tail, made that bone's DQ IK target."""

import bpy

from ..dq_ik_addon.blender.authoring.target_empties import add_target_empty
from ..dq_ik_addon.blender.errors import run_reported
from ..dq_ik_addon.blender.rig.objects import active_armature
from .poll import editable_armature_with_active_bone


class DQIK_OT_add_target(bpy.types.Operator):
    """Create an Empty at the active bone's tail and make it that bone's DQ IK target"""

    bl_idname = "dqik.add_target"
    bl_label = "Add Target"
    bl_options = {'REGISTER', 'UNDO'}

    poll = classmethod(editable_armature_with_active_bone)

    def execute(self, context):
        return run_reported(self, lambda: self._add(context))

    def _add(self, context):
        obj = active_armature(context)
        bone = context.active_pose_bone
        before, subtarget = bone.dqik.target, bone.dqik.subtarget
        empty = add_target_empty(obj, bone)
        named = "" if before is None else before.name + (
            f" › {subtarget}" if before.type == 'ARMATURE' and subtarget else "")
        replaced = "" if before is None else f" in place of '{named}', which stays in the scene"
        self.report({'INFO'}, f"DQ IK: '{empty.name}' is now the target of {bone.name}{replaced}")
        return {'FINISHED'}


CLASSES = (DQIK_OT_add_target,)
