"""Anatomical swing/twist limits for humanoid rigs, found by bone name (``dqik.apply_preset``).

How a bone gets its limits:

1. Its name loses any namespace (``mixamorig:``) and side token (``.L``, ``_r``, ``Left``...), and
   the rest is matched against ``HUMANOID_PATTERNS`` (Rigify metarig, Mixamo, Unreal and common
   names), giving a joint type. Root bones are never limited: their rotation is the character's.
2. The joint's anatomical range (``HUMANOID_RANGES``, degrees from the anatomical neutral posture)
   is laid onto the bone's own axes by looking at its rest orientation in world space. A positive
   swing about local X moves the tail towards local +Z, one about local Z towards local -X. The swing
   axis that moves the tail most towards the joint's ``bend_to`` direction carries the bend range
   (with the sign that goes that way), the other carries the side range, signed by ``side_to``.
   Twist about +Y (the bone points away from the body) is internal rotation on the left side and
   external rotation on the right, so mirrored bones get mirrored signs whatever their roll.
3. The range is shifted by the rest pose's own swing away from the anatomical neutral posture
   (arms in A- or T-pose, a slightly bent rest elbow or knee), then clamped so that the rest pose
   stays inside: ``min <= 0 <= max``. Adding offsets in exponential-map coordinates is exact for
   motions about one axis and a fair approximation otherwise.

The character is assumed upright along world +Z. Which way it faces is read from the rig: its
left is the horizontal direction from its right-side bones' heads to its left-side ones', and it
faces ``left × up`` (``character_frame``), so an armature object turned about Z at any angle, a
Mixamo import rotated 90° about X, or a rig built facing +X get the same limits as one facing -Y
(Blender's Front view). With no sided bone, its left is the object's +X as the world sees it.
Hands are assumed palm down or palm in (T- or A-pose).
"""

import math
import re
from dataclasses import dataclass

from mathutils import Matrix, Vector


@dataclass(frozen=True)
class JointRange:
    """One joint's range of motion in degrees, measured from the anatomical neutral posture.

    ``bend`` is the largest swing that moves the tail towards ``bend_to`` (the first direction of
    the tuple that the bone can move towards; the anatomical flexion, dorsiflexion, protraction...),
    ``bend_back`` the largest swing the opposite way. ``side``/``side_back`` likewise about the
    other swing axis, towards ``side_to`` (abduction, radial deviation, lateral bending...).
    ``twist_in`` is internal (medial) rotation about the bone, ``twist_out`` external rotation.
    ``neutral`` names the posture the ranges are measured from: ``REST`` (the rest pose is the
    anatomical neutral one), ``PARENT`` (straight in line with the parent bone) or ``DOWN`` (hanging
    straight down). A ``shared`` range is the total of a region (spine, neck), split evenly among the
    bones of the armature that match it.
    """

    bend_to: tuple
    bend: float
    bend_back: float
    side_to: tuple
    side: float
    side_back: float
    twist_in: float
    twist_out: float
    neutral: str = 'REST'
    shared: bool = False


# Directions (world space, per side) a bone's tail can be asked to move towards.
#   LATERAL is the character's left (+X) for left and centre bones, its right (-X) for right bones;
#   OUT_UP is halfway between LATERAL and UP: abduction for a limb hanging down, in A- or T-pose;
#   PALM is halfway between medial and down: the palm side of a hand in T- or A-pose.
_FORWARD, _BACK, _UP, _DOWN = ('FORWARD',), ('BACK',), ('UP',), ('DOWN',)
_LATERAL, _OUT_UP, _PALM = ('LATERAL',), ('OUT_UP',), ('PALM', 'DOWN')

