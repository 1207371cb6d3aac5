"""Balance: the body's centre of mass kept over its support polygon (Baerlocher's BALANCE tool,
thesis §4.5 and §7.2–7.3).

A ``Body`` gives every bone a mass m_i, taken at the midpoint of its head and tail, and marks the
bones that carry the weight (a foot and its toe). The centre of mass is

    G = Σ_i w_i (h_i + t_i)/2,        w_i = m_i / Σ m,

and its Jacobian, the kinetic Jacobian ``J_G`` (§4.5), has for each column c of a joint j (a
turn or a slide, ``jacobian.JointFrames``' Plücker columns ``∂p/∂y_c = ω_c × p − m_c``) the
joint's upper-body mass fraction ``s_j = Σ_{i carried by j} w_i`` times the derivative of that
upper body's centre of mass ``G_j = Σ_{i carried by j} w_i p_i / s_j``:

    ∂G/∂y_c = s_j (ω_c × G_j − m_c) = ω_c × S_j − s_j m_c,        S_j = Σ_{i carried by j} w_i p_i.

The support polygon is the convex hull of the supporting bones' heads and tails projected on the
ground plane (normal: the task's target, the world's up in armature space). Balance is an
inequality (§7.3): while G's projection lies inside the polygon by more than the ``band`` the
task has no rows, and nothing holds the body; within the band, or outside, its one row along the
nearest edge's outward normal n holds it, with the error ``−max(d, 0) n`` (d: the projection's
signed distance from the polygon, positive outside), so the lower levels can move the centre of
mass anywhere inside but not across the boundary. The polygon moves with its supports (a foot
sliding on a floor plane, ``AxesPosition``): with q the boundary point nearest to G's projection,
a blend ``(1 − t) a + t b`` of two supporting bones' ends, the row is the derivative of
``d = n·(G − q)``, ``nᵀ (J_G − (1 − t) J_a − t J_b)`` (``jacobian.task_jacobian`` for the ends).

A step solved with no row, deeper inside than the band, may still carry G across the boundary
(an arm pulled back, the hips with it): to first order it moves G to ``G' = G + J_G Δ``. When
``G'`` lands outside, the step is solved again with the row armed for it (``arm``): along the
outward direction ``n'`` from the boundary point ``q`` nearest to ``G'`` (``G' − q = d' n'``),
with the error ``room · n'``, ``room = (G' − G)·n' − d'`` (how far G is from the polygon's
supporting line through q: the edge's line when q is on an edge), so that the step takes G to
that line and no further: the primal active-set rule for this
one inequality (Nocedal & Wright §16.5), at the task's own priority. Without it the line search
halves such a step until G stays inside, and the lower levels barely move.
"""

from dataclasses import dataclass

import numpy as np

from ..jacobian import task_jacobian
from ..quaternion import row_dots
from .kind import TaskKind


@dataclass(frozen=True)
class Body:
    """The masses (n,) of a model's bones and its supporting bones (n,) bool, and the ``band``
    (model units) within which the boundary holds."""

    masses: np.ndarray
    supports: np.ndarray
    band: float = 1e-3

    def take(self, bones):
        """The body of the sub-model of ``bones``."""
        return Body(np.asarray(self.masses, float)[bones], np.asarray(self.supports, bool)[bones],
                    self.band)

    def massive(self):
        """The bones with mass."""
        return np.flatnonzero(np.asarray(self.masses) > 0.0)


def center_of_mass(world, lengths, masses):
    """G (3,) of the pose matrices ``world`` (n,4,4) with the bones' ``lengths`` and ``masses``."""
    weights = np.asarray(masses, float) / max(float(np.sum(masses)), 1e-300)
    return weights.dot(_midpoints(world, lengths))


def plane_basis(up):
    """An orthonormal basis ``(u, v)`` (3,2) of the plane normal to ``up``, with ``(u, v, up)``
    right-handed (so counter-clockwise in it is about ``up``)."""
    x, y, z = np.asarray(up, float).tolist()
    length = (x * x + y * y + z * z) ** 0.5
    x, y, z = x / length, y / length, z / length
    # u = up × e_k for the axis e_k least aligned with up, normalized; v = up × u
    if abs(x) <= abs(y) and abs(x) <= abs(z):
        u = (0.0, z, -y)
    elif abs(y) <= abs(z):
        u = (-z, 0.0, x)
    else:
        u = (y, -x, 0.0)
    scale = (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) ** -0.5
    a, b, c = u[0] * scale, u[1] * scale, u[2] * scale
    return np.array([[a, y * c - z * b], [b, z * a - x * c], [c, x * b - y * a]])


