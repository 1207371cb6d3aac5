"""Blender's pose matrix of a bone from its parent's, for every bone flag, batched over bones.

Blender computes a bone's pose matrix from its channels ``C = [R(q) S(s) | l]`` (the location
zeroed for connected bones, ``BKE_pchan_to_mat4``) and a *parent transform* made of a
rotation/scale matrix ``RS``, a location matrix ``L`` and a post scale ``p``
(``BKE_bone_parent_transform_calc_from_matrices`` and ``BKE_bone_parent_transform_apply`` in
``source/blender/blenkernel/intern/armature.cc``):

    M[:3,:3] = (RS · C)[:3,:3] · diag(p),     M[:3,3] = L · (l, 1).

With ``O`` the bone's rest offset in its parent (``BKE_bone_offset_matrix_get``: the rest
frame, its head moved by the parent's length along Y), ``P`` the parent's pose matrix and ``A``
the parent's rest matrix (``arm_mat``):

- inherit rotation and scale FULL: ``RS = L = P · O``, ``p = 1`` (the usual case);
- otherwise ``RS = T · O`` with ``T`` taken from ``P`` when rotation is inherited (scale and
  shear removed for NONE and AVERAGE, ``orthogonalize_m4_stable(·, Y, normalize)``; only scale
  for NONE_LEGACY; orthogonalized with the scale moved into ``p`` for ALIGNED), or from ``A``
  when it is not (rescaled by P's axis lengths for FULL, by the shear-fixed ones for FIX_SHEAR;
  ALIGNED moves those into ``p``); AVERAGE scales ``T`` by ``∛|det P|``; FIX_SHEAR then
  orthogonalizes ``RS`` preserving volume; ``L = P · O``;
- without local location, ``L = [P[:3,:3] | P · O_head]``: the channels' location is taken in
  the parent's pose axes.

Root bones: ``RS = B`` (the rest matrix), ``L = B``, or ``L = [I | B_head]`` without local location.
Matrices are (k, 4, 4) with column vectors: column i of the 3×3 part is Blender's ``m[i]``.
"""

import numpy as np

# ``Bone.inherit_scale`` (eBone_InheritScaleMode in DNA_armature_types.h)
FULL, FIX_SHEAR, AVERAGE, NONE, NONE_LEGACY, ALIGNED = range(6)
INHERIT_SCALE_MODES = {'FULL': FULL, 'FIX_SHEAR': FIX_SHEAR, 'AVERAGE': AVERAGE, 'NONE': NONE,
                       'NONE_LEGACY': NONE_LEGACY, 'ALIGNED': ALIGNED}


def channel_matrices(rotation_matrices, locations, scales):
    """``C = [R S | l]`` (k,4,4) from rotation matrices (k,3,3), locations and scales (k,3)."""
    out = np.zeros((len(rotation_matrices), 4, 4))
    out[:, :3, :3] = rotation_matrices * scales[:, None, :]
    out[:, :3, 3] = locations
    out[:, 3, 3] = 1.0
    return out


def _column_lengths(m):
    return np.linalg.norm(m[:, :3, :3], axis=1)


def _orthogonalize_y(m, normalize):
    """Blender's ``orthogonalize_m4_stable(m, 1, normalize)`` on the 3×3 parts of (k,4,4): the X
    and Z axes projected off Y (which keeps the determinant), then turned symmetrically until
    they are perpendicular; with ``normalize`` all three made unit length (``math_matrix.cc``)."""
    out = m.copy()
    y, x, z = out[:, :3, 1], out[:, :3, 0], out[:, :3, 2]
    y_sq = np.einsum('ki,ki->k', y, y)
    safe = np.where(y_sq > 0.0, y_sq, 1.0)[:, None]
    has_y = (y_sq > 0.0)[:, None]
    x = np.where(has_y, x - y * np.einsum('ki,ki->k', x, y)[:, None] / safe, x)
    z = np.where(has_y, z - y * np.einsum('ki,ki->k', z, y)[:, None] / safe, z)
    if normalize:
        y = np.where(has_y, y / np.sqrt(safe), y)
    length_x = np.linalg.norm(x, axis=1)
    length_z = np.linalg.norm(z, axis=1)
    unit_x = x / np.where(length_x > 0.0, length_x, 1.0)[:, None]
    unit_z = z / np.where(length_z > 0.0, length_z, 1.0)[:, None]
    cos = np.einsum('ki,ki->k', unit_x, unit_z)
    sheared = (np.abs(cos) > 1e-4) & (np.abs(cos) < 1.0 - np.finfo(np.float32).eps)
    angle = np.arccos(np.clip(cos, -1.0, 1.0))
    target = angle + (np.pi / 2 - angle) / 2
    new_x = unit_x - unit_z * cos[:, None]
    new_x *= (np.sin(target) / np.maximum(np.linalg.norm(new_x, axis=1), 1e-30))[:, None]
    new_x += unit_z * np.cos(target)[:, None]
    new_z = np.cross(np.cross(new_x, unit_z), new_x)
    new_z /= np.maximum(np.linalg.norm(new_z, axis=1), 1e-30)[:, None]
    keep = np.sqrt(np.sin(angle))
    if normalize:
        x = np.where(sheared[:, None], new_x, unit_x)
        z = np.where(sheared[:, None], new_z, unit_z)
    else:
        x = np.where(sheared[:, None], new_x * (length_x * keep)[:, None], x)
        z = np.where(sheared[:, None], new_z * (length_z * keep)[:, None], z)
    out[:, :3, 0], out[:, :3, 1], out[:, :3, 2] = x, y, z
    return out


