"""``dqik.solve``: solve the current frame once, to convergence, and write the pose (undoable)."""

import math

import bpy
import numpy as np

from ..dq_ik_addon.solver import Solver, involved_bones
from .armature_bridge import ArmatureError, PoseArrays, active_armature, read_model
from .colliders import SceneObstacles, capsule_radii
from .reporting import run_reported
from .scene_tasks import bone_settings, read_joints, read_settings, read_tasks


def _millimetres(metres):
    return f"{metres * 1e3:.3g} mm"


_SOLVERS = {}  # armature object pointer → (what the solver was built from, the solver)


def _solver_key(model, tasks, limits, stiffness, settings, radii, collision, has_obstacles,
                self_collision):
    """Everything a Solver is built from except the targets, pose locations and obstacle query,
    by value (the model by identity: ``read_model`` returns the same one for an unchanged rig)."""
    arrays = [*limits, stiffness]
    if radii is not None:
        arrays += [radii, collision]
    return (id(model), tuple((t.bone, t.target_position is None, t.target_rotation is None,
                              t.priority, t.weight, t.chain_count) for t in tasks),
            np.concatenate(arrays).tobytes(), tuple(vars(settings).values()), has_obstacles,
            self_collision)


def build_solver(obj, model, pose, **overrides):
    """A Solver for the armature's enabled tasks (with its colliders), task names and warnings.

    The last Solver built for the armature is kept and reused, with the new targets, when
    nothing else it was built from has changed (compared by value, so any edit of a setting,
    limit, task or bone rebuilds it)."""
    settings_of_bones = bone_settings(obj)
    tasks, names, warnings = read_tasks(obj, model, settings_of_bones)
    if not tasks:
        raise ArmatureError(f"'{obj.name}' has no bone with an enabled DQ IK target"
                            + ("" if not warnings else ": " + "; ".join(warnings)))
    obstacles, radii, collision = None, None, None
    armature_settings = obj.dqik
    self_collision = armature_settings.use_self_collision
    if armature_settings.colliders is not None:
        obstacles = SceneObstacles(obj, bpy.context.evaluated_depsgraph_get(), warnings.append)
    if obstacles is not None or self_collision:
        radii, collision = capsule_radii(obj, model)
    bones = involved_bones(model, tasks, obstacles, radii, collision, self_collision)
    limits, stiffness = read_joints(obj, model, bones, settings_of_bones)
    settings = read_settings(obj, **overrides)
    key = _solver_key(model, tasks, limits, stiffness, settings, radii, collision,
                      obstacles is not None, self_collision)
    cached = _SOLVERS.get(obj.as_pointer())
    if cached is not None and cached[0] == key:
        solver = cached[1]
        solver.retarget(tasks, pose.location, obstacles)
    else:
        solver = Solver(model, tasks, limits, stiffness, settings, pose.location, obstacles, radii,
                        collision, self_collision)
        _SOLVERS[obj.as_pointer()] = (key, solver)
    return solver, names, warnings


def solve_armature(obj, **overrides):
    """Solve ``obj``'s tasks from its current pose and write the result. Returns the report."""
    model = read_model(obj)
    pose = PoseArrays(obj)
    solver, names, warnings = build_solver(obj, model, pose, **overrides)
    result = solver.solve(pose.rotations())
    pose.set_rotations(result.rotations, rows=solver.moved_mask)
    pose.write(obj)
    return result, names, warnings


class DQIK_OT_solve(bpy.types.Operator):
    """Solve the active armature's DQ IK tasks for the current frame and keep the pose"""

    bl_idname = "dqik.solve"
    bl_label = "Solve"
    bl_options = {'REGISTER', 'UNDO'}

    def execute(self, context):
        return run_reported(self, lambda: self._solve(context))

    def _solve(self, context):
        obj = active_armature(context)
        result, names, warnings = solve_armature(obj)
        for warning in warnings:
            self.report({'WARNING'}, warning)
        errors = ", ".join(
            f"{name} {_millimetres(p)}" + (f" {math.degrees(r):.3g}°" if r > 0 else "")
            for name, p, r in zip(names, result.position_errors.tolist(),
                                  result.rotation_errors.tolist()))
        state = "converged" if result.converged else "closest reachable"
        self.report({'INFO'}, f"DQ IK: {state} in {result.iterations} iterations; {errors}")
        return {'FINISHED'}


CLASSES = (DQIK_OT_solve,)
