"""An upper bound R of each task's reach from its chain root's head, over every rotation of the
joints in a given pose: a target point farther than that is out of reach (far targets,
``TaskSet.set_reach``; no escapes for it, ``escapes``). By the triangle inequality,

    R = Σ_j c_p(j) ‖h_j − h_p(j) + B l_j‖ + c_e ℓ_e

over the chain's bones j below its root, with p(j) the parent, h the rest heads, l the pose
location (0 for connected bones) in B, the bone's rest axes (its parent's without local
location), e the task's bone and ℓ_e its length. A head is its parent's plus ``P[:3,:3] v`` with
v fixed by the rest offset and location, ``B_p[:3,:3] v`` the bracket (``bone_parent_transform``:
``L = P · O``, or ``[P[:3,:3] | P · O_head]``), and a tail its head plus ``M[:3,:3] (0, ℓ, 0)``,
so with ‖A x‖ ≤ σ_max(A) ‖x‖ it suffices that c_k ≥ σ_max(M_k[:3,:3]) in every pose. With the
pose scale s_k, ``c_k = max|s_k| · c_p`` (σ_max(AB) ≤ σ_max(A) σ_max(B); rotations and rest axes
keep norms; every inherit-scale mode but the two below, with or without inherited rotation, takes
at most σ_max(P): axis lengths, orthogonalized or averaged); ``max|s_k|`` for a root or a bone
inheriting no scale (``NONE``: P orthonormalized), ``√3 max|s_k|`` for ``NONE_LEGACY`` (P's
columns normalized: σ_max ≤ the Frobenius norm, 1 without non-uniform scale); a bone the joints
do not move, its evaluated pose's σ_max when one is given. Unscaled, R is the rest distance
between successive heads plus ℓ_e.
"""

import numpy as np

from .bone_parent_transform import NONE, NONE_LEGACY
from .quaternion import all_true


def chain_roots(joint_masks):
    """Per task (a row of ``joint_masks``: the joints that move it): the root joint of its chain,
    and the chain's bones below that root ((T, n) 0/1)."""
    roots = joint_masks.argmax(axis=1).astype(np.int64)    # (a task no joint moves: bone 0)
    inner = joint_masks.copy()
    inner[np.arange(len(joint_masks)), roots] = False
    return roots, inner.astype(float)


