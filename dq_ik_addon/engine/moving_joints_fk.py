"""The solve's forward kinematics: only the joints it moves rotate, the rest is taken as given.

- ``GivenPose``: what a solve takes as it is, the pose locations and scales and Blender's
  evaluated pose matrices (constraints and drivers included).
- ``MovingJointsFK``: FK of a rig while only the solve's joints rotate. The part they drive goes
  through ``ChainModel.matrices`` (Blender's pose evaluation: ``chain_model``,
  ``bone_parent_transform``), hung from the evaluated pose of its parents outside it. Every
  other bone is posed rigidly on its parent (``M_i = M_p · (B_p⁻¹ B_i) · C_i``, ``chain_model``'s
  module docstring; a rider as a fixed transform of it), so on its nearest ancestor a in that
  part ``M_i = M_a · (M_a⁻¹ M_i)`` with a bracket the joints do not change: it is taken once
  per solve from the start pose, and a bone without such an ancestor keeps its start pose.
  A *keeper* (``ChainModel.keeps``: a bone whose world rotation a constraint takes from its
  source s) rides so in place but turns with s, ``R_k = R_s (R_s⁻¹ R_k)_start``, and the bones
  below it ride on it.
"""

from typing import NamedTuple

import numpy as np

from .quaternion import all_true
from .slides import slid_locations


class GivenPose(NamedTuple):
    """What a solve takes as it is: every bone's pose ``locations`` and ``scales`` (n,3) and
    Blender's ``evaluated`` pose matrices (n,4,4, constraints and drivers included; None: the
    model's FK of the channels). None where all locations are 0 or all scales 1."""

    locations: np.ndarray = None
    scales: np.ndarray = None
    evaluated: np.ndarray = None

    @classmethod
    def of(cls, bones, locations=None, scales=None, evaluated=None):
        """The given pose of the sub-model ``bones`` from whole-model arrays."""
        def part(values, neutral=None):
            if values is None:
                return None
            values = np.asarray(values, dtype=np.float64).take(bones, axis=0)
            return None if neutral is not None and all_true(values == neutral) else values
        return cls(part(locations, 0.0), part(scales, 1.0), part(evaluated))

    def key(self, still, slid=()):
        """The pose as bytes, of the evaluated pose only the rows ``still`` (the bones the solve
        does not move: the others Blender evaluates again after each solve), of the locations
        all but the rows ``slid`` (the bones whose location the solve moves, ``slides``)."""
        evaluated = None if self.evaluated is None else self.evaluated[still]
        locations = self.locations
        if locations is not None and len(slid):
            locations = locations.copy()
            locations[slid] = 0.0
        return tuple(None if values is None else values.tobytes()
                     for values in (locations, self.scales, evaluated))


