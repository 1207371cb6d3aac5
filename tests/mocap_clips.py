"""Motion-capture clips made by the tests themselves (no third-party motion data): a procedural
walk keyed on the Rigify basic metarig, written with Blender's BVH exporter and read back with
its importer, so that the clip looks like real mocap (every joint keyed, locations on every bone,
Euler rotation modes from the file).

The walk: a 24-frame cycle at 30 fps; each leg is in stance for half the cycle, its thigh turning
from forwards to backwards while the body moves forwards by as much, so the foot stays nearly
still on the ground (a little skating, as in real captures), and in swing for the other half,
the knee bent to lift the foot; the arms swing against the legs; the hips bob to keep the planted
foot on the ground."""

import math

import bpy
import numpy as np
import rigs
from mathutils import Quaternion, Vector

CYCLE = 24             # frames per walk cycle (two steps)
SWING = 0.3            # the thigh's swing either side of straight down (radians)
KNEE = 1.0             # the knee's bend at the middle of a swing (radians)
STANCE_KNEE = 0.25     # the knee's bend while the foot is on the ground (radians)


def keyed_walk(obj, frames):
    """Key ``frames`` frames (from 1) of the walk on the basic metarig ``obj``: the rotation of
    the legs, arms and upper spine, and the location of the root ``spine``."""
    bones = obj.pose.bones
    upper, lower = bones["thigh.L"].length, bones["shin.L"].length
    stride = 2.0 * (upper + lower) * math.sin(SWING)   # about how far the body moves a stance
    to_root = bones["spine"].bone.matrix_local.to_3x3().inverted()
    for frame in range(1, frames + 1):
        phase = (frame - 1) / CYCLE
        turns, drops = _turns(phase), []
        for side, offset in (("L", 0.0), ("R", 0.5)):
            thigh, knee, stance = _leg(phase + offset)
            drops += [upper * (1.0 - math.cos(thigh)) + lower * (1.0 - math.cos(thigh + knee))
                      ] if stance else []
        key_turns(bones, _POSED, turns, frame)
        bones["spine"].location = to_root @ Vector((0.0, -stride * 2.0 * phase, -max(drops)))
        bones["spine"].keyframe_insert("location", frame=frame)


def key_turns(bones, posed, turns, frame):
    """Key the ``posed`` bones (``(name, the parent whose turn it inherits)``, each after its
    parent) on ``frame`` at their ``turns``: the armature-space rotation from rest to pose."""
    for name, parent in posed:
        pose_bone = bones[name]
        rest = pose_bone.bone.matrix_local.to_quaternion()
        above = turns.get(parent, Quaternion())
        pose_bone.rotation_quaternion = rest.inverted() @ above.inverted() @ turns[name] @ rest
        pose_bone.keyframe_insert("rotation_quaternion", frame=frame)


# the posed bones, each after its parent, with the parent whose turn it inherits
_POSED = (("spine.003", None), ("shoulder.L", "spine.003"), ("upper_arm.L", "shoulder.L"),
          ("forearm.L", "upper_arm.L"), ("shoulder.R", "spine.003"), ("upper_arm.R", "shoulder.R"),
          ("forearm.R", "upper_arm.R"), ("thigh.L", None), ("shin.L", "thigh.L"),
          ("thigh.R", None), ("shin.R", "thigh.R"))
_X, _Y, _Z = Vector((1.0, 0.0, 0.0)), Vector((0.0, 1.0, 0.0)), Vector((0.0, 0.0, 1.0))


def _turns(phase):
    """Each posed bone's turn in armature space at ``phase`` (cycles): the rotation that takes
    it from its rest to its pose. The metarig faces −Y; a turn about +X by a positive angle
    moves a bone that points down backwards."""
    twist = Quaternion(_Z, 0.08 * math.sin(2.0 * math.pi * phase))
    turns = {"spine.003": twist, "shoulder.L": twist, "shoulder.R": twist}
    for side, offset, hang in (("L", 0.0, 1.25), ("R", 0.5, -1.25)):
        thigh, knee, _ = _leg(phase + offset)
        turns[f"thigh.{side}"] = Quaternion(_X, thigh)
        turns[f"shin.{side}"] = Quaternion(_X, thigh + knee)
        swing = -0.35 * math.sin(2.0 * math.pi * (phase + offset))     # against the legs
        elbow = 0.6 + 0.25 * math.sin(2.0 * math.pi * (phase + offset))
        down = Quaternion(_Y, hang)         # the arm from the T-pose down to the side
        turns[f"upper_arm.{side}"] = twist @ Quaternion(_X, swing) @ down
        turns[f"forearm.{side}"] = twist @ Quaternion(_X, swing - elbow) @ down
    return turns


def _leg(phase):
    """``(thigh angle, knee angle, in stance)`` of a leg at ``phase`` (cycles)."""
    s = phase % 1.0
    if s < 0.5:
        return SWING * (4.0 * s - 1.0) - 0.5 * STANCE_KNEE, STANCE_KNEE, True
    s = 2.0 * (s - 0.5)
    return (SWING * math.cos(math.pi * s) - 0.5 * STANCE_KNEE,
            STANCE_KNEE + KNEE * math.sin(math.pi * s), False)


def walk_clip(folder, frames=2 * CYCLE):
    """The walk, ``frames`` frames long (``bvh_clip``)."""
    return bvh_clip(folder, "walk", keyed_walk, frames)


