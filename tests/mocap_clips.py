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


def keyed_walk(obj, frames):
    """Key ``frames`` frames (from 1) of the walk on the basic metarig ``obj``: the rotation of
    the legs, arms and upper spine, and the location of the root ``spine``."""
    bones = obj.pose.bones
    leg = bones["thigh.L"].length + bones["shin.L"].length
    stride = 2.0 * leg * math.sin(SWING)       # how far the body moves in one stance
    to_root = bones["spine"].bone.matrix_local.to_3x3().inverted()
    for frame in range(1, frames + 1):
        phase = (frame - 1) / CYCLE
        turns, drops = _turns(phase), []
        for side, offset in (("L", 0.0), ("R", 0.5)):
            thigh, _, stance = _leg(phase + offset)
            drops += [leg * (1.0 - math.cos(thigh))] if stance else []
        for name, parent in _POSED:
            pose_bone = bones[name]
            rest = pose_bone.bone.matrix_local.to_quaternion()
            above = turns.get(parent, Quaternion())
            pose_bone.rotation_quaternion = rest.inverted() @ above.inverted() @ turns[name] @ rest
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame)
        bones["spine"].location = to_root @ Vector((0.0, -stride * 2.0 * phase, -max(drops)))
        bones["spine"].keyframe_insert("location", frame=frame)


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
        return SWING * (4.0 * s - 1.0), 0.0, True
    s = 2.0 * (s - 0.5)
    return SWING * math.cos(math.pi * s), KNEE * math.sin(math.pi * s), False


def walk_clip(folder, frames=2 * CYCLE):
    """The walk, ``frames`` frames long, keyed on a basic metarig, exported to
    ``folder/walk.bvh`` and imported back: the imported armature (ZXY-style Euler rotation modes
    and location keys on every bone, as real mocap), its source rig deleted. The scene's frame
    range is the clip's."""
    bpy.ops.preferences.addon_enable(module="io_anim_bvh")
    source = rigs.metarig("basic")
    keyed_walk(source, frames)
    path = str(folder / "walk.bvh")
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
    """Angles (radians) between the rotations of the quaternion rows ``a`` and ``b``."""
    dots = np.abs(np.einsum("ki,ki->k", a, b))
    return 2.0 * np.arccos(np.clip(dots, 0.0, 1.0))
