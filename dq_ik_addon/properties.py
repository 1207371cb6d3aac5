"""The settings DQ IK stores on pose bones and armature objects.

``PoseBone.dqik`` holds one bone's task, swing/twist limits, stiffness, translation and collision
capsule;
``Object.dqik`` holds the armature-wide solver, collision, live-solve and frame-change settings.
All angles are radians relative to the rest pose; all lengths are metres.

Every property can be overridden in a library override (``LIBRARY_OVERRIDABLE``), so a linked
rig can be set up after Object > Library Override; and every one but the overlay's toggles marks
its armature's solving session for a rebuild when set (``update``; ``dq_ik_addon/blender/solving/session.py``).

From Blender 5.0 every float property keeps its value when given NaN or ±inf (``set_transform``,
https://docs.blender.org/api/5.0/bpy.props.html#bpy.props.FloatProperty), as its hard range keeps
it within bounds; the value stays in Blender's own storage, so animation and library overrides
work as before. Blender 4.5 has no such hook: there, and for raw ID property writes, which no
property callback sees, the solve refuses what does not fit (``dq_ik_addon/blender/settings/validation.py``).
"""

import math

import bpy
from bpy.props import (
    BoolProperty,
    EnumProperty,
    FloatProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from .blender.settings.edits import (
    FINITE,
    frame_change_switched,
    select_active_task,
    settings_changed,
)

_OVERRIDABLE = {'LIBRARY_OVERRIDABLE'}
# The aim axes, named as Damped Track's and Track To's ``track_axis`` (so they import as they are)
AIM_AXES = [('TRACK_X', "X", "The bone's local +X axis"),
            ('TRACK_Y', "Y", "The bone's local +Y axis: along the bone, head to tail"),
            ('TRACK_Z', "Z", "The bone's local +Z axis"),
            ('TRACK_NEGATIVE_X', "-X", "The bone's local -X axis"),
            ('TRACK_NEGATIVE_Y', "-Y", "The bone's local -Y axis: along the bone, tail to head"),
            ('TRACK_NEGATIVE_Z', "-Z", "The bone's local -Z axis")]
_QUARTER_TURN = math.pi / 2
_HALF_TURN = math.pi


def _swing_min(name, axis):
    return FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name=name,
        description=f"Largest swing about the bone's local {axis} axis in the negative direction "
        "(0 locks this half-axis; swings form an ellipse between the four bounds)",
        subtype='ANGLE', unit='ROTATION',
        default=-_QUARTER_TURN, min=-_HALF_TURN, max=0.0,
    )


def _swing_max(name, axis):
    return FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name=name,
        description=f"Largest swing about the bone's local {axis} axis in the positive direction "
        "(0 locks this half-axis; swings form an ellipse between the four bounds)",
        subtype='ANGLE', unit='ROTATION',
        default=_QUARTER_TURN, min=0.0, max=_HALF_TURN,
    )


