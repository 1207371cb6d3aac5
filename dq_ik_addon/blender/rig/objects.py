"""Which armature and bones an operation works on: the active object, whether it can be posed,
the selection (``PoseBone.select`` from Blender 5.0, ``Bone.select`` before)."""

import bpy

from ..errors import ArmatureError


def not_an_armature(obj):
    """Why ``obj`` is not an armature to work on (nothing, or another kind of object), or None."""
    if obj is None or obj.type != 'ARMATURE':
        return ("Select an armature: the active object is "
                + ("nothing" if obj is None else f"'{obj.name}', a {obj.type.lower()}"))
    return None


def not_editable(obj):
    """Why the armature ``obj`` cannot be posed (Edit Mode, linked, no bones), with what to do,
    or None."""
    if obj.mode == 'EDIT':
        return f"'{obj.name}' is in Edit Mode; switch to Pose or Object Mode first"
    if obj.library is not None:
        return (f"'{obj.name}' is linked from '{obj.library.filepath}' and cannot be posed; "
                "make a library override first (Object > Library Override)")
    if obj.pose is None:
        return f"'{obj.name}' has no pose yet; link it into a scene first"
    if len(obj.pose.bones) == 0:
        return f"'{obj.name}' has no bones"
    return None


def active_armature(context):
    """The armature to work on: the active object."""
    obj = context.active_object
    problem = not_an_armature(obj)
    if problem:
        raise ArmatureError(problem)
    return obj


def check_editable(obj):
    """Refuse edit mode, linked armatures and armatures without bones with a message that says
    what to do."""
    problem = not_editable(obj)
    if problem:
        raise ArmatureError(problem)


def is_selected(pose_bone):
    """Pose-mode selection (``PoseBone.select`` from Blender 5.0, ``Bone.select`` before)."""
    selected = getattr(pose_bone, "select", None)
    return pose_bone.bone.select if selected is None else selected


def select_only(obj, pose_bone):
    """Make ``pose_bone`` the active bone of ``obj`` and its only selected one, as a click on it
    in the viewport does (``PoseBone.select`` from Blender 5.0, ``Bone.select`` before)."""
    bones = obj.pose.bones if "select" in bpy.types.PoseBone.bl_rna.properties else obj.data.bones
    flags = [False] * len(bones)
    flags[bones.find(pose_bone.name)] = True
    bones.foreach_set("select", flags)
    obj.data.bones.active = pose_bone.bone


def target_pose_bones(obj, only_selected):
    """The pose bones an operator works on: all, or the selected ones (at least one)."""
    bones = [pb for pb in obj.pose.bones if not only_selected or is_selected(pb)]
    if not bones:
        raise ArmatureError(f"No bones of '{obj.name}' are selected; select some in Pose Mode "
                            "or turn off 'Only Selected'")
    return bones
