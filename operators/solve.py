"""``dqik.solve``: solve the current frame once, to convergence, and write the pose (undoable):
one tick of the armature's solving session (``bridge/session.py``)."""

import bpy

from ..bridge.armature import active_armature
from ..bridge.reporting import run_reported
from ..bridge.session import session_for
from .poll import editable_armature


class DQIK_OT_solve(bpy.types.Operator):
    """Solve the active armature's DQ IK tasks for the current frame and keep the pose"""

    bl_idname = "dqik.solve"
    bl_label = "Solve"
    bl_options = {'REGISTER', 'UNDO'}

    poll = classmethod(editable_armature)

    def execute(self, context):
        return run_reported(self, lambda: self._solve(context))

    def _solve(self, context):
        """One tick; the report gives each task's error on the pose Blender shows after it
        (the depsgraph evaluated here, which Blender would do next anyway)."""
        session = session_for(active_armature(context))
        session.tick()
        context.view_layer.update()
        snapshot = session.measure_shown()
        for warning in snapshot.warnings:
            self.report({'WARNING'}, warning)
        self.report({'INFO'}, f"DQ IK: {snapshot.describe()}")
        return {'FINISHED'}


CLASSES = (DQIK_OT_solve,)