# Sources (all values in degrees):
#   [AAOS]  American Academy of Orthopaedic Surgeons, "Joint Motion: Method of Measuring and
#           Recording" (1965), average adult ranges, as tabulated in Norkin & White, "Measurement of
#           Joint Motion", Table A.1, and Greene & Heckman, "The Clinical Measurement of Joint Motion"
#           (AAOS 1994).
#   [Floyd] Floyd, "Manual of Structural Kinesiology", Appendix 1 (sternoclavicular and
#           glenohumeral ranges).
#   [Kap]   Kapandji, "The Physiology of the Joints", vols. 1-3 (elbow and knee hyperextension of a
#           few degrees; head-on-neck motion).
#   [W&P]   White & Panjabi, "Clinical Biomechanics of the Spine", segmental ranges of C0-C1 and
#           C1-C2 (about 25° flexion-extension, 5° lateral bending each; 40° axial rotation at C1-C2).
#   [Baer]  Baerlocher, "Inverse kinematics techniques for the interactive posture control of
#           articulated figures" (EPFL 2001) §3.6.3: a shoulder swing ellipse with a constant twist
#           range (~105°), measured twist ranges being 104°-160° depending on the arm position.
HUMANOID_RANGES = {
    # Thoracolumbar spine [AAOS]: flexion 80, extension 25, lateral bending 35, rotation 45;
    # shared among the spine bones (3 in Rigify and Mixamo rigs).
    'SPINE': JointRange(_FORWARD, 80, 25, _LATERAL, 35, 35, 45, 45, shared=True),
    # Cervical spine [AAOS] 45/45/45/60 minus the head's C0-C2 share below; shared among neck bones.
    'NECK': JointRange(_FORWARD, 35, 30, _LATERAL, 40, 40, 20, 20, shared=True),
    # Head on the neck, C0-C2 [W&P, Kap]: nodding 10/15, lateral 5, most of the axial rotation.
    'HEAD': JointRange(_FORWARD, 10, 15, _LATERAL, 5, 5, 40, 40),
    # Sternoclavicular joint [Floyd]: protraction 15, retraction 15, elevation 45, depression 5;
    # axial rotation mostly posterior (~45°) with arm elevation, little anterior.
    'CLAVICLE': JointRange(_FORWARD, 15, 15, _UP, 45, 5, 10, 45),
    # Shoulder [AAOS]: flexion 180, extension 60, abduction 180, internal 70, external 90 for the
    # whole complex; the clavicle bone above takes ~30° of the elevation. Adduction across the
    # front of the trunk 45 ([Floyd]: up to 75 anterior to the trunk). [Baer] holds the twist range
    # constant as we do (160° here, the top of the measured 104°-160°).
    'UPPER_ARM': JointRange(_FORWARD, 150, 60, _OUT_UP, 150, 45, 70, 90, neutral='DOWN'),
    # Elbow hinge [AAOS]: flexion 150, 5 of hyperextension [Kap]; no side swing.
    # Radioulnar twist [AAOS]: pronation 80 (internal), supination 80.
    'FOREARM': JointRange(_FORWARD, 150, 5, _LATERAL, 0, 0, 80, 80, neutral='PARENT'),
    # Wrist [AAOS]: flexion 80, extension 70, radial deviation 20 (towards the thumb: forward in
    # a palm-down T/A-pose), ulnar deviation 30; no axial rotation (that is the forearm's).
    'HAND': JointRange(_PALM, 80, 70, _FORWARD + _LATERAL, 20, 30, 0, 0, neutral='PARENT'),
    # Hip [AAOS]: flexion 120, extension 30, abduction 45, adduction 30, internal 45, external 45.
    'THIGH': JointRange(_FORWARD, 120, 30, _OUT_UP, 45, 30, 45, 45, neutral='DOWN'),
    # Knee hinge [AAOS]: flexion 135, 5 of hyperextension [Kap]; no side swing, no twist.
    'SHIN': JointRange(_BACK, 135, 5, _LATERAL, 0, 0, 0, 0, neutral='PARENT'),
    # Ankle and subtalar joints [AAOS]: dorsiflexion 20, plantar flexion 50, forefoot abduction
    # 10, adduction 20; twist about the foot: eversion 15 (internal), inversion 35.
    'FOOT': JointRange(_UP, 20, 50, _LATERAL, 10, 20, 15, 35),
    # Toe metatarsophalangeal joint [AAOS, great toe]: extension 70, flexion 45; a little spread.
    'TOE': JointRange(_UP, 70, 45, _LATERAL, 10, 10, 0, 0),
    # Metacarpals (Rigify palm bones): a few degrees of cupping and spread.
    'PALM': JointRange(_PALM, 10, 10, _LATERAL, 10, 10, 5, 5),
    # Finger metacarpophalangeal joints [AAOS]: flexion 90, hyperextension 45, spread 20 each way.
    'FINGER_BASE': JointRange(_PALM, 90, 45, _LATERAL, 20, 20, 0, 0, neutral='PARENT'),
    # Finger interphalangeal hinges [AAOS]: PIP flexion 100, DIP 90 (100 used), extension 5.
    'FINGER': JointRange(_PALM, 100, 5, _LATERAL, 0, 0, 0, 0, neutral='PARENT'),
    # Thumb carpometacarpal joint [AAOS]: flexion 15, extension 20, abduction 70 and opposition;
    # its axes vary too much between rigs to orient, so a symmetric cone of 45 is used.
    'THUMB_BASE': JointRange(_PALM, 45, 45, _LATERAL, 45, 45, 20, 20),
    # Thumb MCP (flexion 50) and IP (flexion 80) joints [AAOS]: symmetric for the same reason.
    'THUMB': JointRange(_PALM, 60, 60, _LATERAL, 10, 10, 0, 0),
}

