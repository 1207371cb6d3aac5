"""One prioritized damped-least-squares step (Baerlocher §5.3.6–5.3.9, recursive formulation).

Hard equality constraints ``C Δ = r`` (the active joint limits and contacts) come first, solved
undamped: ``Δ₀ = C⁺ r``, ``P₀ = I − C⁺C``. Then, for each priority level k with Jacobian ``J_k``
and error ``e_k``:

    J̃_k = J_k P_{k−1}
    Δ_k = Δ_{k−1} + J̃_k^{+λ} (e_k − J_k Δ_{k−1})        (compensation, damped inverse)
    P_k = P_{k−1} − J̃_k⁺ J̃_k                           (projector update, undamped)

and finally what the levels leave free (``NullSpaceGoal``): soft rows as one more level, then the
secondary criterion ``Δ += P z`` in the freedom left after them. The damping of each
level follows its smallest retained singular value: ``λ² = λ_max² (1 − (σ_min/ε)²)`` when
``σ_min < ε`` and 0 otherwise (Baerlocher §4.7, eq. 4.17; Maciejewski's numerical filtering),
capped by the level's squared error ``‖e_k‖²`` as in Sugihara's Levenberg–Marquardt IK (IEEE
T-RO 2011), so the damping fades as a reachable task converges and steps become Gauss–Newton.
A level whose tasks fall into parts that share no joint (``independent_parts``: limb chains) is
damped part by part, each from its own singular values and error (``_LevelParts``).
"""

import bisect
from itertools import repeat

import numpy as np

LIMIT_RANK_TOLERANCE = 1e-9  # a joint's limit row this close (relative) to its other rows is dependent
_GRAM_TOLERANCE = 1e-7  # relative eigenvalue of JJᵀ kept: the square of 3e-4 in singular values
# The soft rows (``NullSpaceGoal``) are damped from their smallest singular value with λ_max this
# many times the levels' ε (capped by their residual's square): where holding them would take a
# near-singular limb's joints far (a swinging foot held over its floor point 28 cm below), they
# give way (undamped, such a frame ran to 300 iterations; at ε 47, at 1.4 ε 17, at 2 ε 12), and
# where a step from straight legs must hold both feet on a floor they hold (a 10 cm drop in one
# solve: 30 mm of slide at 1.4 ε, 418 mm at 2 ε)
_SOFT_DAMPING = 1.4

try:
    # np.linalg.eigh's own generalized ufunc (numpy 1.x and 2.x), called without the wrapper's
    # argument checks, which cost as much as decomposing a 12×12 Gram matrix; a failed
    # decomposition gives NaN, which the solver stops on, instead of raising
    from numpy.linalg._umath_linalg import eigh_lo as _symmetric_eigen
except ImportError:     # a numpy without it
    _symmetric_eigen = np.linalg.eigh


def rank_truncated_svd(a):
    """Thin SVD of a wide ``a`` (a level's few task rows over every joint column) without the
    singular values below ``_GRAM_TOLERANCE`` (relative), from the eigen-decomposition of the
    small Gram matrix: ``a aᵀ = U Σ² Uᵀ``, ``Vᵀ = Σ⁻¹ Uᵀ a``. Squaring loses the digits of
    σ below √ε·σ_max, so those directions (numerically singular) are dropped."""
    if a.shape[0] > a.shape[1]:
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        keep = s > _GRAM_TOLERANCE * max(1.0, s[0] if s.size else 0.0)
        return u[:, keep], s[keep], vt[keep]
    eigenvalues, u = _symmetric_eigen(a.dot(a.T))                # ascending
    values = eigenvalues.tolist()
    first = bisect.bisect_right(values, _GRAM_TOLERANCE ** 2 * max(1.0, values[-1] if values
                                                                   else 0.0))
    u = u[:, first:][:, ::-1]                                  # the kept ones, descending
    s = np.sqrt(eigenvalues[first:][::-1])
    return u, s, u.T.dot(a) / s[:, None]


def damping_for(singular_values, epsilon):
    """``λ²`` from the smallest retained singular value (Baerlocher eq. 4.17); the values in
    descending order, as a list."""
    if not len(singular_values) or epsilon <= 0.0:
        return 0.0
    smallest = float(singular_values[-1])
    return 0.0 if smallest >= epsilon else epsilon ** 2 * (1.0 - (smallest / epsilon) ** 2)


