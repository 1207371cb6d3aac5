"""``poll`` of the ``dqik.*`` operators: cheap checks of the context that never raise; when one
fails, ``poll_message_set`` says why, as Blender's own operators do (``bpy.types.Operator.poll``,
https://docs.blender.org/api/current/bpy.types.Operator.html)."""

from ..dq_ik_addon.blender.rig.objects import not_an_armature, not_editable


def editable_armature(cls, context):
    """The active object is an armature that can be posed (not in Edit Mode, not linked, with
    bones)."""
    obj = getattr(context, "active_object", None)
    problem = not_an_armature(obj) or not_editable(obj)
    if problem:
        cls.poll_message_set(problem)
    return problem is None


def editable_armature_with_active_bone(cls, context):
    """``editable_armature``, and one of its bones is active."""
    if not editable_armature(cls, context):
        return False
    bone = getattr(context, "active_pose_bone", None)
    if bone is None or bone.id_data != context.active_object:
        cls.poll_message_set("Select the bone that should get a target (Pose Mode, click a bone)")
        return False
    return True