_SEP = r"[._ ]?"
_FINGER = r"(?:f[._])?(?:hand" + _SEP + r")?(?:index|middle|ring|pinky|little)(?:" + _SEP + r"finger)?"

# Base names (namespace and side removed) -> joint type; tried in order, full match, any case.
HUMANOID_PATTERNS = tuple((joint, re.compile(pattern, re.IGNORECASE)) for joint, pattern in (
    # Rigify's numbered spine: spine (hips, root), .001-.003 torso, .004-.005 neck, .006 head.
    ('NECK', r"spine\.00[45]"),
    ('HEAD', r"spine\.006"),
    ('SPINE', r"spine(?:" + _SEP + r"\d+)?|chest|upper" + _SEP + r"chest|abdomen|torso|waist"),
    ('NECK', r"neck(?:" + _SEP + r"\d+)?"),
    ('HEAD', r"head"),
    ('CLAVICLE', r"shoulder|clavicle|collar(?:" + _SEP + r"bone)?"),
    ('UPPER_ARM', r"upper" + _SEP + r"arm|arm|humerus"),
    ('FOREARM', r"fore" + _SEP + r"arm|lower" + _SEP + r"arm|elbow"),
    ('HAND', r"hand|wrist"),
    ('THIGH', r"thigh|up(?:per)?" + _SEP + r"leg|femur"),
    ('SHIN', r"shin|calf|leg|lower" + _SEP + r"leg|knee|shank"),
    ('FOOT', r"foot|ankle"),
    ('TOE', r"toes?|toe" + _SEP + r"base|ball"),
    ('PALM', r"palm" + _SEP + r"0?[1-4]|metacarpal"),
    ('THUMB_BASE', r"(?:hand" + _SEP + r")?thumb" + _SEP + r"0?1"),
    ('THUMB', r"(?:hand" + _SEP + r")?thumb" + _SEP + r"0?[23]"),
    ('FINGER_BASE', _FINGER + _SEP + r"0?1"),
    ('FINGER', _FINGER + _SEP + r"0?[23]"),
))

PRESETS = {'HUMANOID': (HUMANOID_RANGES, HUMANOID_PATTERNS)}
CENTRAL_JOINTS = frozenset({'SPINE', 'NECK', 'HEAD'})

_NAMESPACE = re.compile(r"^.*[:|]|^mixamorig\d*_", re.IGNORECASE)
_FK = re.compile(r"_fk(?=$|\.\d+$)", re.IGNORECASE)     # Rigify's FK controls: thigh_fk, spine_fk.001
_SIDE_SUFFIX = re.compile(r"(?:[._\- ](?P<letter>[lr])|[._\- ]?(?P<word>left|right))$", re.IGNORECASE)
_SIDE_PREFIX = re.compile(r"^(?:(?P<word>left|right)[._\- ]?|(?P<letter>[lr])[._\- ])", re.IGNORECASE)


