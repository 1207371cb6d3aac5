"""Read DQ IK's per-bone settings into engine inputs: tasks in armature space, limits, stiffness.

Targets are brought into armature space with ``armature.matrix_world⁻¹ · target.matrix_world``
(for a bone subtarget: ``· pose_bone.matrix``), so a moved, rotated or uniformly scaled armature
solves the same as one at the origin. Target orientations drop any scale.
"""

import numpy as np

from ..dq_ik_addon.limits import SwingTwistLimits
from ..dq_ik_addon.solver import SolverSettings
from ..dq_ik_addon.tasks import Task

_LIMIT_FIELDS = ("swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max",
                 "twist_min", "twist_max")


def target_matrix(obj, settings):
    """The task's goal in armature space (mathutils Matrix), or None with the reason."""
    target = settings.target
    if target is None:
        return None, "has no target"
    if not target.users_scene:
        return None, f"targets '{target.name}', which is in no scene (deleted?)"
    world = target.matrix_world.copy()
    if target.type == 'ARMATURE' and settings.subtarget:
        bone = target.pose.bones.get(settings.subtarget)
        if bone is None:
            return None, f"targets bone '{settings.subtarget}', which '{target.name}' does not have"
        world = world @ bone.matrix
    return obj.matrix_world.inverted_safe() @ world, None


def read_tasks(obj, model):
    """``(tasks, task_names, warnings)`` for every bone with ``use_target`` set.

    Like every reader here it walks ``obj.pose.bones`` in order, which is the order of
    ``model.names`` (``armature_bridge.read_model``)."""
    tasks, names, warnings = [], [], []
    for i, (name, pose_bone) in enumerate(zip(model.names, obj.pose.bones)):
        settings = pose_bone.dqik
        if not settings.use_target:
            continue
        if not (settings.use_position or settings.use_rotation):
            warnings.append(f"{name}: neither position nor rotation is enabled; skipped")
            continue
        matrix, problem = target_matrix(obj, settings)
        if matrix is None:
            warnings.append(f"{name} {problem}; skipped")
            continue
        values = np.array(matrix, dtype=np.float64)
        if not np.isfinite(values).all():
            warnings.append(f"{name}: target transform is not finite; skipped")
            continue
        position = values[:3, 3] if settings.use_position else None
        rotation = np.array(matrix.to_quaternion()) if settings.use_rotation else None
        tasks.append(Task(i, position, rotation, settings.priority, settings.weight,
                          settings.chain_count))
        names.append(name)
    return tasks, names, warnings


def read_limits(obj, model, bones=None):
    """SwingTwistLimits of every bone (disabled where ``use_limits`` is off); with ``bones``
    (indices) only those are read, the others are left disabled."""
    values = np.zeros((len(_LIMIT_FIELDS), len(model)))
    enabled = np.zeros(len(model), dtype=bool)
    pose_bones = obj.pose.bones
    for i in range(len(model)) if bones is None else bones.tolist():
        settings = pose_bones[i].dqik
        enabled[i] = settings.use_limits
        values[:, i] = [getattr(settings, f) for f in _LIMIT_FIELDS]
    return SwingTwistLimits(*values, enabled)


def read_stiffness(obj, bones=None):
    """Per bone, in pose-bone order: ``PoseBone.dqik.stiffness`` (with ``bones``, only those are
    read and the others are 0)."""
    pose_bones = obj.pose.bones
    stiffness = np.zeros(len(pose_bones))
    for i in range(len(pose_bones)) if bones is None else bones.tolist():
        stiffness[i] = pose_bones[i].dqik.stiffness
    return stiffness


def read_settings(obj, **overrides):
    s = obj.dqik
    return SolverSettings(max_iterations=s.max_iterations, tolerance=s.tolerance,
                          damping=s.damping, rest_weight=s.rest_weight, margin=s.margin,
                          **overrides)
