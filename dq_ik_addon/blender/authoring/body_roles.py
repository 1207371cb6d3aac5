"""The bones of a humanoid rig that carry the body, found by name for the Humanoid preset
(``dqik.apply_preset``): the pelvis, whose location the solve may move (a floating pelvis,
``PoseBone.dqik.use_translation``)."""

import re

from .limit_presets import split_name

# The pelvis or root-motion bone: the metarig's ``spine`` (its root), a generated Rigify rig's
# ``torso``, Mixamo's ``Hips``, Unreal's ``pelvis``; the one nearest the root is taken
_PELVIS = re.compile(r"torso|hips|pelvis|spine", re.IGNORECASE)


def pelvis_bone(obj):
    """The name of ``obj``'s pelvis bone (module docstring), or None: of the bones not connected
    to a parent whose name matches, the one with the fewest ancestors."""
    found = [(len(bone.parent_recursive), bone.name) for bone in obj.data.bones
             if not bone.use_connect and _PELVIS.fullmatch(split_name(bone.name)[0])]
    return min(found)[1] if found else None
