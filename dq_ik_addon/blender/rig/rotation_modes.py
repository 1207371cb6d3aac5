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
  - ``AXIS_ANGLE``: the unit axis of the hemisphere-continuous quaternion, on the previous
    axis's side (the previous axis kept through a zero angle), and the signed angle about it,
    ``2 atan2(v·axis, w)`` unwrapped to the previous frame's: it passes π and 2π instead of the
    axis flipping, and 0 on a swing through the rest pose.

Numpy over bones; the Euler and axis-angle passes loop over frames (each frame's value depends
on the previous one).
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
    bone); the identifiers (``QUATERNION``, ``XYZ`` …, ``AXIS_ANGLE``) are read from RNA once.
    The same ``modes`` as the last call's give that call's masks again (every tick and frame
    reads the modes; they seldom change): do not modify them."""
    key = (modes.dtype.str, modes.tobytes())
    if _LAST_MODES[0] == key:
        return _LAST_MODES[1]
    if not _MODE_IDENTIFIERS:
        _MODE_IDENTIFIERS.update(
            (item.value, item.identifier)
            for item in bpy.types.PoseBone.bl_rna.properties["rotation_mode"].enum_items)
    in_use = {_MODE_IDENTIFIERS[value]: value for value in set(modes.tolist())}
    found = {mode: modes == in_use[mode]
             for mode in sorted(in_use, key=lambda mode: (mode != 'QUATERNION', mode))}
    for mask in found.values():
        mask.flags.writeable = False
    _LAST_MODES[:] = [key, found]
    return found


_MODE_IDENTIFIERS = {}  # rotation_mode enum value → identifier
_LAST_MODES = [None, None]  # (the modes of the last call: their type and bytes; its masks)


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
    """(F,k,4) ``(angle, x, y, z)`` of continuous quaternions (module docstring); ``reference``
    (k,4) the channel before the first frame. A bone swinging through its rest pose about one
    axis keeps it, its angle passing 0 (with the angle kept ≥ 0 the axis flipped there, and
    keys a few frames apart played the swing as a hold and a snap)."""
    angle0, axis0 = reference[:, 0], reference[:, 1:]
    start = np.concatenate([np.cos(angle0 / 2)[:, None], np.sin(angle0 / 2)[:, None] * axis0], 1)
    q = hemisphere_continuous(q, start)
    sines = np.linalg.norm(q[..., 1:], axis=-1)
    axes = q[..., 1:] / np.maximum(sines, 1e-300)[..., None]
    out, axis, half = np.empty(q.shape), axis0, angle0 / 2.0
    for frame in range(len(q)):
        own = sines[frame] > 1e-9
        turned = np.where(own[:, None], axes[frame], axis)
        axis = np.where(((turned * axis).sum(axis=1) < 0.0)[:, None], -turned, turned)
        # the signed half angle about that axis, unwrapped to the previous frame's
        signed = np.arctan2((q[frame, :, 1:] * axis).sum(axis=1), q[frame, :, 0])
        half = signed + 2.0 * np.pi * np.round((half - signed) / (2.0 * np.pi))
        out[frame, :, 0], out[frame, :, 1:] = 2.0 * half, axis
    return out