def split_name(name):
    """``(base, side)`` of a bone name: namespace and side token removed; side 'L', 'R' or None."""
    base = _NAMESPACE.sub("", name)
    for pattern in (_SIDE_SUFFIX, _SIDE_PREFIX):
        found = pattern.search(base)
        if found:
            token = (found.group('letter') or found.group('word'))[0].upper()
            return base[:found.start()] + base[found.end():], token
    return base, None


def match_joint(name, patterns=HUMANOID_PATTERNS):
    """``(joint type, side)`` for a bone name, or None when no pattern recognises it; a generated
    Rigify rig's FK control is its joint's (``thigh_fk.L`` a thigh, ``spine_fk.001`` a spine
    bone: ``_FK``), the bones its solves turn."""
    base, side = split_name(name)
    base = _FK.sub("", base)
    for joint, pattern in patterns:
        if pattern.fullmatch(base):
            return joint, side
    return None


@dataclass(frozen=True)
class LimitBounds:
    """Swing and twist bounds in radians, each pair ``(min <= 0, max >= 0)``."""

    swing_x: tuple
    swing_z: tuple
    twist: tuple

    def write(self, settings, enable=True):
        """Store the bounds on a ``PoseBone.dqik``; switch its limits on when ``enable``."""
        settings.swing_x_min, settings.swing_x_max = self.swing_x
        settings.swing_z_min, settings.swing_z_max = self.swing_z
        settings.twist_min, settings.twist_max = self.twist
        if enable:
            settings.use_limits = True


def _direction(name, side):
    lateral = Vector((-1.0 if side == 'R' else 1.0, 0.0, 0.0))
    up, down = Vector((0.0, 0.0, 1.0)), Vector((0.0, 0.0, -1.0))
    vectors = {
        'FORWARD': Vector((0.0, -1.0, 0.0)), 'BACK': Vector((0.0, 1.0, 0.0)),
        'UP': up, 'DOWN': down, 'LATERAL': lateral,
        'OUT_UP': (lateral + up).normalized(), 'PALM': (down - lateral).normalized(),
    }
    return vectors[name]


def _axis_scores(frame, direction):
    """How far positive swings about local X and Z move the tail towards ``direction``."""
    return {'x': frame.col[2].dot(direction), 'z': -frame.col[0].dot(direction)}


def _pick(frame, names, side, axes, threshold=0.5):
    """``(axis, sign)``: the axis of ``axes`` moving the tail best towards the first usable name."""
    for name in names:
        scores = _axis_scores(frame, _direction(name, side))
        axis = max(axes, key=lambda a: abs(scores[a]))
        if abs(scores[axis]) >= threshold:
            return axis, (1.0 if scores[axis] > 0 else -1.0)
    return axes[0], 1.0


def _rest_offset(frame, neutral_dir):
    """Local swing ``{'x','z'}`` (radians) that brings the bone from rest to the neutral posture."""
    if neutral_dir is None:
        return {'x': 0.0, 'z': 0.0}
    d = frame.col[1]
    axis = d.cross(neutral_dir)
    angle = d.angle(neutral_dir, 0.0)
    if axis.length < 1e-9:  # aligned (no offset) or opposite (ill-defined): leave as is
        return {'x': 0.0, 'z': 0.0}
    local = frame.transposed() @ (axis.normalized() * angle)
    return {'x': local.x, 'z': local.z}


def _clamp(lo, hi):
    return max(-math.pi, min(0.0, lo)), min(math.pi, max(0.0, hi))


