"""One prioritized damped-least-squares step (Baerlocher §5.3.6–5.3.9, recursive formulation).

Hard equality constraints ``C Δ = r`` (the active joint limits and contacts) come first, solved
undamped: ``Δ₀ = C⁺ r``, ``P₀ = I − C⁺C``. Then, for each priority level k with Jacobian ``J_k``
and error ``e_k``:

    J̃_k = J_k P_{k−1}
    Δ_k = Δ_{k−1} + J̃_k^{+λ} (e_k − J_k Δ_{k−1})        (compensation, damped inverse)
    P_k = P_{k−1} − J̃_k⁺ J̃_k                           (projector update, undamped)

and finally the secondary criterion ``Δ += P_N z`` in what freedom is left. The damping of each
level follows its smallest retained singular value: ``λ² = λ_max² (1 − (σ_min/ε)²)`` when
``σ_min < ε`` and 0 otherwise (Baerlocher §4.7, eq. 4.17; Maciejewski's numerical filtering),
capped by the level's squared error ``‖e_k‖²`` as in Sugihara's Levenberg–Marquardt IK (IEEE
T-RO 2011), so the damping fades as a reachable task converges and steps become Gauss–Newton.
"""

import numpy as np

_RANK_TOLERANCE = 1e-9


def _svd(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    keep = s > _RANK_TOLERANCE * max(1.0, s[0] if s.size else 0.0)
    return u[:, keep], s[keep], vt[keep]


def damping_for(singular_values, epsilon):
    """``λ²`` from the smallest retained singular value (Baerlocher eq. 4.17)."""
    if singular_values.size == 0 or epsilon <= 0.0:
        return 0.0
    smallest = singular_values[-1]
    return 0.0 if smallest >= epsilon else epsilon ** 2 * (1.0 - (smallest / epsilon) ** 2)


def prioritized_step(levels, constraint=None, secondary=None, damping=0.0):
    """The steps Δ_1 … Δ_K, Δ for ``levels`` = [(J_k, e_k), ...] in priority order.

    Returns a list: the cumulative step after each level, then the full step with the secondary
    criterion. ``constraint`` = (C, r) is satisfied exactly where feasible; ``secondary`` z is
    projected into the remaining null space; ``damping`` is ε = λ_max of every level, in J's units.
    """
    size = levels[0][0].shape[1] if levels else constraint[0].shape[1]
    step = np.zeros(size)
    projector = np.eye(size)
    if constraint is not None and constraint[0].shape[0]:
        u, s, vt = _svd(constraint[0])
        step = vt.T @ ((u.T @ constraint[1]) / s)
        projector -= vt.T @ vt
    partial = []
    for jac, err in levels:
        partial.append(step)
        if jac.shape[0] == 0:
            continue
        projected = jac @ projector
        u, s, vt = _svd(projected)
        if s.size == 0:
            continue
        residual = err - jac @ step
        lam2 = min(damping_for(s, damping), float(err @ err))
        step = step + vt.T @ ((s / (s * s + lam2)) * (u.T @ residual))
        partial[-1] = step
        projector -= vt.T @ vt
    if secondary is not None:
        step = step + projector @ secondary
    return partial + [step]
