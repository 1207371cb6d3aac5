"""The contacts of a solve: its capsules against the obstacles and against each other.

Built once per solver from the bones the solve may move (``contacts.Capsules``,
``contacts.CapsulePairs``); per pose it gives the contact rows (``contacts.contact_rows``,
``self_contact_rows``), the total penetration that ranks above every task level, the touching
test of the escapes, and the contacts of a result for reports and drawing.

The obstacles are probed at the capsules' sample points and, when the obstacle query has a
segment query ``obstacles.segments(heads, tails, radii, max_distance, samples) -> (s, signed
distance, outward normal)``, at each capsule's point ``head + s (tail − head)`` nearest to them:
one more row per capsule, wherever along the bone a thin obstacle lies. Such a query also
answers ``obstacles(points, max_distance, triangles=True)`` with a third array, what it found
each point nearest to, handed back as ``samples`` (each capsule's head, middle and tail: the
distances, no farther than searched, and those arrays) so that the segment query need not search
from them again. Without it (analytic obstacles of the engine tests) the samples alone are
probed.
"""

from typing import NamedTuple

import numpy as np

from .contacts import (
    SAMPLES,
    CapsulePairs,
    Capsules,
    contact_rows,
    nearest_between,
    pair_clearances,
    self_contact_rows,
)
from .jacobian import column_mask
from .quaternion import row_dots

_TOUCH = 0.01  # a capsule this close (fraction of the chain size) to an obstacle is touching it
_COINCIDENT = 0.05  # a capsule's nearest point this close to a sample (fraction of its radius) is it


