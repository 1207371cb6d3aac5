"""The frames where what drives a bake has keys: the armature itself (its bones' keys, e.g. keyed
hips the chains hang from), its targets and colliders, and what moves each of them (parents,
constraint targets, objects read by drivers).

Keys are read from each object's assigned action and slot (``AnimData.action_slot``: layers →
strips → ``channelbag(slot)``, ``bpy_extras/anim_utils.py``
``animdata_get_channelbag_for_assigned_slot``) and from the actions of its NLA strips, one
``foreach_get`` of ``co`` per curve. A strip's keys are placed where the strip plays them:
``frame_start + (key − action_frame_start + k·L) · scale`` in its k-th repeat (L the action
range's length), mirrored from ``frame_end`` when it plays in reverse, the keys inside the
strip's action range on the frames inside the strip.
"""

import math

import bpy
import numpy as np

from ..settings.scene_tasks import collision_settings
from .action_slots import slot_fcurves


def driving_objects(obj):
    """The objects that move ``obj``'s solve: ``obj`` itself (keys on the bones its chains hang
    from), its tasks' targets and its colliders, and what moves each of those: its parent, the
    targets of its constraints (and of its bones' constraints) and the objects its drivers
    read."""
    found = set()
    pending = [obj] + [pose_bone.dqik.target for pose_bone in obj.pose.bones
               if pose_bone.dqik.use_target and pose_bone.dqik.target is not None]
    colliders = collision_settings(obj)[0]
    if colliders is not None:
        pending += list(colliders.all_objects)
    while pending:
        thing = pending.pop()
        if thing is not None and thing not in found:
            found.add(thing)
            pending += _movers(thing)
    return found


def _movers(thing):
    """The objects that can move the object ``thing``: its parent, its constraints' targets
    (its pose bones' too) and the objects its drivers' variables read."""
    constraints = list(thing.constraints)
    if thing.pose is not None:
        constraints += [c for pose_bone in thing.pose.bones for c in pose_bone.constraints]
    movers = [thing.parent] + [getattr(c, "target", None) for c in constraints]
    data = thing.animation_data
    for driver in () if data is None else data.drivers:
        movers += [target.id for variable in driver.driver.variables
                   for target in variable.targets if isinstance(target.id, bpy.types.Object)]
    return movers


def keyed_frames(objects):
    """The sorted frames (unique) of every key of ``objects``."""
    frames = [np.empty(0)]
    for thing in objects:
        data = thing.animation_data
        if data is None:
            continue
        frames += [_key_frames(fcurve) for fcurve in slot_fcurves(data.action, data.action_slot)]
        for strip in (strip for track in data.nla_tracks if not track.mute
                      for strip in track.strips if not strip.mute and strip.action is not None):
            keys = [_key_frames(fcurve) for fcurve in slot_fcurves(strip.action, strip.action_slot)]
            frames += [_played(strip, np.concatenate(keys))] if keys else []
    return np.unique(np.concatenate(frames))


def _played(strip, keys):
    """The frames on which the NLA ``strip`` plays the action frames ``keys`` (module
    docstring)."""
    first, last = strip.action_frame_start, strip.action_frame_end
    keys = keys[(keys >= first) & (keys <= last)] - first
    length, scale = (last - first) * strip.scale, strip.scale
    cycles = np.arange(max(1, math.ceil(strip.repeat - 1e-9)))
    within = (keys[None, :] * scale + cycles[:, None] * length).ravel()
    frames = strip.frame_end - within if strip.use_reverse else strip.frame_start + within
    return frames[(frames >= strip.frame_start - 1e-6) & (frames <= strip.frame_end + 1e-6)]


def _key_frames(fcurve):
    points = fcurve.keyframe_points
    co = np.empty(len(points) * 2, dtype=np.float32)
    points.foreach_get("co", co)
    return co[0::2].astype(np.float64)
