"""3D Viewport sidebar (N) → DQ IK tab, for the active armature: the actions and the last
solve's outcome, then sub-panels in Blender's style: Tasks (the task list and the active task's
settings) and Live open; Solver, Collision (its header toggle switches collision avoidance),
Balance (its header toggle), Solve on Frame Change (its header toggle), Overlay (its header
toggle; the layers below) and Motion Capture closed until opened.

Every panel reads ``context.active_object``, so with several armatures in the scene the tab
shows the one being worked on; each armature keeps its own settings, task list row
(``Object.dqik.active_task_index``) and last solve.
"""

import bpy

from ..dq_ik_addon.blender.solving.sessions import last_result_of
from .bone_panel import draw_task_settings
from .overlay.layers import LAYERS
from .task_rows import (
    STATUS_ICONS,
    filter_flags,
    is_task,
    list_order,
    reports_by_name,
    row_status,
)

_SUMMARY_ICONS = {'MET': 'CHECKMARK', 'CLOSEST': 'INFO', 'ERROR': 'ERROR'}
_STATUS_WORDS = {'MET': "met", 'CLOSEST': "closest reachable", 'MISSING': "target missing",
                 'SKIPPED': "skipped (its target moves with the solve)",
                 'ERROR': "the last solve failed", 'NONE': "not solved yet", 'OFF': "off"}
# Column widths of a task row (and of the header above the list): each is the share of what the
# columns to its right leave; bone, target, priority, weight and the error take the rest
_COLUMNS = (0.3, 0.36, 0.3, 0.5)
_MAX_WARNINGS = 3


def _columns(layout):
    """Five sub-layouts side by side: bone, target, priority, weight, error."""
    out = []
    for factor in _COLUMNS:
        split = layout.split(factor=factor, align=True)
        out.append(split.row(align=True))
        layout = split
    out.append(layout.row(align=True))
    return out


def _target_text(settings):
    target = settings.target
    if target is None:
        return "–"
    if target.type == 'ARMATURE' and settings.subtarget:
        return f"{target.name} › {settings.subtarget}"
    return target.name


class DQIK_UL_tasks(bpy.types.UIList):
    """The armature's tasks by priority (1 first), then bone name; each row: on/off, the status
    light of the last solve and the bone, the target, the priority, the weight and the error."""

    def filter_items(self, _context, data, _propname):
        obj = data.id_data
        shown = list_order(obj, self.filter_name, self.use_filter_invert)
        return filter_flags(obj, shown, self.bitflag_filter_item)

    def draw_filter(self, _context, layout):
        row = layout.row(align=True)
        row.prop(self, "filter_name", text="")
        row.prop(self, "use_filter_invert", text="", icon='ARROW_LEFTRIGHT')

    def draw_item(self, _context, layout, data, item, _icon, _active_data, _active_propname,
                  _index=0, _flt_flag=0):
        settings = item.dqik
        snapshot = last_result_of(data.id_data)
        status, error = row_status(item.name, settings, snapshot, reports_by_name(snapshot))
        if self.layout_type == 'GRID':
            layout.alignment = 'CENTER'
            layout.label(text="", icon=STATUS_ICONS[status])
            return
        row = layout.row(align=True)
        row.prop(settings, "use_target", text="")
        bone, target, priority, weight, error_column = _columns(row)
        for column in (bone, target, priority, weight, error_column):
            column.active = settings.use_target
        bone.label(text=item.name, icon=STATUS_ICONS[status])
        target.label(text=_target_text(settings))
        priority.prop(settings, "priority", text="", emboss=False)
        weight.prop(settings, "weight", text="", emboss=False)
        error_column.label(text=error)


class _ArmaturePanel:
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "DQ IK"

    @classmethod
    def poll(cls, context):
        obj = context.active_object
        return obj is not None and obj.type == 'ARMATURE'



