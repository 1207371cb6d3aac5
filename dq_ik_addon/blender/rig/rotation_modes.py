"""Rotation modes: a pose bone's rotation channel in its ``rotation_mode`` ⇄ unit quaternions
relative to rest (w first), batched over bones and frames. The one place the reader
(``pose.PoseArrays``), the pose writer and the bake's keys convert.

- To quaternions, as Blender evaluates a channel (``BKE_pchan_rot_to_mat3``): quaternions
  normalized, axis-angle axes normalized (Bartelink Def. 4.2.1), Euler angles in their order.
- From quaternions, continuous with the value before, so F-curves interpolate the short way:
  - ``QUATERNION``: hemisphere continuity, every value's dot product with the previous one ≥ 0,
    as ``mathutils.Quaternion.make_compatible`` does in Blender's own bake
    (``bpy_extras/anim_utils.py``, ``bake_action_iter``);
  - Euler orders: each value the triple closest to the previous one
    (``engine.euler.quat_to_euler`` with ``compat``, as ``Matrix.to_euler(order, compat)``);
  - ``AXIS_ANGLE``: the angle ``2 atan2(|v|, w)`` of the hemisphere-continuous quaternion (it
    may pass π instead of flipping the axis) and its unit axis, the previous axis kept through
    a zero angle.

Numpy over bones and frames; the Euler pass loops over frames only (each frame's compatible
triple depends on the previous one).
"""

import bpy
import numpy as np

from ...engine import euler_to_quat, qnormalize, quat_from_axis_angle, quat_to_euler

CHANNEL = {'QUATERNION': "rotation_quaternion", 'AXIS_ANGLE': "rotation_axis_angle"}


def channel_of(mode):
    """The pose-bone rotation channel a ``rotation_mode`` keys."""
    return CHANNEL.get(mode, "rotation_euler")


def bones_by_mode(modes):
    """``{rotation_mode identifier: (n,) mask of its bones}`` for every mode in use (quaternion
    first, then by name), from the bones' ``rotation_mode`` enum values ``modes`` (n,), read
    with one ``foreach_get`` (a Python loop over the bones' ``rotation_mode`` costs ~0.6 µs a
    bone); the identifiers (``QUATERNION``, ``XYZ`` …, ``AXIS_ANGLE``) are read from RNA once."""
    if not _MODE_IDENTIFIERS:
        _MODE_IDENTIFIERS.update(
            (item.value, item.identifier)
            for item in bpy.types.PoseBone.bl_rna.properties["rotation_mode"].enum_items)
    in_use = {_MODE_IDENTIFIERS[value]: value for value in set(modes.tolist())}
    return {mode: modes == in_use[mode]
            for mode in sorted(in_use, key=lambda mode: (mode != 'QUATERNION', mode))}


_MODE_IDENTIFIERS = {}  # rotation_mode enum value → identifier


def to_quaternions(mode, values):
    """(..., c) channel values of ``mode`` → (..., 4) unit quaternions, as Blender evaluates
    them (``BKE_pchan_rot_to_mat3``: quaternions normalized, axis-angle axes normalized)."""
    if mode == 'QUATERNION':
        return qnormalize(values)
    if mode == 'AXIS_ANGLE':
        return quat_from_axis_angle(values[..., 1:], values[..., 0])
    return euler_to_quat(values, mode)


def from_quaternions(mode, quaternions, previous):
    """(k,c) values of the rotation channel of ``mode`` for (k,4) quaternions, continuous with
    the channel's (k,c) values ``previous`` (see the module docstring)."""
    return channel_values(np.asarray(quaternions, dtype=np.float64)[None], mode, previous)[0]


def hemisphere_continuous(quaternions, reference):
    """(F,k,4) quaternions with signs flipped so each frame's dot product with the previous
    frame's is ≥ 0 and the first frame's with ``reference`` (k,4) is ≥ 0."""
    q = np.asarray(quaternions, dtype=np.float64)
    previous = np.concatenate([np.asarray(reference, dtype=np.float64)[None], q[:-1]])
    flips = np.where(np.einsum('fki,fki->fk', q, previous) < 0.0, -1.0, 1.0)
    return q * np.cumprod(flips, axis=0)[..., None]


def channel_values(quaternions, mode, reference):
    """The (F,k,c) values of the rotation channel of ``mode`` for (F,k,4) quaternions of k bones
    over F frames, continuous (see the module docstring); ``reference``: the channel's (k,c)
    values before the first frame."""
    q = np.asarray(quaternions, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if mode == 'QUATERNION':
        return hemisphere_continuous(q, reference)
    if mode == 'AXIS_ANGLE':
        return _axis_angles(q, reference)
    out = np.empty(q.shape[:-1] + (3,))
    previous = reference
    for frame in range(len(q)):
        previous = out[frame] = quat_to_euler(q[frame], mode, compat=previous)
    return out


def _axis_angles(q, reference):
    """(F,k,4) ``(angle, x, y, z)`` of continuous quaternions; ``reference`` (k,4) the channel
    before the first frame, whose axis stands in until the first non-zero angle."""
    angle0, axis0 = reference[:, 0], reference[:, 1:]
    start = np.concatenate([np.cos(angle0 / 2)[:, None], np.sin(angle0 / 2)[:, None] * axis0], 1)
    q = hemisphere_continuous(q, start)
    sines = np.linalg.norm(q[..., 1:], axis=-1)
    angle = 2.0 * np.arctan2(sines, q[..., 0])
    turning = sines > 1e-9
    # the last frame (reference: -1) with an axis of its own, for every frame and bone
    last = np.maximum.accumulate(np.where(turning, np.arange(len(q))[:, None], -1), axis=0)
    axes = np.concatenate([axis0[None], q[..., 1:] / np.maximum(sines, 1e-300)[..., None]])
    axis = np.take_along_axis(axes, (last + 1)[..., None], axis=0)
    return np.concatenate([angle[..., None], axis], axis=-1)
