"""A session's engine ``Solver``, built from the rig's model, the tick's tasks and inputs: the
bones the tasks (and the colliders) involve, their joint limits and stiffness (locked bones
stiff), the bones that slide (``settings.translation``), the capsules that collide, and the
settings in the armature's units; with the warnings
about the rig that the build finds (``rig.rig_checks``, ``rig.constraint_followers``)."""

from dataclasses import replace

import numpy as np

from ...engine import Position, Solver, involved_bones
from ..colliders.capsules import capsule_radii
from ..rig.constraint_followers import local_sources, seen_bones, switched_away
from ..rig.rig_checks import changed_after_solve, check_chains, locked_bones
from ..settings.scene_tasks import read_joints, read_settings
from ..settings.translation import read_translation


def build_solver(inputs, model, tasks, names, pose, obstacles, colliders, switches, warnings):
    """``(solver, tolerances)``: a new engine ``Solver`` for ``tasks`` (of the bones ``names``)
    on ``model`` from the tick's ``inputs`` and ``pose``, and the Tolerance (metres) and Angle
    Tolerance (radians); ``colliders``: the ``ColliderCache`` of the skin radii; ``switches``:
    the bones whose constraints may switch what they follow. Locked bones stay, chains through
    a bone that does not inherit rotation are refused, and moved bones that Blender changes
    again after the solve, tasks whose chain has no bone that can turn, position tasks that
    Soft Reach does not ease (a chain that slides a bone), and task bones no
    deforming bone follows any more (an IK/FK switch) are named in ``warnings``
    (``rig_checks``)."""
    obj, self_collision = inputs.obj, inputs.self_collision
    radii, collision = None, None
    if obstacles is not None or self_collision:
        radii, collision = capsule_radii(obj, model, colliders)
        collision &= ~model.riders | seen_bones(obj)
    bones = involved_bones(model, tasks, obstacles, radii, collision, self_collision)
    limits, stiffness = read_joints(obj, model, bones)
    stiffness = np.where(locked_bones(obj), 1.0, stiffness)
    settings, unit = read_settings(obj), inputs.unit
    solver = Solver(model, tasks, limits, stiffness, in_armature_units(settings, unit),
                    pose.location, obstacles, radii, collision, self_collision, pose.scale,
                    pose.evaluated, read_translation(obj, model, bones, warnings),
                    local_sources(obj, model))
    check_chains(obj, model, tasks, solver.moved_mask)
    changed = changed_after_solve(obj, model, solver.moved_mask)
    if changed:
        warnings.append(changed)
    for name in sorted({names[k] for k in np.flatnonzero(solver.fixed_tasks)}):
        warnings.append(f"{name}: no bone of its chain can turn (every rotation locked, "
                        "Stiffness 1, or Chain Length too short); nothing moves it")
    if settings.soft_reach > 0.0:
        for name in sorted({names[k] for k, task in enumerate(tasks)
                            if solver.sliding_tasks[k] and issubclass(task.kind, Position)}):
            warnings.append(f"{name}: Soft Reach eases no chain that slides a bone (Translation "
                            "on), and this one does, so its reach is not eased")
    away = switched_away(obj, model, switches) if switches else {}
    for name, bone in sorted({(name, task.bone) for name, task in zip(names, tasks)
                              if task.bone in away}):
        warnings.append(f"{name}: {away[bone]}, which can follow it, follows another bone "
                        "now (its IK/FK switch is set to the other side), so the mesh will "
                        f"not follow {name}; switch that limb over")
    return solver, (settings.tolerance, settings.angular_tolerance)


def in_armature_units(settings, unit):
    """``SolverSettings`` given in metres with the Tolerance and Margin in the units of an
    armature of ``world_unit`` ``unit``; the Angle Tolerance stays in radians."""
    return replace(settings, tolerance=settings.tolerance / unit, margin=settings.margin / unit)
