"""Swing/twist decomposition ``q = swing ⊗ twist`` with the twist about local +Y (the bone axis).

This is Blender's ``Quaternion.to_swing_twist('Y')`` (``quat_split_swing_and_twist``): q is
canonicalized (w ≥ 0), so the twist angle τ lies in [−π, π] and ``q`` and ``−q`` decompose the
same way.  The swing has no Y component and ``w ≥ 0``, so its rotation vector has norm ≤ π.
"""

import numpy as np

from .quaternion import all_true, any_true, qcanonical, qmul, sinc


def swing_twist(q):
    """Return ``(swing (..., 4), tau (...))`` with ``q = ± swing ⊗ (cos τ/2, 0, sin τ/2, 0)``.

    With canonical ``q = (w, x, y, z)``: ``τ = 2 atan2(y, w)`` and, for ``c = cos τ/2``,
    ``s = sin τ/2``, ``swing = q ⊗ twist* = (c w + s y, c x + s z, 0, c z − s x)``
    (Bartelink Thm 4.5.1(b) and digest §6.3; Blender ``quat_split_swing_and_twist``; Kenwright
    eq. 33 corrected).  The swing's Y component is set to exactly 0.  At a swing of π
    (w = y = 0) τ = 0 and swing = q, as in Blender.
    """
    w, x, y, z = np.moveaxis(qcanonical(q), -1, 0)
    half = np.arctan2(y, w)
    c, s = np.cos(half), np.sin(half)
    swing = np.stack([c * w + s * y, c * x + s * z, np.zeros_like(w), c * z - s * x], axis=-1)
    return swing, 2.0 * half


def swing_twist_params(q):
    """``(s_x, s_z, τ)``: x and z of ``swing.to_exponential_map()`` and the twist angle (the
    README's limit semantics).

    ``(s_x, 0, s_z)`` is the full-angle rotation vector of the swing (Baerlocher §3.5.4 option B,
    "direct rotation"; App. C corrected). In closed form, from ``swing_twist`` with
    ``r² = w² + y²``, ``A = wx + yz``, ``B = wz − yx`` (so ``swing = (r, A/r, 0, B/r)``) and
    ``N = √(A² + B²)``:

        τ = 2 atan2(y, w),      (s_x, s_z) = g · (A, B),      g = 2 atan2(N, r²) / N,

    every term homogeneous in q, so q needs no normalization (``g → 2/r²`` as N → 0). At a
    swing of π (r = 0) τ = 0 and the swing is q itself, as in Blender.
    """
    params = swing_twist_array(q)
    return params[..., 0], params[..., 1], params[..., 2]


def swing_twist_array(q):
    """``swing_twist_params`` as one ``(..., 3)`` array."""
    return _swing_twist_terms(q, _QUADRATIC)[0]


def _swing_twist_terms(q, table):
    """``(params (..., 3), r², A, B, N, g, forms)`` of ``swing_twist_params``, from ``forms`` =
    ``(q ⊗ q) · table``, whose first five columns are the quadratic forms r², A, B, wy, w²
    (``_QUADRATIC``): every term but τ is even in q, and τ = 2 atan2(wy, w²) is 2 atan2(y, w) of
    the canonical ``±q`` (w ≥ 0; q itself where w = 0).

    ``g = 2 atan2(N, r²)/N`` is evaluated as it stands, accurate down to tiny N (``atan2`` keeps
    its relative precision); at N = 0, where (s_x, s_z) = 0 whatever g is, it gives g = 0, not its
    limit 2/r² (``swing_twist_jacobian`` takes that from the series)."""
    q = np.asarray(q, dtype=float)
    forms = (q[..., :, None] * q[..., None, :]).reshape(q.shape[:-1] + (16,)).dot(table)
    r2, a, b, wy, ww = forms[..., 0], forms[..., 1], forms[..., 2], forms[..., 3], forms[..., 4]
    n = np.hypot(a, b)
    g = 2.0 * np.arctan2(n, r2) / np.maximum(n, _TINY)
    params = np.empty(q.shape[:-1] + (3,))
    np.multiply(g[..., None], forms[..., 1:3], out=params[..., :2])
    np.arctan2(wy, ww, out=params[..., 2])
    params[..., 2] *= 2.0
    if all_true(ww > 0.0):        # then r² ≥ w² > 0 too: no special case
        return params, r2, a, b, n, g, forms
    canonical = qcanonical(q)   # w = 0 (or w² underflows): τ of the canonical q itself
    params[..., 2] = np.where(ww > 0.0, params[..., 2],
                              2.0 * np.arctan2(canonical[..., 2], canonical[..., 0]))
    turned = r2 > 0.0
    if not all_true(turned):    # swing of π: q is the swing, (s_x, s_z) = π (x, z)/‖(x, z)‖
        x_z = q[..., 1::2]
        half_turn = np.pi / np.maximum(np.hypot(x_z[..., 0], x_z[..., 1]), _TINY)
        params[..., :2] = np.where(turned[..., None], params[..., :2], half_turn[..., None] * x_z)
    return params, r2, a, b, n, g, forms