class MovingJointsFK:
    """Forward kinematics of ``model`` while only ``joints`` rotate (one solve).

    The joints, the bones between them and those below them that Blender does not pose rigidly
    on their parents (``ChainModel.rigid``) are *driven*: they go through
    ``ChainModel.matrices`` of their own sub-model, which hangs from the parents they have
    outside it, whose pose matrices are given (Blender's evaluated pose, ``GivenPose``), so a
    chain under a constrained parent follows that parent as Blender placed it (and so does the
    still source of a keeper among them: ``kept_rotations``). Every other bone
    is rigidly attached to its nearest ancestor ``a`` in that part, ``M_i = M_a · (M_a⁻¹ M_i)``,
    with the bracket taken once per solve from the start pose (``start``), or fixed where it
    has none. A 159-bone rig moved by its 18 limb and spine joints then runs FK on about 25 bones
    plus one batched product per call; a 706-bone Rigify rig's four FK limbs on 16.
    """

    def __init__(self, model, joints, sliders=(), given_locals=None):
        """``given_locals`` (n,) bool: bones whose local transform a constraint sets from bones
        the solve does not move (``local_sources``): among the driven bones the joints do not
        turn, those Blender poses plainly take the channels that give their evaluated pose
        (``start``), constant while only the joints turn."""
        self.model = model
        n = len(model)
        self.sliders = np.asarray(sliders, dtype=np.int64)
        joints = np.union1d(np.asarray(joints, dtype=np.int64), self.sliders)
        below = model.descendants_mask()[joints].any(axis=0)    # what the joints move
        self.still = ~below
        driven = model.with_ancestors(
            np.concatenate([joints, np.flatnonzero(below & ~model.rigid)]))
        driven = driven[below[driven]]
        parents = model.parents[driven]
        hung = np.unique(parents[(parents >= 0) & ~below[np.maximum(parents, 0)]])
        sources = model.keeps[driven]       # a driven keeper's still source hangs there too
        hung = np.union1d(hung, sources[(sources >= 0) & ~below[np.maximum(sources, 0)]])
        self.moving = np.union1d(driven, hung).astype(np.int64)
        self.hung, self.hung_rows = hung, np.searchsorted(self.moving, hung)
        in_moving = np.zeros(n, dtype=bool)
        in_moving[self.moving] = True
        self.rigid = np.nonzero(~in_moving)[0]
        self.part = model.subset(self.moving, roots=hung)
        # keepers of the driven part, turned by its FK (``kept_rotations``), as model indices
        self.part_keepers = self.moving[np.concatenate(
            [kept[0] for kept in self.part.kept_levels if kept is not None] or [[]]).astype(int)]
        anchor = _nearest(model, in_moving)
        self.keepers = _keepers(model, in_moving, anchor)
        self.kept_from, self.keeper_anchors = model.keeps[self.keepers], anchor[self.keepers]
        keeper = np.zeros(n, dtype=bool)
        keeper[self.keepers] = True
        anchor = _nearest(model, in_moving | keeper)[self.rigid]   # keepers carry their riders
        attached = anchor >= 0
        # rigid bones with an anchor (ride on it: first on the moving bones, then on the
        # keepers) and without (roots of their own: fixed)
        on_keeper = keeper[np.maximum(anchor, 0)] & attached & ~keeper[self.rigid]
        first = attached & ~on_keeper & ~keeper[self.rigid]
        self.riding, self.anchors = self.rigid[first], anchor[first]
        self.riding_kept, self.kept_anchors = self.rigid[on_keeper], anchor[on_keeper]
        self.fixed = self.rigid[~attached]
        self.given, self.frames, self.plain = GivenPose(), None, None
        self.riding_offsets = self.fixed_matrices = None
        local = np.zeros(n, dtype=bool) if given_locals is None else given_locals.copy()
        local[joints] = False
        local &= in_moving & model.rigid & ~model.riders & (model.parents >= 0)
        local[hung] = False
        self.locals, self.local_channels = np.flatnonzero(local), None
        self._locals_rest = np.linalg.inv(model.rest_offsets[self.locals])     # O⁻¹ of each
        self._keyed_locals, self._locals_version = None, 0     # (``locals_key``)
        self._locals_of = (None, None)   # (an evaluated pose, its ``_local_channels``): the last

    def _part_of(self, values):
        """The rows of the driven part (and its hung parents) of per-bone ``values``, or None."""
        return None if values is None else values.take(self.moving, axis=0)

    def start(self, rotations, given=None):
        """Take the start pose: the ``GivenPose`` (default: none) and, from its evaluated pose
        (or the model's FK), the parents the driven part hangs from, each rigid bone's offset
        from its anchor and the fixed bones. Returns the FK of ``rotations`` (the bones'
        rotations, or the solve's state with its slides: ``slides``)."""
        self.given = given = GivenPose() if given is None else given
        world = given.evaluated
        if world is None:
            world = self.model.matrices(*self._channels(rotations), given.scales)
        self.frames = (self.hung_rows, world[self.hung])
        part_of = self._part_of
        self.plain = self.part.plain_for(part_of(given.locations), part_of(given.scales),
                                         self.frames)
        self.riding_offsets = np.linalg.inv(world[self.anchors]) @ world[self.riding]
        if self.keepers.size:
            self.kept_offsets = np.linalg.inv(world[self.kept_anchors]) @ world[self.riding_kept]
            self.keeper_places = (np.linalg.inv(world[self.keeper_anchors])
                                  @ world[self.keepers])[:, :, 3]
            self.keeper_turns = np.linalg.inv(world[self.kept_from][:, :3, :3]) \
                @ world[self.keepers][:, :3, :3]
        self.fixed_matrices = world[self.fixed].copy()
        self.local_channels = None if given.evaluated is None else self._local_channels(world)
        return self(rotations)

    def locals_key(self, given):
        """A number that changes whenever the local channels ``start`` would take from the
        evaluated pose of ``given`` (``_local_channels``) differ from those it last saw by more
        than ``_SAME_LOCAL``: part of the given pose's key (``Problem.given_key``), so that a
        solve does not go on from a result whose FK used other ones (a Rigify chest turned
        between two ticks turns its spine's ``MCH-spine`` bones, which the solve moves along
        with the torso and so does not key by their evaluated pose)."""
        channels = None if given.evaluated is None else self._local_channels(given.evaluated)
        last = self._keyed_locals
        same = channels is None and last is None or channels is not None and last is not None \
            and np.array_equal(channels[0], last[0]) \
            and np.abs(channels[1] - last[1]).max(initial=0.0) <= _SAME_LOCAL
        if not same:
            self._keyed_locals, self._locals_version = channels, self._locals_version + 1
        return self._locals_version

    def _local_channels(self, world):
        """``(part rows, channel matrices)`` of the bones ``given_locals`` (``__init__``) from the
        evaluated pose ``world``: ``C = O⁻¹ P⁻¹ M`` (rest offset O, parent's pose P, the bone's
        M; ``chain_model``), of those whose C only turns the bone: without scale or shear (their
        children's parent transforms then stay plain) and without translation (which the reach
        bound, ``reach_bound``, reads from the locations, not from constraints); None if
        none."""
        if not self.locals.size:
            return None
        if world is self._locals_of[0]:     # ``locals_key`` and then ``start``, on one given pose
            return self._locals_of[1]
        bones = self.locals
        parents = self.model.parents[bones]
        channels = self._locals_rest @ np.linalg.inv(world[parents]) @ world[bones]
        axes, size = channels[:, :3, :3], max(1.0, float(np.abs(world[:, :3, 3]).max()))
        turning = (np.abs(np.einsum('kji,kjl->kil', axes, axes) - np.eye(3)).max(axis=(1, 2))
                   <= _SAME_LOCAL) & (np.abs(channels[:, :3, 3]).max(axis=1) <= _SAME_LOCAL * size)
        found = None if not turning.any() else \
            (np.searchsorted(self.moving, bones[turning]), channels[turning])
        self._locals_of = (world, found)
        return found

    def _channels(self, state):
        """``(rotations, locations)`` of the bones from the solve's ``state``: its first n rows,
        and the given locations with the slides of its last rows (``slides``)."""
        n = len(self.model)
        if len(state) == n:
            return state, self.given.locations
        return state[:n], slid_locations(state, self.given.locations, self.sliders, n)

    def __call__(self, rotations):
        """Armature-space pose matrices (n,4,4) for ``rotations`` (the bones' rotations, or the
        solve's state with its slides) that differ from the start pose only at the joints and
        the sliding bones."""
        given, part_of = self.given, self._part_of
        rotations, locations = self._channels(rotations)
        world = np.empty((len(self.model), 4, 4))
        world[self.moving] = self.part.matrices(
            part_of(rotations), part_of(locations), part_of(given.scales),
            self.frames if self.hung.size else None, self.plain, self.local_channels)
        if self.fixed.size:
            world[self.fixed] = self.fixed_matrices
        world[self.riding] = world.take(self.anchors, axis=0) @ self.riding_offsets
        if self.keepers.size:   # a keeper: its rotation its source's, carried on its anchor
            world[self.keepers] = world.take(self.keeper_anchors, axis=0) @ _translation(
                self.keeper_places)
            world[self.keepers, :3, :3] = world[self.kept_from, :3, :3] @ self.keeper_turns
            world[self.riding_kept] = world.take(self.kept_anchors, axis=0) @ self.kept_offsets
        return world


