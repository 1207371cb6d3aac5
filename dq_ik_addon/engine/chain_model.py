"""The armature as a tree of rigid joints, with forward kinematics batched by tree depth.

Blender's pose evaluation for a bone i with parent p (rest matrices ``B`` in armature space,
pose-bone location ``l``, rotation ``q`` and scale ``s`` in the bone's rest frame) is, for a bone
that inherits rotation and scale and uses local location,

    M_i = M_p · (B_p⁻¹ B_i) · T(l_i) · R(q_i) · S(s_i)    (roots: M_i = B_i · T(l_i) · R(q_i) · S(s_i))

and for every other combination of flags Blender's parent transform
(``bone_parent_transform``), which a model with such bones evaluates level by level.

which in dual quaternions reads ``D_i = D_p ⊗ L_i ⊗ (1 + ε l_i/2) ⊗ q_i`` with the constant rest
offset ``L_i = D(B_p)* ⊗ D(B_i)`` (Bartelink §5.1, Alg. 6; Kenwright eqs. 13, 15). ``matrices``
evaluates the first form, the solver's (in numpy it runs 2–2.7× as fast as the second:
docs/fk_forms.md, ``benchmarks/fk_forms.py``), and ``forward`` the second. Bones connected to
their parent ignore ``l`` as Blender does. The products along every root path are formed by
pointer jumping (Hillis & Steele's parallel prefix on a tree): after step s each bone holds the
product of the 2^s transforms above it, so ⌈log₂(depth + 1)⌉ batched products over all bones
replace a loop over bones (5 steps for the 20-deep Rigify human).
"""

from functools import cached_property
from typing import NamedTuple

import numpy as np

from .bone_parent_transform import FULL, child_pose, root_pose
from .dual_quaternion import (
    dq_from_matrix,
    dq_mul,
    dq_times_rotation,
    dq_times_translation,
)
from .kept_rotations import keep, level_keepers
from .quaternion import all_true, qnormalize, quat_to_matrix


class BoneFlags(NamedTuple):
    """Per bone: ``Bone.use_inherit_rotation``, ``Bone.use_local_location`` and
    ``Bone.inherit_scale`` (``bone_parent_transform.INHERIT_SCALE_MODES`` values)."""

    inherit_rotation: np.ndarray
    local_location: np.ndarray
    inherit_scale: np.ndarray

    @classmethod
    def default(cls, n):
        return cls(np.ones(n, bool), np.ones(n, bool), np.full(n, FULL, dtype=np.int64))

    def take(self, bones):
        return BoneFlags(*(values[bones] for values in self))