_TINY = 1e-300


def _quadratic_form(*terms):
    """The (16,) coefficients over ``q ⊗ q`` (index 4c + d for ``q_c q_d``) of ``Σ sign q_c q_d``."""
    form = np.zeros(16)
    for sign, c, d in terms:
        form[4 * c + d] += sign
    return form


# r², A, B, wy, w² (w, x, y, z = q_0 … q_3)
_QUADRATIC = np.stack([_quadratic_form((1, 0, 0), (1, 2, 2)), _quadratic_form((1, 0, 1), (1, 2, 3)),
                       _quadratic_form((1, 0, 3), (-1, 2, 1)), _quadratic_form((1, 0, 2)),
                       _quadratic_form((1, 0, 0))], axis=1)
# dq/dΔθ_k = ½ (0, e_k) ⊗ q for the left update q ← exp(½Δθ) ⊗ q, linear in q:
# _LEFT_UPDATE[c, i, k] = ½ ((0, e_k) ⊗ e_c)_i, so dq_i/dΔθ_k = Σ_c q_c _LEFT_UPDATE[c, i, k]
_LEFT_UPDATE = 0.5 * np.stack([qmul(np.eye(4)[[1, 2, 3]], unit) for unit in np.eye(4)], axis=0
                              ).transpose(0, 2, 1)
# The gradients of A, B, r² and r²·τ are linear in q: ∇f = q M_f (M_f[c, i]: the coefficient of
# q_c in ∂f/∂q_i), ∇A = (x, w, z, y), ∇B = (z, −y, −x, w), ∇r² = 2(w, 0, y, 0), r² ∇τ = 2(−y, 0, w, 0).
_GRADIENTS = np.array([
    [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]],
    [[0, 0, 0, 1], [0, 0, -1, 0], [0, -1, 0, 0], [1, 0, 0, 0]],
    [[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]],
    [[0, 0, 2, 0], [0, 0, 0, 0], [-2, 0, 0, 0], [0, 0, 0, 0]]], dtype=float)
# so each ∂f/∂Δθ_k = Σ_i (q M_f)_i Σ_d q_d _LEFT_UPDATE[d, i, k] is a quadratic form in q too:
# (q ⊗ q) times _QUADRATIC_AND_SENSITIVITY (16, 5 + f·k) gives the terms and all twelve at once.
_QUADRATIC_AND_SENSITIVITY = np.concatenate(
    [_QUADRATIC, np.einsum('fci,dik->cdfk', _GRADIENTS, _LEFT_UPDATE).reshape(16, 12)], axis=1)
_SERIES = 1e-3  # u = N/r² below this: K's closed form cancels, its series (error ~u⁴) is exact


