"""Target Empties: the object a bone's DQ IK task pulls to, made where the bone's tail stands
(``dqik.add_target``, and the pin of live posing)."""

import bpy

from ..rig.model_reader import world_unit


def add_target_empty(obj, pose_bone):
    """Create the Empty at the bone's posed tail, oriented like the bone, in the armature's
    collection, drawn a quarter of the bone's length in the world (the armature's scale
    included: a Mixamo import's 0.01); enable the bone's task with it. Returns the Empty."""
    empty = bpy.data.objects.new(f"{pose_bone.name} target", None)
    empty.empty_display_type = 'SPHERE'
    empty.empty_display_size = max(pose_bone.bone.length * world_unit(obj) * 0.25, 1e-3)
    collection = obj.users_collection[0] if obj.users_collection else \
        bpy.context.scene.collection
    collection.objects.link(empty)
    world = obj.matrix_world @ pose_bone.matrix
    empty.matrix_world = world.normalized()
    empty.location = obj.matrix_world @ pose_bone.tail
    settings = pose_bone.dqik
    settings.target, settings.subtarget, settings.use_target = empty, "", True
    return empty
