"""``dqik.solve``: solve the current frame once, to convergence, and write the pose (undoable):
one tick of the armature's solving session (``bridge/session.py``)."""

import math

import bpy

from ..bridge.armature import active_armature
from ..bridge.reporting import run_reported
from ..bridge.session import session_for
from .poll import editable_armature


def _millimetres(metres):
    return f"{metres * 1e3:.3g} mm"


class DQIK_OT_solve(bpy.types.Operator):
    """Solve the active armature's DQ IK tasks for the current frame and keep the pose"""

    bl_idname = "dqik.solve"
    bl_label = "Solve"
    bl_options = {'REGISTER', 'UNDO'}

    poll = classmethod(editable_armature)

    def execute(self, context):
        return run_reported(self, lambda: self._solve(context))

    def _solve(self, context):
        snapshot = session_for(active_armature(context)).tick()
        for warning in snapshot.warnings:
            self.report({'WARNING'}, warning)
        errors = ", ".join(
            f"{task.name} {_millimetres(task.position_error)}"
            + (f" {math.degrees(task.rotation_error):.3g}°" if task.rotation_error > 0 else "")
            for task in snapshot.tasks if task.status != 'MISSING')
        state = "converged" if snapshot.converged else "closest reachable"
        self.report({'INFO'}, f"DQ IK: {state} in {snapshot.iterations} iterations; {errors}")
        return {'FINISHED'}


CLASSES = (DQIK_OT_solve,)