class ReachBound:
    """R (module docstring) of each task of one problem, in any given pose: what the rig alone
    fixes is taken once (the hops' rest offsets and axes, each bone's scale path), so a given
    pose costs a few small products.

    A bone's bound c_k is the product of the factors along its scale path: its own
    ``max|s_k|`` (or, for a bone ``still`` measured in the evaluated pose, an upper bound of
    that pose's σ_max, ``still_scale``, which ends the path), then, while it inherits scale, its
    parent's path; a bone that does not ends it with its own factor (``√3`` for
    ``NONE_LEGACY`` under non-uniform scale, else 1). The products are taken as
    ``exp(P · log f)`` with P the 0/1 path matrix (``_scale_paths``), of the rows the bound
    reads."""

    def __init__(self, model, bones, inner, still):
        """The tasks of ``bones`` whose chains' bones below their roots are ``inner``
        (``chain_roots``); of the evaluated pose only the bones ``still`` (the ones the joints
        do not move, or those of them whose scale the bound reads) count."""
        self.model, self.bones, self.still = model, bones, still
        self.still_rows = np.flatnonzero(still)
        self._still_of = (None, None)    # (still matrices as bytes, their ``still_scale``)
        self._stretch_of = (None, None)  # (the scales as bytes, their ``_stretch``)
        parents, inherit = model.parents, model.flags.inherit_scale
        self.legacy = (inherit == NONE_LEGACY) & (parents >= 0)
        keeps = (inherit != NONE) & (inherit != NONE_LEGACY)
        # the hops: each chain bone below a root from its parent's head
        self.hops = np.flatnonzero(inner.any(axis=0) & (parents >= 0))
        hop_parents, rest = parents[self.hops], model.rest_matrices
        self.rest_offsets = rest[self.hops, :3, 3] - rest[hop_parents, :3, 3]
        self.hop_axes = np.where(model.flags.local_location[self.hops, None, None],
                                 rest[self.hops, :3, :3], rest[hop_parents, :3, :3])
        self.hop_located = model.uses_location[self.hops]
        self.inner_hops = inner[:, self.hops]
        self.lengths = model.lengths[bones]
        # the scale paths of the hops' parents, then of the task bones, with the still bones
        # measured (an evaluated pose given) and without
        read = np.concatenate([hop_parents, bones])
        self.paths = {measured: _scale_paths(model, keeps, still & measured)[read]
                      for measured in (True, False)}

    def still_scale(self, given):
        """``(factors, uneven)`` of the ``still`` bones in the evaluated pose of ``given`` (None
        without one): an upper bound of each one's σ_max, and whether any is scaled unevenly
        (σ_min < σ_max (1 − 10⁻⁶)). With G = Mᵀ M of its 3×3 M, t = tr G / 3 and
        d = ‖G − t I‖_F, every eigenvalue of G lies within d of t (Weyl), so √(t + d) bounds
        σ_max (at most 5·10⁻⁷ of it above), and d ≤ 10⁻⁶ t leaves the scale even; otherwise σ is
        taken by SVD. Each bound is rounded up by one step of 2^-20 in log₂ give or take half a
        step (3·10⁻⁷ to 10⁻⁶ of it; the half step keeps the float32 noise of Blender's unscaled
        matrices off a rounding boundary), so that a pose that only turns them gives the same
        factors, and the bound is taken again (``key``) only when a scale changes. The same
        still matrices give the last answer again (a live drag, whose still bones stand)."""
        if given.evaluated is None or not self.still_rows.size:
            return None
        axes = given.evaluated.take(self.still_rows, axis=0)[:, :3, :3]
        seen = axes.tobytes()
        if seen == self._still_of[0]:
            return self._still_of[1]
        gram = np.matmul(axes.transpose(0, 2, 1), axes)
        mean = np.trace(gram, axis1=1, axis2=2) / 3.0
        off = gram - mean[:, None, None] * np.eye(3)
        spread = np.sqrt((off * off).sum(axis=(1, 2)))
        if all_true(spread <= 1e-6 * mean):
            factors, uneven = np.sqrt(mean + spread), False
        else:
            singular = np.linalg.svd(axes, compute_uv=False)
            factors = singular[:, 0]
            uneven = bool(np.any(singular[:, 2] < singular[:, 0] * (1.0 - 1e-6)))
        steps = np.ceil(np.log2(np.maximum(factors, 1e-300)) * 2.0 ** 20 + 0.5)
        self._still_of = (seen, (np.exp2(steps / 2.0 ** 20), uneven))
        return self._still_of[1]

    def key(self, given, still_scale):
        """What of the given pose ``given`` the bound reads, as bytes: the hops' locations, the
        scales and the ``still_scale`` of the still bones."""
        locations = None if given.locations is None else given.locations[self.hops]
        factors = None if still_scale is None else (still_scale[0].tobytes(), still_scale[1])
        return (None if locations is None else locations.tobytes(),
                None if given.scales is None else given.scales.tobytes(), factors)

    def __call__(self, given, still_scale):
        """``(R, exact)`` of each task in the given pose ``given`` (``moving_joints_fk.GivenPose``)
        with its ``still_scale``: ``exact`` where the chain has no hop below its root (a chain
        of one bone) and no scale is uneven, so that its tail keeps the distance R from the
        root's head in every pose: the reachable points are that sphere (a part of it under
        limits)."""
        stretch, uneven = self._stretch(given, still_scale)
        offsets = self.rest_offsets
        if given.locations is not None:
            offsets = offsets + np.einsum('kij,kj->ki', self.hop_axes,
                                          given.locations[self.hops] * self.hop_located[:, None])
        hops = self.hops.size
        hop = stretch[:hops] * np.sqrt(np.einsum('ki,ki->k', offsets, offsets))
        exact = ~self.inner_hops.any(axis=1) & (not uneven)
        return self.inner_hops @ hop + stretch[hops:] * self.lengths, exact

    def _stretch(self, given, still_scale):
        """``(c, uneven)``: the bound c_k of each hop's parent and task bone (class docstring)
        and whether a scale is uneven, from the pose scales of ``given`` and ``still_scale``;
        the last answer again for the same scales (a slide moves only the hops' locations)."""
        key = (None if given.scales is None else given.scales.tobytes(),
               None if still_scale is None else (still_scale[0].tobytes(), still_scale[1]))
        if key == self._stretch_of[0]:
            return self._stretch_of[1]
        model, measured = self.model, still_scale is not None
        scales = np.ones((len(model), 3)) if given.scales is None else np.abs(given.scales)
        factor = scales.max(axis=1)
        uneven = bool(np.any(scales.min(axis=1) < factor))
        still = self.still if measured else np.zeros(len(model), dtype=bool)
        if measured:
            factor[still] = still_scale[0]
            uneven |= still_scale[1]
        if uneven:
            factor[self.legacy & ~still] *= np.sqrt(3.0)
        self._stretch_of = (key, (np.exp(self.paths[measured] @ np.log(np.maximum(factor, 1e-300))),
                                  uneven))
        return self._stretch_of[1]


def _scale_paths(model, keeps, ends):
    """(n, n) 0/1: row k marks the bones whose factors multiply into c_k (``ReachBound``): k,
    then its parent's row while k inherits scale and is not in ``ends`` (parents first, level
    by level, as ``ChainModel.descendants_mask``)."""
    paths = np.eye(len(model.parents))
    carries = keeps & ~ends
    for idx, parent_idx in model.levels:
        paths[idx] += paths[parent_idx] * carries[idx, None]
    return paths
