"""Bones that follow other bones through a constraint, re-parented for the solve.

A production rig's deform and mechanism bones seldom hang from the controls the animator poses.
On a generated Rigify rig, ``ORG-hand.L`` is a child of ``ORG-forearm.L``, and its constraints
copy the world transform of ``hand_fk.L`` (or, in IK mode, of the IK chain); the finger bones
hang below it through ``DEF-hand.L``, which copies ``hand_tweak.L``, and so on. By Blender's
parenting alone the fingers do not move with the FK arm, so a solve that keeps the arm out of a
wall would leave them inside it.

A bone *follows* another when the last of its constraints that acts (not muted, influence above
0) is a Copy Transforms with full influence from a bone of the same armature, owner and target
in world space, mixing by replacing: Blender then sets the bone's matrix to the target's
(``copy_transforms_evaluate`` in ``source/blender/blenkernel/intern/constraint.cc``; at a point
along it with Head/Tail), whatever came before. Such a bone moves rigidly with the bone it
copies. Stretch To and Damped Track constraints after it are passed over: they only turn the
bone about its head towards a target (and stretch it), as on Rigify's deform bones, each of which
copies a tweak bone and stretches to the next one along the limb; the bone is carried as the
bone it copies, its aim as it stood before the solve (as every rider, below). Without this, a generated Rigify rig's
deforming legs and arms would ride the spine instead of the FK limbs in the solve's model: the
feet a balance stands on would slide with the hips.

A bone *keeps* another's rotation when the last of its acting constraints, Copy Scale aside, is a
Copy Rotation from a bone of the same armature, owner and target in world space, replacing, on
every axis and inverting none: its world rotation is then the target's
(``rotation_evaluate``, ``constraint.cc``), or at an influence w below 1 that far of the way
from its own, while its parent carries it in place, as Rigify's ``MCH-ROT-head`` keeps the head
at the torso's rotation whatever the neck and chest do (Head Follow 0) and ``MCH-ROT-neck``
half of it (Neck Follow 0.5). The solve's model takes it so (``ChainModel.keeps`` and
``keep_weights``, ``engine.kept_rotations``, ``moving_joints_fk``), and the centre of mass
Balance holds is then where Blender puts the head. The influence is read with the rig; a
driven one (Rigify's Neck Follow and Head Follow) is compared on every solve, as an IK/FK switch
is (``switch_bones``).

``followed_model`` gives the solving session's model: each follower re-parented to the bone it
copies, it and every bone below it a *rider* (``ChainModel.riders``): the solve carries it on its
nearest moved ancestor as it stood before the solve, ``M_i = M_a · (M_a⁻¹ M_i)_start``
(``engine.moving_joints_fk.MovingJointsFK``), so its capsule is kept out of colliders with the limb. A
follower above a bone with a task (or a dragged bone) keeps its own parent: the task's chain and
forward kinematics follow Blender's parenting. Re-parenting that would close a loop is skipped.
Of the riders, the bones kept out of colliders (``Session``) are those the user sees: the
deforming bones (``Bone.use_deform``: what the mesh follows) and the bones shown (not hidden,
in a visible bone collection or in none: the controls). A Rigify hand carries its fingers four
times over (controls, mechanism, original and deform bones), all in the same place; the
mechanism and original layers, hidden, are left out.

What is read: the constraints' influence as last evaluated (drivers included, as Blender copies
them back to the original data), when the session reads the rig. An IK/FK switch changes which
constraint acts last on a bone with several (Rigify's ORG limb bones copy the FK control, then
the IK chain with an influence the IK/FK slider drives): the session compares the muting and
influence of the driven constraints of bones with a Copy Transforms on every solve
(``switches_key``: about 0.06 ms on a generated Rigify rig, 19 constraints) and reads the rig again when they changed. A
constraint added later, or an influence changed by hand, is taken at the next rebuild
(``Session.invalidate``, a DQ IK setting changed, a rig edit). Bones below a follower ride whatever their own inherit
flags; a bone below one that does not inherit rotation or scale is carried as if it did (its
capsule only: no task is on it).
"""

import re

import bpy
import numpy as np

from ..settings.target_dependencies import acts
from .channel_paths import bone_channel
from .rig_checks import driven_transforms

_WORLD = 'WORLD'
# Constraints that only turn (and stretch) a bone about its head towards a target (module docstring)
_AIMING = frozenset({'STRETCH_TO', 'DAMPED_TRACK'})


