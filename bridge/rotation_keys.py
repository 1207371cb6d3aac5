"""Rotation keys in each bone's own rotation mode, continuous from frame to frame.

A bake records every frame's rotation of a bone as a unit quaternion relative to rest (w first).
Blender interpolates each F-curve channel on its own, so keys that describe the same rotations
with a sign flip (q and -q) or a 2π wrap of an Euler angle make the curves sweep the long way
between two frames. ``channel_values`` turns the quaternions into the values of the bone's
rotation channel with:

- ``QUATERNION``: hemisphere continuity, every key's dot product with the previous one ≥ 0,
  the first key on the side of ``reference`` (the channel's value before the bake), as
  ``mathutils.Quaternion.make_compatible`` does in Blender's own bake
  (``bpy_extras/anim_utils.py``, ``bake_action_iter``);
- Euler orders: each frame's angles the triple closest to the previous frame's
  (``ik_engine.euler.quat_to_euler`` with ``compat``, as ``Matrix.to_euler(order, compat)``);
- ``AXIS_ANGLE``: the angle ``2 atan2(|v|, w)`` of the hemisphere-continuous quaternion (it may
  pass π instead of flipping the axis) and its unit axis, the previous axis kept through a zero
  angle.

Numpy over bones and frames; the Euler pass loops over frames only (each frame's compatible
triple depends on the previous one).
"""

import numpy as np

from ..ik_engine.euler import quat_to_euler

CHANNEL = {'QUATERNION': "rotation_quaternion", 'AXIS_ANGLE': "rotation_axis_angle"}


def channel_of(mode):
    """The pose-bone rotation channel a ``rotation_mode`` keys."""
    return CHANNEL.get(mode, "rotation_euler")


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
    values before the bake."""
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
    before the bake, whose axis stands in until the first non-zero angle."""
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