def support_polygon(points, up):
    """The convex hull (p,3), counter-clockwise about ``up``, of ``points`` (k,3) projected on the
    plane through their lowest point along ``up``; with the plane's basis ``(u, v)``."""
    up = np.asarray(up, float) / np.linalg.norm(up)
    plane = plane_basis(up)
    height = float(np.min(points.dot(up)))
    flat = points.dot(plane)
    return flat[_hull(flat)].dot(plane.T) + height * up, tuple(plane.T)


def polygon_distance(point, polygon):
    """``(d, n)``: the signed distance of the 2-D ``point`` from the convex counter-clockwise
    ``polygon`` (p,2) (positive outside) and the unit outward direction it is measured along."""
    return _nearest_boundary(point, polygon)[:2]


def _nearest_boundary(point, polygon):
    """``(d, n, k, t)``: ``polygon_distance``'s, and where on the boundary it is measured from:
    ``(1 − t) P_k + t P_{k+1}`` (the vertices cyclic; inside, on the nearest edge's line)."""
    if len(polygon) == 1:
        offset = point - polygon[0]
        length = float(np.linalg.norm(offset))
        return length, offset / length if length > 0.0 else np.array([1.0, 0.0]), 0, 0.0
    edges = polygon[_NEXT[len(polygon)]] - polygon
    lengths = np.sqrt(row_dots(edges, edges))
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1) / np.maximum(lengths, 1e-300)[:, None]
    across = row_dots(normals, point - polygon)
    along = row_dots(point - polygon, edges) / np.maximum(lengths ** 2, 1e-300)
    if len(polygon) > 2 and (across <= 0.0).all():
        nearest = int(np.argmax(across))
        return float(across[nearest]), normals[nearest], nearest, float(along[nearest])
    along = np.clip(along, 0.0, 1.0)
    offsets = point - (polygon + along[:, None] * edges)
    distances = np.sqrt(row_dots(offsets, offsets))
    nearest = int(np.argmin(distances))
    length = float(distances[nearest])
    return length, normals[nearest] if length == 0.0 else offsets[nearest] / length, nearest, \
        float(along[nearest])


class _Cyclic(dict):
    """``_NEXT[p]``: the index of each vertex's successor in a cyclic polygon of p vertices."""

    def __missing__(self, count):
        self[count] = np.roll(np.arange(count), -1)
        return self[count]


_NEXT = _Cyclic()


