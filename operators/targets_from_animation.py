"""``dqik.targets_from_animation``: target Empties keyed where the effector bones are in the
animation (how: ``dq_ik_addon/blender/authoring/animation_targets.py``)."""

import bpy
from bpy.props import IntProperty

from ..dq_ik_addon.blender.authoring.animation_targets import targets_from_animation
from ..dq_ik_addon.blender.errors import ArmatureError, run_reported
from ..dq_ik_addon.blender.rig.objects import active_armature, is_selected
from .poll import editable_armature


class DQIK_OT_targets_from_animation(bpy.types.Operator):
    """Key a target for each selected bone (or each bone with a task) on every frame, where the bone is in the animation, so the targets start out met"""

    bl_idname = "dqik.targets_from_animation"
    bl_label = "Targets from Animation"
    bl_options = {'REGISTER', 'UNDO'}

    poll = classmethod(editable_armature)

    frame_start: IntProperty(name="Start", description="First frame to key (0 with End 0: the "
                             "scene's range)", default=0)
    frame_end: IntProperty(name="End", description="Last frame to key", default=0)

    def execute(self, context):
        return run_reported(self, lambda: self._make(context))

    def _make(self, context):
        obj, scene = active_armature(context), context.scene
        bones = [pb for pb in obj.pose.bones if is_selected(pb)] or \
            [pb for pb in obj.pose.bones if pb.dqik.use_target]
        if not bones:
            raise ArmatureError(f"Select the effector bones of '{obj.name}' (hands, feet) in Pose "
                                "Mode, or give bones a task first")
        first, last = (self.frame_start, self.frame_end) if (self.frame_start, self.frame_end) \
            != (0, 0) else (scene.frame_start, scene.frame_end)
        done = targets_from_animation(obj, scene, bones, first, last)
        made = sum(new for *_, new in done)
        self.report({'INFO'}, f"DQ IK: {len(done)} targets keyed on frames {first}–{last} "
                    f"({made} new, {len(done) - made} reused): "
                    + ", ".join(f"{bone} → {target}" for bone, target, _ in done))
        return {'FINISHED'}


CLASSES = (DQIK_OT_targets_from_animation,)
