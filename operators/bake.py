"""``dqik.bake``: solve every frame of a range and key the result, a thin shell over
``dq_ik_addon/blender/keys/baking.py``.

From the interface (``invoke``) the frames are solved a few at a time on a window timer, so
Blender's progress indicator (``WindowManager.progress_update``) and the status bar
(``WorkSpace.status_text_set``) show how far it got and Esc cancels, putting back the frame and
the pose (nothing was keyed yet). From a script (``execute``) it runs to the end. Either way the
whole bake is one undo step (``'UNDO'``), as Blender's modal operators with that flag are
(https://docs.blender.org/api/current/bpy.types.Operator.html).
"""

import time

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty

from ..dq_ik_addon.blender.errors import ArmatureError, run_reported
from ..dq_ik_addon.blender.keys.bake_options import BakeOptions
from ..dq_ik_addon.blender.keys.baking import FrameBake
from ..dq_ik_addon.blender.rig.objects import active_armature
from .poll import editable_armature

_SLICE_SECONDS = 0.05   # frames solved per timer event: as many as fit in this


class DQIK_OT_bake(bpy.types.Operator):
    """Solve the DQ IK tasks on every frame of a range and key the solved bones (Esc cancels)"""

    bl_idname = "dqik.bake"
    bl_label = "Bake"
    bl_options = {'REGISTER', 'UNDO'}

    frame_start: IntProperty(name="Start Frame", description="First frame to bake",
                             default=1)
    frame_end: IntProperty(name="End Frame", description="Last frame to bake (inclusive)",
                           default=250)
    step: IntProperty(name="Frame Step", description="Bake every this many frames",
                      default=1, min=1, max=120)
    bones: EnumProperty(
        name="Bones", default='TASK_CHAINS',
        items=[('TASK_CHAINS', "Task Chains", "The bones the enabled tasks move"),
               ('SELECTED', "Selected", "The selected bones (the others of them keyed as "
                                        "animated)"),
               ('ALL', "All", "Every bone (the ones the solve does not move keyed as animated)")])
    action: EnumProperty(
        name="Keys Into", default='NEW',
        items=[('NEW', "New Action", "A DQ IK action; the active action moves to an NLA track "
                                     "and keeps playing under it"),
               ('ACTIVE', "Active Action", "The active action (a copy of it from before is "
                                           "kept)")])
    frames: EnumProperty(
        name="Frames", default='STEP',
        items=[('STEP', "Every Step", "Every Frame Step frames"),
               ('KEYED', "Keyed Frames", "The frames where the armature, a target or a collider has a key, and "
                                         "the range's ends")])
    cleanup_tolerance: FloatProperty(
        name="Clean Up", description="Drop keys where every task stays within this distance "
        "of where the solve put it, and no limb sinks deeper into a collider than the solve had "
        "it by more (0: keep every key)",
        default=0.0, min=0.0, soft_max=0.01, subtype='DISTANCE', unit='LENGTH', precision=5)
    switch_off_tasks: BoolProperty(
        name="Switch Tasks Off", description="Afterwards, switch the baked tasks (Balance too) "
        "and Solve on Frame Change off, so the keys play on their own", default=True)

    interactive: BoolProperty(options={'HIDDEN', 'SKIP_SAVE'}, default=False)

    poll = classmethod(editable_armature)

    def _options(self):
        return BakeOptions(self.frame_start, self.frame_end, self.step, self.bones, self.action,
                           self.frames, self.cleanup_tolerance, self.switch_off_tasks)

    def execute(self, context):
        """From a script (or in background mode): the whole bake, to the end. After the dialog
        of ``invoke``: the interactive bake (progress, Esc)."""
        self._fill_range(context)
        if self.interactive and not bpy.app.background and context.window is not None:
            return self._start_modal(context)

        def bake():
            baker = FrameBake(active_armature(context), context.scene, self._options())
            return self._finish(baker.finish())
        return run_reported(self, bake)

    def _fill_range(self, context):
        """A range not given is the scene's."""
        if not self.properties.is_property_set("frame_start"):
            self.frame_start = context.scene.frame_start
        if not self.properties.is_property_set("frame_end"):
            self.frame_end = context.scene.frame_end

    def invoke(self, context, _event):
        """From the interface: a dialog with every option (the range defaults to the scene's),
        then the interactive bake."""
        if bpy.app.background or context.window is None:
            return self.execute(context)
        self._fill_range(context)
        self.interactive = True
        return context.window_manager.invoke_props_dialog(self, width=360)

    def _start_modal(self, context):
        try:
            self.baker = FrameBake(active_armature(context), context.scene, self._options())
        except ArmatureError as err:
            self.report({'ERROR'}, str(err))
            return {'CANCELLED'}
        manager, workspace = context.window_manager, context.workspace
        timer = manager.event_timer_add(0.001, window=context.window)
        manager.progress_begin(0, len(self.baker.frames))

        def on_end():       # however the bake ends: finished, cancelled, the extension disabled
            manager.event_timer_remove(timer)
            manager.progress_end()
            workspace.status_text_set(None)
        self.baker.on_end = on_end
        manager.modal_handler_add(self)
        return {'RUNNING_MODAL'}

    def modal(self, context, event):
        if event.type == 'ESC' and event.value == 'PRESS':
            self.baker.cancel()
            self.report({'INFO'}, "DQ IK bake cancelled; frame and pose restored")
            return {'CANCELLED'}
        if event.type != 'TIMER':
            return {'RUNNING_MODAL'}
        return run_reported(self, lambda: self._advance(context))

    def _advance(self, context):
        """Solve frames for up to ``_SLICE_SECONDS``, show the progress; at the end, key."""
        baker = self.baker
        ends = time.perf_counter() + _SLICE_SECONDS
        while not baker.done and time.perf_counter() < ends:
            baker.step()
        if baker.done:
            return self._finish(baker.finish())
        context.window_manager.progress_update(baker.index)
        context.workspace.status_text_set(
            f"DQ IK Bake: frame {baker.index} of {len(baker.frames)} (Esc to cancel)")
        return {'RUNNING_MODAL'}

    def cancel(self, _context):
        """Blender ends the operator (window closed): put everything back."""
        self.baker.cancel()

    def _finish(self, report):
        for warning in report.warnings:
            self.report({'WARNING'}, warning)
        self.report({'INFO'}, report.describe())
        return {'FINISHED'}


CLASSES = (DQIK_OT_bake,)
