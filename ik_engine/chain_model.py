"""The armature as a tree of rigid joints, with forward kinematics batched by tree depth.

Blender's pose evaluation for a bone i with parent p (rest matrices ``B`` in armature space,
pose-bone location ``l`` and rotation ``q`` in the bone's rest frame) is

    M_i = M_p · (B_p⁻¹ B_i) · T(l_i) · R(q_i)          (roots: M_i = B_i · T(l_i) · R(q_i))

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

import numpy as np

from .dual_quaternion import dq_from_matrix, dq_mul, dq_times_rotation, dq_times_translation
from .quaternion import qnormalize, quat_to_matrix


class ChainModel:
    """An armature's rest data and its depth-batched forward kinematics."""

    def __init__(self, names, parents, rest_matrices, lengths, connected):
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
        self._descendants = None

    @classmethod
    def from_bones(cls, names, parents, rest_matrices, lengths=None, connected=None):
        """Build from Blender's ``Bone.matrix_local`` (armature space) and parent indices (-1 = root).

        ``lengths`` (bone lengths, for the tails) default to the distance to the first child's head,
        or 0 for leaves; ``connected`` (``Bone.use_connect``) defaults to all False.
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
        return cls(names, parents, rest, lengths, connected)

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

    def local_matrices(self, rotations, locations=None):
        """``(B_p⁻¹ B_i) · T(l_i) · R(q_i)`` for every bone, as (n,4,4); rotations are normalized
        (by ``quat_to_matrix``)."""
        n = len(self.names)
        pose = np.zeros((n, 4, 4))
        pose[:, :3, :3] = quat_to_matrix(np.asarray(rotations, dtype=np.float64).reshape(n, 4))
        pose[:, 3, 3] = 1.0
        if locations is not None:
            loc = np.asarray(locations, dtype=np.float64).reshape(n, 3)
            pose[:, :3, 3] = loc * self.uses_location[:, None]
        return self.rest_offsets @ pose

    def matrices(self, rotations, locations=None):
        """Armature-space pose matrices (n,4,4), equal to Blender's ``PoseBone.matrix``."""
        return self._along_root_paths(self.local_matrices(rotations, locations), np.matmul)

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

    def forward(self, rotations, locations=None):
        """Armature-space poses as (n,8) unit dual quaternions ``(1 + ε t/2) r``, composed down
        the chain as ``D_i = D_p ⊗ L_i ⊗ (1 + ε l_i/2) ⊗ q_i`` (module docstring).
        Equal to ``matrices`` for rigid rest matrices. Blender's float32 rest matrices are rigid only
        to about 6e-6 and ``L_i`` is rigid, so on its rigs the two differ by a few 1e-6 m."""
        return self._along_root_paths(self.local_dual_quaternions(rotations, locations), dq_mul)

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

    def subset(self, bones):
        """The model of ``bones`` alone (which must hold every ancestor of each of them)."""
        bones = np.asarray(bones, dtype=np.int64)
        new_index = np.full(len(self.names), -1, dtype=np.int64)
        new_index[bones] = np.arange(bones.size)
        parents = self.parents[bones]
        remapped = np.where(parents >= 0, new_index[parents], -1)
        if np.any((parents >= 0) & (remapped < 0)):
            raise ValueError("a subset must contain the ancestors of its bones")
        return ChainModel([self.names[i] for i in bones], remapped, self.rest_matrices[bones],
                          self.lengths[bones], self.connected[bones])

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


class MovingJointsFK:
    """Forward kinematics of ``model`` while only ``joints`` rotate (one solve).

    The joints and their ancestors (the moving part) go through ``ChainModel.matrices`` of their
    own sub-model; every other bone is rigidly attached to its nearest ancestor ``a`` in that part,
    ``M_i = M_a · (M_a⁻¹ M_i)``, with the bracket taken once per solve from the start pose
    (``start``), since no rotation between them changes. A 159-bone rig moved by its 18 limb and
    spine joints then runs FK on about 25 bones plus one batched product per call.
    """

    def __init__(self, model, joints):
        self.model = model
        n = len(model)
        self.moving = model.with_ancestors(np.asarray(joints, dtype=np.int64))
        in_moving = np.zeros(n, dtype=bool)
        in_moving[self.moving] = True
        self.rigid = np.nonzero(~in_moving)[0]
        self.part = model.subset(self.moving)
        anchor = np.where(in_moving, np.arange(n), -1)
        for idx, parent_idx in model.levels:       # parents first: inherit the nearest anchor
            anchor[idx] = np.where(in_moving[idx], idx, anchor[parent_idx])
        anchor = anchor[self.rigid]
        attached = anchor >= 0
        # rigid bones with an anchor (ride on it) and without (roots of their own: fixed)
        self.riding, self.anchors = self.rigid[attached], anchor[attached]
        self.fixed = self.rigid[~attached]
        self.riding_offsets = self.fixed_matrices = None

    def start(self, rotations, locations=None):
        """Full FK of the start pose; keeps each rigid bone's offset from its anchor."""
        world = self.model.matrices(rotations, locations)
        self.riding_offsets = np.linalg.inv(world[self.anchors]) @ world[self.riding]
        self.fixed_matrices = world[self.fixed].copy()
        return world

    def __call__(self, rotations, locations=None):
        """Armature-space pose matrices (n,4,4) for ``rotations`` that differ from the start pose
        only at the joints."""
        if self.rigid.size == 0:
            return self.model.matrices(rotations, locations)
        world = np.empty((len(self.model), 4, 4))
        world[self.moving] = self.part.matrices(
            rotations.take(self.moving, axis=0),
            None if locations is None else locations.take(self.moving, axis=0))
        if self.fixed.size:
            world[self.fixed] = self.fixed_matrices
        world[self.riding] = world.take(self.anchors, axis=0) @ self.riding_offsets
        return world
