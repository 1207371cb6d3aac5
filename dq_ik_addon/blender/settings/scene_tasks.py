"""Read DQ IK's per-bone settings into engine inputs: tasks in armature space, limits, stiffness.

Targets are brought into armature space with ``armature.matrix_world⁻¹ · target.matrix_world``
(for a bone subtarget: ``· pose_bone.matrix``), so a moved, rotated or uniformly scaled armature
solves the same as one at the origin. Target orientations drop any scale.
"""

import operator
from typing import NamedTuple

import bpy
import numpy as np

from ...engine import SolverSettings, SwingTwistLimits, Task
from ..errors import ArmatureError
from .target_dependencies import without_cycles
from .task_kinds import enabled_parts, labels
from .validation import (
    check_armature_settings,
    check_armature_transform,
    check_bone_settings,
    non_finite_coordinate,
    within_reach,
)

_LIMIT_FIELDS = ("swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max",
                 "twist_min", "twist_max")
_TASK_FIELDS = ("weight", "priority", "chain_count")


class TaskSource(NamedTuple):
    """One bone's task as its settings give it, read once per session build: all but where its
    target is, which ``aimed_tasks`` reads on every solve."""

    bone: int
    name: str
    target: object
    subtarget: str
    parts: tuple    # ((task_kinds.TaskKindEntry, options), ...): the kinds its settings enable
    priority: int
    weight: float
    chain_count: int
    partner: int    # another bone of the armature as the target, a loop's partner, or -1
    loop_parts: tuple   # the ``parts`` as a loop (``target_dependencies.without_cycles``)


def target_matrix(to_armature, source, view_layer=None):
    """The task's goal in armature space (mathutils Matrix; ``to_armature`` is the armature's
    ``matrix_world⁻¹``), or None with the reason. With ``view_layer``, a target it does not
    evaluate (``evaluated_in``) is refused: its ``matrix_world`` is stale, or the identity if it
    was never evaluated."""
    target = source.target
    if target is None:
        return None, "has no target"
    try:
        target_name = target.name
    except ReferenceError:
        return None, "targets an object that was deleted"
    if not isinstance(target, bpy.types.Object):
        return None, f"targets '{target_name}', which is not an object"
    if not _in_a_scene(target):
        return None, f"targets '{target_name}', which is in no scene (deleted?)"
    if view_layer is not None and not evaluated_in(view_layer, target):
        return None, (f"targets '{target_name}', which this view layer does not evaluate (an "
                      "excluded collection, Disable in Viewports, or another scene)")
    world = target.matrix_world.copy()
    if target.type == 'ARMATURE' and source.subtarget:
        bone = target.pose.bones.get(source.subtarget)
        if bone is None:
            return None, f"targets bone '{source.subtarget}', which '{target_name}' does not have"
        world = world @ bone.matrix
    far = non_finite_coordinate(world.translation)
    if far:
        return None, f"target location is not finite ({far})"
    return to_armature @ world, None


def evaluated_in(view_layer, obj):
    """True when ``view_layer``'s depsgraph evaluates ``obj``'s transform: it is in the view
    layer (not in an excluded collection, not only in another scene) and neither it nor a
    collection holding it is disabled in viewports. Hidden with the eye, it still is. (An
    object that a DQ IK pointer names is in the depsgraph anyway, through the ID property, but
    with its transform never evaluated: ``is_evaluated`` cannot tell.)"""
    if obj.visible_get(view_layer=view_layer):     # most targets: no search by name
        return True
    return view_layer.objects.get(obj.name) == obj and not obj.hide_viewport and not any(
        collection.hide_viewport for collection in obj.users_collection)


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