def bvh_clip(folder, name, key, frames):
    """``key(rig, frames)`` keyed on a basic metarig, exported to ``folder/<name>.bvh`` and
    imported back: the imported armature (ZXY-style Euler rotation modes and location keys on
    every bone, as real mocap), its source rig deleted. The scene's frame range is the clip's."""
    bpy.ops.preferences.addon_enable(module="io_anim_bvh")
    source = rigs.metarig("basic")
    key(source, frames)
    path = str(folder / f"{name}.bvh")
    bpy.ops.export_anim.bvh(filepath=path, frame_start=1, frame_end=frames)
    bpy.data.objects.remove(source)
    bpy.ops.import_anim.bvh(filepath=path, frame_start=1, axis_forward='Y', axis_up='Z')
    clip = bpy.context.active_object
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    scene.render.fps = 30
    scene.frame_set(1)
    return clip


def chain_rotations(obj, names):
    """(len(names), 4) local rotations of the bones ``names`` relative to rest, as Blender
    evaluated them (``PoseBone.matrix_basis``, constraints excluded)."""
    return np.array([obj.pose.bones[name].matrix_basis.to_quaternion() for name in names])


def angle_between(a, b):
    """Angles (radians) between the rotations of the quaternion rows ``a`` and ``b``:
    ``2 atan2(‖v‖, |w|)`` of ``b ⊗ a*`` in float64 (exact down to float32's own resolution,
    where ``arccos`` of the dot product is not)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    w = np.einsum("ki,ki->k", a, b)
    v = a[:, :1] * b[:, 1:] - b[:, :1] * a[:, 1:] - np.cross(a[:, 1:], b[:, 1:])
    return 2.0 * np.arctan2(np.linalg.norm(v, axis=1), np.abs(w))


FEET, HANDS = ("shin.L", "shin.R"), ("forearm.L", "forearm.R")   # tails: ankles and wrists
CHAIN = ("thigh.L", "shin.L", "thigh.R", "shin.R", "upper_arm.L", "forearm.L", "upper_arm.R",
         "forearm.R")


def clip_with_targets(folder, frames=2 * CYCLE, make=walk_clip):
    """The clip ``make`` makes (the walk; ``kick_clip.kick_clip``) with its ankles and wrists
    given targets by Targets from Animation (feet priority 1, hands 2, two-bone chains);
    returns the clip and ``{bone: target}``."""
    clip = make(folder, frames)
    bpy.ops.object.mode_set(mode='POSE')
    select(clip, FEET + HANDS)
    assert bpy.ops.dqik.targets_from_animation() == {'FINISHED'}
    for name in FEET + HANDS:
        settings = clip.pose.bones[name].dqik
        settings.priority, settings.chain_count = (1 if name in FEET else 2), 2
    return clip, {name: clip.pose.bones[name].dqik.target for name in FEET + HANDS}


def select(obj, names):
    """Select the pose bones ``names`` of ``obj`` only (``PoseBone.select`` from Blender 5.0,
    ``Bone.select`` before)."""
    for pose_bone in obj.pose.bones:
        owner = pose_bone if hasattr(pose_bone, "select") else pose_bone.bone
        owner.select = pose_bone.name in names


def animation_rotations(clip, frames):
    """``{frame: (8,4)}``: the chain bones' rotations as the clip animates them (Solve on Frame
    Change off)."""
    scene, out = bpy.context.scene, {}
    for frame in frames:
        scene.frame_set(frame)
        out[frame] = chain_rotations(clip, CHAIN)
    return out


def played(dqik, clip, frames):
    """``({frame: (8,4)}, {frame: iterations})`` of the chain bones as playback (or a jump, for
    a single frame) shows them with Solve on Frame Change."""
    scene, rotations, iterations = bpy.context.scene, {}, {}
    for frame in frames:
        scene.frame_set(frame)
        rotations[frame] = chain_rotations(clip, CHAIN)
        iterations[frame] = dqik.api.session_for(clip).last_result.iterations
    return rotations, iterations


def worst_pop(rotations, reference):
    """The largest turn (radians) of a chain bone between consecutive frames of
    ``rotations``, beyond the animation's own turn there (``reference``)."""
    frames = sorted(rotations)
    return max((angle_between(rotations[b], rotations[a])
                - angle_between(reference[b], reference[a])).max()
               for a, b in zip(frames, frames[1:]))


def location_curve(target, axis):
    """The F-curve of ``target``'s location along ``axis`` in its action's slot."""
    data = target.animation_data
    return data.action.layers[0].strips[0].channelbag(data.action_slot).fcurves.find(
        "location", index=axis)


def keyed_locations(target, frames):
    """(F,3) the keyed location of ``target`` on ``frames`` (its F-curves evaluated)."""
    curves = [location_curve(target, axis) for axis in range(3)]
    return np.array([[curve.evaluate(frame) for curve in curves] for frame in frames])


def bump(frame, first, last, ramp):
    """An edit's weight on ``frame``: 0 outside frames ``first`` to ``last``, 1 from ``ramp``
    frames inside them, eased between (smoothstep)."""
    rise = min(1.0, max(0.0, (frame - first) / ramp), max(0.0, (last - frame) / ramp))
    return rise * rise * (3.0 - 2.0 * rise)


def shift_keys(target, axis, offsets):
    """Add ``offsets`` ({frame: metres}) to the location keys of ``target`` along ``axis``."""
    curve = location_curve(target, axis)
    for point in curve.keyframe_points:
        shift = offsets.get(int(round(point.co.x)), 0.0)
        point.co.y += shift
        point.handle_left.y += shift
        point.handle_right.y += shift
    curve.update()
