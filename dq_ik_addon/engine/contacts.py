"""Contacts: bone capsules against obstacles and each other, as one-sided rows above every task.

Every collision bone is a capsule: the segment head→tail with a radius (capsules thinner than
``MIN_RADIUS`` are left out). It is sampled at ``SAMPLES`` points p = head + t (tail − head), and
an obstacle that answers segment queries also gives, per capsule, the point of the segment
nearest to it (``ContactSet``: against the triangles of a mesh, so that nothing thinner than the
gap between two samples slips between them). An obstacle query returns, for each point, the
signed distance d to the nearest obstacle surface (negative inside) and the outward normal n
there. A point closer than the margin plus a detection band gives the row (Bartelink §6.2, the
velocity damper of the digests)

    nᵀ J_p Δθ ≥ −(d − radius − margin),   i.e.   −nᵀ J_p Δθ ≤ d − radius − margin,

with J_p the positional Jacobian of the point (``nᵀ J_p`` from ``jacobian.normal_jacobian``).
Rows are re-detected every iteration, so depths are never stale and a contact leaves as soon as
the step moves away. A point already inside (negative right-hand side) is pushed out by
``PUSH_OUT`` of its depth per iteration, so a pose that starts in penetration leaves it in a few
iterations without a jump; a shallow one (up to ``SHALLOW``, what the curvature of an obstacle
leaves after a step along its tangent plane) all at once, so that contacts settle quadratically,
not by halves.
"""

import math

import numpy as np

from .jacobian import normal_jacobian
from .quaternion import row_dots

SAMPLES = np.linspace(0.0, 1.0, 3)  # head, middle, tail: three rows per capsule and iteration
PUSH_OUT = 0.5  # half the depth per iteration: out in a few iterations, without a jump
SHALLOW = 1e-3  # metres: what an obstacle's curvature leaves after a tangent step
MIN_RADIUS = 0.005  # smaller capsules (face, finger tips) are not worth their queries


class Capsules:
    """Collision capsules of a (sub-)model: which bones, their radii, and the sample points.

    A bone connected to a capsule parent starts at the parent's tail sample: that point is
    sampled once, with the larger of the two radii (two coincident samples would give two
    parallel contact rows)."""

    def __init__(self, model, radii, enabled):
        radii = np.asarray(radii, dtype=np.float64)
        is_capsule = np.asarray(enabled, dtype=bool) & (radii >= MIN_RADIUS)
        self.bones = np.nonzero(is_capsule)[0]
        owner = np.repeat(self.bones, SAMPLES.size)
        t = np.tile(SAMPLES, self.bones.size)
        point_radii = radii[owner]
        parents = model.parents[owner]
        shared = (t == 0.0) & model.connected[owner] & (parents >= 0) \
            & is_capsule[np.maximum(parents, 0)]
        # the parent's tail sample, at index 3·(its capsule number) + last
        parent_tail = np.searchsorted(self.bones, parents[shared]) * SAMPLES.size + SAMPLES.size - 1
        np.maximum.at(point_radii, parent_tail, point_radii[shared])
        keep = ~shared
        self.owner, self.t, self.radii = owner[keep], t[keep], point_radii[keep]
        # each capsule's samples, head to tail, as rows of the kept samples (a shared head: the
        # parent's tail sample)
        slots = np.arange(owner.size)
        slots[shared] = parent_tail
        self.samples_of = (np.cumsum(keep) - 1)[slots].reshape(-1, SAMPLES.size)
        self.along = (self.t * model.lengths[self.owner])[:, None]   # distance from the head
        self.bone_radii = radii[self.bones]
        self.lengths = model.lengths[self.bones][:, None]
        self.sample_gaps = self.lengths * np.diff(SAMPLES)    # between consecutive samples
        self.half_gap = self.sample_gaps.max(axis=1) / 2    # the largest, halved
        self._last = None   # (pose, its points)

    def __len__(self):
        return self.owner.size

    def points(self, world):
        """(P,3) sample points in armature space, ``head + t · length · y`` (the bone's y axis
        runs head to tail); the last pose's points are remembered (contacts and penetration ask
        for the same pose)."""
        if self._last is not None and self._last[0] is world:
            return self._last[1]
        frames = world.take(self.owner, axis=0)
        points = frames[:, :3, 3] + self.along * frames[:, :3, 1]
        self._last = (world, points)
        return points

    def segments(self, world):
        """``(heads, tails)`` (C,3) of the capsules' segments in armature space."""
        frames = world.take(self.bones, axis=0)
        heads = frames[:, :3, 3]
        return heads, heads + self.lengths * frames[:, :3, 1]