class ChainModel:
    """An armature's rest data and its depth-batched forward kinematics."""

    def __init__(self, names, parents, rest_matrices, lengths, connected, flags=None,
                 riders=None, keeps=None, keep_weights=None):
        """``riders`` (n,) bool: bones that a constraint places as a fixed transform of their
        parent here (the bone it copies, ``dq_ik_addon/blender/rig/constraint_followers.py``) and the bones below
        them: rigid whatever their flags, so the solve carries them on their parent as they
        stood (``moving_joints_fk``) and never evaluates their channels. ``keeps`` (n,) int:
        for a bone whose world rotation a constraint takes from another bone (a Copy Rotation
        in world space), that bone's index, else -1 (a *keeper*: ``kept_rotations``,
        ``moving_joints_fk``); ``keep_weights`` (n,): the share it takes (the influence; 1)."""
        self.names = tuple(names)
        self.parents = np.asarray(parents, dtype=np.int64)
        self.rest_matrices = np.asarray(rest_matrices, dtype=np.float64)
        self.lengths = np.asarray(lengths, dtype=np.float64)
        self.connected = np.asarray(connected, dtype=bool)
        n = len(self.names)
        if self.parents.shape != (n,) or self.rest_matrices.shape != (n, 4, 4):
            raise ValueError("names, parents and rest_matrices must describe the same bones")
        if self.lengths.shape != (n,) or self.connected.shape != (n,):
            raise ValueError("lengths and connected need one entry per bone")
        self.index = {name: i for i, name in enumerate(self.names)}
        self.jumps, self.depth = self._jumps()
        self.levels = self._levels()
        self.rest_offsets = self._rest_offsets()
        self.uses_location = ~self.connected
        self.flags = BoneFlags.default(n) if flags is None else BoneFlags(
            *(np.asarray(values) for values in flags))
        self.riders = np.zeros(n, dtype=bool) if riders is None else np.asarray(riders, dtype=bool)
        self.keeps = np.full(n, -1, np.int64) if keeps is None else np.asarray(keeps, np.int64)
        self.keep_weights = np.ones(n) if keep_weights is None else \
            np.asarray(keep_weights, np.float64)
        # bones Blender poses as ``parent · rest offset · channels`` (module docstring), or that
        # ride on their parent
        self.rigid = (self.flags.inherit_rotation & self.flags.local_location
                      & (self.flags.inherit_scale == FULL)) | self.riders
        self.plain = all_true(self.rigid)
        self._descendants = None
        self.kept_levels = level_keepers(self)      # the keepers the FK turns, level by level

    @classmethod
    def from_bones(cls, names, parents, rest_matrices, lengths=None, connected=None, flags=None):
        """Build from Blender's ``Bone.matrix_local`` (armature space) and parent indices (-1 = root).

        ``lengths`` (bone lengths, for the tails) default to the distance to the first child's head,
        or 0 for leaves; ``connected`` (``Bone.use_connect``) defaults to all False; ``flags``
        (``BoneFlags``) to inheriting rotation and scale, with local location.
        """
        parents = np.asarray(parents, dtype=np.int64)
        rest = np.asarray(rest_matrices, dtype=np.float64)
        n = len(parents)
        if connected is None:
            connected = np.zeros(n, dtype=bool)
        if lengths is None:
            lengths = np.zeros(n)
            heads = rest[:, :3, 3]
            for child in np.nonzero(parents >= 0)[0][::-1]:
                lengths[parents[child]] = np.linalg.norm(heads[child] - heads[parents[child]])
        return cls(names, parents, rest, lengths, connected, flags)

    def __len__(self):
        return len(self.names)

    def _levels(self):
        """Per depth ≥ 1: (bone indices, their parent indices), for the batched product."""
        levels = []
        for d in range(1, int(self.depth.max(initial=0)) + 1):
            idx = np.nonzero(self.depth == d)[0]
            levels.append((idx, self.parents[idx]))
        return levels

    def _jumps(self):
        """Per pointer-jumping step: (bones that still have an ancestor pointer, that ancestor);
        and each bone's depth (the hops its pointer covered, summed over the steps)."""
        n = len(self.parents)
        if np.any((self.parents < -1) | (self.parents >= n)):
            raise ValueError("the parent indices point outside the armature")
        ancestor = self.parents.copy()
        depth = (ancestor >= 0).astype(np.int64)
        jumps = []
        for _ in range(n.bit_length() + 1):
            idx = np.nonzero(ancestor >= 0)[0]
            if idx.size == 0:
                return jumps, depth
            jumps.append((idx, ancestor[idx]))
            depth[idx] += depth[ancestor[idx]]
            ancestor[idx] = np.where(ancestor[ancestor[idx]] >= 0, ancestor[ancestor[idx]], -1)
        raise ValueError("the parent indices contain a cycle")

    def _rest_offsets(self):
        """``B_p⁻¹ B_i`` for children, ``B_i`` for roots: the bone's rest frame in its parent's."""
        offsets = self.rest_matrices.copy()
        child = self.parents >= 0
        parent_rest = self.rest_matrices[self.parents[child]]
        offsets[child] = np.linalg.inv(parent_rest) @ self.rest_matrices[child]
        return offsets

    def channel_matrices(self, rotations, locations=None, scales=None):
        """The pose channels ``C = [R(q) S(s) | l]`` of every bone (n,4,4), the location zeroed
        for connected bones (``BKE_pchan_to_mat4``); rotations are normalized."""
        n = len(self.names)
        pose = np.zeros((n, 4, 4))
        pose[:, :3, :3] = quat_to_matrix(np.asarray(rotations, dtype=np.float64).reshape(n, 4))
        if scales is not None:
            pose[:, :3, :3] *= np.asarray(scales, dtype=np.float64).reshape(n, 1, 3)
        pose[:, 3, 3] = 1.0
        if locations is not None:
            loc = np.asarray(locations, dtype=np.float64).reshape(n, 3)
            pose[:, :3, 3] = loc * self.uses_location[:, None]
        return pose

    def matrices(self, rotations, locations=None, scales=None, frames=None, plain=None,
                 channels=None):
        """Armature-space pose matrices (n,4,4), equal to Blender's ``PoseBone.matrix`` before
        constraints. ``frames``: ``(root bones, their pose matrices)`` given instead of computed
        (a solve's chains hang from parents Blender evaluated); ``channels``: ``(bones, their
        channel matrices)`` given instead of computed (a constraint's local effect). A model
        whose bones all inherit rotation and scale and use local location multiplies down the
        tree by pointer jumping; any other goes level by level through Blender's parent
        transform (``bone_parent_transform``), unless ``plain`` says that for this pose they are
        the same (``plain_for``)."""
        pose = self.channel_matrices(rotations, locations, scales)
        if channels is not None:
            pose[channels[0]] = channels[1]
        if not (self.plain if plain is None else plain):
            return self._by_levels(pose, frames)
        local = self.rest_offsets @ pose
        if frames is not None:
            local[frames[0]] = frames[1]
        world = self._along_root_paths(local, np.matmul)
        for kept in self.kept_levels:
            if kept is not None:
                keep(world, *kept)
        return world

    def plain_for(self, locations=None, scales=None, frames=None):
        """True when the pose (``matrices``' arguments) is one where every bone's parent
        transform is ``parent · rest offset``: every scale 1 and the given frames orthonormal
        (each inherit scale mode then keeps nothing else), no bone below a root that does not
        inherit rotation, and no location on a bone without local location."""
        if self.plain:
            return True
        hinge = ~self.flags.inherit_rotation & (self.parents >= 0)
        located = ~self.flags.local_location
        if locations is not None:
            located &= np.any(locations != 0.0, axis=1)
        else:
            located = np.zeros(len(self), bool)
        frames_unit = frames is None or np.allclose(
            np.einsum('kji,kjl->kil', frames[1][:, :3, :3], frames[1][:, :3, :3]), np.eye(3),
            atol=1e-6)
        return bool(scales is None and frames_unit and not hinge.any() and not located.any())

    def _by_levels(self, channels, frames):
        """Blender's pose evaluation, parents before children, batched over each tree depth."""
        flags, rest = self.flags, self.rest_matrices
        world = np.empty_like(channels)
        roots = self.depth == 0
        world[roots] = root_pose(rest[roots], channels[roots], flags.local_location[roots])
        if frames is not None:
            world[frames[0]] = frames[1]
        for (idx, parent_idx), kept in zip(self.levels, self.kept_levels):
            world[idx] = child_pose(self.rest_offsets[idx], rest[parent_idx], world[parent_idx],
                                    channels[idx], *flags.take(idx))
            if kept is not None:
                keep(world, *kept[:3])
        return world

    @cached_property
    def rest_offset_dqs(self):
        """The rest offsets ``L_i = D(B_p⁻¹ B_i)`` as unit dual quaternions (n,8)."""
        return dq_from_matrix(self.rest_offsets)

    def local_dual_quaternions(self, rotations, locations=None):
        """``L_i ⊗ (1 + ε l_i/2) ⊗ q_i`` for every bone, as (n,8) (Bartelink Alg. 6), with the
        rotations normalized."""
        n = len(self.names)
        offsets = self.rest_offset_dqs
        if locations is not None:
            loc = np.asarray(locations, dtype=np.float64).reshape(n, 3)
            offsets = dq_times_translation(offsets, loc * self.uses_location[:, None])
        rotations = qnormalize(np.asarray(rotations, dtype=np.float64).reshape(n, 4))
        return dq_times_rotation(offsets, rotations)

    def forward(self, rotations, locations=None, frames=None):
        """Armature-space poses as (n,8) unit dual quaternions ``(1 + ε t/2) r``, composed down
        the chain as ``D_i = D_p ⊗ L_i ⊗ (1 + ε l_i/2) ⊗ q_i`` (module docstring), with the poses
        of the root bones ``frames[0]`` given as ``frames[1]`` (see ``matrices``).
        Equal to ``matrices`` for rigid rest matrices. Blender's float32 rest matrices are rigid only
        to about 6e-6 and ``L_i`` is rigid, so on its rigs the two differ by a few 1e-6 m."""
        local = self.local_dual_quaternions(rotations, locations)
        if frames is not None:
            local[frames[0]] = frames[1]
        return self._along_root_paths(local, dq_mul)

    def _along_root_paths(self, local, product):
        """Each bone's ``local`` transform (n,…) premultiplied by its ancestors' along its root
        path, by pointer jumping over ``product`` (module docstring)."""
        for idx, ancestor in self.jumps:
            local[idx] = product(local.take(ancestor, axis=0), local.take(idx, axis=0))
        return local

    def tails(self, matrices):
        """Bone tails ``M_i · (0, length_i, 0, 1)`` from pose matrices, as (n,3)."""
        return matrices[:, :3, 3] + matrices[:, :3, 1] * self.lengths[:, None]

    def with_ancestors(self, bones):
        """Sorted indices of ``bones`` and all their ancestors: the joints that move any of them
        (``descendants_mask``)."""
        return np.flatnonzero(self.descendants_mask()[:, bones].any(axis=1))

    def subset(self, bones, roots=()):
        """The model of ``bones`` alone, which must hold every ancestor of each of them but
        those of ``roots``: these are roots of the subset (their pose matrices are then given
        as ``frames`` to ``matrices``)."""
        bones = np.asarray(bones, dtype=np.int64)
        new_index = np.full(len(self.names), -1, dtype=np.int64)
        new_index[bones] = np.arange(bones.size)
        parents = np.where(np.isin(bones, roots), -1, self.parents[bones])
        remapped = np.where(parents >= 0, new_index[parents], -1)
        if np.any((parents >= 0) & (remapped < 0)):
            raise ValueError("a subset must contain the ancestors of its bones")
        kept = self.keeps[bones]
        return ChainModel([self.names[i] for i in bones], remapped, self.rest_matrices[bones],
                          self.lengths[bones], self.connected[bones], self.flags.take(bones),
                          self.riders[bones], np.where(kept >= 0, new_index[kept], -1),
                          self.keep_weights[bones])

    def followed(self, parents, riders, keeps=None, keep_weights=None):
        """The same bones with the parents ``parents``, the ``riders`` mask and the ``keeps``
        and ``keep_weights`` (``__init__``)."""
        return ChainModel(self.names, parents, self.rest_matrices, self.lengths, self.connected,
                          self.flags, riders, keeps, keep_weights)

    def descendants_mask(self):
        """(n,n) boolean: ``mask[j, i]`` is True when joint j moves bone i (j is i or an ancestor).
        Computed once per model (read-only)."""
        if self._descendants is None:
            n = len(self.names)
            mask = np.eye(n, dtype=bool)
            for idx, parent_idx in self.levels:
                mask[:, idx] |= mask[:, parent_idx]
            mask.flags.writeable = False
            self._descendants = mask
        return self._descendants
