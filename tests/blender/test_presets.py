"""``dqik.apply_preset``: anatomical limits on the Rigify metarigs and a Mixamo-named T-pose rig.

Poses are built as local pose quaternions and judged by the README's "Limit semantics":
``q.to_swing_twist('Y')``, the swing's exponential map, the four quarter-ellipses and the twist
interval. The anatomical sense of each motion is checked in world space by the test itself (a
flexed elbow's hand moves forward, a flexed knee's foot moves back, ...), independently of how the
preset picks axes.
"""

import math

import bpy
import pytest
import rigs
from mathutils import Quaternion, Vector

FORWARD, BACK = Vector((0, -1, 0)), Vector((0, 1, 0))
UP, DOWN = Vector((0, 0, 1)), Vector((0, 0, -1))


def lateral(side):
    return Vector((1, 0, 0)) if side == "L" else Vector((-1, 0, 0))


def allowed(settings, q):
    """Membership of the local rotation ``q`` in the bone's swing/twist limits (README, "Limit
    semantics")."""
    swing, twist = q.to_swing_twist('Y')
    s = swing.to_exponential_map()

    def term(value, bound):
        if abs(value) < 1e-6:
            return 0.0
        return math.inf if bound <= 0.0 else (value / bound) ** 2

    a = settings.swing_x_max if s.x >= 0 else -settings.swing_x_min
    b = settings.swing_z_max if s.z >= 0 else -settings.swing_z_min
    return (term(s.x, a) + term(s.z, b) <= 1.0 + 1e-6
            and settings.twist_min - 1e-6 <= twist <= settings.twist_max + 1e-6)


def frame(obj, name):
    """Rest orientation of a bone in world space."""
    return (obj.matrix_world.to_3x3().normalized()
            @ obj.data.bones[name].matrix_local.to_3x3()).normalized()


def tail_dir(obj, name, q):
    """World direction of the bone when posed by the local rotation ``q`` (parents at rest)."""
    return frame(obj, name) @ q.to_matrix() @ Vector((0, 1, 0))


def swing_toward(obj, name, target, degrees):
    """Local pure swing turning the bone ``degrees`` from its rest direction towards ``target``."""
    rest = frame(obj, name)
    axis = rest.col[1].cross(target)
    if axis.length < 1e-9 or degrees == 0:
        return Quaternion()
    return Quaternion(rest.transposed() @ axis.normalized(), math.radians(degrees))


def hinge_axis(obj, name, toward):
    """The local swing axis (±X or ±Z) that moves the tail most towards ``toward``.

    Asserted to be clear-cut (the motion is nearly pure), which is what makes it the hinge.
    """
    rest = frame(obj, name)
    best = max((Vector(axis) * sign for axis in ((1, 0, 0), (0, 0, 1)) for sign in (1, -1)),
               key=lambda a: (rest @ a.cross(Vector((0, 1, 0)))).dot(toward))
    assert (rest @ best.cross(Vector((0, 1, 0)))).dot(toward) > 0.9
    return best


def flex(obj, name, toward, degrees):
    """Hinge rotation of ``degrees`` from rest about the bone's own flexion axis."""
    return Quaternion(hinge_axis(obj, name, toward), math.radians(degrees))


def rest_bend(obj, name):
    bone = obj.data.bones[name]
    return math.degrees(bone.parent.matrix_local.col[1].xyz.angle(bone.matrix_local.col[1].xyz))


def twist(obj, name, ref, toward, degrees):
    """Local twist by ``degrees`` in the sense that turns the world direction ``ref`` (taken
    perpendicular to the bone) towards ``toward``: e.g. pronation and internal rotation turn the
    front (thumb side in a T/A-pose) downwards; inversion turns the sole inwards."""
    d = frame(obj, name).col[1]
    ref = (ref - ref.dot(d) * d).normalized()
    sign = max((1, -1), key=lambda s: (Quaternion(d, s * 0.3) @ ref).dot(toward))
    return Quaternion((0, 1, 0), sign * math.radians(degrees))


NAMES = {
    "rigify": dict(upper="upper_arm.{}", fore="forearm.{}", thigh="thigh.{}", shin="shin.{}",
                   foot="foot.{}"),
    "mixamo": dict(upper="mixamorig:{}Arm", fore="mixamorig:{}ForeArm", thigh="mixamorig:{}UpLeg",
                   shin="mixamorig:{}Leg", foot="mixamorig:{}Foot"),
}


