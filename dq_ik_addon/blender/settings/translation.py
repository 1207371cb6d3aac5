"""The bones a solve may slide (``PoseBone.dqik.use_translation``: a floating pelvis, the virtual
root joint of Bartelink's thesis §7.1) and the location axes it may slide them along: those
``PoseBone.lock_location`` leaves free."""

import numpy as np

from ..rig.arrays import read_array
from .scene_tasks import bone_settings


def read_translation(obj, model, bones, warnings):
    """(n,3) 1 on each free location axis of the bones ``bones`` (indices of the modelled ones)
    with Translation on, else 0; None when no bone slides. A bone connected to its parent (whose
    tail holds its head), without Local Location (whose location Blender applies in its
    parent's axes) or with every location axis locked is named in ``warnings`` and does not
    slide."""
    every = bone_settings(obj)
    sliding = [i for i in np.asarray(bones).tolist() if every[i].use_translation]
    if not sliding:
        return None
    free = np.zeros((len(model), 3))
    free[sliding] = ~read_array(obj.pose.bones, "lock_location", 3, dtype=bool)[sliding]
    for i in sliding:
        why = _unmovable(model, i, free[i])
        if why:
            free[i] = 0.0
            warnings.append(f"{model.names[i]}: Translation is on but the bone {why}; "
                            "its location is kept")
    return free if free.any() else None


def _unmovable(model, bone, free):
    """Why the solve cannot slide ``bone`` (its ``free`` location axes), or None."""
    if model.connected[bone]:
        return "is connected to its parent, so it has no location to move (Bone > Relations > " \
            "Connected)"
    if not model.flags.local_location[bone]:
        return "has Local Location off (Bone > Relations); turn it on"
    if not free.any():
        return "has its location locked on every axis (Transform > Lock)"
    return None