class DQIK_PG_bone(bpy.types.PropertyGroup):
    """Per pose bone: task, limits, stiffness and collision capsule."""

    use_target: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Target",
        description="Give this bone an IK task: pull its tail (and optionally its orientation) "
        "towards the target",
        default=False,
    )
    target: PointerProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Target",
        type=bpy.types.Object,
        description="Object the bone reaches for; with an armature, pick a bone as subtarget",
    )
    subtarget: StringProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Bone",
        description="Bone of the target armature whose head is the goal position",
    )
    priority: IntProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Priority",
        description="Task priority level: 1 is the most important. A lower-priority task only uses "
        "what higher levels leave free",
        default=1, min=1, soft_max=5, max=32,
    )
    use_position: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Position",
        description="Bring the bone's tail onto the target's position",
        default=True,
    )
    use_rotation: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Rotation",
        description="Align the bone's orientation with the target's orientation",
        default=False,
    )
    use_aim: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Aim",
        description="Point the bone's Aim Axis from its head at the target, as a head or an eye "
        "looks at something (Blender's Damped Track, solved with the other tasks)",
        default=False,
    )
    position_axes: EnumProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Position Axes",
        description="The target's own axes along which the tail must match it: Z alone keeps "
        "the tail on the target's XY plane (a foot on a floor), X and Y on its Z line",
        items=(('X', "X", ""), ('Y', "Y", ""), ('Z', "Z", "")),
        options={'ENUM_FLAG'}, default={'X', 'Y', 'Z'},
    )
    aim_axis: EnumProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Aim Axis",
        description="The bone axis that points at the target (Y runs along the bone)",
        items=AIM_AXES,
        default='TRACK_Y',
    )
    weight: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Weight",
        description="Relative weight among tasks sharing the same priority level",
        default=1.0, min=0.0, soft_max=10.0,
    )
    chain_count: IntProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Chain Length",
        description="How many bones this task may move, counting its own bone, as Blender's IK "
        "Chain Length (0 = all the way to the root)",
        default=0, min=0, max=255,
    )

    use_limits: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Limits",
        description="Restrict this joint to a swing/twist range relative to its rest pose",
        default=False,
    )
    swing_x_min: _swing_min("Swing X Min", "X")
    swing_x_max: _swing_max("Swing X Max", "X")
    swing_z_min: _swing_min("Swing Z Min", "Z")
    swing_z_max: _swing_max("Swing Z Max", "Z")
    twist_min: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Twist Min",
        description="Smallest twist about the bone's own Y axis (0 locks negative twist)",
        subtype='ANGLE', unit='ROTATION',
        default=-_QUARTER_TURN, min=-_HALF_TURN, max=0.0,
    )
    twist_max: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Twist Max",
        description="Largest twist about the bone's own Y axis (0 locks positive twist)",
        subtype='ANGLE', unit='ROTATION',
        default=_QUARTER_TURN, min=0.0, max=_HALF_TURN,
    )

    stiffness: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Stiffness",
        description="How reluctantly the solver turns this joint: 0 is free, 1 is locked",
        subtype='FACTOR', default=0.0, min=0.0, max=1.0,
    )

    use_translation: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Translation",
        description="Let the solve move this bone's location as well as its rotation, along "
                    "the axes Lock Location leaves free (a floating pelvis)",
        default=False,
    )

    use_support: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Support",
        description="This bone carries the body's weight (a foot): with Balance on, the centre "
                    "of mass stays over the polygon of the supporting bones and the bones they "
                    "carry (its toe)",
        default=False,
    )
    mass: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Mass",
        description="The bone's share of the body's mass for Balance, in any unit (0 = "
                    "automatic: the volume of the skin it carries, or its length on a rig "
                    "without a skinned mesh)",
        default=0.0, min=0.0, soft_max=100.0,
    )

    use_collision: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Collision",
        description="Treat this bone as a capsule that avoids colliders",
        default=True,
    )
    radius: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Radius",
        description="Capsule radius in world units, as the scene shows it (0 = automatic, from "
                    "the skinned mesh or the bone length)",
        subtype='DISTANCE', unit='LENGTH',
        default=0.0, min=0.0, soft_max=0.5,
    )