def joint_bounds(rng, frame, side, neutral_dir=None, share=1):
    """The ``LimitBounds`` of a bone with rest orientation ``frame`` (3x3, world) for ``rng``."""
    bend_axis, bend_sign = _pick(frame, rng.bend_to, side, ('x', 'z'))
    side_axis = 'z' if bend_axis == 'x' else 'x'
    _, side_sign = _pick(frame, rng.side_to, side, (side_axis,))
    scale = math.radians(1.0) / share
    ranges = {}
    for axis, sign, ahead, back in ((bend_axis, bend_sign, rng.bend, rng.bend_back),
                                    (side_axis, side_sign, rng.side, rng.side_back)):
        lo, hi = (-back * scale, ahead * scale) if sign > 0 else (-ahead * scale, back * scale)
        ranges[axis] = (lo, hi)
    offset = _rest_offset(frame, neutral_dir)
    for axis, (lo, hi) in ranges.items():
        if lo != 0.0 or hi != 0.0:  # a locked axis stays locked
            ranges[axis] = _clamp(lo + offset[axis], hi + offset[axis])
    inward, outward = rng.twist_in * scale, rng.twist_out * scale
    twist = (-inward, outward) if side == 'R' else (-outward, inward)
    return LimitBounds(ranges['x'], ranges['z'], _clamp(*twist))


def character_frame(obj, matches):
    """The rotation (3x3) from the world to the character's own axes (+X its left, -Y its front,
    +Z up; module docstring): its left from the world heads of the ``matches`` (``{bone name:
    (joint, side)}``) named on each side, made horizontal, else the object's +X in the world."""
    to_world = obj.matrix_world.to_3x3()
    heads = {side: [to_world @ obj.data.bones[name].head_local
                    for name, (_, named) in matches.items() if named == side] for side in "LR"}
    left = Vector((to_world.col[0].x, to_world.col[0].y, 0.0))
    if heads['L'] and heads['R']:
        across = sum(heads['L'], Vector()) / len(heads['L']) \
            - sum(heads['R'], Vector()) / len(heads['R'])
        across.z = 0.0
        size = max(head.length for head in heads['L'] + heads['R'])
        left = across if across.length > 1e-3 * size else left     # (a rig lying on its side)
    if left.length < 1e-9:
        left = Vector((1.0, 0.0, 0.0))
    left.normalize()
    up = Vector((0.0, 0.0, 1.0))
    return Matrix((left, up.cross(left), up))   # rows: the character's axes in the world


def _character_frames(obj, to_character):
    """Rest orientation (3x3, in the character's axes, ``character_frame``) of every bone."""
    turn = to_character @ obj.matrix_world.to_3x3().normalized()
    return {b.name: (turn @ b.matrix_local.to_3x3()).normalized() for b in obj.data.bones}


def _neutral_direction(rng, bone, frames):
    if rng.neutral == 'DOWN':
        return Vector((0.0, 0.0, -1.0))
    if rng.neutral == 'PARENT' and bone.parent is not None:
        return frames[bone.parent.name].col[1]
    return None


def _side_of(obj, bone, side, to_character):
    if side is not None:
        return side
    x = (to_character @ obj.matrix_world.to_3x3() @ bone.head_local).x
    return 'L' if x >= 0.0 else 'R'


def plan_preset(obj, preset='HUMANOID', free=None):
    """``({bone name: (joint, LimitBounds)}, [unmatched bone names])`` for every bone of ``obj``
    but the root bones and the bone named ``free`` (the pelvis the preset gives Translation,
    which carries the whole body: a generated Rigify rig's ``torso``), which get none and take no
    share of a region's range."""
    ranges, patterns = PRESETS[preset]
    matches, unmatched = {}, []
    for bone in obj.data.bones:
        if bone.name == free:
            continue
        found = match_joint(bone.name, patterns) if bone.parent is not None else None
        if found is None:
            unmatched.append(bone.name)
        else:
            matches[bone.name] = found
    counts = {}
    for joint, _side in matches.values():
        counts[joint] = counts.get(joint, 0) + 1
    to_character = character_frame(obj, matches)
    frames = _character_frames(obj, to_character)
    plan = {}
    for name, (joint, side) in matches.items():
        rng, bone = ranges[joint], obj.data.bones[name]
        side = None if joint in CENTRAL_JOINTS else _side_of(obj, bone, side, to_character)
        bounds = joint_bounds(rng, frames[name], side, _neutral_direction(rng, bone, frames),
                              counts[joint] if rng.shared else 1)
        plan[name] = (joint, bounds)
    return plan, unmatched