class PrioritizedBasis:
    """What a prioritized step takes of the Jacobians alone, so that steps for other errors (a
    chord step, a second-order correction) reuse it: per level k the thin SVD
    ``J̃_k = J_k P_{k−1} = U Σ Vᵀ`` (``rank_truncated_svd``) and the projectors
    ``P_k = P_{k−1} − J̃_k⁺ J̃_k = P_{k−1} − V Vᵀ``, from ``P_0`` the hard constraints' null-space
    projector (I without them). The recursion is linear in the errors given these (Baerlocher
    §5.3.6–5.3.9), except for the damping and the clamps, which ``steps`` applies per call."""

    def __init__(self, jacobians, projector=None, parts=None):
        """``parts``: the ``IndependentParts`` of the levels' tasks, damped part by part
        (``steps``), or None."""
        size = jacobians[0].shape[1]
        projector = np.eye(size) if projector is None else projector
        # per level (J_k, U, σ as a list, Vᵀ, its parts) or None for a level with no rank left
        self.levels = []
        removed = None          # the last level's Vᵀ, not yet taken from the projector
        for k, jac in enumerate(jacobians):
            if jac.shape[0] == 0:
                self.levels.append(None)
                continue
            if removed is not None:
                projector = projector - removed.T.dot(removed)
            u, s, removed = _decomposed(jac.dot(projector), parts, k)
            if s.size == 0:
                removed = None
                self.levels.append(None)
                continue
            self.levels.append((jac, u, s.tolist(), removed,
                                None if parts is None else _LevelParts(parts, k, s, removed)))
        self.projector, self.removed = projector, removed   # P_K = projector − removedᵀ removed
        self._soft = (None, None)   # (soft rows, ``_soft_basis``)

    def steps(self, errors, start=None, secondary=None, damping=0.0, max_motion=None,
              max_turn=np.inf):
        """``prioritized_step``'s list for the errors ``errors`` (one per level) from the hard
        constraints' particular solution ``start`` (``C⁺ r``; None: 0)."""
        step = start
        partial = []
        for level, err in zip(self.levels, errors):
            if level is not None:
                jac, u, singular, removed, parts = level
                # joint motion per direction, on Python floats (a level has a dozen directions
                # at most)
                residual = err if step is None else err - jac.dot(step)
                lam2 = repeat(min(damping_for(singular, damping), float(err.dot(err)))) \
                    if parts is None else parts.damping(err, damping)      # per direction
                motion = [sigma / (sigma * sigma + lam) * along for sigma, lam, along
                          in zip(singular, lam2, u.T.dot(residual).tolist())]
                if max_motion is not None:
                    largest = max(map(abs, motion))   # descending σ: σ_0·max|motion| bounds all
                    if largest > max_turn or singular[0] * largest > max_motion:
                        motion = [m / max(sigma * abs(m) / max_motion, abs(m) / max_turn, 1.0)
                                  for m, sigma in zip(motion, singular)]
                step = removed.T.dot(motion) if step is None else step + removed.T.dot(motion)
            elif step is None:
                step = np.zeros(self.projector.shape[0])
            partial.append(step)
        if step is None:
            step = np.zeros(self.projector.shape[0])
        if secondary is None:
            return partial + [step]
        removed = None
        if secondary.soft is not None:
            jac, err = secondary.soft
            u, singular, removed = self._soft_basis(jac)
            residual = err - jac.dot(step)
            lam = min(damping_for(singular, _SOFT_DAMPING * damping), float(residual.dot(residual)))
            gains = np.array([sigma / (sigma * sigma + lam) for sigma in singular])
            partial = [done - removed.T.dot(gains * u.T.dot(jac.dot(done)))
                       for done in partial + [step]]
            step = partial.pop() + removed.T.dot(gains * u.T.dot(err))
        if secondary.pull is not None:
            pulled = self.null_space(secondary.pull)
            if removed is not None:
                pulled = pulled - removed.T.dot(removed.dot(pulled))
            step = step + pulled
        return partial + [step]

    def _soft_basis(self, jac):
        """``(U_s, σ_s as a list, V_sᵀ)`` of ``J_s P_K`` for the soft rows ``jac``
        (``NullSpaceGoal``), kept for the next call with the same rows."""
        if self._soft[0] is not jac:
            u, s, vt = rank_truncated_svd(self.null_space(jac.T).T)
            self._soft = (jac, (u, s.tolist(), vt))
        return self._soft[1]

    def null_space(self, a):
        """``P_K a`` (columns of ``a``) without forming ``P_K = P − VᵀV``."""
        out = self.projector.dot(a)
        return out if self.removed is None else out - self.removed.T.dot(self.removed.dot(out))