def _size_fix_shear(m):
    """``mat4_to_size_fix_shear``: the axis lengths scaled so that their product is |det|."""
    size = _column_lengths(m)
    volume = size.prod(axis=1)
    det = np.abs(np.linalg.det(m[:, :3, :3]))
    factor = np.cbrt(det / np.where(volume != 0.0, volume, 1.0))
    return size * np.where(volume != 0.0, factor, 1.0)[:, None]


def child_pose(offsets, parent_rest, parent_pose, channels, inherit_rotation, local_location,
               inherit_scale):
    """Pose matrices (k,4,4) of k child bones from their rest ``offsets`` O, their parents' rest
    matrices A and pose matrices P, their channel matrices C and flags (module docstring)."""
    k = len(offsets)
    full = inherit_rotation & (inherit_scale == FULL)
    post = np.ones((k, 3))
    tmat = np.where(inherit_rotation[:, None, None], parent_pose, parent_rest)
    rotating = ~full & inherit_rotation
    hinged = ~inherit_rotation
    unscaled = rotating & ((inherit_scale == NONE) | (inherit_scale == AVERAGE))
    aligned = rotating & (inherit_scale == ALIGNED)
    legacy = rotating & (inherit_scale == NONE_LEGACY)
    if unscaled.any():
        tmat[unscaled] = _orthogonalize_y(tmat[unscaled], True)
    if aligned.any():
        tmat[aligned] = _orthogonalize_y(tmat[aligned], False)
        post[aligned] = _column_lengths(tmat[aligned])
    normalized = aligned | legacy
    if normalized.any():
        tmat[normalized, :3, :3] /= np.maximum(_column_lengths(tmat[normalized]), 1e-30)[:, None, :]
    rescaled = hinged & (inherit_scale == FULL)
    if rescaled.any():
        tmat[rescaled, :3, :3] *= _column_lengths(parent_pose[rescaled])[:, None, :]
    fixed = hinged & ((inherit_scale == FIX_SHEAR) | (inherit_scale == ALIGNED))
    if fixed.any():
        sizes = _size_fix_shear(parent_pose[fixed])
        shear = inherit_scale[fixed] == FIX_SHEAR
        scaled = tmat[fixed]
        scaled[shear, :3, :3] *= sizes[shear][:, None, :]
        tmat[fixed] = scaled
        post[fixed] = np.where(shear[:, None], 1.0, sizes)
    average = ~full & (inherit_scale == AVERAGE)
    if average.any():
        tmat[average, :3, :3] *= np.cbrt(np.abs(np.linalg.det(parent_pose[average, :3, :3])))[:, None, None]
    rotscale = np.where(full[:, None, None], parent_pose, tmat) @ offsets
    shear_fixed = ~full & (inherit_scale == FIX_SHEAR)
    if shear_fixed.any():
        rotscale[shear_fixed] = _orthogonalize_y(rotscale[shear_fixed], False)
    location = parent_pose @ offsets
    free = ~local_location
    location[free, :3, :3] = parent_pose[free, :3, :3]
    return _applied(rotscale, location, post, channels)


def root_pose(rest, channels, local_location):
    """Pose matrices of root bones from their rest matrices B and channel matrices C."""
    location = rest.copy()
    location[~local_location, :3, :3] = np.eye(3)
    return _applied(rest, location, np.ones((len(rest), 3)), channels)


def _applied(rotscale, location, post, channels):
    """``BKE_bone_parent_transform_apply``: ``[(RS · C)[:3,:3] · diag(p) | L · (l, 1)]``."""
    out = rotscale @ channels
    out[:, :, 3] = np.einsum('kij,kj->ki', location, channels[:, :, 3])
    out[:, :3, :3] *= post[:, None, :]
    return out
