"""Keepers in the forward kinematics: a bone whose world rotation a Copy Rotation in world space
takes, whole or in part, from another bone of the rig (``ChainModel.keeps``, the influence w
``ChainModel.keep_weights``; Rigify's ``MCH-ROT-neck`` keeps half of the torso's rotation).

Blender evaluates the constraint on the bone's pose matrix ``M = [R S | t]`` as its parents
placed it: the constrained matrix has the source's rotation ``R_s`` (replacing, every axis), the
bone's own location and scale, and a constraint of influence w is blended in by
``interp_m4_m4m4`` (``BKE_constraints_solve``, ``source/blender/blenkernel/intern/constraint.cc``),
which slerps the normalized rotations:

    R_k = R (Rᵀ R_s)^w = R exp(w log(Rᵀ R_s)),

so w = 1 gives ``R_s`` (the rotations taken by normalizing the columns: where a parent's
uneven scale shears the keeper and w < 1, Blender's polar decomposition blends a little
differently). The bones below a keeper follow it as their parent: an FK that poses
them level by level reaches them after it; one that composes whole root paths at once
(``ChainModel._along_root_paths``, every bone rigid) turns them with it about its head
afterwards, ``M_i ← D M_i`` with ``D = [A_k A⁻¹ | h − A_k A⁻¹ h]`` of the keeper's 3×3 before
(A) and after (A_k), about its head h.
"""

import numpy as np

from .quaternion import matrix_to_quat, quat_to_matrix, row_dots


def level_keepers(model):
    """Per tree level of ``model`` (``ChainModel.levels``): ``(keepers, sources, weights, below,
    owner)`` of the keepers at that depth whose source lies at a smaller one (posed before
    them), the bones below them and the keeper (its place in ``keepers``) each is below; or
    None."""
    keeps, depth = model.keeps, model.depth
    found = []
    for idx, _ in model.levels:
        kept = idx[keeps[idx] >= 0]
        kept = kept[depth[keeps[kept]] < depth[kept]]
        if not kept.size:
            found.append(None)
            continue
        under = model.descendants_mask()[kept].copy()
        under[np.arange(kept.size), kept] = False
        owner, below = np.nonzero(under)
        found.append((kept, keeps[kept], model.keep_weights[kept], below, owner))
    return found


def keep(world, keepers, sources, weights, below=None, owner=None):
    """Turn the pose matrices ``world`` (n,4,4) of the ``keepers`` towards their ``sources``'
    rotations by ``weights`` (module docstring), in place; with ``below`` (and ``owner``, the
    keeper each is below), carry those bones along with them."""
    own, count = world[keepers, :3, :3].copy(), keepers.size
    # both rotations in one call: ``matrix_to_quat`` normalizes the columns, canonical
    rotations = matrix_to_quat(np.concatenate([own, world[sources, :3, :3]]))
    after = quat_to_matrix(slerp(rotations[:count], rotations[count:], weights))
    scales = np.sqrt(np.einsum('kij,kij->kj', own, own))   # each axis's length (column norms)
    world[keepers, :3, :3] = after * scales[:, None, :]
    if below is not None and below.size:
        turned = world[keepers, :3, :3] @ np.linalg.inv(own)  # D's rotation (shear kept)
        heads = world[keepers, :3, 3]
        carried = np.zeros((keepers.size, 4, 4))
        carried[:, :3, :3], carried[:, 3, 3] = turned, 1.0
        carried[:, :3, 3] = heads - np.einsum('kij,kj->ki', turned, heads)
        world[below] = carried[owner] @ world[below]


class KeptColumns:
    """How the keepers of a solve's model change its Jacobians (``jacobian.task_jacobian``,
    ``tasks.balance``): a joint between a keeper's source and the keeper turns the bones below
    the keeper by only (1 − w) of its turn (to first order; exact for w = 1). For a point p below
    keepers k₁ (outer) … kₙ (inner) that a column lies between, the column turns p as if it were
    the point ``q = fₙ p + Σᵢ (fᵢ₋₁ − fᵢ) h_{kᵢ}`` (f₀ = 1, fᵢ = Π_{j≤i} (1 − w_j), h the
    keepers' heads), ``a × q − m``, and turns the bone's frame by ``fₙ a``. A keeper's share
    ``fᵢ₋₁ − fᵢ = fᵢ₋₁ w_i`` of a column (``shares``) is w_i times ``1 − w_o`` for every keeper o
    above it that the column lies between too (a Rigify head below its neck turns by
    (1 − w_neck)(1 − w_head) of a spine joint's turn, not 1 − w_neck − w_head). A slide's
    column has no axis, so its shares turn nothing."""

    def __init__(self, model, columns, moves, keepers):
        self.keepers = keepers
        sources, weights = model.keeps[self.keepers], model.keep_weights[self.keepers]
        columns = np.asarray(columns)
        between = moves[np.ix_(sources, columns)].T & moves[np.ix_(columns, self.keepers)] \
            & (columns[:, None] != sources[None, :])
        shares = between * weights
        nested = moves[np.ix_(self.keepers, self.keepers)] & ~np.eye(weights.size, dtype=bool)
        for outer, inner in zip(*np.nonzero(nested)):
            shares[:, inner] *= np.where(between[:, outer], 1.0 - weights[outer], 1.0)
        self.shares = shares                    # (C, K): per column joint
        self._spread = np.repeat(shares.T, 3, axis=1)     # (K, 3C): per Jacobian column
        self.moves = moves

    def factors(self, bones):
        """``(G (T,K,3C), F (T,3C))`` for tasks on ``bones``: each keeper's share of each column
        for the points below it, and what of its turn the column leaves their frames."""
        shares = self.moves[np.ix_(self.keepers, bones)].T[:, :, None] * self._spread
        return shares, 1.0 - shares.sum(axis=1)


def slerp(a, b, weights):
    """``a (a* b)^w`` (k,4) for unit quaternions ``a``, ``b`` and the ``weights`` w (k,), along
    the shorter arc (``b`` taken as ``−b`` where ``a·b < 0``): Shoemake's spherical linear
    interpolation (SIGGRAPH 1985), ``(sin((1 − w)φ) a + sin(wφ) b) / sin φ`` with ``cos φ =
    |a·b|``, and the chord ``(1 − w) a + w b``, normalized, where φ is below 1e-6 rad."""
    dots = row_dots(a, b)
    b = b * np.where(dots < 0.0, -1.0, 1.0)[:, None]
    angle = np.arccos(np.minimum(np.abs(dots), 1.0))
    near = angle < 1e-6
    sine = np.sin(np.where(near, 1.0, angle))
    first = np.where(near, 1.0 - weights, np.sin((1.0 - weights) * angle) / sine)
    second = np.where(near, weights, np.sin(weights * angle) / sine)
    out = first[:, None] * a + second[:, None] * b
    return out / np.sqrt(row_dots(out, out))[:, None]
