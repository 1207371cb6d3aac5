"""Plant (``dqik.plant``): hold a keyed target still while its effector is on the ground.

A *contact phase* is a run of at least ``min_frames`` frames in which the target is both low
(within ``height`` of its lowest point over the range, along the world's up axis) and slow
(under ``speed``, world metres per second at the scene's frame rate), as motion-capture tools
detect foot contacts. Over each phase the target is held at the phase's first position, which
removes the skating of the capture; over ``blend`` frames before and after it, the keys ease
from the animation to the held point and back (smoothstep), so the leg does not snap. Keys
between the frames (a capture keyed on half frames) are held and eased the same way.

The target's location keys are read and written by their F-curves (``keys.action_slots``), so
the target must be keyed on every frame of the range (``dqik.targets_from_animation`` makes
such targets) and must not be parented: its location is its world position. The operator plants
each target over the frames it is keyed on (``keyed_span``), whatever the scene's range, or over
the Start–End range it is given."""

import math
from typing import NamedTuple

import numpy as np

from ..errors import ArmatureError
from ..keys.action_slots import slot_fcurves


class Phase(NamedTuple):
    """A contact phase: its first and last frame, and the point it is held at."""

    first: int
    last: int
    point: tuple


def contact_phases(frames, points, fps, height, speed, min_frames):
    """The ``Phase`` runs of ``points`` ((F,3) world positions on ``frames``, consecutive)."""
    up = points[:, 2] - points[:, 2].min()
    moved = np.linalg.norm(np.diff(points, axis=0), axis=1) * fps
    # a frame's speed: the larger of the steps into and out of it
    speeds = np.maximum(np.append(moved, moved[-1:]), np.insert(moved, 0, moved[:1]))
    still = (up <= height) & (speeds <= speed)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], still.astype(np.int8), [0]])))
    return [Phase(int(frames[a]), int(frames[b - 1]), tuple(points[a].tolist()))
            for a, b in zip(edges[0::2], edges[1::2]) if b - a >= min_frames]


def planted(frames, points, phases, blend):
    """(F,3) ``points`` held over each of ``phases`` and eased in and out over ``blend``
    frames (module docstring)."""
    weights = np.zeros(len(frames))
    held = points.copy()
    for phase in phases:
        hold = np.array(phase.point)
        ramp_in = np.clip((frames - (phase.first - blend - 1)) / (blend + 1), 0.0, 1.0)
        ramp_out = np.clip(((phase.last + blend + 1) - frames) / (blend + 1), 0.0, 1.0)
        weight = np.minimum(ramp_in, ramp_out)
        weight = weight * weight * (3.0 - 2.0 * weight)
        closer = weight > weights
        held[closer] = (1.0 - weight[closer, None]) * points[closer] + weight[closer, None] * hold
        weights = np.maximum(weights, weight)
    return held


def keyed_span(target):
    """``(first, last)``: the whole frames from the first to the last frame on which all three
    of ``target``'s location curves have keys (the range Targets from Animation keyed)."""
    spans = [_key_frames(curve) for curve in _location_curves(target)]
    if not all(span.size for span in spans):
        raise ArmatureError(f"'{target.name}' has a location curve with no keys; make it with "
                            "Targets from Animation first")
    first, last = max(span.min() for span in spans), min(span.max() for span in spans)
    return math.ceil(first), math.floor(last)


def plant(target, scene, frame_start, frame_end, height, speed, blend, min_frames):
    """Find the contact phases of ``target`` over the frame range and hold it still over each
    (module docstring); returns the phases."""
    for name, value in (("Height", height), ("Speed", speed)):
        if not (math.isfinite(value) and value >= 0.0):
            raise ArmatureError(f"Plant's {name} must be a finite value ≥ 0, not {value!r}")
    if target.parent is not None:
        raise ArmatureError(f"'{target.name}' is parented to '{target.parent.name}': Plant keys "
                            "world positions into its location; unparent it first")
    curves = _location_curves(target)
    frames = np.arange(frame_start, frame_end + 1, dtype=np.float64)
    if len(frames) < 2:
        raise ArmatureError(f"The frame range {frame_start}–{frame_end} is too short to plant")
    fps = scene.render.fps / scene.render.fps_base
    phases = contact_phases(frames, _evaluated(curves, frames), fps, height, speed, min_frames)
    for axis, curve in enumerate(curves):
        # the frames and every key between them (a capture keyed on half frames): each held
        keyed = np.union1d(frames, [f for f in _key_frames(curve) if frame_start < f < frame_end])
        held = planted(keyed, _evaluated(curves, keyed), phases, blend)
        _set_keys(target, curve, keyed, held[:, axis])
    return phases


def _evaluated(curves, frames):
    """(F,3) the location the three ``curves`` give on ``frames``."""
    return np.array([[curve.evaluate(frame) for curve in curves] for frame in frames])


def _key_frames(curve):
    """The frames ``curve`` has keys on."""
    co = np.empty(2 * len(curve.keyframe_points), dtype=np.float32)
    curve.keyframe_points.foreach_get("co", co)
    return co[0::2].astype(np.float64)


def _location_curves(target):
    """The three location F-curves of ``target``'s action in its slot (x, y, z)."""
    data = target.animation_data
    found = {} if data is None else {
        curve.array_index: curve for curve in slot_fcurves(data.action, data.action_slot)
        if curve.data_path == "location"}
    if len(found) < 3:
        raise ArmatureError(f"'{target.name}' has no location keys to plant; make it with "
                            "Targets from Animation first")
    return [found[axis] for axis in range(3)]


def _set_keys(target, curve, frames, values):
    """Set the value of ``target``'s F-curve ``curve``'s keys on ``frames`` (each keyed)."""
    points = curve.keyframe_points
    co = np.empty(2 * len(points), dtype=np.float32)
    points.foreach_get("co", co)
    keyed = co[0::2]
    index = np.searchsorted(keyed, frames)
    index = np.minimum(index, len(keyed) - 1)
    exact = keyed[index] == frames
    if not exact.all():
        missing = frames[~exact][0]
        raise ArmatureError(f"'{target.name}' has no key on frame {missing:g}: Plant "
                            "needs a key on every frame (Targets from Animation makes them)")
    co[1::2][index] = values
    points.foreach_set("co", co)
    for side in ("handle_left", "handle_right"):
        handles = np.empty(2 * len(points), dtype=np.float32)
        points.foreach_get(side, handles)
        handles[1::2][index] = values
        points.foreach_set(side, handles)
    curve.update()
