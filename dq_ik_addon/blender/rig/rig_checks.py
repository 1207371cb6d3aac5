"""What a production rig asks of a solve: bones it must not move, chains it cannot solve
through, and moved bones whose own transform Blender changes after the solve.

- Locked bones (all three rotation locks, as on Rigify's MCH bones) are never moved: their
  stiffness is 1.
- A bone that does not inherit rotation (``Bone.use_inherit_rotation`` off) keeps its
  orientation when the bones above it turn, so a chain that turns its parent cannot carry its
  tail along by rotation: the solver's Jacobian assumes every bone below a turning joint turns
  with it (``engine.jacobian``). Such a chain is refused, naming the bone; a chain that starts
  at that bone is fine (it turns in its parent's rest frame, ``bone_parent_transform``).
- Constraints and drivers on a moved bone change what Blender shows after the solve has
  written its channels; such bones are named in a warning (found when the solver is built,
  reported by every solve with it).
- Drivers that set pose channels (``driven_pose_channels``) write them back after the solve:
  a live tick reads those channels again even when it may take the others as it wrote them.
- What Blender shows is what was solved (``shown_as_solved``) unless such a bone is moved or
  carried to a task, or a bone above a task's chain follows a turned bone through a constraint
  or a driver: only then does ``dqik.solve`` evaluate the whole rig to measure its report.
"""

import numpy as np

from ...engine import joint_masks
from ..errors import ArmatureError
from ..settings.target_dependencies import acts, bones_followed, turned_bone_followed
from .arrays import read_array
from .channel_paths import bone_channel
from .pose import TRANSFORM_CHANNELS


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
    reasons = {name: "constraint " + ", ".join(f"'{c}'" for c in active)
               for name, active in _acting_constraints(obj, names).items()}
    for fcurve in _drivers(obj):
        name, channel = bone_channel(fcurve.data_path)
        if name in names and channel in TRANSFORM_CHANNELS:
            reasons.setdefault(name, f"a driver on {channel}")
    if not reasons:
        return None
    listed = "; ".join(f"{name} ({why})" for name, why in sorted(reasons.items()))
    return (f"bones the solve turns are changed again by Blender after it, so the targets may "
            f"not be met as shown: {listed}")


def riding_to_tasks(model, bones, moved, computed):
    """(n,) mask: the bones from each bone with a task (``bones``, names) up to the first bone
    the solve turns above it (``moved``; the task bones included, the turned one not) that the
    solve carries rigidly (``MovingJointsFK``'s riders, not ``computed`` by its FK: their
    offsets are taken from Blender's evaluated start)."""
    riding = np.zeros(len(model), dtype=bool)
    for name in bones:
        bone, path = model.index[name], []
        while bone >= 0 and not moved[bone]:
            path.append(bone)
            bone = model.parents[bone]
        if bone >= 0:
            riding[path] = True
    riding[computed] = False
    return riding


def shown_as_solved(obj, model, bones, moved, riding):
    """True when Blender, evaluating the pose a solve wrote, places the bones with tasks
    (``bones``, names) where the solve put them, so far as the rig's set-up tells:

    - no bone the solve turns (``moved``, (n,) mask) and no bone it carries rigidly between a
      turned bone and a task (``riding``, (n,) mask: its offset is taken from the pose Blender
      evaluated, whatever its constraints did there) has an acting constraint or a transform
      driver (as ``changed_after_solve``);
    - no bone above a task's chain follows a turned bone, or a bone below one, through a
      constraint (``target_dependencies.bones_followed``), or through a driver variable that
      reads the transform of a bone that is, or follows, such a bone.

    Read on every call (constraints and drivers change without any update callback), the
    drivers in one pass. A constraint on a bone the solve carries and evaluates from its
    channels is seen by ``Session.shown_as_solved``'s comparison of the start pose."""
    carried = {model.names[i] for i in np.flatnonzero(moved | riding)}
    if _acting_constraints(obj, carried):
        return False
    above = {model.names[i] for i in model.with_ancestors([model.index[name] for name in bones])}
    sources = set()
    for fcurve in _drivers(obj):
        owner, channel = bone_channel(fcurve.data_path)
        if owner in carried and channel in TRANSFORM_CHANNELS:
            return False
        if owner in above:
            sources.update(_transform_reads(obj, fcurve.driver))
    followed = {bone: via for bone, via in bones_followed(obj, [(obj, name) for name in set(bones)]).items()
                if via}
    if sources:
        via = ("a driver variable",)
        followed.update((bone, via) for bone in bones_followed(obj, [(obj, name) for name in sources]))
    return turned_bone_followed(model, followed, moved) is None


def _acting_constraints(obj, names):
    """{bone name: names of its enabled constraints with influence} for the bones ``names``
    that have any."""
    pose_bones = obj.pose.bones
    acting = {}
    for name in names:
        active = [c.name for c in pose_bones[name].constraints if acts(c)]
        if active:
            acting[name] = active
    return acting


def _transform_reads(obj, driver):
    """The bones of ``obj`` whose transform ``driver``'s variables read: a Transform Channel,
    Rotational Difference or Distance variable's bone, or a Single Property path to a bone's
    channels (not to a custom property)."""
    reads = set()
    for variable in driver.variables:
        for target in variable.targets:
            if target.id != obj:
                continue
            if variable.type == 'SINGLE_PROP':
                bone, channel = bone_channel(target.data_path)
                if channel and not channel.startswith("["):
                    reads.add(bone)
            elif target.bone_target:
                reads.add(target.bone_target)
    return reads


def driven_transforms(obj):
    """``{(bone name, channel)}``: the pose channels (``pose.POSE_CHANNELS``) that a driver of
    the armature sets, bone by bone; muted drivers, which Blender does not evaluate, left out."""
    named = (bone_channel(fcurve.data_path) for fcurve in _drivers(obj))
    return {(bone, channel) for bone, channel in named if channel in TRANSFORM_CHANNELS}


def driven_pose_channels(obj):
    """The names of the pose channels that a driver sets on some bone (``driven_transforms``):
    Blender writes their evaluated values back into the pose, also after a tick has written it,
    without an update that reports the armature."""
    return frozenset(channel for _, channel in driven_transforms(obj))


def _drivers(obj):
    """The armature object's drivers that are not muted."""
    data = obj.animation_data
    return () if data is None else [fcurve for fcurve in data.drivers if not fcurve.mute]
