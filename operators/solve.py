"""``dqik.solve``: solve the current frame once, to convergence, and write the pose (undoable):
one tick of the armature's solving session (``dq_ik_addon/blender/solving/session.py``)."""

import bpy

from ..dq_ik_addon.blender.errors import run_reported
from ..dq_ik_addon.blender.rig.objects import active_armature
from ..dq_ik_addon.blender.solving.sessions import session_for
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
        """One tick from the pose Blender shows (evaluated first if a script changed something
        since); the report gives each task's error on the pose Blender shows after it
        (``Session.shown_result``: measured again only when a constraint or driver can move
        the bones with tasks after the solve)."""
        session = session_for(active_armature(context))
        context.evaluated_depsgraph_get()
        session.tick()
        snapshot = session.shown_result(context.view_layer.update)
        for warning in snapshot.warnings:
            self.report({'WARNING'}, warning)
        self.report({'INFO'}, f"DQ IK: {snapshot.describe()}")
        return {'FINISHED'}


CLASSES = (DQIK_OT_solve,)