class DQIK_PT_sidebar(_ArmaturePanel, bpy.types.Panel):
    bl_label = "DQ IK"

    def draw(self, context):
        layout = self.layout
        col = layout.column(align=True)
        col.operator("dqik.solve", icon='CON_KINEMATIC')
        col.operator("dqik.bake", icon='KEYINGSET')
        col.operator("dqik.add_target", icon='EMPTY_AXIS')
        col.operator("dqik.build_chain", icon='ARMATURE_DATA')
        row = col.row(align=True)
        row.operator("dqik.apply_preset", icon='OUTLINER_OB_ARMATURE')
        row.operator("dqik.import_limits", icon='IMPORT')

        snapshot = last_result_of(context.active_object)
        if snapshot is None:
            return
        box = layout.box().column(align=True)
        if snapshot.error:
            box.label(text=f"Last solve failed ({snapshot.ms:.1f} ms)", icon='ERROR')
            box.label(text=snapshot.error)
            return
        state = "Converged" if snapshot.converged else (
            "Stopped short" if snapshot.cut_short else "Closest reachable")
        box.label(text=f"{state}: {snapshot.iterations} iterations, {snapshot.ms:.1f} ms",
                  icon=_SUMMARY_ICONS[snapshot.status])
        for warning in snapshot.warnings[:_MAX_WARNINGS]:
            box.label(text=warning, icon='DOT')
        if len(snapshot.warnings) > _MAX_WARNINGS:
            box.label(text=f"… and {len(snapshot.warnings) - _MAX_WARNINGS} more warnings")


class DQIK_PT_sidebar_tasks(_ArmaturePanel, bpy.types.Panel):
    bl_label = "Tasks"
    bl_parent_id = "DQIK_PT_sidebar"

    def draw(self, context):
        obj = context.active_object
        layout = self.layout
        header = layout.row()
        header.label(text="", icon='BLANK1')     # above the rows' on/off boxes
        for column, text in zip(_columns(header), ("Bone", "Target", "Priority", "Weight",
                                                   "Error")):
            column.label(text=text)
        layout.template_list("DQIK_UL_tasks", "", obj.pose, "bones", obj.dqik,
                             "active_task_index", rows=4)

        index = obj.dqik.active_task_index
        if not 0 <= index < len(obj.pose.bones) or not is_task(obj.pose.bones[index].dqik):
            layout.label(text="Select a row, or Add Target on a bone", icon='INFO')
            return
        pose_bone = obj.pose.bones[index]
        settings = pose_bone.dqik
        snapshot = last_result_of(obj)
        status, error = row_status(pose_bone.name, settings, snapshot, reports_by_name(snapshot))
        layout.use_property_split = True
        box = layout.box()
        row = box.row()
        row.use_property_split = False
        row.prop(settings, "use_target", text=pose_bone.name)
        row.label(text=f"{_STATUS_WORDS[status]} {error}".rstrip(), icon=STATUS_ICONS[status])
        draw_task_settings(box.column(), settings)


class _Settings:
    """What the armature-wide settings panels share, wherever they are drawn."""

    def settings_column(self, context):
        """The active armature's ``Object.dqik`` and a column for its settings, split into
        label and value as Blender's property panels are."""
        self.layout.use_property_split = True
        return context.active_object.dqik, self.layout.column()


class _Switched(_Settings):
    """A settings panel whose header toggle is the ``Object.dqik`` switch ``switch``."""

    switch = ""

    def draw_header(self, context):
        self.layout.prop(context.active_object.dqik, self.switch, text="")


class _SolverSettings(_Settings):
    bl_label = "Solver"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        settings, col = self.settings_column(context)
        col.prop(settings, "max_iterations")
        col.prop(settings, "tolerance")
        col.prop(settings, "angular_tolerance")
        col.prop(settings, "damping")
        col.prop(settings, "rest_weight")
        col.prop(settings, "soft_reach")


class _CollisionSettings(_Switched):
    """The header toggle (``use_collisions``) switches collision avoidance for this armature,
    keeping the colliders, margin and Self Collision as set."""

    bl_label = "Collision"
    bl_options = {'DEFAULT_CLOSED'}
    switch = "use_collisions"

    def draw(self, context):
        settings, col = self.settings_column(context)
        col.active = settings.use_collisions
        col.prop(settings, "colliders")
        col.prop(settings, "margin")
        col.prop(settings, "use_self_collision")