def nearest_between(d1, d2, gap):
    """A lower bound of the distance to a surface of every point of the segment between two
    points ``gap`` apart whose distances to it are at least ``d1`` and ``d2`` (arrays).

    The open balls of radii ``d1``, ``d2`` about the two points hold no surface point. When both
    are positive and the balls overlap (``d1 + d2 > gap``) their union is connected and covers
    the segment, so the segment's distance is at least its distance to the union's boundary. A
    point of the first sphere comes nearer to a point of the segment the smaller its angle from
    the segment's line (the distance² is ``x² + d1² − 2 x d1 cos θ``), and the points at the
    smaller angles lie in the second ball down to the circle where the spheres meet: the nearest
    boundary point is on that circle, at ``√((x − c)² + ρ²)`` from the point ``x`` along the
    segment, with ``c = (gap² + d1² − d2²) / (2 gap)`` and ``ρ² = d1² − c²``. So the bound is
    ``ρ`` when ``0 < c < gap``, else ``min(d1, d2)``: nearly ``min(d1, d2)`` whenever the points
    are farther from the surface than they are apart (``ρ ≈ d − gap² / (8 d)``). Otherwise
    distance is 1-Lipschitz: ``(d1 + d2 − gap) / 2``. The bound needs only that the balls are
    empty, so lower bounds of the distances serve too, and it grows with them."""
    lipschitz = np.minimum(np.minimum(d1, d2), (d1 + d2 - gap) / 2)
    safe = np.where(gap > 0.0, gap, 1.0)
    c = (gap * gap + d1 * d1 - d2 * d2) / (2.0 * safe)
    circle = np.sqrt(np.maximum(d1 * d1 - c * c, 0.0))
    spheres = np.where((c > 0.0) & (c < gap), np.minimum(circle, np.minimum(d1, d2)),
                       np.minimum(d1, d2))
    return np.where((d1 > 0.0) & (d2 > 0.0) & (d1 + d2 > gap), spheres, lipschitz)


def nearest_between_one(d1, d2, gap):
    """``nearest_between`` of one pair, in Python floats."""
    if d1 <= 0.0 or d2 <= 0.0 or d1 + d2 <= gap:
        return min(d1, d2, (d1 + d2 - gap) / 2)
    c = (gap * gap + d1 * d1 - d2 * d2) / (2.0 * gap)
    if 0.0 < c < gap:
        return math.sqrt(max(d1 * d1 - c * c, 0.0))
    return min(d1, d2)


def contact_rows(frame, points, normal, clearance, columns, band):
    """``(gradient (rows, 3m), slack (rows,))`` of the points whose ``clearance`` (signed distance
    less radius and margin, ``inf`` when nothing is near) is at most ``band``; ``normal``: the
    outward normals of the obstacle there.

    ``frame`` is ``jacobian.JointFrames``' columns of the joints; ``columns`` the (P, 3m) mask of
    the columns that move each point (``jacobian.column_mask``).
    """
    near = clearance <= band
    if not near.any():
        return np.zeros((0, columns.shape[1])), np.zeros(0)
    gradient = -normal_jacobian(frame, points[near], normal[near], columns[near])
    return gradient, _push_out(clearance[near])


def _push_out(clearance):
    """The right-hand side of a contact row: the clearance, or for a penetration (< 0) the part
    of it to remove in this iteration: ``PUSH_OUT`` of the depth, but at least ``SHALLOW``."""
    return np.where(clearance < 0.0, np.minimum(PUSH_OUT * clearance,
                                                np.maximum(clearance, -SHALLOW)), clearance)