class Balance(TaskKind):
    """Centres of mass over support polygons; targets: the up direction (k,3); each task's
    ``Body`` is in ``bodies`` (set by the task set). Rows in metres."""

    def bind(self, model, columns, moves):
        """Take what the Jacobian needs of the solve: per body, its bones with mass and their
        lengths and mass fractions, its supporting bones, and per column joint (``columns``:
        ``Problem.column_joints``) the fractions of those bones it carries (``moves``: the
        model's ``descendants_mask``)."""
        self.parts = []
        for body in self.bodies:
            massive = body.massive()
            weights = np.asarray(body.masses, float)[massive]
            weights = weights / max(float(weights.sum()), 1e-300)
            carried = moves[np.ix_(columns, massive)] * weights          # (M, massive)
            supports = np.flatnonzero(body.supports)
            ends_moved = np.repeat(np.tile(moves[np.ix_(columns, supports)].T, (2, 1)), 3,
                                   axis=1)                     # (2S, 3M): heads, then tails
            self.parts.append((massive, model.lengths[massive], weights, carried,
                               np.repeat(carried.sum(axis=1), 3), supports,
                               model.lengths[body.supports], ends_moved))
        self._geometry_of = (None, None)
        self.armed = {}     # task: (n', room) of the step being solved again (``arm``)

    def set_targets(self, targets):
        """New up directions, and with them each ground plane's basis ``(u, v)`` (3,2)."""
        super().set_targets(targets)
        self.planes = [plane_basis(up) for up in self.targets]
        self._geometry_of = (None, None)     # measured on the old planes

    def _geometry(self, effectors):
        """Per task ``(active, n, d, mids, ground, polygon, ends, blend)`` at the pose (cached
        per pose): its bones' midpoints, G and the support polygon on the ground plane (``(u,
        v)`` coordinates; None without supports), the supports' heads then tails (2S,3) and
        the weights (2S,) of the boundary point nearest to G among them (module docstring)."""
        world = effectors.world
        if self._geometry_of[0] is world:
            return self._geometry_of[1]
        rows = []
        for (massive, lengths, weights, _, _, supports, support_lengths, _), body, plane in zip(
                self.parts, self.bodies, self.planes):
            mids = _midpoints(world.take(massive, axis=0), lengths)
            if not supports.size:       # nothing to stand on: never active, never holding
                rows.append((False, np.zeros(3), -np.inf, mids, None, None, None, None))
                continue
            heads = world[supports, :3, 3]
            ends = np.concatenate([heads, heads + support_lengths[:, None] * world[supports, :3, 1]])
            flat = ends.dot(plane)
            hull = _hull(flat)
            ground, polygon = weights.dot(mids).dot(plane), flat[hull]
            d, n, k, t = _nearest_boundary(ground, polygon)
            blend = np.zeros(len(ends))
            blend[hull[k]] += 1.0 - t
            blend[hull[(k + 1) % len(hull)]] += t
            rows.append((d > -body.band, plane.dot(n), d, mids, ground, polygon, ends, blend))
        self._geometry_of = (world, rows)
        return rows

    def holds(self, effectors):
        """Within twice the band of the boundary (where a descent along it settles)."""
        return any(row[2] > -2.0 * body.band
                   for row, body in zip(self._geometry(effectors), self.bodies))

    def errors(self, effectors):
        return np.array([self.armed[k][1] * self.armed[k][0] if k in self.armed else
                         -max(d, 0.0) * n if active else np.zeros(3)
                         for k, (active, n, d, *_) in enumerate(self._geometry(effectors))])

    def jacobian(self, frame, effectors, mask):
        rows = self._geometry(effectors)
        out = np.zeros((len(rows), 3, frame.axes.shape[1]))
        for k, ((active, n, _, mids, _, _, ends, blend), part) in enumerate(zip(rows, self.parts)):
            if k in self.armed:
                n, blend = self.armed[k][0], self.armed[k][2]
            elif not active:
                continue
            along = _kinetic_jacobian(frame, mids, part).dot(n) - \
                blend.dot(n.dot(_ends_jacobian(frame, ends, part)))
            out[k] = n[:, None] * (along * mask[k])[None, :]
        return out

    def arm(self, frame, effectors, delta):
        """Arm the rows of the bodies inside beyond the band whose centre of mass the joint step
        ``delta`` (3M,) takes outside to first order (module docstring); True when any is."""
        self.armed = {}
        for k, ((active, _, _, mids, ground, polygon, ends, _), part, plane) in enumerate(
                zip(self._geometry(effectors), self.parts, self.planes)):
            if active or polygon is None:
                continue
            moved = delta.dot(_kinetic_jacobian(frame, mids, part)).dot(plane)
            ends_moved = _ends_jacobian(frame, ends, part).dot(delta).dot(plane)
            flat = ends.dot(plane) + ends_moved
            hull = _hull(flat)
            beyond, outward, edge, t = _nearest_boundary(ground + moved, flat[hull])
            if beyond > 0.0:
                blend = np.zeros(len(ends))
                blend[hull[edge]] += 1.0 - t
                blend[hull[(edge + 1) % len(hull)]] += t
                carried = blend.dot(ends_moved)     # the boundary point's own motion
                self.armed[k] = (plane.dot(outward),
                                 float((moved - carried).dot(outward)) - beyond, blend)
        return bool(self.armed)

    def disarm(self):
        self.armed = {}


def _kinetic_jacobian(frame, mids, part):
    """``J_G`` transposed (3M,3) at the pose of the bones' ``mids`` (module docstring):
    ``ω_c × S_j − s_j m_c`` per column."""
    carried, fractions = part[3], part[4]
    sums = np.repeat(carried.dot(mids), 3, axis=0)      # S_j per column (3M,3)
    return _cross_rows(frame.axes.T, sums) - fractions[:, None] * frame.moments


def _ends_jacobian(frame, ends, part):
    """The supports' ends' position Jacobians (2S,3,3M) at the pose (``part[7]``: the columns
    that move each)."""
    return task_jacobian(frame, ends, part[7], orientation=False)[0]


def _midpoints(frames, lengths):
    """Each bone's midpoint (k,3), halfway from its head to its tail, of its pose matrix and
    length."""
    return frames[:, :3, 3] + (0.5 * lengths)[:, None] * frames[:, :3, 1]


def _cross_rows(u, v):
    """Row-wise cross products of two (k,3) arrays."""
    return np.stack([u[:, 1] * v[:, 2] - u[:, 2] * v[:, 1], u[:, 2] * v[:, 0] - u[:, 0] * v[:, 2],
                     u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]], axis=1)


def _hull(points):
    """The indices (p,) of the convex hull's vertices among the 2-D ``points``, counter-clockwise
    (Andrew's monotone chain; points equal to 12 decimals count once, the first of them)."""
    first = {}
    for index, key in enumerate(map(tuple, np.round(points, 12).tolist())):
        first.setdefault(key, index)
    ordered = sorted(first.items())
    if len(ordered) <= 2:
        return np.array([index for _, index in ordered], dtype=np.int64)

    def half(sequence):
        chain = []
        for point in sequence:
            while len(chain) >= 2 and _turn(chain[-2][0], chain[-1][0], point[0]) <= 0.0:
                chain.pop()
            chain.append(point)
        return chain[:-1]

    return np.array([index for _, index in half(ordered) + half(ordered[::-1])], dtype=np.int64)


def _turn(a, b, c):
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