def followed_model(obj, model, task_bones):
    """``model`` (Blender's parenting, ``rig.model_reader.read_model``) with the followers of ``obj``
    re-parented and ridden (module docstring); ``task_bones``: indices of the bones with tasks,
    which no rider may be above."""
    copied = copied_bones(obj, model)
    parents = model.parents.copy()
    followers = np.zeros(len(model), dtype=bool)
    for bone in np.flatnonzero(copied >= 0).tolist():
        if not _is_below(parents, int(copied[bone]), bone):
            parents[bone], followers[bone] = copied[bone], True
    while True:
        riders = _below(parents, followers)
        above_tasks = followers & _above(parents, task_bones)
        if not above_tasks.any():
            break
        parents[above_tasks] = model.parents[above_tasks]
        followers &= ~above_tasks
    keeps, weights = rotation_sources(obj, model)
    if not followers.any() and not (keeps >= 0).any():
        return model
    return model.followed(parents, riders, keeps, weights)


_SWITCHED = frozenset({'COPY_TRANSFORMS', 'COPY_ROTATION'})
_SWITCH_CHANNEL = re.compile(r'^constraints\["(.+)"\]\.(influence|mute)$')


def switch_bones(obj):
    """``(pose bone index, constraint name)`` of the constraints whose influence or muting a
    driver sets, on bones with a Copy Transforms or a Copy Rotation: what can switch the bone a
    bone follows (Rigify's IK/FK slider drives them) or the share of a rotation it keeps (its
    Neck Follow and Head Follow)."""
    data, pose_bones = obj.animation_data, obj.pose.bones
    found = set()
    for fcurve in () if data is None else data.drivers:
        name, channel = bone_channel(fcurve.data_path)
        match = None if name is None else _SWITCH_CHANNEL.match(channel)
        if match is None:
            continue
        bone = pose_bones.find(name)
        if bone >= 0 and any(c.type in _SWITCHED for c in pose_bones[bone].constraints):
            found.add((bone, match.group(1)))
    return sorted(found)


def switches_key(obj, switches):
    """The muting and influence of the constraints ``switches`` (``switch_bones``), None for
    one that is gone."""
    pose_bones = obj.pose.bones
    count = len(pose_bones) if switches else 0
    key = []
    for bone, name in switches:
        constraint = pose_bones[bone].constraints.get(name) if bone < count else None
        key.append(None if constraint is None else (constraint.mute, constraint.influence))
    return tuple(key)


def switched_away(obj, model, switches):
    """``{bone index: owner name}``: the bones a switching bone (one of ``switches``, e.g.
    Rigify's ORG-hand.L, with a Copy Transforms from the FK control and one from the IK chain)
    can copy but copies no longer, and that bone: the controls of a limb whose IK/FK switch is
    set to the other side (moving them moves no deforming bone)."""
    pose_bones = obj.pose.bones
    sources = {}
    for bone in {bone for bone, _ in switches}:
        for constraint in pose_bones[bone].constraints:
            if constraint.type == 'COPY_TRANSFORMS' and constraint.target == obj:
                sources.setdefault(model.index.get(constraint.subtarget, -1),
                                   pose_bones[bone].name)
    copied = set(copied_bones(obj, model).tolist())
    return {bone: owner for bone, owner in sources.items() if bone >= 0 and bone not in copied}


def copied_bones(obj, model):
    """(n,) int: for each bone of ``model`` (pose-bone order), the index of the bone whose world
    transform it copies whole (module docstring), or -1."""
    copied = np.full(len(model), -1, dtype=np.int64)
    for i, pose_bone in enumerate(obj.pose.bones):
        constraints = pose_bone.constraints
        if not constraints:
            continue
        acting = [c for c in constraints if acts(c)]
        while acting and acting[-1].type in _AIMING:
            acting.pop()
        if not acting:
            continue
        last = acting[-1]
        if last.type == 'COPY_TRANSFORMS' and last.influence >= 1.0 and last.target == obj \
                and last.owner_space == _WORLD and last.target_space == _WORLD \
                and last.mix_mode == 'REPLACE':
            copied[i] = model.index.get(last.subtarget, -1)
    return copied


