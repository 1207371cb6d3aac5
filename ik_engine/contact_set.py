"""The contacts of a solve: its capsules against the obstacles and against each other.

Built once per solver from the bones the solve may move (``contacts.Capsules``,
``contacts.CapsulePairs``); per pose it gives the contact rows (``contacts.contact_rows``,
``self_contact_rows``), the total penetration that ranks above every task level, the touching
test of the escapes, and the contacts of a result for reports and drawing.
"""

from typing import NamedTuple

import numpy as np

from .contacts import CapsulePairs, Capsules, contact_rows, pair_clearances, self_contact_rows
from .jacobian import column_mask
from .quaternion import row_dots

_TOUCH = 0.01  # a capsule this close (fraction of the chain size) to an obstacle is touching it


class Contacts(NamedTuple):
    """Capsule sample points within the margin plus ``_TOUCH`` of an obstacle, in armature space:
    the model bone of each, the point on the obstacle, its outward normal, and the clearance
    (distance from the capsule's surface to the obstacle; negative: penetrating)."""

    bones: np.ndarray
    points: np.ndarray
    normals: np.ndarray
    clearances: np.ndarray


class ContactSet:
    """Capsules of a (sub-)model against an obstacle query and, with ``self_collision``, each
    other. ``obstacles(points, max_distance) -> (signed distance, outward normal)`` (``inf``
    beyond ``max_distance``)."""

    def __init__(self, model, joints, moves, radii, collision, obstacles, self_collision, margin,
                 size):
        self.obstacles, self.margin, self.size = obstacles, margin, size
        self.capsules = self.pairs = None
        self._queried = None  # (pose, obstacles, bounds, answer) of the last obstacle query
        if obstacles is not None:  # only capsules the solve can move out of the way
            moved = moves[joints].any(axis=0)
            self.capsules = Capsules(model, radii, collision & moved)
            self.capsule_columns = column_mask(moves[:, self.capsules.owner].T, joints)
            self._radii, self._lengths = self.capsules.radii, model.lengths
            self._margins = np.full(len(self.capsules), margin)
            self._keep = self._radii + margin
            self._movers = moves[joints]      # (joints, bones): which joints move each bone
            self._seats = self._kept = None
        if self_collision:
            self.pairs = CapsulePairs(model, radii, collision, moves[joints], margin)
            self.pair_columns = tuple(column_mask(moves[:, bones].T, joints)
                                      for bones in (self.pairs.a, self.pairs.b))

    def seat(self, bones, goals):
        """Let the capsules of ``bones`` (one per position task; ``goals`` their target points)
        come as close to the obstacles as their targets lie, so that a foot whose target is on a
        floor stands on it.

        A target at signed distance ``d`` from the obstacles (nearest surface point ``c``,
        outward normal ``n``) seats its bone while the bone's tail is on the outer side of that
        surface, ``(tail − c)·n ≥ 0``. A seated bone's samples keep a clearance of
        ``min(radius + margin, |d|)`` instead of ``radius + margin`` (the margin given up first),
        so the contact holds the tail exactly where the task puts it. The other capsules it
        carries rigidly (moved by exactly the same joints of the solve: a foot's toe and heel)
        keep ``min(radius + margin, max(−d, 0))``: while the target is on or above the floor they
        may rest on it (their bone lines on its surface), however the foot's bones lie below
        its tail. Both are continuous in ``d``: a target that sinks into an obstacle gives the
        bones their clearance back as it goes deeper, so a hand pushed into a wall stops with its
        capsule on the wall. A target beyond a thin plate, whose nearest surface is the plate's
        far face, seats nothing while the tail is on the near side."""
        self._seats, self._kept = None, None
        if self.capsules is None or not len(self.capsules) or not len(bones):
            return
        goals = np.asarray(goals, np.float64)
        distance, normal = self.obstacles(goals, np.full(len(bones), self._keep.max()))
        near = np.isfinite(distance) & (np.abs(distance) < self._keep.max())
        if near.any():
            bones = np.asarray(bones)[near]
            movers = self._movers
            carried = np.all(movers[:, bones].T[:, :, None] == movers[:, self.capsules.owner][None],
                             axis=1)
            d = distance[near]
            allowance = np.where(bones[:, None] == self.capsules.owner[None], np.abs(d)[:, None],
                                 np.maximum(-d, 0.0)[:, None])
            self._seats = (bones, goals[near] - normal[near] * d[:, None], normal[near],
                           np.where(carried, allowance, np.inf))

    def _clearances(self, world):
        """Each sample's ``(radius, margin)`` to keep at the pose ``world`` (``seat``)."""
        if self._seats is None:
            return self._radii, self._margins
        if self._kept is not None and self._kept[0] is world:
            return self._kept[1]
        bones, surface, normal, allowance = self._seats
        frames = world.take(bones, axis=0)
        tails = frames[:, :3, 3] + self._lengths[bones, None] * frames[:, :3, 1]
        outside = row_dots(tails - surface, normal) >= 0.0
        limit = np.where(outside[:, None], allowance, np.inf).min(axis=0, initial=np.inf)
        required = np.minimum(self._keep, limit)
        margins = np.minimum(self.margin, required)
        self._kept = (world, (required - margins, margins))
        return self._kept[1]

    def rows(self, world, frame, band):
        """The contact rows ``(gradient (rows, 3m), rhs (rows,))`` at ``world``, or None."""
        found = []
        if self.capsules is not None:
            found.append(contact_rows(self.capsules, *self._clearances(world), world, frame,
                                      self.capsule_columns, self._query(world), band))
        if self.pairs is not None:
            found.append(self_contact_rows(self.pairs, world, frame, self.pair_columns,
                                           self.margin, band))
        return np.concatenate([g for g, _ in found]), np.concatenate([r for _, r in found])

    def penetration(self, world):
        """Sum of the depths by which capsules sink into obstacles or each other past the margin."""
        depth = 0.0
        if self.capsules is not None and len(self.capsules):
            keep = sum(self._clearances(world))
            distance, _ = self._query(world)(self.capsules.points(world), keep)
            depth += np.sum(np.maximum(keep - distance, 0.0))
        if self.pairs is not None:
            depth += np.sum(np.maximum(-pair_clearances(self.pairs, world, self.margin), 0.0))
        return float(depth)

    def touching(self, world):
        """True when a capsule is within ``_TOUCH`` of an obstacle or of another capsule."""
        touch = _TOUCH * self.size
        if self.capsules is not None and len(self.capsules):
            bound = sum(self._clearances(world)) + touch
            distance, _ = self._query(world)(self.capsules.points(world), bound)
            if np.any(distance <= bound):
                return True
        return self.pairs is not None and bool(
            np.any(pair_clearances(self.pairs, world, self.margin) <= touch))

    def contacts(self, world, bones):
        """The ``Contacts`` with the obstacles at ``world``; ``bones``: the model index of each
        bone of the (sub-)model."""
        if self.capsules is None or not len(self.capsules):
            return Contacts(np.zeros(0, np.int64), *np.zeros((2, 0, 3)), np.zeros(0))
        points = self.capsules.points(world)
        keep = sum(self._clearances(world))
        distance, normal = self._query(world)(points, keep + _TOUCH * self.size)
        clearance = distance - keep
        near = np.isfinite(distance) & (clearance <= _TOUCH * self.size)
        return Contacts(bones[self.capsules.owner[near]],
                        points[near] - normal[near] * distance[near][:, None], normal[near],
                        clearance[near])

    def _query(self, world):
        """``obstacles`` for the capsule points at ``world``, answering from its last answer when
        asked again at the same pose and obstacles for no farther (every caller looks only within
        its own bounds, so the farther answer serves): an escape's touching test reuses the
        step's contact detection."""
        def query(points, max_distance):
            memo = self._queried
            if memo is not None and memo[0] is world and memo[1] is self.obstacles \
                    and np.all(memo[2] >= max_distance):
                return memo[3]
            found = self.obstacles(points, max_distance)
            self._queried = (world, self.obstacles, max_distance, found)
            return found
        return query
