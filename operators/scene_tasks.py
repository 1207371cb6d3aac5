"""Read DQ IK's per-bone settings into engine inputs: tasks in armature space, limits, stiffness.

Targets are brought into armature space with ``armature.matrix_world⁻¹ · target.matrix_world``
(for a bone subtarget: ``· pose_bone.matrix``), so a moved, rotated or uniformly scaled armature
solves the same as one at the origin. Target orientations drop any scale.
"""

import operator

import bpy
import numpy as np

from ..dq_ik_addon.limits import SwingTwistLimits
from ..dq_ik_addon.solver import SolverSettings
from ..dq_ik_addon.tasks import Task

_LIMIT_FIELDS = ("swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max",
                 "twist_min", "twist_max")


def target_matrix(to_armature, settings):
    """The task's goal in armature space (mathutils Matrix; ``to_armature`` is the armature's
    ``matrix_world⁻¹``), or None with the reason."""
    target = settings.target
    if target is None:
        return None, "has no target"
    if not _in_a_scene(target):
        return None, f"targets '{target.name}', which is in no scene (deleted?)"
    world = target.matrix_world.copy()
    if target.type == 'ARMATURE' and settings.subtarget:
        bone = target.pose.bones.get(settings.subtarget)
        if bone is None:
            return None, f"targets bone '{settings.subtarget}', which '{target.name}' does not have"
        world = world @ bone.matrix
    return to_armature @ world, None


def _in_a_scene(obj):
    """``obj.users_scene`` is not empty. That property lists every scene's objects in Python,
    O(objects) per call, so each scene's own lookup by name (in C, compared by pointer) goes first;
    ``users_scene`` only decides what that misses (a name shared with a linked object)."""
    name = obj.name
    return any(scene.objects.get(name) == obj for scene in bpy.data.scenes) \
        or bool(obj.users_scene)


def bone_settings(obj):
    """Every pose bone's ``PoseBone.dqik`` settings, in pose-bone order: fetched once for the
    readers below (each fetch costs about as much as reading three of its values)."""
    return [pose_bone.dqik for pose_bone in obj.pose.bones]


def read_tasks(obj, model, settings_of_bones=None):
    """``(tasks, task_names, warnings)`` for every bone with ``use_target`` set.

    Like every reader here it walks ``obj.pose.bones`` in order, which is the order of
    ``model.names`` (``armature_bridge.read_model``); ``settings_of_bones`` is
    ``bone_settings(obj)`` if already fetched."""
    tasks, names, warnings = [], [], []
    every = bone_settings(obj) if settings_of_bones is None else settings_of_bones
    to_armature = obj.matrix_world.inverted_safe()
    found = []      # (bone, name, settings, goal matrix) of the tasks with a target
    for i in [i for i, settings in enumerate(every) if settings.use_target]:
        name, settings = model.names[i], every[i]
        if not (settings.use_position or settings.use_rotation):
            warnings.append(f"{name}: neither position nor rotation is enabled; skipped")
            continue
        matrix, problem = target_matrix(to_armature, settings)
        if matrix is None:
            warnings.append(f"{name} {problem}; skipped")
            continue
        found.append((i, name, settings, matrix))
    values = np.array([matrix for *_, matrix in found], dtype=np.float64).reshape(-1, 4, 4)
    finite = np.isfinite(values).all(axis=(1, 2)).tolist()
    for (i, name, settings, matrix), goal, is_finite in zip(found, values, finite):
        if not is_finite:
            warnings.append(f"{name}: target transform is not finite; skipped")
            continue
        position = goal[:3, 3] if settings.use_position else None
        rotation = np.array(matrix.to_quaternion()) if settings.use_rotation else None
        tasks.append(Task(i, position, rotation, settings.priority, settings.weight,
                          settings.chain_count))
        names.append(name)
    return tasks, names, warnings


def read_joints(obj, model, bones=None, settings_of_bones=None):
    """``(SwingTwistLimits, stiffness)`` of every bone in pose-bone order, both from one read of
    each bone's settings: limits disabled where ``use_limits`` is off, ``PoseBone.dqik.stiffness``.
    With ``bones`` (indices) only those are read, the others are left disabled and at 0;
    ``settings_of_bones`` is ``bone_settings(obj)`` if already fetched."""
    values = np.zeros((len(model), len(_JOINT_FIELDS)))
    every = bone_settings(obj) if settings_of_bones is None else settings_of_bones
    indices = range(len(model)) if bones is None else bones.tolist()
    if len(indices):
        values[indices] = [_joint_settings(every[i]) for i in indices]
    return SwingTwistLimits(*values.T[1:-1], values[:, 0] > 0.5), values[:, -1]


_JOINT_FIELDS = ("use_limits", *_LIMIT_FIELDS, "stiffness")
_joint_settings = operator.attrgetter(*_JOINT_FIELDS)


def read_settings(obj, **overrides):
    s = obj.dqik
    return SolverSettings(max_iterations=s.max_iterations, tolerance=s.tolerance,
                          damping=s.damping, rest_weight=s.rest_weight, margin=s.margin,
                          **overrides)
