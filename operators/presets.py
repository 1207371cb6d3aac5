"""``dqik.apply_preset``: anatomical swing/twist limits for humanoid rigs, found by bone name
(how: ``dq_ik_addon/blender/authoring/limit_presets.py``), and a floating pelvis
(``authoring/body_roles.py``)."""

import bpy
from bpy.props import BoolProperty, EnumProperty

from ..dq_ik_addon.blender.authoring.body_roles import foot_bones, pelvis_bone
from ..dq_ik_addon.blender.authoring.limit_presets import plan_preset
from ..dq_ik_addon.blender.errors import ArmatureError, run_reported
from ..dq_ik_addon.blender.rig.objects import (
    active_armature,
    is_selected,
    target_pose_bones,
)
from .poll import editable_armature


def _names(names, limit=5):
    shown = ", ".join(names[:limit])
    return shown + (f", … ({len(names) - limit} more)" if len(names) > limit else "")


class DQIK_OT_apply_preset(bpy.types.Operator):
    """Give the armature's bones anatomical swing/twist limits, recognised by bone name (Rigify, Mixamo, common names), and its pelvis Translation"""

    bl_idname = "dqik.apply_preset"
    bl_label = "Humanoid Limits"
    bl_options = {'REGISTER', 'UNDO'}

    poll = classmethod(editable_armature)

    preset: EnumProperty(
        name="Preset",
        items=(('HUMANOID', "Humanoid",
                "Anatomical ranges (AAOS and others) for spine, neck, head, arms, legs and fingers"),),
        default='HUMANOID',
    )
    only_selected: BoolProperty(
        name="Only Selected",
        description="Set limits only on the selected bones (the ranges still account for the whole rig)",
        default=False,
    )
    enable_limits: BoolProperty(
        name="Enable Limits",
        description="Switch limits on for the bones that get ranges (off: only fill in the ranges)",
        default=True,
    )

    def execute(self, context):
        return run_reported(self, lambda: self._apply(context))

    def _apply(self, context):
        obj = active_armature(context)
        pelvis = pelvis_bone(obj)       # it carries the body's own place and turn: no limits
        plan, unmatched = plan_preset(obj, self.preset, pelvis)
        if not plan:
            raise ArmatureError(f"No bone of '{obj.name}' has a name the {self.preset.title()} preset "
                                "recognises (Rigify, Mixamo or common names such as upperarm_l)")
        bones = target_pose_bones(obj, self.only_selected)
        limited = [pb.name for pb in bones if pb.name in plan]
        for name in limited:
            plan[name][1].write(obj.pose.bones[name].dqik, self.enable_limits)
        skipped = [name for name in unmatched if not self.only_selected
                   or is_selected(obj.pose.bones[name])]
        chosen = {pb.name for pb in bones}
        if pelvis in chosen:
            obj.pose.bones[pelvis].dqik.use_translation = True
        feet = [name for name in foot_bones(obj) if name in chosen]
        for name in feet:
            obj.pose.bones[name].dqik.use_support = True
        message = (f"DQ IK: {self.preset.title()} limits on {len(limited)} bones of '{obj.name}'"
                   + (f", Translation on {pelvis}" if pelvis in chosen else "")
                   + (f", Support on {' and '.join(feet)}" if feet else "")
                   + f"; {len(skipped)} bones unmatched")
        self.report({'INFO'}, message + (f" ({_names(skipped)})" if skipped else ""))
        return {'FINISHED'}


CLASSES = (DQIK_OT_apply_preset,)