class DQIK_PG_armature(bpy.types.PropertyGroup):
    """Per armature object: colliders and solver settings, and the sidebar's task list."""

    active_task_index: IntProperty(
        override=_OVERRIDABLE, update=select_active_task,
        name="Active Task",
        description="Index in the pose bones of the task list's active row; setting it selects "
        "that bone",
        default=0, min=0,
    )
    use_collisions: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Collisions",
        description="Keep the bones out of the colliders and, with Self Collision, apart from "
        "each other; off solves without either, keeping their settings",
        default=True,
    )
    colliders: PointerProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Colliders",
        type=bpy.types.Collection,
        description="Collection whose meshes (and those of its child collections) are obstacles",
    )
    margin: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Margin",
        description="Clearance kept between bone capsules and obstacles",
        subtype='DISTANCE', unit='LENGTH',
        default=0.01, min=0.0, soft_max=0.2,
    )
    use_self_collision: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Self Collision",
        description="Keep non-adjacent bone capsules of this armature apart",
        default=False,
    )
    max_iterations: IntProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Max Iterations",
        description="Iterations per solve (and per escape) before stopping short of the tolerance; "
                    "a solve cut short says so, and solving again goes on",
        default=300, min=1, soft_max=1000, max=100000,
    )
    tolerance: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Tolerance",
        description="A solve stops when every task's position is closer than this, in world "
                    "units",
        subtype='DISTANCE', unit='LENGTH',
        default=1e-5, min=1e-9, soft_max=0.01, precision=6,
    )
    angular_tolerance: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Angle Tolerance",
        description="A solve stops when every task's rotation or aim is closer than this",
        subtype='ANGLE', unit='ROTATION',
        default=1e-5, min=1e-9, soft_max=0.01, precision=6,
    )
    damping: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Damping",
        description="Damped least-squares factor, relative to the chain size: shapes the steps "
        "near straight (singular) chains, not the solved pose",
        default=0.05, min=0.0, soft_max=1.0, precision=3,
    )
    rest_weight: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Rest Pull",
        description="Weight of the lowest-priority pull towards the starting pose (on a frame "
        "change or in a bake, the frame's animated pose) in the remaining freedom",
        default=0.1, min=0.0, soft_max=1.0,
    )
    use_balance: BoolProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Balance",
        description="Keep the centre of mass over the support polygon of the bones marked "
                    "Support (the feet)",
        default=False,
    )
    balance_priority: IntProperty(
        override=_OVERRIDABLE, update=settings_changed,
        name="Balance Priority",
        description="The priority level of Balance among the tasks (1 is the most important): "
                    "below the planted feet, above the reaching hands",
        default=2, min=1, soft_max=5, max=32,
    )
    soft_reach: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Soft Reach",
        description="Fraction of a limb's reach over which a target near or beyond it is eased "
        "in (soft IK): no knee or elbow snap as a target crosses the reach",
        default=0.0, min=0.0, max=0.5, subtype='FACTOR',
    )
    time_budget_ms: FloatProperty(
        override=_OVERRIDABLE, update=settings_changed, **FINITE,
        name="Time Budget",
        description="How long a live tick may take, reading and writing the pose included: it "
                    "stops iterating before an iteration would end past it (the first always "
                    "runs); the next tick goes on",
        default=4.0, min=0.5, soft_max=33.0,
    )
    use_solve_on_frame_change: BoolProperty(
        override=_OVERRIDABLE, update=frame_change_switched,
        name="Solve on Frame Change",
        description="Solve this armature on every frame change, from the frame's animated pose. "
        "The pose is written, not keyed (Bake keys it)",
        default=False,
    )

    # The viewport overlay (panels/overlay/draw.py). No update callback: switching what is
    # drawn must not mark the solving session for a rebuild; the viewport redraws by itself.
    show_overlay: BoolProperty(
        override=_OVERRIDABLE,
        name="Overlay",
        description="Draw DQ IK's overlay for this armature in the 3D Viewport in Pose Mode: "
        "joint limits, capsules, contacts and task errors",
        default=True,
    )
    show_overlay_swing: BoolProperty(
        override=_OVERRIDABLE, name="Swing Limits", default=True,
        description="For the selected bones with limits: the swing range as a cone from "
        "the head, in the parent's frame, and the current swing",
    )
    show_overlay_twist: BoolProperty(
        override=_OVERRIDABLE, name="Twist Limits", default=True,
        description="For the selected bones with limits: the twist range as an arc around "
        "the bone, and the current twist",
    )
    show_overlay_capsules: BoolProperty(
        override=_OVERRIDABLE, name="Capsules", default=True,
        description="The collision capsules of the selected bones (all with All Capsules), "
        "and those touching an obstacle in the last solve",
    )
    show_overlay_all_capsules: BoolProperty(
        override=_OVERRIDABLE, name="All Capsules", default=False,
        description="Draw every capsule the last solve tested; off, only those of the selected "
        "bones and those touching an obstacle",
    )
    show_overlay_contacts: BoolProperty(
        override=_OVERRIDABLE, name="Contacts", default=True,
        description="The contacts of the last solve: a cross on each point and its normal",
    )
    show_overlay_tasks: BoolProperty(
        override=_OVERRIDABLE, name="Task Errors", default=True,
        description="A line from each effector to its target, coloured by the last solve: "
        "green met, orange closest reachable, red missing or failed, grey not solved yet",
    )
    show_overlay_balance: BoolProperty(
        override=_OVERRIDABLE, name="Balance", default=True,
        description="With Balance on: the support polygon of the last solve, its centre of "
        "mass and that point's projection on the ground",
    )


CLASSES = (DQIK_PG_bone, DQIK_PG_armature)


def register_properties():
    bpy.types.PoseBone.dqik = PointerProperty(type=DQIK_PG_bone, override=_OVERRIDABLE)
    bpy.types.Object.dqik = PointerProperty(type=DQIK_PG_armature, override=_OVERRIDABLE)


def unregister_properties():
    del bpy.types.Object.dqik
    del bpy.types.PoseBone.dqik
