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
mass anywhere inside but not across the boundary.
"""

from dataclasses import dataclass

import numpy as np

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


def support_polygon(points, up):
    """The convex hull (p,3), counter-clockwise about ``up``, of ``points`` (k,3) projected on the
    plane through their lowest point along ``up``; with the plane's basis ``(u, v)``."""
    up = np.asarray(up, float) / np.linalg.norm(up)
    u = np.cross(up, np.eye(3)[np.argmin(np.abs(up))])
    u /= np.linalg.norm(u)
    v = np.cross(up, u)
    flat = _hull(np.stack([points.dot(u), points.dot(v)], axis=1))
    height = float(np.min(points.dot(up)))
    return flat[:, :1] * u + flat[:, 1:] * v + height * up, (u, v)


def polygon_distance(point, polygon):
    """``(d, n)``: the signed distance of the 2-D ``point`` from the convex counter-clockwise
    ``polygon`` (p,2) (positive outside) and the unit outward direction it is measured along."""
    if len(polygon) == 1:
        offset = point - polygon[0]
        length = float(np.linalg.norm(offset))
        return length, offset / length if length > 0.0 else np.array([1.0, 0.0])
    edges = np.roll(polygon, -1, axis=0) - polygon
    lengths = np.sqrt(row_dots(edges, edges))
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1) / np.maximum(lengths, 1e-300)[:, None]
    across = row_dots(normals, point - polygon)
    if len(polygon) > 2 and (across <= 0.0).all():
        nearest = int(np.argmax(across))
        return float(across[nearest]), normals[nearest]
    along = np.clip(row_dots(point - polygon, edges) / np.maximum(lengths ** 2, 1e-300), 0.0, 1.0)
    offsets = point - (polygon + along[:, None] * edges)
    distances = np.sqrt(row_dots(offsets, offsets))
    nearest = int(np.argmin(distances))
    if distances[nearest] == 0.0:
        return 0.0, normals[nearest]
    return float(distances[nearest]), offsets[nearest] / distances[nearest]


class Balance(TaskKind):
    """Centres of mass over support polygons; targets: the up direction (k,3); each task's
    ``Body`` is in ``bodies`` (set by the task set). Rows in metres."""

    def bind(self, model, columns, moves):
        """Take what the Jacobian needs of the solve: the bones' lengths and, per column joint
        (``columns``: ``Problem.column_joints``), each body's mass fractions of the bones it
        carries (``moves``: the model's ``descendants_mask``)."""
        self.lengths = model.lengths
        carried = moves[columns].astype(float)
        self.weights = [np.asarray(body.masses, float) / max(float(np.sum(body.masses)), 1e-300)
                        for body in self.bodies]
        self.carried = [carried * weights for weights in self.weights]    # (M, b) each
        self.fractions = [np.repeat(part.sum(axis=1), 3) for part in self.carried]
        self._geometry_of = (None, None)

    def _geometry(self, effectors):
        """Per task ``(active, n, d)`` and the midpoints, at the pose (cached per pose)."""
        world = effectors.world
        if self._geometry_of[0] is world:
            return self._geometry_of[1]
        mids = _midpoints(world, self.lengths)
        rows = []
        for body, weights, up in zip(self.bodies, self.weights, self.targets):
            heads, tails = _ends(world, self.lengths, np.flatnonzero(body.supports))
            if not heads.size:
                rows.append((False, np.zeros(3), 0.0))
                continue
            polygon, (u, v) = support_polygon(np.concatenate([heads, tails]), up)
            centre = weights.dot(mids)
            d, n = polygon_distance(np.array([centre.dot(u), centre.dot(v)]),
                                    np.stack([polygon.dot(u), polygon.dot(v)], axis=1))
            rows.append((d > -body.band, n[0] * u + n[1] * v, d))
        self._geometry_of = (world, (rows, mids))
        return rows, mids

    def holds(self, effectors):
        """Within twice the band of the boundary (where a descent along it settles)."""
        return any(d > -2.0 * body.band for (_, _, d), body
                   in zip(self._geometry(effectors)[0], self.bodies))

    def errors(self, effectors):
        rows, _ = self._geometry(effectors)
        return np.array([-max(d, 0.0) * n if active else np.zeros(3) for active, n, d in rows])

    def jacobian(self, frame, effectors, mask):
        rows, mids = self._geometry(effectors)
        out = np.zeros((len(rows), 3, frame.axes.shape[1]))
        for k, ((active, n, _), carried, fractions) in enumerate(
                zip(rows, self.carried, self.fractions)):
            if active:
                sums = np.repeat(carried.dot(mids), 3, axis=0)      # S_j per column (3M,3)
                along = np.cross(frame.axes.T, sums).dot(n) - fractions * frame.moments.dot(n)
                out[k] = n[:, None] * (along * mask[k])[None, :]
        return out


def _midpoints(world, lengths):
    return world[:, :3, 3] + 0.5 * lengths[:, None] * world[:, :3, 1]


def _ends(world, lengths, bones):
    heads = world[bones, :3, 3]
    return heads, heads + lengths[bones, None] * world[bones, :3, 1]


def _hull(points):
    """The convex hull (p,2) of 2-D ``points``, counter-clockwise (Andrew's monotone chain)."""
    ordered = sorted(set(map(tuple, np.round(points, 12).tolist())))
    if len(ordered) <= 2:
        return np.array(ordered)

    def half(sequence):
        chain = []
        for p in sequence:
            while len(chain) >= 2 and _turn(chain[-2], chain[-1], p) <= 0.0:
                chain.pop()
            chain.append(p)
        return chain[:-1]

    return np.array(half(ordered) + half(ordered[::-1]))


def _turn(a, b, c):
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
