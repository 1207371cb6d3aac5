"""``dqik.plant``: hold keyed targets still over their effector's contact phases (how:
``dq_ik_addon/blender/authoring/plant.py``)."""

import bpy
from bpy.props import FloatProperty, IntProperty

from ..dq_ik_addon.blender.authoring.plant import keyed_span, plant
from ..dq_ik_addon.blender.errors import ArmatureError, run_reported
from ..dq_ik_addon.blender.rig.objects import active_armature, is_selected
from .poll import editable_armature


class DQIK_OT_plant(bpy.types.Operator):
    """Hold the selected bones' keyed targets still wherever the effector is low and slow (a foot on the ground), easing in and out"""

    bl_idname = "dqik.plant"
    bl_label = "Plant"
    bl_options = {'REGISTER', 'UNDO'}

    poll = classmethod(editable_armature)

    height: FloatProperty(name="Height", description="A contact is at most this high above the "
                          "target's lowest point", default=0.03, min=0.0, subtype='DISTANCE',
                          unit='LENGTH')
    speed: FloatProperty(name="Speed", description="A contact moves slower than this (metres "
                         "per second)", default=0.2, min=0.0)
    min_frames: IntProperty(name="Minimum Frames", description="Shorter contacts are ignored",
                            default=5, min=1)
    blend: IntProperty(name="Blend", description="Frames to ease in and out of each contact",
                       default=3, min=0)
    frame_start: IntProperty(name="Start", description="First frame to plant (0 with End 0: "
                             "every frame each target is keyed on)", default=0)
    frame_end: IntProperty(name="End", description="Last frame to plant", default=0)

    def execute(self, context):
        return run_reported(self, lambda: self._plant(context))

    def _plant(self, context):
        obj, scene = active_armature(context), context.scene
        bones = [pb for pb in obj.pose.bones if is_selected(pb) and pb.dqik.target is not None]
        if not bones:
            raise ArmatureError(f"Select bones of '{obj.name}' whose targets to plant (feet), "
                                "made with Targets from Animation")
        found = []
        for pose_bone in bones:
            target = pose_bone.dqik.target
            span = (self.frame_start, self.frame_end)
            phases = plant(target, scene, *(keyed_span(target) if span == (0, 0) else span),
                           self.height, self.speed, self.blend, self.min_frames)
            found.append(f"{pose_bone.name}: {len(phases)} ("
                         + ", ".join(f"{p.first}–{p.last}" for p in phases) + ")")
        self.report({'INFO'}, "DQ IK: contacts held, " + "; ".join(found))
        return {'FINISHED'}


CLASSES = (DQIK_OT_plant,)