class Contacts(NamedTuple):
    """Capsule points (samples, and each capsule's point nearest the obstacles) within the
    margin plus ``_TOUCH`` of an obstacle, in armature space:
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
        self._probed = None  # (pose, obstacles, bounds, answer, raw answers) of the last probe
        if obstacles is not None:  # only capsules the solve can move out of the way
            moved = moves[joints].any(axis=0)
            self.capsules = capsules = Capsules(model, radii, collision & moved)
            # the probed points: the samples, then each capsule's point nearest the obstacles
            self._owners = np.concatenate([capsules.owner, capsules.bones])
            self._columns = column_mask(moves[:, self._owners].T, joints)
            self._radii = np.concatenate([capsules.radii, capsules.bone_radii])
            self._lengths = model.lengths
            self._margins = np.full(self._owners.size, margin)
            self._keep = self._radii + margin
            self._movers = moves[joints]      # (joints, bones): which joints move each bone
            self._seats = self._kept = None
        if self_collision:
            self.pairs = CapsulePairs(model, radii, collision, moves[joints], margin)
            self.pair_columns = tuple(column_mask(moves[:, bones].T, joints)
                                      for bones in (self.pairs.a, self.pairs.b))

    def capsule_bones(self):
        """Sorted bones of the model whose capsules the set tests: against the obstacles (those
        the joints move) and in self-collision pairs."""
        tested = [np.zeros(0, dtype=np.int64)]
        if self.capsules is not None:
            tested.append(self.capsules.bones)
        if self.pairs is not None:
            tested += [self.pairs.a, self.pairs.b]
        return np.unique(np.concatenate(tested))

    def seat(self, bones, goals):
        """Let the capsules of ``bones`` (one per position task; ``goals`` their target points)
        come as close to the obstacles as their targets lie, so that a foot whose target is on a
        floor stands on it.

        A target at signed distance ``d`` from the obstacles (nearest surface point ``c``,
        outward normal ``n``) seats its bone while the bone's tail is on the outer side of that
        surface, ``(tail − c)·n ≥ 0``. A seated bone's probed points keep a clearance of
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
            carried = np.all(movers[:, bones].T[:, :, None] == movers[:, self._owners][None],
                             axis=1)
            d = distance[near]
            allowance = np.where(bones[:, None] == self._owners[None], np.abs(d)[:, None],
                                 np.maximum(-d, 0.0)[:, None])
            self._seats = (bones, goals[near] - normal[near] * d[:, None], normal[near],
                           np.where(carried, allowance, np.inf))

    def _clearances(self, world):
        """Each probed point's ``(radius, margin)`` to keep at the pose ``world`` (``seat``)."""
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
            keep = sum(self._clearances(world))
            points, distance, normal = self._probe(world, keep + band)
            found.append(contact_rows(frame, points, normal, distance - keep, self._columns, band))
        if self.pairs is not None:
            found.append(self_contact_rows(self.pairs, world, frame, self.pair_columns,
                                           self.margin, band))
        return np.concatenate([g for g, _ in found]), np.concatenate([r for _, r in found])

    def penetration(self, world):
        """Sum of the depths by which capsules sink into obstacles or each other past the margin."""
        depth = 0.0
        if self.capsules is not None and len(self.capsules):
            keep = sum(self._clearances(world))
            _, distance, _ = self._probe(world, keep)
            depth += np.sum(np.maximum(keep - distance, 0.0))
        if self.pairs is not None:
            depth += np.sum(np.maximum(-pair_clearances(self.pairs, world, self.margin), 0.0))
        return float(depth)

    def touching(self, world):
        """True when a capsule is within ``_TOUCH`` of an obstacle or of another capsule."""
        touch = _TOUCH * self.size
        if self.capsules is not None and len(self.capsules):
            bound = sum(self._clearances(world)) + touch
            _, distance, _ = self._probe(world, bound)
            if np.any(distance <= bound):
                return True
        return self.pairs is not None and bool(
            np.any(pair_clearances(self.pairs, world, self.margin) <= touch))

    def contacts(self, world, bones):
        """The ``Contacts`` with the obstacles at ``world``; ``bones``: the model index of each
        bone of the (sub-)model."""
        if self.capsules is None or not len(self.capsules):
            return Contacts(np.zeros(0, np.int64), *np.zeros((2, 0, 3)), np.zeros(0))
        keep = sum(self._clearances(world))
        points, distance, normal = self._probe(world, keep + _TOUCH * self.size)
        clearance = distance - keep
        near = np.isfinite(distance) & (clearance <= _TOUCH * self.size)
        return Contacts(bones[self._owners[near]],
                        points[near] - normal[near] * distance[near][:, None], normal[near],
                        clearance[near])

    def _probe(self, world, bound):
        """``(points, signed distances, outward normals)`` of the probed points at ``world`` (the
        capsules' samples, then each capsule's point nearest the obstacles; distance ``inf``
        where nothing is within ``bound``). Answered from the last probe when asked again at the
        same pose and obstacles for no farther (every caller looks only within its own bounds, so
        the farther answer serves): an escape's touching test reuses the step's contact
        detection.

        The segment query is asked only for the capsules its answer can lie within ``bound``
        for. The balls about two samples ``g`` apart with their distances ``d₁``, ``d₂`` as radii
        hold no surface point, so no point between them is nearer than
        ``contacts.nearest_between(d₁, d₂, g)`` (where the spheres meet; the 1-Lipschitz bound
        ``(d₁ + d₂ − g) / 2`` when they do not overlap); a segment with that at least ``bound``
        between every two of its samples is asked for nothing (one exactly at its bound counts as
        beyond it). The samples are asked up to ``√(bound² + h²)`` (``h``: half the largest gap
        of the capsules they belong to, ``Capsules.half_gap``), for which that bound is ``bound``,
        and one with nothing within that counts as that far: a capsule whose samples all are is
        left out."""
        memo = self._probed
        again = memo is not None and memo[0] is world and memo[1] is self.obstacles
        if again and np.all(memo[2] >= bound):
            return memo[3]
        capsules = self.capsules
        count = len(capsules)
        points = capsules.points(world)
        heads, tails = capsules.segments(world)
        segments = getattr(self.obstacles, "segments", None)
        # asked again at this pose for farther: the answers found stand (the samples' are exact,
        # a segment's is its search within the nearer bound); only what was beyond is asked
        distance, normal, where, s, far, towards = (a.copy() for a in memo[4]) if again else (
            np.full(count, np.inf), np.zeros((count, 3)), np.full(count, -1, np.int64),
            np.zeros(len(heads)), np.full(len(heads), np.inf), np.zeros_like(heads))
        asked = bound[:count].copy()
        if segments is not None and count:
            segment_bound = bound[count:]
            reach = np.hypot(segment_bound, capsules.half_gap) * (1.0 + 1e-9)
            np.maximum.at(asked, capsules.samples_of, reach[:, None])
        unknown = np.isinf(distance).nonzero()[0]
        if unknown.size and segments is not None:
            distance[unknown], normal[unknown], where[unknown] = self.obstacles(
                points[unknown], asked[unknown], triangles=True)
        elif unknown.size:
            distance[unknown], normal[unknown] = self.obstacles(points[unknown], asked[unknown])
        if segments is not None and count:
            ends = np.minimum(distance, asked)[capsules.samples_of]
            # a capsule whose samples all are at least ``reach`` away is not asked (the bound
            # grows with the samples' distances): only the others are looked at
            maybe = ((ends.min(axis=1) < reach) & np.isinf(far)).nonzero()[0]
            lowest = nearest_between(ends[maybe, :-1], ends[maybe, 1:],
                                     capsules.sample_gaps[maybe]).min(axis=1, initial=np.inf)
            near = maybe[lowest < segment_bound[maybe]]
            if near.size:
                rows = capsules.samples_of[near]
                s[near], far[near], towards[near] = segments(
                    heads[near], tails[near], capsules.bone_radii[near], segment_bound[near],
                    (ends[near], where[rows]))
        # a nearest point on a sample is that sample: a second, identical row would make the
        # active set's rows dependent
        off_sample = np.abs(s[:, None] - SAMPLES[None]).min(axis=1) * capsules.lengths[:, 0]
        apart = np.where(off_sample > _COINCIDENT * capsules.bone_radii, far, np.inf)
        nearest = heads + s[:, None] * (tails - heads)
        found = (np.concatenate([points, nearest]), np.concatenate([distance, apart]),
                 np.concatenate([normal, towards]))
        self._probed = (world, self.obstacles, bound, found,
                        (distance, normal, where, s, far, towards))
        return found
