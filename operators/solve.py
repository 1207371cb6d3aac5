"""``dqik.solve``: solve the current frame once, to convergence, and write the pose (undoable)."""

import bpy
import numpy as np

from ..dq_ik_addon.solver import Solver, involved_bones
from .armature_bridge import ArmatureError, PoseArrays, active_armature, read_model
from .colliders import SceneObstacles, capsule_radii
from .reporting import run_reported
from .scene_tasks import read_limits, read_settings, read_stiffness, read_tasks


def _millimetres(metres):
    return f"{metres * 1e3:.3g} mm"


def build_solver(obj, model, pose, **overrides):
    """A Solver for the armature's enabled tasks (with its colliders), task names and warnings."""
    tasks, names, warnings = read_tasks(obj, model)
    if not tasks:
        raise ArmatureError(f"'{obj.name}' has no bone with an enabled DQ IK target"
                            + ("" if not warnings else ": " + "; ".join(warnings)))
    obstacles, radii, collision = None, None, None
    self_collision = obj.dqik.use_self_collision
    if obj.dqik.colliders is not None:
        obstacles = SceneObstacles(obj, bpy.context.evaluated_depsgraph_get(), warnings.append)
    if obstacles is not None or self_collision:
        radii, collision = capsule_radii(obj, model)
    bones = involved_bones(model, tasks, obstacles, radii, collision, self_collision)
    solver = Solver(model, tasks, read_limits(obj, model, bones), read_stiffness(obj, bones),
                    read_settings(obj, **overrides), pose.location, obstacles, radii, collision,
                    self_collision)
    return solver, names, warnings


def solve_armature(obj, **overrides):
    """Solve ``obj``'s tasks from its current pose and write the result. Returns the report."""
    model = read_model(obj)
    pose = PoseArrays(obj)
    solver, names, warnings = build_solver(obj, model, pose, **overrides)
    result = solver.solve(pose.rotations())
    moved = np.zeros(len(model), dtype=bool)
    moved[solver.moved_bones] = True
    pose.set_rotations(result.rotations, rows=moved)
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
            f"{name} {_millimetres(p)}" + (f" {np.degrees(r):.3g}°" if r > 0 else "")
            for name, p, r in zip(names, result.position_errors, result.rotation_errors))
        state = "converged" if result.converged else "closest reachable"
        self.report({'INFO'}, f"DQ IK: {state} in {result.iterations} iterations; {errors}")
        return {'FINISHED'}


CLASSES = (DQIK_OT_solve,)