def rotation_sources(obj, model):
    """``(sources, weights)``, (n,) each: for each bone of ``model`` (pose-bone order), the index
    of the bone whose world rotation it takes, or -1, and the share it takes, the constraint's
    influence (module docstring: a *keeper*)."""
    sources = np.full(len(model), -1, dtype=np.int64)
    weights = np.ones(len(model))
    for i, pose_bone in enumerate(obj.pose.bones):
        acting = [c for c in pose_bone.constraints if acts(c)]
        while acting and acting[-1].type == 'COPY_SCALE':
            acting.pop()
        last = acting[-1] if acting else None
        if last is not None and last.type == 'COPY_ROTATION' \
                and last.target == obj and last.owner_space == _WORLD \
                and last.target_space == _WORLD and last.mix_mode == 'REPLACE' \
                and last.use_x and last.use_y and last.use_z \
                and not (last.invert_x or last.invert_y or last.invert_z):
            sources[i] = model.index.get(last.subtarget, -1)
            weights[i] = min(last.influence, 1.0)
    return sources, weights


def local_sources(obj, model):
    """(n,) int: for each bone of ``model`` (pose-bone order) whose acting constraints all work
    in its local space, copying the local transform of one bone of the same armature (Copy
    Transforms, Rotation, Location or Scale, owner and target in local space: Rigify's
    ``MCH-spine.002`` and ``.003`` take half of the chest's, ``MCH-spine`` and ``.001`` half of
    the hips'), with or without Limit constraints in local space, the bone it copies, else -1.
    The bone it copies has no acting constraint of its own, and no driver sets a channel of
    either: such a bone's local transform is then a function of the two bones' channels alone.
    Where the solve turns neither, it is what Blender evaluated (``moving_joints_fk``), so the
    chains through it hang as Blender shows them, before and after the solve."""
    bones, driven = obj.pose.bones, {bone for bone, _ in driven_transforms(obj)}
    sources = np.full(len(model), -1, dtype=np.int64)
    for i, pose_bone in enumerate(bones):
        acting = [c for c in pose_bone.constraints if acts(c)]
        copied = {c.subtarget for c in acting if c.type in _LOCAL_COPIES}
        source = bones.get(next(iter(copied))) if len(copied) == 1 else None
        if source is not None and all(c.owner_space == _LOCAL and (
                c.type in _LOCAL_LIMITS or c.type in _LOCAL_COPIES and c.target == obj
                and c.target_space == _LOCAL) for c in acting) \
                and not any(acts(c) for c in source.constraints) \
                and not {pose_bone.name, source.name} & driven:
            sources[i] = model.index.get(source.name, -1)
    return sources


_LOCAL = 'LOCAL'
_LOCAL_COPIES = frozenset({'COPY_TRANSFORMS', 'COPY_ROTATION', 'COPY_LOCATION', 'COPY_SCALE'})
_LOCAL_LIMITS = frozenset({'LIMIT_ROTATION', 'LIMIT_LOCATION', 'LIMIT_SCALE'})


def seen_bones(obj):
    """(n,) bool, pose-bone order: the bones that deform (``Bone.use_deform``) or are shown
    (not hidden: ``PoseBone.hide`` from Blender 5.0, ``Bone.hide`` before; and in a visible bone
    collection or in none), read when the solver is built (hiding a bone or a collection is
    taken at the next rebuild)."""
    return np.array([_seen(pose_bone) for pose_bone in obj.pose.bones], dtype=bool)


_POSE_BONE_HIDE = "hide" in bpy.types.PoseBone.bl_rna.properties   # Blender 5.0 on: H hides it


def _seen(pose_bone):
    bone = pose_bone.bone
    if bone.use_deform:
        return True
    collections = bone.collections
    hidden = pose_bone.hide if _POSE_BONE_HIDE else bone.hide
    return not hidden and (not collections or any(c.is_visible_effectively
                                                  for c in collections))


def _is_below(parents, bone, ancestor):
    """True when ``ancestor`` is ``bone`` or one of its ancestors under ``parents``."""
    while bone >= 0:
        if bone == ancestor:
            return True
        bone = parents[bone]
    return False


def _below(parents, marked):
    """(n,) bool: the ``marked`` bones and every bone below one of them."""
    below = marked.copy()
    for _ in range(len(parents)):
        grown = below | ((parents >= 0) & below[np.maximum(parents, 0)])
        if np.array_equal(grown, below):
            return below
        below = grown
    return below


def _above(parents, bones):
    """(n,) bool: ``bones`` and all their ancestors."""
    above = np.zeros(len(parents), dtype=bool)
    for bone in bones:
        while bone >= 0 and not above[bone]:
            above[bone] = True
            bone = parents[bone]
    return above