_SAME_LOCAL = 1e-5  # Blender's float32 evaluated pose: the same local channels (and no scale)


def _nearest(model, anchors):
    """Each bone's nearest ancestor-or-self among ``anchors`` (mask), or -1."""
    anchor = np.where(anchors, np.arange(len(model)), -1)
    for idx, parent_idx in model.levels:       # parents first: inherit the nearest anchor
        anchor[idx] = np.where(anchors[idx], idx, anchor[parent_idx])
    return anchor


def _keepers(model, moving, anchor):
    """The bones taken as keepers (``ChainModel.keeps``) among the rigid ones: those that take
    their source's rotation whole, on a moving anchor, whose source's pose is known first
    (moving, or fixed: no anchor) and with no keeper above them; any other keeps its rotation as
    it rides. (A keeper in the driven part is its FK's: ``kept_rotations``.)"""
    source = model.keeps
    candidate = (source >= 0) & ~moving & (anchor >= 0) & (model.keep_weights >= 1.0)
    known = moving | (anchor < 0)
    candidate &= known[np.maximum(source, 0)]
    kept = np.flatnonzero(candidate)
    below = model.descendants_mask()[np.ix_(kept, kept)] & ~np.eye(kept.size, dtype=bool)
    return kept[~below.any(axis=0)]


def _translation(points):
    """(k,4,4) homogeneous columns: the matrix products take only the points (k,4) through."""
    out = np.zeros((len(points), 4, 4))
    out[:, :, 3] = points
    return out