def closest_points_of_segments(p0, p1, q0, q1):
    """Closest points of the segments p0p1 and q0q1, batched: ``(s, t)`` with the points
    ``p0 + s (p1 − p0)`` and ``q0 + t (q1 − q0)`` (Ericson, Real-Time Collision Detection §5.1.9,
    with the degenerate cases of zero-length segments)."""
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a = row_dots(d1, d1)
    e = row_dots(d2, d2)
    f = row_dots(d2, r)
    c = row_dots(d1, r)
    b = row_dots(d1, d2)
    tiny = 1e-12
    safe_a = np.where(a > tiny, a, 1.0)
    denom = a * e - b * b
    s = np.where(denom > tiny, np.clip((b * f - c * e) / np.where(denom > tiny, denom, 1.0), 0, 1),
                 0.0)
    s = np.where(e > tiny, s, np.clip(-c / safe_a, 0, 1))       # q is a point
    t = np.where(e > tiny, (b * s + f) / np.where(e > tiny, e, 1.0), 0.0)
    s = np.where(t < 0.0, np.clip(-c / safe_a, 0, 1),
                 np.where(t > 1.0, np.clip((b - c) / safe_a, 0, 1), s))
    s = np.where(a > tiny, s, 0.0)                               # p is a point
    t = np.where(a > tiny, t, np.where(e > tiny, f / np.where(e > tiny, e, 1.0), 0.0))
    return s, np.clip(t, 0.0, 1.0)


class CapsulePairs:
    """Pairs of capsule bones that may collide with each other (self-collision).

    Left out: parent and child, bones sharing a head (siblings of one joint), pairs that already
    touch within ``margin`` in the rest pose (they overlap by design, e.g. the upper arm at the
    chest), and pairs no joint moves relative to each other (same set of moving joints)."""

    def __init__(self, model, radii, enabled, movers, margin):
        radii = np.asarray(radii, dtype=np.float64)
        bones = np.nonzero(np.asarray(enabled, dtype=bool) & (radii >= MIN_RADIUS))[0]
        a, b = np.triu_indices(bones.size, k=1)
        a, b = bones[a], bones[b]
        heads = model.rest_matrices[:, :3, 3]
        tails = model.tails(model.rest_matrices)
        keep = (model.parents[a] != b) & (model.parents[b] != a)
        keep &= np.linalg.norm(heads[a] - heads[b], axis=1) > 1e-6
        keep &= np.any(movers[:, a] != movers[:, b], axis=0)
        s, t = closest_points_of_segments(heads[a], tails[a], heads[b], tails[b])
        gap = np.linalg.norm(heads[a] + s[:, None] * (tails[a] - heads[a])
                             - heads[b] - t[:, None] * (tails[b] - heads[b]), axis=1)
        keep &= gap - radii[a] - radii[b] > margin
        self.a, self.b = a[keep], b[keep]
        self.radii = radii[self.a] + radii[self.b]
        self.model = model

    def __len__(self):
        return self.a.size


def _pair_points(pairs, world):
    """The closest points of each capsule pair's segments in the pose ``world``."""
    heads = world[:, :3, 3]
    tails = pairs.model.tails(world)
    a, b = pairs.a, pairs.b
    s, t = closest_points_of_segments(heads[a], tails[a], heads[b], tails[b])
    return heads[a] + s[:, None] * (tails[a] - heads[a]), heads[b] + t[:, None] * (tails[b] - heads[b])


def pair_clearances(pairs, world, margin):
    """Distance between each pair's segments minus both radii and ``margin``."""
    if len(pairs) == 0:
        return np.zeros(0)
    p_a, p_b = _pair_points(pairs, world)
    return np.linalg.norm(p_a - p_b, axis=1) - pairs.radii - margin


def self_contact_rows(pairs, world, frame, columns, margin, band):
    """``(gradient, slack)`` rows ``−nᵀ (J_pa − J_pb) Δθ ≤ d − margin`` of the capsule pairs closer
    than ``margin + band``; n points from b's closest point to a's, d = |p_a − p_b| − r_a − r_b.
    ``columns`` are the (pairs, 3m) masks of the columns that move the a and b bones
    (``jacobian.column_mask``)."""
    columns_a, columns_b = columns
    size = columns_a.shape[1]
    if len(pairs) == 0:
        return np.zeros((0, size)), np.zeros(0)
    p_a, p_b = _pair_points(pairs, world)
    offset = p_a - p_b
    length = np.linalg.norm(offset, axis=1)
    clearance = length - pairs.radii - margin
    near = clearance <= band
    if not near.any():
        return np.zeros((0, size)), np.zeros(0)
    normal = offset[near] / np.maximum(length[near], 1e-12)[:, None]
    gradient = normal_jacobian(frame, p_b[near], normal, columns_b[near]) \
        - normal_jacobian(frame, p_a[near], normal, columns_a[near])
    return gradient, _push_out(clearance[near])
