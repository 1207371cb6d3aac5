"""``dqik.add_target``: an Empty at the active bone's tail, made that bone's DQ IK target."""

import bpy

from ..bridge.armature import active_armature
from ..bridge.reporting import run_reported
from .poll import editable_armature_with_active_bone


def add_target_empty(obj, pose_bone):
    """Create the Empty at the bone's posed tail, oriented like the bone, in the armature's
    collection; enable the bone's task with it. Returns the Empty."""
    empty = bpy.data.objects.new(f"{pose_bone.name} target", None)
    empty.empty_display_type = 'SPHERE'
    empty.empty_display_size = max(pose_bone.bone.length * 0.25, 1e-3)
    collection = obj.users_collection[0] if obj.users_collection else \
        bpy.context.scene.collection
    collection.objects.link(empty)
    world = obj.matrix_world @ pose_bone.matrix
    empty.matrix_world = world.normalized()
    empty.location = obj.matrix_world @ pose_bone.tail
    settings = pose_bone.dqik
    settings.target, settings.subtarget, settings.use_target = empty, "", True
    return empty


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
        empty = add_target_empty(obj, bone)
        self.report({'INFO'}, f"DQ IK: '{empty.name}' is now the target of {bone.name}")
        return {'FINISHED'}


CLASSES = (DQIK_OT_add_target,)
