"""Euler angles in Blender's six orders, to and from quaternions, batched.

Blender's order ``'ABC'`` applies A first: ``R = R_C(θ_C) · R_B(θ_B) · R_A(θ_A)``, i.e.
``q = q_C ⊗ q_B ⊗ q_A``. The inverse is the Tait–Bryan extraction for axes (i, j, k) with parity
s = +1 for cyclic orders: ``θ_j = asin(−s R[k,i])``, ``θ_i = atan2(s R[k,j], R[k,k])``,
``θ_k = atan2(s R[j,i], R[i,i])`` (Shoemake, Graphics Gems IV "Euler angle conversion").
Of the two equivalent triples, and of their 2π-shifts, the one closest to a previous Euler
value is chosen, as ``mathutils.Quaternion.to_euler(order, compat)`` does, so keyed curves do
not flip.
"""

import numpy as np

from .quaternion import quat_to_matrix

EULER_ORDERS = ('XYZ', 'XZY', 'YXZ', 'YZX', 'ZXY', 'ZYX')
_AXIS = {'X': 0, 'Y': 1, 'Z': 2}


def _axes(order):
    i, j, k = (_AXIS[c] for c in order)
    parity = 1.0 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1.0
    return i, j, k, parity


def euler_to_quat(angles, order='XYZ'):
    """(...,3) Euler angles (x, y, z components, as ``rotation_euler``) → (...,4) quaternions.

    ``q = q_k ⊗ q_j ⊗ q_i`` (module docstring) multiplied out, with ``c_a = cos(θ_a/2)``,
    ``s_a = sin(θ_a/2)`` and the order's parity p:

        w = c_i c_j c_k + p s_i s_j s_k      v_i = s_i c_j c_k − p c_i s_j s_k
        v_j = c_i s_j c_k + p s_i c_j s_k    v_k = c_i c_j s_k − p s_i s_j c_k
    """
    half = 0.5 * np.asarray(angles, dtype=np.float64)
    i, j, k, p = _axes(order)
    c, s = np.cos(half), np.sin(half)
    ci, cj, ck, si, sj, sk = c[..., i], c[..., j], c[..., k], s[..., i], s[..., j], s[..., k]
    cc, ss = ci * cj, si * sj
    q = np.empty(half.shape[:-1] + (4,))
    q[..., 0] = cc * ck + p * ss * sk
    q[..., 1 + i] = si * cj * ck - p * ci * sj * sk
    q[..., 1 + j] = ci * sj * ck + p * si * cj * sk
    q[..., 1 + k] = cc * sk - p * ss * ck
    return q


def _wrap_near(angles, reference):
    """Shift each angle by a multiple of 2π to lie within π of ``reference``."""
    return angles - 2.0 * np.pi * np.round((angles - reference) / (2.0 * np.pi))


def quat_to_euler(q, order='XYZ', compat=None):
    """(...,4) quaternions → (...,3) Euler angles in ``order``, closest to ``compat`` if given."""
    r = quat_to_matrix(np.asarray(q, dtype=np.float64))
    i, j, k, s = _axes(order)
    cos_j = np.hypot(r[..., i, i], r[..., j, i])
    theta_j = np.arctan2(-s * r[..., k, i], cos_j)
    regular = cos_j > 1e-9
    theta_i = np.where(regular, np.arctan2(s * r[..., k, j], r[..., k, k]),
                       np.arctan2(-s * r[..., j, k], r[..., j, j]))
    theta_k = np.where(regular, np.arctan2(s * r[..., j, i], r[..., i, i]), 0.0)
    triples = np.empty((2,) + r.shape[:-2] + (3,))
    first, second = triples
    first[..., i], first[..., j], first[..., k] = theta_i, theta_j, theta_k
    if compat is None:
        return first
    second[..., i], second[..., j], second[..., k] = theta_i + np.pi, np.pi - theta_j, \
        theta_k + np.pi
    compat = np.asarray(compat, dtype=np.float64)
    triples = _wrap_near(triples, compat)
    take_second = np.abs(triples[1] - compat).sum(-1) < np.abs(triples[0] - compat).sum(-1)
    return np.where(take_second[..., None], triples[1], triples[0])