def swing_twist_jacobian(q):
    """``(params (m,3), S (m,3,3))``: ``(s_x, s_z, τ)`` and ``S_ik = ∂param_i/∂Δθ_k`` for the left
    update ``q ← exp(½Δθ) ⊗ q`` (Bartelink §4.3).

    Chain rule on the closed form of ``swing_twist_params``: ``dq/dΔθ_k = ½ (0, e_k) ⊗ q``,
    ``∇A = (x, w, z, y)``, ``∇B = (z, −y, −x, w)``, ``∇r² = 2(w, 0, y, 0)``, ``∇τ = 2(−y, 0, w, 0)/r²``,
    and ``∇(s_x, s_z) = g ∇(A, B) + (A, B) [K (A∇A + B∇B) + ∂g/∂r² ∇r²]`` with
    ``K = (∂g/∂N)/N = (2r²/(N² + r⁴) − g)/N²`` (series ``(2/r⁶)(−2/3 + 4u²/5)``, ``u = N/r²``, near 0)
    and ``∂g/∂r² = −2/(N² + r⁴)``; that is ``S = C D`` with ``D`` the rows ``∂(A, B, r², r²τ)/∂Δθ``
    and ``C = [[g + KA², KAB, −2A/(N² + r⁴), 0], [KAB, g + KB², −2B/(N² + r⁴), 0], [0, 0, 0, 1/r²]]``.
    Not defined at a swing of π (r = 0).
    """
    params, r2, a, b, n, g, forms = _swing_twist_terms(q, _QUADRATIC_AND_SENSITIVITY)
    r2 = np.maximum(r2, 1e-100)
    denominator = n * n + r2 * r2
    series = n <= _SERIES * r2
    if any_true(series):
        r2_series = np.where(series, r2, 1.0)
        u2 = (n / r2_series) ** 2
        g = np.where(series, 2.0 / r2_series * (1.0 - u2 / 3.0), g)
        k = np.where(series, 2.0 / r2_series ** 3 * (-2.0 / 3.0 + 0.8 * u2),
                     (2.0 * r2 / denominator - g) / np.where(series, 1.0, n * n))
    else:
        k = (2.0 * r2 / denominator - g) / (n * n)
    shape = forms.shape[:-1]
    chain = np.zeros(shape + (3, 4))
    k_a, pull = k * a, -2.0 / denominator
    chain[..., 0, 0] = g + k_a * a
    chain[..., 0, 1] = chain[..., 1, 0] = k_a * b
    chain[..., 1, 1] = g + k * b * b
    chain[..., 0, 2] = pull * a
    chain[..., 1, 2] = pull * b
    chain[..., 2, 3] = 1.0 / r2
    return params, np.matmul(chain, forms[..., 5:].reshape(shape + (4, 3)))


def quat_from_swing_twist(s_x, s_z, tau):
    """Inverse of ``swing_twist_params``: ``q = exp((s_x, 0, s_z)/2) ⊗ (cos τ/2, 0, sin τ/2, 0)``.

    With the swing ``(c, k s_x, 0, k s_z)``, ``c = cos(θ/2)``, ``k = sin(θ/2)/θ``, ``θ = ‖(s_x, s_z)‖``
    and the twist ``(c_τ, 0, s_τ, 0)`` the product is
    ``(c c_τ, k (c_τ s_x − s_τ s_z), c s_τ, k (c_τ s_z + s_τ s_x))``.
    Round-trips for ``‖(s_x, s_z)‖ < π`` and ``τ ∈ [−π, π]``; the result has ``w ≥ 0``.
    """
    half = 0.5 * np.hypot(s_x, s_z)
    c, k = np.cos(half), 0.5 * sinc(half)
    c_tau, s_tau = np.cos(0.5 * tau), np.sin(0.5 * tau)
    q = np.empty(np.broadcast(s_x, s_z, tau).shape + (4,))
    q[..., 0] = c * c_tau
    q[..., 1] = k * (c_tau * s_x - s_tau * s_z)
    q[..., 2] = c * s_tau
    q[..., 3] = k * (c_tau * s_z + s_tau * s_x)
    return q
