"""A second motion-capture clip made by the tests (no third-party motion data): a kick keyed on
the Rigify basic metarig and round-tripped through Blender's BVH exporter and importer as the
walk is (``mocap_clips.bvh_clip``).

The right leg kicks, 75 frames at 30 fps: it draws back and chambers (frames 1-10), swings up
to about 92° with the knee bent up to 97° (10-28), snaps the knee straight (28-33: 1.5 to 0.05
rad in five frames), holds, comes down (40-60) and stands; the standing leg bends a little and
the root moves so that its ankle stays where it is; the spine leans back up to 0.3 rad and
turns towards the kick, the arms swing against it for balance. Its largest turn of a bone
between two frames is about 26°: faster than the walk, and with the leg at full extension."""

import math

import mocap_clips as mc
from mathutils import Quaternion, Vector

FRAMES = 75
KICK, STAND = "shin.R", "shin.L"     # the kicking and the standing leg's effectors (ankles)

# (frame, value) keys of each curve, eased between keys (``_eased``); angles in radians: a
# thigh's about +X (negative: forwards and up), a knee's bend, the spine's lean (negative:
# back) and turn, an arm's swing (negative: forwards), elbow bend and hang from the T-pose
_THIGH = {"R": ((1, -0.05), (10, 0.30), (28, -1.60), (36, -1.62), (48, -0.60), (60, -0.05)),
          "L": ((1, -0.05), (28, -0.22), (45, -0.20), (60, -0.08), (75, -0.05))}
_KNEE = {"R": ((1, 0.10), (10, 0.95), (22, 1.70), (28, 1.50), (33, 0.05), (40, 0.05),
               (50, 0.70), (60, 0.15), (75, 0.10)),
         "L": ((1, 0.10), (28, 0.40), (45, 0.38), (60, 0.15), (75, 0.10))}
_LEAN = ((1, 0.0), (12, 0.05), (32, -0.30), (42, -0.28), (60, -0.02), (75, 0.0))
_TURN = ((1, 0.0), (12, -0.10), (32, 0.25), (45, 0.20), (65, 0.0))
_SWING = {"L": ((1, 0.0), (12, 0.35), (32, -0.95), (42, -0.85), (60, -0.1), (75, 0.0)),
          "R": ((1, 0.0), (12, -0.30), (32, 0.75), (42, 0.70), (60, 0.1), (75, 0.0))}
_ELBOW = {"L": ((1, 0.5), (32, 1.2), (45, 1.0), (75, 0.5)), "R": ((1, 0.5), (32, 0.3), (75, 0.5))}
_HANG = {"L": ((1, 1.25), (32, 1.05), (65, 1.25)), "R": ((1, -1.25), (32, -0.75), (45, -0.8),
                                                          (65, -1.25))}
_POSED = (("spine.001", None), ("spine.002", "spine.001"), ("spine.003", "spine.002"),
          ("shoulder.L", "spine.003"), ("upper_arm.L", "shoulder.L"),
          ("forearm.L", "upper_arm.L"), ("shoulder.R", "spine.003"),
          ("upper_arm.R", "shoulder.R"), ("forearm.R", "upper_arm.R"),
          ("thigh.L", None), ("shin.L", "thigh.L"), ("thigh.R", None), ("shin.R", "thigh.R"))
_X, _Y, _Z = Vector((1.0, 0.0, 0.0)), Vector((0.0, 1.0, 0.0)), Vector((0.0, 0.0, 1.0))


def _eased(keys, frame):
    """The curve through ``keys`` at ``frame``: cosine-eased between successive keys, held
    outside them."""
    if frame <= keys[0][0]:
        return keys[0][1]
    for (first, start), (last, end) in zip(keys, keys[1:]):
        if frame <= last:
            return start + (end - start) * 0.5 * (1.0 - math.cos(math.pi * (frame - first)
                                                               / (last - first)))
    return keys[-1][1]


def _turns(frame):
    """Each posed bone's turn in armature space at ``frame`` (``mocap_clips.key_turns``)."""
    lean = _eased(_LEAN, frame)
    torso = Quaternion(_X, lean) @ Quaternion(_Z, _eased(_TURN, frame))
    turns = {"spine.001": Quaternion(_X, 0.5 * lean), "spine.002": torso, "spine.003": torso,
             "shoulder.L": torso, "shoulder.R": torso}
    for side in "LR":
        thigh = _eased(_THIGH[side], frame)
        turns[f"thigh.{side}"] = Quaternion(_X, thigh)
        turns[f"shin.{side}"] = Quaternion(_X, thigh + _eased(_KNEE[side], frame))
        swing, down = _eased(_SWING[side], frame), Quaternion(_Y, _eased(_HANG[side], frame))
        turns[f"upper_arm.{side}"] = torso @ Quaternion(_X, swing) @ down
        turns[f"forearm.{side}"] = torso @ Quaternion(_X, swing - _eased(_ELBOW[side], frame)) \
            @ down
    return turns


def keyed_kick(obj, frames=FRAMES):
    """Key ``frames`` frames (from 1) of the kick on the basic metarig ``obj``: the posed bones'
    rotations and the root ``spine``'s location, which keeps the standing ankle still (the legs
    taken as hanging straight down from the hips)."""
    bones = obj.pose.bones
    upper, lower = bones["thigh.L"].length, bones["shin.L"].length
    to_root = bones["spine"].bone.matrix_local.to_3x3().inverted()

    def ankle(thigh, knee):         # from the hip, the metarig facing −Y
        return Vector((0.0, upper * math.sin(thigh) + lower * math.sin(thigh + knee),
                       -upper * math.cos(thigh) - lower * math.cos(thigh + knee)))
    for frame in range(1, frames + 1):
        mc.key_turns(bones, _POSED, _turns(frame), frame)
        bones["spine"].location = to_root @ (ankle(0.0, 0.0) - ankle(
            _eased(_THIGH["L"], frame), _eased(_KNEE["L"], frame)))
        bones["spine"].keyframe_insert("location", frame=frame)


def kick_clip(folder, frames=FRAMES):
    """The kick, ``frames`` frames long (``mocap_clips.bvh_clip``)."""
    return mc.bvh_clip(folder, "kick", keyed_kick, frames)
