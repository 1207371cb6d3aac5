"""Unit quaternions, w-first ``(..., 4)`` = ``[w, x, y, z]``, batched over leading dims.

Hamilton convention as in Blender: ``qmul(a, b)`` applies ``b`` first.  Two exponential maps
coexist and differ by a factor 2:

* ``qexp`` / ``qlog`` use the *half-angle* vector ``w = θu/2`` (Bartelink §4.3);
* ``quat_from_rotvec`` / ``quat_to_rotvec`` use the *full-angle* vector ``θu``, Blender's
  ``Quaternion(Vector)`` / ``Quaternion.to_exponential_map()``.
"""

import numpy as np

_TAYLOR = 1e-4  # below this norm, sin(n)/n uses its Taylor series


def row_dots(a, b):
    """``Σ_k a_…k b_…k``, the dot products along the last axis of two equally shaped arrays, as the
    product ``(a * b) · 1`` (a third of the cost of ``np.einsum`` or ``sum`` on the solver's arrays
    of a few dozen rows)."""
    return (a * b).dot(_ONES[a.shape[-1]])


_ONES = {width: np.ones(width) for width in range(1, 5)}


def any_true(mask):
    """``mask.any()`` by ``np.count_nonzero`` (a quarter of its cost: no ufunc reduction)."""
    return np.count_nonzero(mask) > 0


def all_true(mask):
    """``mask.all()`` of a boolean array by ``np.count_nonzero``, as ``any_true``."""
    return np.count_nonzero(mask) == mask.size


def _product_table():
    """(16,4) table T with ``(a ⊗ b)_k = Σ_ij a_i b_j T[4i+j, k]`` (Hamilton's rules ij = k, …)."""
    table = np.zeros((4, 4, 4))
    signs = {(0, 0): (0, 1), (0, 1): (1, 1), (0, 2): (2, 1), (0, 3): (3, 1),
             (1, 0): (1, 1), (1, 1): (0, -1), (1, 2): (3, 1), (1, 3): (2, -1),
             (2, 0): (2, 1), (2, 1): (3, -1), (2, 2): (0, -1), (2, 3): (1, 1),
             (3, 0): (3, 1), (3, 1): (2, 1), (3, 2): (1, -1), (3, 3): (0, -1)}
    for (i, j), (k, sign) in signs.items():
        table[i, j, k] = sign
    return table.reshape(16, 4)


_PRODUCT = _product_table()


