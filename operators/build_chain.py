"""``dqik.build_chain`` (Check Rig): read the active armature as a solve would, refuse what a
solve would refuse, and say in plain words what the tasks will move."""

import bpy

from ..dq_ik_addon.blender.colliders.capsules import capsule_radii
from ..dq_ik_addon.blender.colliders.obstacles import SceneObstacles
from ..dq_ik_addon.blender.errors import no_task, run_reported
from ..dq_ik_addon.blender.rig.objects import active_armature
from ..dq_ik_addon.blender.rig.pose import PoseArrays
from ..dq_ik_addon.blender.rig.reader import read_rig
from ..dq_ik_addon.blender.rig.rig_checks import check_chains, locked_bones
from ..dq_ik_addon.blender.settings.balance import read_body
from ..dq_ik_addon.blender.settings.scene_tasks import read_joints, read_settings, solved_tasks
from ..dq_ik_addon.blender.settings.translation import read_translation
from ..dq_ik_addon.blender.settings.validation import check_armature_settings
from ..dq_ik_addon.blender.solving.sessions import session_for
from ..dq_ik_addon.engine import joint_masks
from .poll import editable_armature


class DQIK_OT_build_chain(bpy.types.Operator):
    """Check the active armature's DQ IK set-up without solving: what the tasks will move, and any setting a solve would refuse"""

    bl_idname = "dqik.build_chain"
    bl_label = "Check Rig"
    bl_options = {'REGISTER'}

    poll = classmethod(editable_armature)

    def execute(self, context):
        return run_reported(self, lambda: self._check(context))

    def _check(self, context):
        obj = active_armature(context)
        model, sources, warnings = read_rig(obj)     # the model the solve uses
        PoseArrays(obj)                              # the pose values
        read_settings(obj)                           # the solver settings, as a solve reads them
        check_armature_settings(obj, ("time_budget_ms",))
        _, stiffness = read_joints(obj, model)       # every bone's limits and stiffness
        tasks, names, _kept, left_out = solved_tasks(obj, model, sources)
        warnings += left_out
        cache = session_for(obj).obstacles.cache
        if obj.dqik.use_collisions:
            capsule_radii(obj, model, cache)
            colliders = SceneObstacles(obj, context.evaluated_depsgraph_get(), warnings.append,
                                       cache)
            obstacles = f"{colliders.count} colliders ({colliders.triangles()} triangles)"
        else:
            obstacles = "collisions off"
        if obj.dqik.use_balance:
            read_body(obj, model, cache, 1.0)
        if not tasks:
            raise no_task(obj, warnings)
        moved = joint_masks(model, tasks).any(axis=0)
        turning = moved & ~locked_bones(obj) & (stiffness < 1.0)
        check_chains(obj, model, tasks, turning)
        turned = int(turning.sum())
        slides = read_translation(obj, model, moved.nonzero()[0], warnings)
        slid = 0 if slides is None else int(slides.any(axis=1).sum())
        for warning in warnings:
            self.report({'WARNING'}, warning)
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        self.report({'INFO'}, f"DQ IK '{obj.name}': {len(model)} bones, {len(tasks)} tasks"
                              + (f" ({shown})" if names else "")
                              + f"; they can turn {turned} bones"
                              + (f" and move {slid}" if slid else "")
                              + f"; {obstacles}; every setting can be solved")
        return {'FINISHED'}


CLASSES = (DQIK_OT_build_chain,)