def task_sources(model, settings_of_bones):
    """``(sources, warnings)``: a ``TaskSource`` for every bone with ``use_target`` set and
    some task kind enabled (``task_kinds``), in pose-bone order (the order of ``model.names``,
    ``rig.model_reader.read_model``); ``settings_of_bones`` is ``bone_settings(obj)``. A weight,
    priority or chain length outside its range is refused (``validation.check_bone_settings``)."""
    sources, warnings = [], []
    for i in [i for i, settings in enumerate(settings_of_bones) if settings.use_target]:
        name, settings = model.names[i], settings_of_bones[i]
        partner = loop_partner(model, i, settings)
        parts = enabled_parts(settings, name)
        axisless = settings.use_position and not settings.position_axes and partner < 0
        if axisless:
            warnings.append(f"{name}: Position is on with no axis in Position Axes (X, Y or Z), "
                            "so its position is not solved" + ("" if parts else "; skipped"))
        if not parts:
            if not axisless:
                warnings.append(f"{name}: none of {labels()} is enabled; skipped")
            continue
        if settings.weight == 0.0:
            warnings.append(f"{name}: its weight is 0, so it pulls on nothing; skipped")
            continue
        sources.append(TaskSource(i, name, settings.target, settings.subtarget, parts,
                                  settings.priority, settings.weight, settings.chain_count,
                                  partner, enabled_parts(settings, name, True) if partner >= 0
                                  else ()))
    if sources:     # (a PropertyGroup's ``id_data`` is the armature object owning the bones)
        check_bone_settings(settings_of_bones[0].id_data, [s.name for s in sources],
                            _TASK_FIELDS, [(s.weight, s.priority, s.chain_count) for s in sources])
    return sources, warnings


def loop_partner(model, bone, settings):
    """The bone of the armature's own ``model`` that the bone ``bone``'s target is (its
    ``subtarget`` with the armature itself as ``target``) when it is not the bone, nor above
    it, nor below it: a loop's partner if the solve moves it (``target_dependencies``); else
    -1."""
    if settings.target != settings.id_data:
        return -1
    partner = model.index.get(settings.subtarget, -1)
    if partner < 0 or partner in model.with_ancestors([bone]) or bone in model.with_ancestors(
            [partner]):
        return -1
    return partner


def aimed_tasks(obj, sources, view_layer=None):
    """``(tasks, task_names, warnings)``: the engine ``Task`` of each part of every source whose
    target can be found (one per kind enabled, ``task_kinds.TASK_KINDS``), at the target's
    current place in armature space, with its bone's name; the others are named in a warning,
    and so is a target whose location or transform is not finite (NaN, or at least
    ``validation.FAR``, which includes Blender's stored inf) or that the view layer does not
    evaluate (``view_layer``; None: the context's, ``bpy.context.view_layer``). An armature
    whose world matrix is not finite or is singular is refused
    (``validation.check_armature_transform``)."""
    tasks, names, warnings = [], [], []
    check_armature_transform(obj)
    to_armature = obj.matrix_world.inverted_safe()
    view_layer = bpy.context.view_layer if view_layer is None else view_layer
    if sources:     # its objects synced (a target made just now) and evaluated
        bpy.context.evaluated_depsgraph_get()
    found = []      # (source, goal matrix) of the tasks with a target
    for source in sources:
        matrix, problem = target_matrix(to_armature, source, view_layer)
        if matrix is None:
            warnings.append(f"{source.name} {problem}; skipped")
        else:
            found.append((source, matrix))
    values = np.array([matrix for _, matrix in found], dtype=np.float64).reshape(-1, 4, 4)
    finite = within_reach(values).all(axis=(1, 2)).tolist()
    for (source, matrix), goal, is_finite in zip(found, values, finite):
        if not is_finite:
            warnings.append(f"{source.name}: target transform is not finite; skipped")
            continue
        aims = [entry.target(goal, matrix, options) for entry, options in source.parts]
        if not all(np.isfinite(aim).all() for aim in aims):
            warnings.append(f"{source.name}: the target's axes are scaled to zero or parallel, "
                            "so its Position Axes have no plane or line; skipped")
            continue
        tasks += [Task(entry.kind, source.bone, aim, source.priority, source.weight,
                       source.chain_count, options, source.partner)
                  for (entry, options), aim in zip(source.parts, aims)]
        names += [source.name] * len(source.parts)
    return tasks, names, warnings