def qmul(a, b):
    """Hamilton product ``ab = (a_w b_w − a_v·b_v, a_w b_v + b_w a_v + a_v × b_v)`` (Bartelink Def. 4.1.6).

    Evaluated as the bilinear form ``(a bᵀ) : T`` with the constant table T of Hamilton's rules,
    two numpy calls for any batch.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    outer = a[..., :, None] * b[..., None, :]
    return outer.reshape(outer.shape[:-2] + (16,)).dot(_PRODUCT)


def qconj(q):
    """Conjugate ``q* = (w, −v)``, the inverse of a unit quaternion (Bartelink Def. 4.1.8)."""
    q = np.asarray(q, dtype=float)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def qnormalize(q):
    """``q/‖q‖``; a zero quaternion becomes the identity ``(1, 0, 0, 0)``."""
    q = np.asarray(q, dtype=float)
    n = np.sqrt(row_dots(q, q))[..., None]
    if all_true(n > 0.0):
        return q / n
    return np.where(n > 0.0, q / np.where(n > 0.0, n, 1.0), np.array([1.0, 0.0, 0.0, 0.0]))


def qcanonical(q):
    """Representative with ``w ≥ 0`` of the pair ``±q`` (Bartelink digest §3.2; as Blender's swing/twist)."""
    q = np.asarray(q, dtype=float)
    return q * np.where(q[..., :1] < 0.0, -1.0, 1.0)


def qrotate(q, v):
    """Rotate ``(..., 3)`` vectors by unit q: ``v' = v + w t + q_v × t`` with ``t = 2 q_v × v``.

    Equal to ``(e_s² − e_v·e_v) v + 2 e_s (e_v × v) + 2 (e_v·v) e_v`` (Baerlocher App. B.2, corrected).
    """
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    qv = q[..., 1:]
    t = 2.0 * np.cross(qv, v)
    return v + q[..., :1] * t + np.cross(qv, t)


def sinc(n):
    """``sin(n)/n`` with its Taylor series ``1 − n²/6 + n⁴/120`` near 0."""
    small = n < _TAYLOR
    if not any_true(small):
        return np.sin(n) / n
    n2 = n * n
    return np.where(small, 1.0 - n2 / 6.0 + n2 * n2 / 120.0, np.sin(n) / np.where(small, 1.0, n))


def qexp(w):
    """Exponential of the pure quaternion ``(0, w)``: ``e^w = (cos‖w‖, sin‖w‖/‖w‖ · w)``.

    ``w`` is the half-angle vector (rotation angle ``2‖w‖``).  Bartelink Thm 4.3.3, Taylor near 0.
    """
    w = np.asarray(w, dtype=float)
    n = np.sqrt(row_dots(w, w))[..., None]
    return np.concatenate([np.cos(n), sinc(n) * w], axis=-1)


def qlog(q):
    """Half-angle vector of a unit quaternion: ``log q = atan2(‖v‖, w) · v/‖v‖`` (Bartelink Thm 4.3.5, Prop. 4.2.4).

    Scale-invariant, so it also gives the rotation of a non-unit q.  Not canonicalized: for
    ``w < 0`` the norm exceeds π/2.  ``log(1) = 0``; ``log(−1)`` returns ``(π, 0, 0)``.
    """
    q = np.asarray(q, dtype=float)
    w, v = q[..., :1], q[..., 1:]
    n = np.sqrt(row_dots(v, v))[..., None]
    if all_true(n > 0.0):
        return np.arctan2(n, w) / n * v
    k = np.arctan2(n, w) / np.where(n > 0.0, n, 1.0)
    minus_one = (n == 0.0) & (w < 0.0)
    return np.where(minus_one, np.array([np.pi, 0.0, 0.0]), k * v)


def quat_from_rotvec(r):
    """Quaternion of the full-angle rotation vector ``r = θu``: ``exp(r/2)`` (Bartelink Thm 4.3.4).

    Equals Blender's ``Quaternion(Vector(r))`` up to sign: Blender wraps θ to [−π, π) and so
    returns ``qcanonical`` of this for ``‖r‖ > π``.  This form is the exact inverse of ``quat_to_rotvec``.
    """
    return qexp(0.5 * np.asarray(r, dtype=float))


def quat_to_rotvec(q):
    """Full-angle rotation vector ``θu = 2 log q``, Blender's ``Quaternion.to_exponential_map()``.

    Like Blender it normalizes but does not canonicalize: ``−q`` gives norm ``2π − θ``.  Apply
    ``qcanonical`` first for the short way (norm ≤ π).  Blender returns ~0 below θ ≈ 1e-3 (a
    float32 artefact); this returns the exact value.
    """
    return 2.0 * qlog(q)


def _rotation_table():
    """(16,10) table R with ``R(q) = (q qᵀ) : R[:, :9] / ‖q‖²``: every entry of the rotation
    matrix is a quadratic form of q, e.g. ``R_00 = w² + x² − y² − z²``, ``R_01 = 2(xy − wz)``; the
    last column is the quadratic form ‖q‖² itself."""
    w, x, y, z = range(4)
    entries = [
        {(w, w): 1, (x, x): 1, (y, y): -1, (z, z): -1}, {(x, y): 2, (w, z): -2}, {(x, z): 2, (w, y): 2},
        {(x, y): 2, (w, z): 2}, {(w, w): 1, (x, x): -1, (y, y): 1, (z, z): -1}, {(y, z): 2, (w, x): -2},
        {(x, z): 2, (w, y): -2}, {(y, z): 2, (w, x): 2}, {(w, w): 1, (x, x): -1, (y, y): -1, (z, z): 1},
        {(w, w): 1, (x, x): 1, (y, y): 1, (z, z): 1},
    ]
    table = np.zeros((4, 4, 10))
    for k, entry in enumerate(entries):
        for (i, j), c in entry.items():
            table[i, j, k] = c
    return table.reshape(16, 10)


_ROTATION = _rotation_table()


def quat_to_matrix(q):
    """Rotation matrix ``(..., 3, 3)`` of q, normalized first, as Blender's pose evaluation.

    ``R = ((w² − v·v) I + 2 v vᵀ + 2w [v]×) / ‖q‖²`` (Baerlocher App. B.2, corrected), evaluated as
    the quadratic form ``(q qᵀ) : R``. Equal to ``Quaternion.to_matrix()`` for unit q. Zero q → identity.
    """
    q = np.asarray(q, dtype=float)
    forms = (q[..., :, None] * q[..., None, :]).reshape(q.shape[:-1] + (16,)).dot(_ROTATION)
    flat, n2 = forms[..., :9], forms[..., 9:]
    if all_true(n2 > 0.0):
        flat = flat / n2
    else:
        flat = np.where(n2 > 0.0, flat / np.where(n2 > 0.0, n2, 1.0), _IDENTITY_FLAT)
    return flat.reshape(flat.shape[:-1] + (3, 3))


_IDENTITY_FLAT = np.eye(3).ravel()


def matrix_to_quat(m):
    """Canonical (w ≥ 0) unit quaternion of a ``(..., 3, 3)`` rotation matrix.

    Columns are normalized first (as Blender's ``Matrix.to_quaternion``).  Markley's variant of
    Shepperd's method: of the four rows of the symmetric matrix ``K = 4 q qᵀ`` (diagonal
    ``1 + tr``, ``1 + 2m_ii − tr``), take the one with the largest diagonal and normalize it.
    K's entries are linear in m's, so K is one product of the flattened matrices with a fixed
    (9, 16) matrix (``_K_OF_M``) plus 1 on its diagonal, for any number of matrices at once. The
    chosen row is divided by its norm, negated where its w is negative (``qcanonical`` of
    ``qnormalize``, in one division: K's diagonal sums to 4, so a finite row's norm is at least
    1).
    """
    m = np.asarray(m, dtype=float)
    lead = m.shape[:-2]
    flat = m.reshape(-1, 3, 3)
    norms = np.sqrt((flat * flat).sum(axis=1))
    flat = flat / np.where(norms > 0.0, norms, 1.0)[:, None, :]
    k = flat.reshape(-1, 9).dot(_K_OF_M) + _K_ONE
    rows = k.reshape(-1, 4, 4)[np.arange(len(k)), np.argmax(k[:, ::5], axis=1)]
    norms = np.sqrt(row_dots(rows, rows))
    if not all_true(norms > 0.0):   # a matrix with NaN: the identity, as ``qnormalize`` gives
        return qcanonical(qnormalize(rows)).reshape(lead + (4,))
    return (rows / (norms * np.where(rows[:, 0] < 0.0, -1.0, 1.0))[:, None]).reshape(lead + (4,))


def _k_of_m():
    """``_K_OF_M``: K (row-major, 16) = m (row-major, 9) · _K_OF_M, plus 1 on the diagonal."""
    def entries(*terms):
        row = np.zeros(9)
        for sign, i, j in terms:
            row[3 * i + j] += sign
        return row
    diagonal = [entries((1, 0, 0), (1, 1, 1), (1, 2, 2)),       # 1 + tr
                entries((1, 0, 0), (-1, 1, 1), (-1, 2, 2)),     # 1 + 2 m_ii − tr
                entries((-1, 0, 0), (1, 1, 1), (-1, 2, 2)),
                entries((-1, 0, 0), (-1, 1, 1), (1, 2, 2))]
    x, y, z = entries((1, 2, 1), (-1, 1, 2)), entries((1, 0, 2), (-1, 2, 0)), \
        entries((1, 1, 0), (-1, 0, 1))
    xy, xz, yz = entries((1, 0, 1), (1, 1, 0)), entries((1, 0, 2), (1, 2, 0)), \
        entries((1, 1, 2), (1, 2, 1))
    rows = [[diagonal[0], x, y, z], [x, diagonal[1], xy, xz], [y, xy, diagonal[2], yz],
            [z, xz, yz, diagonal[3]]]
    return np.array([entry for row in rows for entry in row]).T.copy()


_K_OF_M = _k_of_m()
_K_ONE = np.where(np.arange(16) % 5 == 0, 1.0, 0.0)    # 1 on K's diagonal (every 5th of 16)


def quat_from_axis_angle(axis, angle):
    """``(cos(θ/2), sin(θ/2) u)`` with ``u = axis/‖axis‖`` (Bartelink Def. 4.2.1); zero axis → identity.

    Same as Blender's ``Quaternion(axis, angle)``.
    """
    axis = np.asarray(axis, dtype=float)
    half = 0.5 * np.asarray(angle, dtype=float)[..., None]
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    u = axis / np.where(n > 0.0, n, 1.0)
    v = np.sin(half) * u
    q = np.concatenate([np.broadcast_to(np.cos(half), v.shape[:-1] + (1,)), v], axis=-1)
    return np.where(n > 0.0, q, np.array([1.0, 0.0, 0.0, 0.0]))
