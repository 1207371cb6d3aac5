"""What a production rig asks of a solve: bones it must not move, chains it cannot solve
through, and moved bones whose own transform Blender changes after the solve.

- Locked bones (all three rotation locks, as on Rigify's MCH bones) are never moved: their
  stiffness is 1.
- A bone that does not inherit rotation (``Bone.use_inherit_rotation`` off) keeps its
  orientation when the bones above it turn, so a chain that turns its parent cannot carry its
  tail along by rotation: the solver's Jacobian assumes every bone below a turning joint turns
  with it (``ik_engine.jacobian``). Such a chain is refused, naming the bone; a chain that starts
  at that bone is fine (it turns in its parent's rest frame, ``bone_parent_transform``).
- Constraints and drivers on a moved bone change what Blender shows after the solve has
  written its channels; such bones are named once in a warning.
"""

import numpy as np

from ..ik_engine.tasks.task_set import joint_masks
from .armature import POSE_CHANNELS, ArmatureError, read_array

_TRANSFORM_CHANNELS = {channel for channel, _ in POSE_CHANNELS}


def locked_bones(obj):
    """(n,) True for the pose bones with all three rotation axes locked."""
    return read_array(obj.pose.bones, "lock_rotation", 3, dtype=bool).all(axis=1)


def check_chains(obj, model, tasks, moved):
    """Refuse a task whose chain turns the parent of a bone that does not inherit rotation.
    ``moved`` (n,) marks the bones the solve turns."""
    masks = joint_masks(model, tasks)
    parents = model.parents
    hinged = ~model.flags.inherit_rotation & (parents >= 0)
    turned = hinged & moved[np.maximum(parents, 0)]
    for task, mask in zip(tasks, masks):
        blocked = np.flatnonzero(mask & turned & mask[np.maximum(parents, 0)])
        if blocked.size:
            bone = model.names[int(blocked[-1])]
            raise ArmatureError(
                f"'{obj.name}': the chain of '{model.names[task.bone]}' runs through '{bone}', "
                "which does not inherit rotation (Bone > Relations), so turning the bones above "
                f"it cannot move it; end the chain at '{bone}' (a shorter Chain Length) or turn "
                "on Inherit Rotation")


def changed_after_solve(obj, model, moved):
    """A warning naming the moved bones whose enabled constraints or drivers change their own
    transform (what the user sees is then not what was solved), or None."""
    names = {model.names[i] for i in np.flatnonzero(moved)}
    reasons = {}
    pose_bones = obj.pose.bones
    for name in names:
        active = [c.name for c in pose_bones[name].constraints if c.enabled and c.influence > 0.0]
        if active:
            reasons[name] = "constraint " + ", ".join(f"'{c}'" for c in active)
    drivers = obj.animation_data.drivers if obj.animation_data else ()
    for fcurve in drivers:
        path = fcurve.data_path
        if path.startswith('pose.bones["') and not fcurve.mute:
            name, _, channel = path[len('pose.bones["'):].partition('"].')
            if name in names and channel in _TRANSFORM_CHANNELS:
                reasons.setdefault(name, f"a driver on {channel}")
    if not reasons:
        return None
    listed = "; ".join(f"{name} ({why})" for name, why in sorted(reasons.items()))
    return (f"bones the solve turns are changed again by Blender after it, so the targets may "
            f"not be met as shown: {listed}")