class _BalanceSettings(_Switched):
    """Balance: the header toggle (``use_balance``) keeps the centre of mass over the support
    polygon of the bones marked Support (Bone > DQ IK), at the priority set here."""

    bl_label = "Balance"
    bl_options = {'DEFAULT_CLOSED'}
    switch = "use_balance"

    def draw(self, context):
        settings, col = self.settings_column(context)
        col.active = settings.use_balance
        col.prop(settings, "balance_priority", text="Priority")
        obj = context.active_object
        supports = [pb.name for pb in obj.pose.bones if pb.dqik.use_support]
        col.label(text=("Support: " + ", ".join(supports[:4])) if supports else
                  "No bone marked Support (Bone > DQ IK)", icon='NONE' if supports else 'ERROR')


class _LiveSettings(_Settings):
    """Live posing: its button and the time budget of its ticks."""

    bl_label = "Live"

    def draw(self, context):
        settings, col = self.settings_column(context)
        col.operator("dqik.live", icon='PLAY')
        col.prop(settings, "time_budget_ms")


class _FrameChangeSettings(_Switched):
    """Solve on Frame Change: the header toggle switches it for this armature; the panel shows
    the scene's Render > Lock Interface, which rendering with it needs (``render_lock``)."""

    bl_label = "Solve on Frame Change"
    bl_options = {'DEFAULT_CLOSED'}
    switch = "use_solve_on_frame_change"

    def draw(self, context):
        layout = self.layout
        layout.active = context.active_object.dqik.use_solve_on_frame_change
        layout.label(text="Playback, scrubbing and renders show the solved pose")
        layout.prop(context.scene.render, "use_lock_interface")


class DQIK_PT_sidebar_mocap(_ArmaturePanel, bpy.types.Panel):
    """Motion capture clean-up: targets keyed from the animation, and feet planted."""

    bl_label = "Motion Capture"
    bl_parent_id = "DQIK_PT_sidebar"
    bl_options = {'DEFAULT_CLOSED'}

    def draw(self, context):
        col = self.layout.column(align=True)
        col.operator("dqik.targets_from_animation", icon='ANIM')
        col.operator("dqik.plant", icon='SNAP_FACE')


class _OverlaySettings(_Switched):
    """The viewport overlay (``overlay_draw``): the header toggle switches it for this
    armature, the rows its layers; it draws in Pose Mode only."""

    bl_label = "Overlay"
    bl_options = {'DEFAULT_CLOSED'}
    switch = "show_overlay"

    def draw(self, context):
        settings = context.active_object.dqik
        layout = self.layout
        col = layout.column(align=True)
        col.active = settings.show_overlay
        for layer in LAYERS:
            col.prop(settings, f"show_overlay_{layer}")
            if layer == "capsules":
                row = col.row()
                row.separator()
                row.active = settings.show_overlay_capsules
                row.prop(settings, "show_overlay_all_capsules")
        if context.active_object.mode != 'POSE':
            layout.label(text="Drawn in Pose Mode", icon='INFO')


# the armature-wide settings, drawn in the sidebar and in Properties › Object Data
# (``object_data``): (name, what they draw)
SETTINGS = (("solver", _SolverSettings), ("collision", _CollisionSettings),
            ("balance", _BalanceSettings), ("live", _LiveSettings),
            ("frame_change", _FrameChangeSettings), ("overlay", _OverlaySettings))


def settings_panels(prefix, place, parent, without=()):
    """A panel per entry of ``SETTINGS`` (but those named in ``without``), named
    ``<prefix>_<name>``, placed by the mixin ``place`` under the panel ``parent``."""
    return tuple(type(f"{prefix}_{name}", (settings, place, bpy.types.Panel),
                      {"bl_parent_id": parent, "__doc__": settings.__doc__})
                 for name, settings in SETTINGS if name not in without)


CLASSES = (DQIK_UL_tasks, DQIK_PT_sidebar, DQIK_PT_sidebar_tasks,
           *settings_panels("DQIK_PT_sidebar", _ArmaturePanel, "DQIK_PT_sidebar"),
           DQIK_PT_sidebar_mocap)
