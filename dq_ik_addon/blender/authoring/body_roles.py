"""The bones of a humanoid rig that carry the body, found by name for the Humanoid preset
(``dqik.apply_preset``): the pelvis, whose location the solve may move (a floating pelvis,
``PoseBone.dqik.use_translation``), and the feet, which carry the weight for Balance
(``PoseBone.dqik.use_support``)."""

import re

from .limit_presets import split_name

# The pelvis or root-motion bone: the metarig's ``spine`` (its root), a generated Rigify rig's
# ``torso``, Mixamo's ``Hips``, Unreal's ``pelvis``; the one nearest the root is taken
_PELVIS = re.compile(r"torso|hips|pelvis|spine", re.IGNORECASE)
# A foot: the metarig's ``foot.L``, a generated Rigify rig's deforming ``DEF-foot.L``, Mixamo's
# ``LeftFoot``, Unreal's ``foot_l``
_FOOT = re.compile(r"(?:def[-_.])?(?:foot|ankle)", re.IGNORECASE)


def pelvis_bone(obj):
    """The name of ``obj``'s pelvis bone (module docstring), or None: of the bones not connected
    to a parent whose name matches, the one with the fewest ancestors."""
    found = [(len(bone.parent_recursive), bone.name) for bone in obj.data.bones
             if not bone.use_connect and _PELVIS.fullmatch(split_name(bone.name)[0])]
    return min(found)[1] if found else None


def foot_bones(obj):
    """The names of ``obj``'s feet (module docstring): per side, the deforming bone named as a
    foot, else the first such bone."""
    found = {}
    for bone in obj.data.bones:
        base, side = split_name(bone.name)
        if side is not None and _FOOT.fullmatch(base):
            kept = found.get(side)
            if kept is None or (bone.use_deform and not obj.data.bones[kept].use_deform):
                found[side] = bone.name
    return sorted(found.values())