class NullSpaceGoal:
    """What a step does with the freedom its task levels leave (``PrioritizedBasis.steps``):
    the ``soft`` rows ``(J_s, e_s)`` (or None) as one more level below every task, then the
    ``pull`` z (or None, the secondary criterion) in what they leave:

        Δ ← Δ + J̃_s^{+λ} (e_s − J_s Δ),   J̃_s = J_s P_K = U_s Σ_s V_sᵀ
        Δ ← Δ + (P_K − V_sᵀ V_s) z

    (the recursion of Baerlocher §5.3.6 carried one level on; damped from its smallest singular
    value with λ_max = ``_SOFT_DAMPING`` ε, capped by the square of the residual ``e_s − J_s
    Δ_K``; not clamped, so a return from far asks for large joint steps, which the line search
    then shortens). Its motion lies in the null space of every level. Each cumulative step Δ_k
    holds the soft rows where they are,
    ``Δ_k − J̃_s^{+λ} J_s Δ_k``: a step truncated after a level (the line search's), a correction
    of the levels above one (``Steps.restored``) and the step the joint limits' active set checks
    move them no more than the full step does; only the full step, with the pull, brings them
    back by ``J̃_s^{+λ} e_s``, so a line search that cannot keep that return (its second-order
    effect on a level) falls back on a step that holds them (a hand moved 0.43 m onto a plane
    crept 10 % of a millimetre an iteration for 105 iterations, the return undoing each
    iteration's progress, when every step also brought the soft rows back). No stop test, line
    search or report reads them, but the step the active set checks holds them, so a limit row
    they run into joins the active set and binds the levels too: under limits their solves can
    take more iterations (``docs/full_body.md``, Known limits)."""

    __slots__ = ("soft", "pull")

    def __init__(self, soft=None, pull=None):
        self.soft, self.pull = soft, pull


def _decomposed(a, parts, level):
    """``rank_truncated_svd`` of a level's ``J P``, its rows taken part by part where the tasks
    fall into ``parts``: the matrix is then block-diagonal with contiguous blocks, whose
    decomposition keeps each singular direction inside one part even where two parts have equal
    singular values (mirrored limbs in a mirrored pose); with the parts' rows interleaved (a
    level of two limbs' positions, then their orientations) the eigensolver mixed such
    directions across the parts, nearly half and half."""
    if parts is None:
        return rank_truncated_svd(a)
    order, back = parts.level_orders[level]
    u, s, vt = rank_truncated_svd(a.take(order, axis=0))
    return u.take(back, axis=0), s, vt


class _LevelParts:
    """The damping of one level whose tasks fall into parts that share no joint
    (``independent_parts``): its Jacobian is block-diagonal over them, so each of its singular
    directions belongs to one part (the one its ``Vᵀ`` row lies in, ``_decomposed``), and each
    part is damped as if it were solved alone, from its own smallest singular value and capped
    by its own error (module docstring). One damping for the level let a far or stalled limb's
    error and near-singular chain damp a limb beside it: on the basic metarig's four limbs on
    Chain Length 2 under the HUMANOID limits, a hand 0.2 mm from its target crept 4 % an
    iteration for 280 iterations while the other hand stalled 25 mm short, and no escape came."""

    def __init__(self, parts, level, singular, removed):
        self.owners = np.argmax((removed * removed).dot(parts.column_parts), axis=1)
        self.rows = parts.level_rows[level]
        smallest = np.full(parts.count, np.inf)
        np.minimum.at(smallest, self.owners, singular)
        self.smallest = smallest
        self._damping = (None, None)    # (ε, each part's λ² from its singular values)

    def damping(self, err, epsilon):
        """Each direction's ``λ²`` for the level's error ``err``."""
        if self._damping[0] != epsilon:     # (a part per direction at most: a few)
            self._damping = (epsilon, np.array([damping_for([smallest], epsilon)
                                                for smallest in self.smallest.tolist()]))
        return np.minimum(self._damping[1], self.rows.dot(err * err)).take(self.owners).tolist()


def prioritized_step(levels, start=None, secondary=None, damping=0.0, max_motion=None,
                     max_turn=np.inf):
    """The steps Δ_1 … Δ_K, Δ for ``levels`` = [(J_k, e_k), ...] in priority order.

    Returns a list: the cumulative step after each level, then the full step with the secondary
    criterion. ``start`` = (C⁺ r, I − C⁺C) of the hard constraints (``ConstraintRows.solution``);
    ``secondary`` (a ``NullSpaceGoal``) moves in the remaining null space;
    ``damping`` is ε = λ_max of every level, in J's units.

    ``max_motion`` clamps each level's step along each of its singular directions: the motion
    ``σ_i²/(σ_i²+λ²) |u_iᵀ r|`` it predicts there is at most ``max_motion``, and the joint motion
    ``σ_i/(σ_i²+λ²) |u_iᵀ r|`` at most ``max_turn`` (Baerlocher §5.2 clamps
    the error of a level as a whole; clamping per direction, as Buss & Kim's selectively damped
    least squares do, keeps an unreachable component along a singular direction, such as a
    stretched arm's, from shrinking the components the chain can still realize).
    ``PrioritizedBasis`` holds the decompositions, to reuse with other errors.
    """
    basis = PrioritizedBasis([jac for jac, _ in levels], None if start is None else start[1])
    return basis.steps([err for _, err in levels], None if start is None else start[0],
                       secondary, damping, max_motion, max_turn)
