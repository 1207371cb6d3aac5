"""Unit dual quaternions ``(..., 8)`` = ``[real w,x,y,z, dual w,x,y,z]``, batched over leading dims.

A pose is ``q̂ = (1 + ε t/2) r = r + ε ½ t r``; it maps a point p to ``R p + t`` (Bartelink
Def. 4.2.10b).  ``dq_mul(a, b)`` applies ``b`` first (Bartelink Prop. 4.2.13), like 4×4 matrices.
"""

import numpy as np

from .quaternion import _PRODUCT, matrix_to_quat, qconj, qmul, quat_to_matrix


def _pure(v):
    """The pure quaternion ``(0, v)``."""
    v = np.asarray(v, dtype=float)
    return np.concatenate([np.zeros(v.shape[:-1] + (1,)), v], axis=-1)


def _split(dq):
    dq = np.asarray(dq, dtype=float)
    return dq[..., :4], dq[..., 4:]


def _join(real, dual):
    real, dual = np.broadcast_arrays(real, dual)
    return np.concatenate([real, dual], axis=-1)


def dq_from_rotation_translation(q, t):
    """``q̂ = q + ε ½ (0, t) q``: rotate by q, then translate by t (Bartelink Def. 4.2.10b)."""
    q = np.asarray(q, dtype=float)
    return _join(q, 0.5 * qmul(_pure(t), q))


def dq_rotation(dq):
    """Rotation part ``r = Re(q̂)`` (Bartelink Prop. 4.2.14b)."""
    return _split(dq)[0]


def dq_translation(dq):
    """Translation ``t = vec(2 d r*)`` of a unit dual quaternion (Bartelink Prop. 4.2.14b)."""
    real, dual = _split(dq)
    return 2.0 * qmul(dual, qconj(real))[..., 1:]


def _dq_product_table():
    """(64,8) table T with ``(â ⊗ b̂)_k = Σ_ij â_i b̂_j T[8i+j, k]``: the quaternion table in the
    blocks real·real → real, real·dual and dual·real → dual (ε² = 0)."""
    quat = _PRODUCT.reshape(4, 4, 4)
    table = np.zeros((8, 8, 8))
    table[:4, :4, :4] = table[:4, 4:, 4:] = table[4:, :4, 4:] = quat
    return table.reshape(64, 8)


_DQ_PRODUCT = _dq_product_table()
_TIMES_PURE = _PRODUCT.reshape(4, 4, 4)[:, 1:, :].reshape(12, 4)   # a ⊗ (0, v) = (a vᵀ) : T


def dq_mul(a, b):
    """``(A₀ + εA_ε)(B₀ + εB_ε) = A₀B₀ + ε(A₀B_ε + A_εB₀)`` (Bartelink Def. 4.1.21), as the
    bilinear form ``(â b̂ᵀ) : T`` (``qmul``'s table in blocks), two numpy calls for any batch."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    outer = a[..., :, None] * b[..., None, :]
    return outer.reshape(outer.shape[:-2] + (64,)).dot(_DQ_PRODUCT)


def dq_times_translation(dq, t):
    """``q̂ ⊗ (1 + ε t/2) = q̂₀ + ε(q̂_ε + ½ q̂₀ ⊗ (0, t))``: translate by t, then apply q̂
    (Bartelink Def. 4.2.10b, Def. 4.1.21), for (..., 8) ``dq`` and (..., 3) ``t``."""
    dq = np.asarray(dq, dtype=float)
    t = np.asarray(t, dtype=float)
    outer = dq[..., :4, None] * t[..., None, :]
    slide = outer.reshape(outer.shape[:-2] + (12,)).dot(_TIMES_PURE)
    return _join(dq[..., :4], dq[..., 4:] + 0.5 * slide)


def dq_times_rotation(dq, q):
    """``q̂ ⊗ (q + ε0) = q̂₀ q + ε q̂_ε q``: rotate by q, then apply q̂ (Bartelink Def. 4.1.21),
    both parts in one ``qmul`` table form."""
    dq = np.asarray(dq, dtype=float)
    q = np.asarray(q, dtype=float)
    halves = dq.reshape(dq.shape[:-1] + (2, 4))
    outer = halves[..., :, None] * q[..., None, None, :]
    return outer.reshape(outer.shape[:-3] + (2, 16)).dot(_PRODUCT).reshape(dq.shape)


def dq_conj(dq):
    """Quaternion conjugate ``q̂* = r* + ε d*``, the inverse of a unit DQ (Bartelink Def. 4.1.22)."""
    real, dual = _split(dq)
    return _join(qconj(real), qconj(dual))


def dq_to_matrix(dq):
    """Rigid 4×4 matrix ``[[R(r), t], [0, 1]]``, ``t = vec(2 d r*)`` (Kenwright §2.3; Bartelink Prop. 4.2.14b)."""
    real = dq_rotation(dq)
    rot = quat_to_matrix(real)
    t = dq_translation(dq)
    m = np.zeros(rot.shape[:-2] + (4, 4))
    m[..., :3, :3] = rot
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def dq_from_matrix(m):
    """Unit DQ of a rigid ``(..., 4, 4)`` matrix: ``r = matrix_to_quat(M₃ₓ₃)`` (w ≥ 0), ``d = ½ (0, t) r``."""
    m = np.asarray(m, dtype=float)
    return dq_from_rotation_translation(matrix_to_quat(m[..., :3, :3]), m[..., :3, 3])
