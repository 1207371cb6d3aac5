"""Targets from Animation (``dqik.targets_from_animation``): for motion capture and keyed shots,
each effector bone's target Empty keyed on every frame of a range exactly where the bone's tail
and orientation are in the animation, so that the targets start out met and the animator edits
the targets, not the source.

The animation is sampled as Blender evaluates it (``scene.frame_set``: actions, NLA, drivers and
constraints), with Solve on Frame Change held off the armature meanwhile
(``Session.baking``), then the frame is put back. A bone's existing target is reused when it is
an object that nothing else moves (no parent, no constraints, no delta transform, which the
keyed location and rotation would be offset by); otherwise a new Empty is made
(``target_empties``). The keys go into an action of the Empty's own, made as a bake's is
(``keys.key_writer.prepare_action``): an action the Empty had is pushed down to the NLA, and
sampling again keeps a copy of what it replaces."""

import numpy as np

from ...engine import matrix_to_quat
from ..keys.bake_options import check_frame_range
from ..keys.key_writer import prepare_action, write_curves
from ..rig.arrays import evaluated_matrices
from ..rig.rotation_modes import hemisphere_continuous
from ..solving.sessions import session_for
from .target_empties import add_target_empty


def sample_effectors(obj, scene, rows, frames):
    """``(locations (F,k,3), quaternions (F,k,4))``: the world tails and orientations of the
    pose bones ``rows`` of ``obj`` on each of ``frames``, as the animation evaluates them."""
    session, saved = session_for(obj), (scene.frame_current, scene.frame_subframe)
    lengths = np.array([obj.pose.bones[row].bone.length for row in rows])
    locations, rotations = [], []
    session.baking = True
    try:
        for frame in frames:
            scene.frame_set(int(frame))
            world = np.array(obj.matrix_world) @ evaluated_matrices(obj.pose.bones)[rows]
            axes = world[:, :3, :3]
            locations.append(world[:, :3, 3] + lengths[:, None] * axes[:, :, 1])
            rotations.append(matrix_to_quat(axes))
    finally:
        session.baking = False
        scene.frame_set(saved[0], subframe=saved[1])
    return np.array(locations), np.array(rotations)


def targets_from_animation(obj, scene, pose_bones, frame_start, frame_end):
    """Key a target for each of ``pose_bones`` on every frame from ``frame_start`` to
    ``frame_end`` (module docstring); returns ``[(bone name, target name, made new)]``."""
    check_frame_range(frame_start, frame_end)
    frames = np.arange(frame_start, frame_end + 1, dtype=np.float64)
    rows = [obj.pose.bones.find(pose_bone.name) for pose_bone in pose_bones]
    locations, rotations = sample_effectors(obj, scene, rows, frames)
    done, used = [], set()
    for k, pose_bone in enumerate(pose_bones):
        target, made = _target_of(obj, pose_bone, used)
        used.add(target)
        target.rotation_mode = 'QUATERNION'
        channels = (("location", locations[:, k]),
                    ("rotation_quaternion", hemisphere_continuous(
                        rotations[:, k][:, None], rotations[0, k][None])[:, 0]))
        channelbag, _ = prepare_action(target, 'NEW', [path for path, _ in channels])
        write_curves(channelbag, [(path, index, "Object Transforms", frames, values[:, index])
                                  for path, values in channels
                                  for index in range(values.shape[1])],
                     (frame_start, frame_end))
        settings = pose_bone.dqik
        settings.use_target, settings.target, settings.subtarget = True, target, ""
        done.append((pose_bone.name, target.name, made))
    return done


def _target_of(obj, pose_bone, used):
    """``(target, made)``: the bone's target when nothing else moves it and no other bone of
    this call keys it (``used``), else a new Empty."""
    target = pose_bone.dqik.target
    if target is not None and target.type != 'ARMATURE' and target.parent is None \
            and not target.constraints and target not in used and _no_delta(target):
        return target, False
    return add_target_empty(obj, pose_bone), True


def _no_delta(target):
    """``target``'s delta location and rotations are the identity."""
    return not any(target.delta_location) and not any(target.delta_rotation_euler) \
        and tuple(target.delta_rotation_quaternion) == (1.0, 0.0, 0.0, 0.0)
