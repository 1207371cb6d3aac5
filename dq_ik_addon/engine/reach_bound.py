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


def chain_roots(joint_masks):
    """Per task (a row of ``joint_masks``: the joints that move it): the root joint of its chain,
    and the chain's bones below that root ((T, n) 0/1)."""
    roots = joint_masks.argmax(axis=1).astype(np.int64)    # (a task no joint moves: bone 0)
    inner = joint_masks.copy()
    inner[np.arange(len(joint_masks)), roots] = False
    return roots, inner.astype(float)


def reach_bounds(model, bones, inner, given, still):
    """R (module docstring) of the tasks of ``bones`` whose chains' bones below their roots are
    ``inner`` (``chain_roots``), in the given pose ``given`` (``moving_joints_fk.GivenPose``),
    of whose evaluated pose only the bones ``still`` (the ones the joints do not move) count."""
    scales = np.ones((len(model), 3)) if given.scales is None else np.abs(given.scales)
    stretch = scales.max(axis=1)
    uneven = bool(np.any(scales.min(axis=1) < stretch))
    measured = np.zeros(len(model), dtype=bool) if given.evaluated is None else still
    if measured.any():
        singular = np.linalg.svd(given.evaluated[measured, :3, :3], compute_uv=False)
        stretch[measured] = singular[:, 0]
        uneven |= bool(np.any(singular[:, 2] < singular[:, 0] * (1.0 - 1e-6)))
    inherit = model.flags.inherit_scale
    dropped = np.where(inherit == NONE_LEGACY, np.sqrt(3.0) if uneven else 1.0, 1.0)
    keeps = (inherit != NONE) & (inherit != NONE_LEGACY)
    for idx, parent_idx in model.levels:
        stretch[idx] = np.where(measured[idx], stretch[idx], stretch[idx] * np.where(
            keeps[idx], stretch[parent_idx], dropped[idx]))
    child = model.parents >= 0
    parents, rest = model.parents[child], model.rest_matrices
    offsets = rest[child, :3, 3] - rest[parents, :3, 3]
    if given.locations is not None:
        axes = np.where(model.flags.local_location[child, None, None], rest[child, :3, :3],
                        rest[parents, :3, :3])
        offsets = offsets + np.einsum('kij,kj->ki', axes, (
            given.locations * model.uses_location[:, None])[child])
    hop = np.zeros(len(model))
    hop[child] = stretch[parents] * np.linalg.norm(offsets, axis=1)
    return inner @ hop + stretch[bones] * model.lengths[bones]