def bone_name(scheme, part, side):
    word = {"L": "Left", "R": "Right"}[side] if scheme == "mixamo" else side
    return NAMES[scheme][part].format(word)


def mixamo_rig(y_up=False):
    """A Mixamo-named T-pose rig with roll 0 everywhere; with ``y_up`` it is stored Y-up inside
    an object rotated 90° about X and scaled 0.01, as an FBX import leaves it."""
    bones = [("Hips", None, (0, 0, 1.0), (0, 0, 1.1)),
             ("Spine", "Hips", (0, 0, 1.1), (0, 0, 1.2)),
             ("Spine1", "Spine", (0, 0, 1.2), (0, 0, 1.3)),
             ("Spine2", "Spine1", (0, 0, 1.3), (0, 0, 1.45)),
             ("Neck", "Spine2", (0, 0, 1.45), (0, 0, 1.55)),
             ("Head", "Neck", (0, 0, 1.55), (0, 0, 1.75))]
    for side, s in (("Left", 1), ("Right", -1)):
        bones += [(f"{side}Shoulder", "Spine2", (0.05 * s, 0, 1.42), (0.18 * s, 0, 1.42)),
                  (f"{side}Arm", f"{side}Shoulder", (0.18 * s, 0, 1.42), (0.45 * s, 0, 1.42)),
                  (f"{side}ForeArm", f"{side}Arm", (0.45 * s, 0, 1.42), (0.70 * s, 0, 1.42)),
                  (f"{side}Hand", f"{side}ForeArm", (0.70 * s, 0, 1.42), (0.80 * s, 0, 1.42)),
                  (f"{side}UpLeg", "Hips", (0.1 * s, 0, 1.0), (0.1 * s, 0, 0.55)),
                  (f"{side}Leg", f"{side}UpLeg", (0.1 * s, 0, 0.55), (0.1 * s, 0, 0.1)),
                  (f"{side}Foot", f"{side}Leg", (0.1 * s, 0, 0.1), (0.1 * s, -0.12, 0.02)),
                  (f"{side}ToeBase", f"{side}Foot", (0.1 * s, -0.12, 0.02), (0.1 * s, -0.2, 0.02))]
    data = bpy.data.armatures.new("Mixamo")
    obj = bpy.data.objects.new("Mixamo", data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    if y_up:
        obj.rotation_euler = (math.pi / 2, 0, 0)
        obj.scale = (0.01, 0.01, 0.01)

    def stored(p):
        return (100 * p[0], 100 * p[2], -100 * p[1]) if y_up else p

    bpy.ops.object.mode_set(mode='EDIT')
    for name, parent, head, tail in bones:
        eb = data.edit_bones.new("mixamorig:" + name)
        eb.head, eb.tail, eb.roll = stored(head), stored(tail), 0.0
        if parent:
            eb.parent = data.edit_bones["mixamorig:" + parent]
            eb.use_connect = tuple(eb.parent.tail) == tuple(eb.head)
    bpy.ops.object.mode_set(mode='POSE')
    bpy.context.view_layer.update()
    return obj


RIGS = {
    "basic": lambda: rigs.metarig("basic"),
    "human": lambda: rigs.metarig("human"),
    "mixamo": mixamo_rig,
    "mixamo_fbx": lambda: mixamo_rig(y_up=True),
}


def build(kind):
    obj = RIGS[kind]()
    assert bpy.ops.dqik.apply_preset(preset='HUMANOID') == {'FINISHED'}
    return obj, ("mixamo" if kind.startswith("mixamo") else "rigify")


def elbow_angle_after(obj, scheme, side, q):
    upper = frame(obj, bone_name(scheme, "upper", side)).col[1]
    return math.degrees(upper.angle(tail_dir(obj, bone_name(scheme, "fore", side), q)))


@pytest.mark.parametrize("side", ["L", "R"])
@pytest.mark.parametrize("kind", list(RIGS))
def test_natural_poses_are_allowed_on_both_sides(clean_scene, dqik, kind, side):
    obj, scheme = build(kind)
    pb = obj.pose.bones
    name = lambda part: bone_name(scheme, part, side)  # noqa: E731
    fore, shin, upper = name("fore"), name("shin"), name("upper")

    # Elbow flexed to 120° (anatomical angle; the metarig's rest elbow is already bent a little).
    q = flex(obj, fore, FORWARD, 120 - rest_bend(obj, fore))
    assert tail_dir(obj, fore, q).dot(FORWARD) > frame(obj, fore).col[1].dot(FORWARD)
    assert elbow_angle_after(obj, scheme, side, q) == pytest.approx(120, abs=15)
    assert allowed(pb[fore].dqik, q)
    # Knee flexed to 130°: the foot goes backwards.
    q = flex(obj, shin, BACK, 130 - rest_bend(obj, shin))
    assert tail_dir(obj, shin, q).dot(BACK) > 0.5
    assert allowed(pb[shin].dqik, q)
    # Arm raised forward to horizontal (shoulder flexion 90°), arm hanging down, arm out sideways.
    for target in (FORWARD, DOWN, lateral(side)):
        rest = frame(obj, upper).col[1]
        q = swing_toward(obj, upper, target, math.degrees(rest.angle(target)))
        assert tail_dir(obj, upper, q).dot(target) == pytest.approx(1, abs=1e-4)
        assert allowed(pb[upper].dqik, q), target
    # Hip flexed 90°, abducted 40° (the leg goes outwards), forearm pronated 70°, ankle up 15°.
    thigh, foot = name("thigh"), name("foot")
    assert allowed(pb[thigh].dqik, swing_toward(obj, thigh, FORWARD, 90))
    assert allowed(pb[thigh].dqik, swing_toward(obj, thigh, lateral(side), 40))
    assert allowed(pb[fore].dqik, twist(obj, fore, FORWARD, DOWN, 70))
    assert allowed(pb[foot].dqik, swing_toward(obj, foot, UP, 15))
    # Upper arm rotated externally 85° (limit 90°), foot inverted 30° (limit 35°).
    assert allowed(pb[upper].dqik, twist(obj, upper, FORWARD, UP, 85))
    assert allowed(pb[foot].dqik, twist(obj, foot, DOWN, -lateral(side), 30))


@pytest.mark.parametrize("side", ["L", "R"])
@pytest.mark.parametrize("kind", list(RIGS))
def test_impossible_poses_are_rejected_on_both_sides(clean_scene, dqik, kind, side):
    obj, scheme = build(kind)
    pb = obj.pose.bones
    name = lambda part: bone_name(scheme, part, side)  # noqa: E731
    fore, shin, thigh, foot = name("fore"), name("shin"), name("thigh"), name("foot")
    upper = name("upper")

    # Elbow hyperextended 45° past straight.
    q = flex(obj, fore, FORWARD, -45 - rest_bend(obj, fore))
    assert not allowed(pb[fore].dqik, q)
    # Knee bent forwards 45° past straight, or sideways 45°.
    q = flex(obj, shin, BACK, -45 - rest_bend(obj, shin))
    assert tail_dir(obj, shin, q).dot(FORWARD) > 0.5
    assert not allowed(pb[shin].dqik, q)
    assert not allowed(pb[shin].dqik, swing_toward(obj, shin, lateral(side), 45))
    # Leg crossed 45° in front of the other one (hip adduction limit 30°).
    assert not allowed(pb[thigh].dqik, swing_toward(obj, thigh, -lateral(side), 45))
    # Forearm pronated 120° (limit 80°), ankle dorsiflexed 45° (limit 20°).
    assert not allowed(pb[fore].dqik, twist(obj, fore, FORWARD, DOWN, 120))
    assert not allowed(pb[foot].dqik, swing_toward(obj, foot, UP, 45))
    # Upper arm rotated internally 85° (limit 70°), foot everted 30° (limit 15°).
    assert not allowed(pb[upper].dqik, twist(obj, upper, FORWARD, DOWN, 85))
    assert not allowed(pb[foot].dqik, twist(obj, foot, DOWN, lateral(side), 30))


@pytest.mark.parametrize("kind, limited, unmatched", [("basic", 22, 6), ("human", 60, 98)])
def test_every_matched_bone_gets_limits_containing_rest(clean_scene, dqik, capfd, kind, limited,
                                                        unmatched):
    obj = rigs.metarig(kind)
    assert bpy.ops.dqik.apply_preset() == {'FINISHED'}
    out = capfd.readouterr()
    assert f"limits on {limited} bones" in out.out + out.err
    assert f"{unmatched} bones unmatched" in out.out + out.err
    presets = dqik.dq_ik_addon.blender.authoring.limit_presets
    count = 0
    for pb in obj.pose.bones:
        matched = pb.parent is not None and presets.match_joint(pb.name) is not None
        d = pb.dqik
        assert d.use_limits == matched, pb.name
        if matched:
            count += 1
            assert d.swing_x_min <= 0 <= d.swing_x_max, pb.name
            assert d.swing_z_min <= 0 <= d.swing_z_max, pb.name
            assert d.twist_min <= 0 <= d.twist_max, pb.name
            assert allowed(d, pb.rotation_quaternion), pb.name
    assert count == limited


def test_hinges_lock_one_swing_axis_and_one_side(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    for name in ("forearm.L", "forearm.R", "shin.L", "shin.R"):
        d = obj.pose.bones[name].dqik
        assert d.swing_z_min == d.swing_z_max == 0.0, name
        assert d.swing_x_max > math.radians(100) and d.swing_x_min > math.radians(-30), name


def _limits(obj):
    names = ("swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max", "twist_min", "twist_max")
    return {pb.name: [getattr(pb.dqik, n) for n in names] for pb in obj.pose.bones}


@pytest.mark.parametrize("turn", [44.0, 90.0, 180.0, 270.0])
def test_a_character_turned_about_up_gets_the_same_limits(clean_scene, dqik, turn):
    """Which way the character faces is read from its sided bones, not assumed to be -Y: an
    armature object turned about Z gets the limits of the unturned one (at 90° its spine's
    forward bend landed on a side bend)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    unturned = _limits(obj)
    obj.rotation_euler.z = math.radians(turn)
    bpy.context.view_layer.update()
    bpy.ops.dqik.apply_preset()
    for name, values in _limits(obj).items():
        assert values == pytest.approx(unturned[name], abs=1e-6), name


def test_spine_range_is_shared_between_its_bones(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    total = sum(obj.pose.bones[f"spine.00{i}"].dqik.swing_x_max for i in (1, 2, 3))
    assert math.degrees(total) == pytest.approx(80, abs=0.01)  # AAOS thoracolumbar flexion
    assert not obj.pose.bones["spine"].dqik.use_limits  # the root is the whole body


def test_a_generated_rigify_rig_gets_limits_on_its_fk_controls_and_a_free_torso(clean_scene,
                                                                                dqik):
    """A generated Rigify rig's solves turn its FK controls (``thigh_fk.L``, ``spine_fk.001``):
    the preset limits them as the metarig's bones (rest inside, an elbow flexed 120° and a knee
    130° allowed, either hyperextended 45° rejected), not the bones its constraints drive; the
    torso, which carries the whole body and gets Translation, keeps no limits (the limbs had
    none and the torso the spine's range)."""
    obj = rigs.generate_rigify_rig()
    assert bpy.ops.dqik.apply_preset() == {'FINISHED'}
    pb = obj.pose.bones
    assert pb["torso"].dqik.use_translation and not pb["torso"].dqik.use_limits
    assert all(pb[name].dqik.use_limits for name in ("spine_fk", "spine_fk.003", "chest", "neck"))
    for side in "LR":
        for part in ("thigh", "shin", "foot", "upper_arm", "forearm", "hand"):
            settings = pb[f"{part}_fk.{side}"].dqik
            assert settings.use_limits and allowed(settings, Quaternion()), (part, side)
            assert not pb[f"DEF-{part}.{side}"].dqik.use_limits
        fore, shin = f"forearm_fk.{side}", f"shin_fk.{side}"
        assert allowed(pb[fore].dqik, flex(obj, fore, FORWARD, 120 - rest_bend(obj, fore)))
        assert not allowed(pb[fore].dqik, flex(obj, fore, FORWARD, -45 - rest_bend(obj, fore)))
        assert allowed(pb[shin].dqik, flex(obj, shin, BACK, 130 - rest_bend(obj, shin)))
        assert not allowed(pb[shin].dqik, flex(obj, shin, BACK, -45 - rest_bend(obj, shin)))


@pytest.mark.parametrize("name, joint, side", [
    ("upper_arm.L", 'UPPER_ARM', 'L'), ("forearm.R", 'FOREARM', 'R'), ("shin.L", 'SHIN', 'L'),
    ("spine.003", 'SPINE', None), ("spine.004", 'NECK', None), ("spine.006", 'HEAD', None),
    ("shoulder.L", 'CLAVICLE', 'L'), ("toe.R", 'TOE', 'R'), ("f_index.01.L", 'FINGER_BASE', 'L'),
    ("f_pinky.03.R", 'FINGER', 'R'), ("thumb.01.L", 'THUMB_BASE', 'L'), ("palm.02.L", 'PALM', 'L'),
    ("mixamorig:LeftArm", 'UPPER_ARM', 'L'), ("mixamorig:RightForeArm", 'FOREARM', 'R'),
    ("mixamorig:LeftHand", 'HAND', 'L'), ("mixamorig:LeftUpLeg", 'THIGH', 'L'),
    ("mixamorig:RightLeg", 'SHIN', 'R'), ("mixamorig:LeftFoot", 'FOOT', 'L'),
    ("mixamorig:LeftToeBase", 'TOE', 'L'), ("mixamorig:Spine1", 'SPINE', None),
    ("mixamorig:Neck", 'NECK', None), ("mixamorig:Head", 'HEAD', None),
    ("mixamorig:RightShoulder", 'CLAVICLE', 'R'), ("mixamorig1:LeftHandIndex1", 'FINGER_BASE', 'L'),
    ("mixamorig_LeftHandMiddle2", 'FINGER', 'L'), ("LeftHandThumb1", 'THUMB_BASE', 'L'),
    ("upperarm_l", 'UPPER_ARM', 'L'), ("lowerarm_r", 'FOREARM', 'R'), ("calf_l", 'SHIN', 'L'),
    ("thigh_r", 'THIGH', 'R'), ("clavicle_l", 'CLAVICLE', 'L'), ("ball_r", 'TOE', 'R'),
    ("spine_02", 'SPINE', None), ("neck_01", 'NECK', None), ("index_01_l", 'FINGER_BASE', 'L'),
    ("UpperArm.L", 'UPPER_ARM', 'L'), ("LowerLeg.R", 'SHIN', 'R'), ("Hand_Left", 'HAND', 'L'),
    ("L_Forearm", 'FOREARM', 'L'), ("Chest", 'SPINE', None), ("thigh_fk.L", 'THIGH', 'L'),
    ("forearm_fk.R", 'FOREARM', 'R'), ("spine_fk.001", 'SPINE', None),
])
def test_names_are_recognised(dqik, name, joint, side):
    assert dqik.dq_ik_addon.blender.authoring.limit_presets.match_joint(name) == (joint, side)


@pytest.mark.parametrize("name", ["mixamorig:Hips", "mixamorig:LeftToe_End", "mixamorig:HeadTop_End",
                                  "mixamorig:LeftHandIndex4", "thigh_twist_01_l", "ik_foot_l",
                                  "heel.02.L", "breast.R", "pelvis.L", "jaw", "eye.L", "root",
                                  "DEF-thigh.L", "MCH-thigh_fk.L", "thigh_ik.L"])
def test_other_names_are_not(dqik, name):
    assert dqik.dq_ik_addon.blender.authoring.limit_presets.match_joint(name) is None


def test_only_selected_and_enable_limits(clean_scene, dqik):
    obj = rigs.metarig("basic")
    for pb in obj.pose.bones:
        dqik.dq_ik_addon.blender.rig.objects.is_selected(pb)  # readable on every version
        if hasattr(pb, "select"):
            pb.select = pb.name == "forearm.L"
        else:
            pb.bone.select = pb.name == "forearm.L"
    assert bpy.ops.dqik.apply_preset(only_selected=True, enable_limits=False) == {'FINISHED'}
    forearm = obj.pose.bones["forearm.L"].dqik
    assert not forearm.use_limits and forearm.swing_z_max == 0.0
    assert obj.pose.bones["forearm.R"].dqik.swing_z_max == pytest.approx(math.pi / 2)  # untouched


def test_rig_without_humanoid_names_is_a_clear_error(clean_scene, dqik):
    rigs.awkward_rig()
    with pytest.raises(RuntimeError, match="recognises"):
        bpy.ops.dqik.apply_preset()


def test_no_armature_is_a_clear_error(clean_scene, dqik):
    with pytest.raises(RuntimeError, match="Select an armature"):
        bpy.ops.dqik.apply_preset()