def read_tasks(obj, model, settings_of_bones=None):
    """``(tasks, task_names, warnings)`` for every bone with ``use_target`` set, read at once,
    but those whose target the solve moves (``target_dependencies``; ``settings_of_bones`` is
    ``bone_settings(obj)`` if already fetched)."""
    every = bone_settings(obj) if settings_of_bones is None else settings_of_bones
    sources, warnings = task_sources(model, every)
    tasks, names, _, more = solved_tasks(obj, model, sources)
    return tasks, names, warnings + more


def solved_tasks(obj, model, sources, view_layer=None):
    """``(tasks, task_names, kept, warnings)``: the tasks of the ``sources`` whose targets the
    solve does not move (``kept``, ``target_dependencies.without_cycles``) at their targets'
    places now (``aimed_tasks``, in ``view_layer``), and a warning for each source left out."""
    kept, cycles = without_cycles(obj, model, sources)
    tasks, names, missing = aimed_tasks(obj, kept, view_layer)
    return tasks, names, kept, cycles + missing


def read_joints(obj, model, bones=None, settings_of_bones=None):
    """``(SwingTwistLimits, stiffness)`` of every bone in pose-bone order, both from one read of
    each bone's settings: limits disabled where ``use_limits`` is off, ``PoseBone.dqik.stiffness``.
    With ``bones`` (indices) only those are read, the others are left disabled and at 0;
    ``settings_of_bones`` is ``bone_settings(obj)`` if already fetched. A stiffness, or an
    enabled limit, outside its range is refused (``validation.check_bone_settings``)."""
    values = np.zeros((len(model), len(_JOINT_FIELDS)))
    every = bone_settings(obj) if settings_of_bones is None else settings_of_bones
    indices = np.arange(len(model)) if bones is None else np.asarray(bones)
    if len(indices):
        values[indices] = [_joint_settings(every[i]) for i in indices.tolist()]
        limited = indices[values[indices, 0] > 0.5]
        check_bone_settings(obj, [model.names[i] for i in indices.tolist()], ("stiffness",),
                            values[indices, -1:])
        check_bone_settings(obj, [model.names[i] for i in limited.tolist()], _LIMIT_FIELDS,
                            values[limited, 1:-1])
    return SwingTwistLimits(*values.T[1:-1], values[:, 0] > 0.5), values[:, -1]


_JOINT_FIELDS = ("use_limits", *_LIMIT_FIELDS, "stiffness")
_joint_settings = operator.attrgetter(*_JOINT_FIELDS)


_SOLVER_FIELDS = ("use_collisions", "colliders", "margin", "use_self_collision",
                  "max_iterations", "tolerance", "angular_tolerance", "damping", "rest_weight",
                  "soft_reach")
_armature_fields = operator.attrgetter(*_SOLVER_FIELDS)
_NUMERIC_SOLVER_FIELDS = ("margin", "max_iterations", "tolerance", "angular_tolerance",
                          "damping", "rest_weight", "soft_reach")


def armature_settings(obj):
    """The ``Object.dqik`` values a solver is built from, as a tuple (to compare by value)."""
    return _armature_fields(obj.dqik)


def collision_settings(obj):
    """``(collider collection or None, self collision)`` the solve avoids: neither while the
    armature's Collisions toggle (``Object.dqik.use_collisions``) is off."""
    settings = obj.dqik
    if not settings.use_collisions:
        return None, False
    colliders = settings.colliders
    if colliders is not None and not isinstance(colliders, bpy.types.Collection):
        raise ArmatureError(f"'{obj.name}': Colliders is '{colliders.name}', which is not a "
                            "collection (written as a raw ID property?); pick a collection")
    return colliders, settings.use_self_collision


def read_settings(obj):
    """The armature's ``SolverSettings``; a value outside its range is refused
    (``validation.check_armature_settings``)."""
    check_armature_settings(obj, _NUMERIC_SOLVER_FIELDS)
    s = obj.dqik
    return SolverSettings(max_iterations=s.max_iterations, tolerance=s.tolerance,
                          angular_tolerance=s.angular_tolerance, damping=s.damping,
                          rest_weight=s.rest_weight, margin=s.margin, soft_reach=s.soft_reach)
