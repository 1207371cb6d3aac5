"""``dqik.build_chain``: read the active armature into the chain model and say what was found."""

import bpy

from ..dq_ik_addon.blender.colliders.obstacles import SceneObstacles
from ..dq_ik_addon.blender.errors import run_reported
from ..dq_ik_addon.blender.rig.objects import active_armature
from ..dq_ik_addon.blender.rig.pose import PoseArrays
from ..dq_ik_addon.blender.rig.reader import read_rig
from ..dq_ik_addon.blender.settings.scene_tasks import solved_tasks
from ..dq_ik_addon.blender.solving.scene_summary import rotational_dofs
from ..dq_ik_addon.blender.solving.sessions import session_for
from .poll import editable_armature


class DQIK_OT_build_chain(bpy.types.Operator):
    """Read the active armature into DQ IK's chain model and report bones, DOFs, tasks and colliders"""

    bl_idname = "dqik.build_chain"
    bl_label = "Build Chain"
    bl_options = {'REGISTER'}

    poll = classmethod(editable_armature)

    def execute(self, context):
        return run_reported(self, lambda: self._build(context))

    def _build(self, context):
        obj = active_armature(context)
        model, sources, warnings = read_rig(obj)     # the model the solve uses
        PoseArrays(obj)  # validates the pose values
        pose_bones = obj.pose.bones
        tasks, _names, _kept, left_out = solved_tasks(obj, model, sources)
        warnings += left_out
        if obj.dqik.use_collisions:
            colliders = SceneObstacles(obj, context.evaluated_depsgraph_get(), warnings.append,
                                       session_for(obj).obstacles.cache)
            obstacles = f"{colliders.count} colliders ({colliders.triangles()} triangles)"
        else:
            obstacles = "collisions off"
        for warning in warnings:
            self.report({'WARNING'}, warning)
        self.report({'INFO'}, f"DQ IK '{obj.name}': {len(model)} bones, "
                              f"{rotational_dofs(pose_bones)} rotational DOFs, "
                              f"{len(tasks)} tasks, {obstacles}, "
                              f"{len(model.levels) + 1} depth levels")
        return {'FINISHED'}


CLASSES = (DQIK_OT_build_chain,)
