"""Scene obstacles for the solver: the colliders' BVH trees (``geometry``) as the
solver's obstacle query, in armature space.

Signed distance of a point: the nearest surface point ``c`` gives ``d = ±|p − c|`` with the
sign of ``(p − c)·N``, N the face's normal, or where ``c`` lies on an edge or a corner its
angle-weighted pseudo-normal (``geometry.pseudo_normals``, ``_side_normal``) — right inside
closed meshes; open or non-manifold meshes are one-sided by their normals (a warning names
them once). Query points are
moved into each tree's space (an object's own space when its matrix is a similarity, else world
space); both are similar to armature space, so distances scale by one factor.

A capsule's segment is asked for too (``SceneObstacles.segments``): its exact closest points to
the triangles that may be nearest to it, found by the tree's nearest queries from points along it
no farther apart than the capsule's diameter and from the closest point found, until that finds
no nearer triangle; a triangle is tried only where the empty balls about those points leave room
for a point nearer than the nearest found. A 2 cm pole across the middle of a long bone is met
there, not between two samples.
"""

import math
from typing import NamedTuple

import numpy as np

from ...engine import closest_segment_one_triangle, nearest_between_one, row_dots
from ..errors import ArmatureError
from .geometry import (
    ColliderCache,
    collider_pieces,
    geometry_key,
    surface,
    tree_of,
)

__all__ = ["ColliderCache", "SceneObstacles", "placement"]

_REFINEMENTS = 4   # rounds of "is a triangle nearer to the closest point found?"
_ON_EDGE = 1e-7    # a barycentric weight this small puts the nearest point on an edge


def placement(obj, depsgraph):
    """Where the armature and each collider piece are and what shape each has, by value: equal
    from one solve to the next while no obstacle moved or changed shape (one read of each
    piece's vertex positions, without building anything)."""
    key = [np.array(obj.matrix_world).tobytes()]
    for piece in collider_pieces(obj, depsgraph):
        positions = surface(piece.evaluated, whole=False).positions
        key.append((piece.key, piece.matrix.tobytes(), geometry_key(piece, positions)))
    return tuple(key)


class SceneObstacles:
    """The obstacle query of the solver, in armature space, over every collider piece of the
    armature (``geometry.collider_pieces``).

    Points farther than their distance bound from a piece's bounding box or from its bounding
    sphere skip its tree."""

    def __init__(self, obj, depsgraph, report_warning, cache):
        pieces = collider_pieces(obj, depsgraph)
        if obj.dqik.colliders is not None and not pieces:
            raise ArmatureError(f"Collider collection '{obj.dqik.colliders.name}' holds no mesh, "
                                "curve, text or collection instance")
        self.entries = []
        arm = np.array(obj.matrix_world)
        for piece in pieces:
            shape = tree_of(piece, cache)
            if shape is None:
                raise ArmatureError(f"Collider '{piece.name}' has no faces; give it geometry or "
                                    "take it out of the collider collection")
            if shape.is_open and piece.name not in cache.warned_open:
                cache.warned_open.add(piece.name)
                report_warning(f"Collider '{piece.name}' is not a closed mesh: it only blocks "
                               "from the side its normals face")
            to_tree = arm if shape.in_world else np.linalg.inv(piece.matrix) @ arm
            back = np.linalg.inv(to_tree)
            scale = float(np.cbrt(abs(np.linalg.det(back[:3, :3]))))
            self.entries.append(_Entry(
                piece.name, shape, to_tree[:3, :3].T.copy(), to_tree[:3, 3].copy(),
                back[:3, :3] / scale, scale, back[:3, :3] @ shape.centre + back[:3, 3],
                scale * shape.radius, tuple(map(tuple, (back[:3, :3] / scale).tolist()))))
        self.count = len(pieces)
        self.triangle_count = sum(len(entry.shape.normals) for entry in self.entries)

    def leave_out_facing_away(self, points, bound):
        """Take out of the query every collider that most of ``points`` (the armature's bone
        heads and tails, armature space) within ``bound`` of it lie behind: its normals face
        away from the armature (a floor whose normals point down blocks every bone above it
        from below and drives them through it). Returns the names taken out."""
        away = []
        for entry in self.entries:
            near = np.linalg.norm(points - entry.centre, axis=1) <= entry.radius + bound
            local = points[near].dot(entry.rotation_t) + entry.translation
            limit = bound / entry.scale
            sides = [found[0] < 0.0 for found in (_nearest(entry, co, limit)
                                                  for co in local.tolist()) if found is not None]
            if 2 * sum(sides) > len(sides):
                away.append(entry.name)
        self.entries = [entry for entry in self.entries if entry.name not in away]
        return away

    def triangles(self):
        """Triangles of all colliders as evaluated (for reports; solving never needs the count)."""
        return self.triangle_count

    def __call__(self, points, max_distance, triangles=False):
        """Signed distance (armature units) and outward normal of the nearest collider surface,
        for points inside a collider or within ``max_distance`` outside it (``inf`` elsewhere).
        With ``triangles``, also which triangle each nearest point lies on (``piece · 2³² +
        triangle``, −1 where none), for ``segments``' ``samples``.

        Only points within ``max_distance`` of both a collider's bounding sphere and its bounding
        box are looked at (a point inside is inside both). A point inside the box is searched up
        to the nearest box face too: if it is inside a closed mesh, the way out to that face
        crosses the surface, so its true depth is found by that bounded search (an open mesh,
        which encloses nothing, is searched without bound instead when nothing lies within
        ``max_distance``). The few points near a collider are handled one by one in Python
        floats: cheaper than array operations on a handful of rows.
        """
        count = len(points)
        distance = np.full(count, np.inf)
        normal = np.zeros((count, 3))
        where = np.full(count, -1, np.int64)
        bound = _per_point(max_distance, count)
        for piece, entry in enumerate(self.entries):
            from_centre = points - entry.centre
            reach = entry.radius + bound
            candidates = (np.einsum('ij,ij->i', from_centre, from_centre)
                          <= reach * reach).nonzero()[0]
            if candidates.size == 0:
                continue
            local = points.take(candidates, axis=0).dot(entry.rotation_t) + entry.translation
            limits = (bound.take(candidates) / entry.scale).tolist()
            for i, co, limit in zip(candidates.tolist(), local.tolist(), limits):
                found = _nearest(entry, co, limit)
                if found is not None and found[0] < distance[i]:
                    distance[i], normal[i], triangle = found
                    where[i] = (piece << 32) + triangle
        return (distance, normal, where) if triangles else (distance, normal)

    def segments(self, heads, tails, radii, max_distance, samples=None):
        """``(s, signed distance, outward normal)`` of each capsule segment ``head → tail``
        (armature space): its point ``head + s (tail − head)`` nearest to the collider
        surfaces, exactly against their triangles (``triangles.closest_segment_one_triangle``), when
        within ``max_distance`` or inside a closed mesh (distance ``inf`` elsewhere); signed by
        the normal side of the nearest triangle, 0 where the segment crosses a triangle.

        The triangles tried are those the trees find nearest to points along the segment no
        farther apart than the capsule's diameter ``2 · radius``, each within ``max_distance``
        plus half that spacing (every triangle within ``max_distance`` of the segment is within
        that of one of them), and then those nearest to the closest point found, until no nearer
        one turns up (Ericson, Real-Time Collision Detection §6.2: closest-point queries on a
        bounding volume hierarchy); a seed's triangle is skipped where no point near the seed can
        be nearer than the nearest found (``_segment_nearest``).

        ``samples``: what the point query (``triangles=True``) found at each segment's head,
        middle and tail, ``(distances, triangles)`` (C,3) with the distances no farther than it
        searched: those seeds are not searched again where that answers for them.
        """
        count = len(heads)
        along = np.zeros(count)
        distance = np.full(count, np.inf)
        normal = np.zeros((count, 3))
        bound = _per_point(max_distance, count)
        direction = tails - heads
        length2 = np.maximum(row_dots(direction, direction), 1e-300)
        for piece, entry in enumerate(self.entries):
            u = np.clip(row_dots(entry.centre - heads, direction) / length2, 0.0, 1.0)
            gap = np.linalg.norm(heads + u[:, None] * direction - entry.centre, axis=1)
            candidates = (gap <= entry.radius + bound).nonzero()[0]
            if candidates.size == 0:
                continue
            a = heads.take(candidates, axis=0).dot(entry.rotation_t) + entry.translation
            b = tails.take(candidates, axis=0).dot(entry.rotation_t) + entry.translation
            known = None if samples is None else _known(
                piece, entry, samples[0].take(candidates, axis=0),
                samples[1].take(candidates, axis=0))
            which, s, signed, outward = _segment_nearest(
                entry, a, b, bound.take(candidates) / entry.scale,
                2.0 * np.asarray(radii).take(candidates) / entry.scale, known)
            rows = candidates[which]
            signed = signed * entry.scale
            closer = signed < distance[rows]
            rows = rows[closer]
            along[rows], distance[rows] = s[closer], signed[closer]
            turned = outward[closer] @ entry.back.T
            normal[rows] = turned / np.maximum(np.linalg.norm(turned, axis=1), 1e-12)[:, None]
        return along, distance, normal


def _per_point(max_distance, count):
    bound = np.asarray(max_distance, dtype=float)
    return np.full(count, float(bound)) if bound.ndim == 0 else bound


class _Entry(NamedTuple):
    """One collider piece as ``SceneObstacles`` queries it: its name and ``ColliderTree``;
    armature → tree space as ``p · rotation_t + translation``; tree → armature directions
    (``back``, scale divided out) and the ``scale``; the bounding sphere's centre (armature
    space) and radius (armature units); ``back`` as nested tuples of floats."""

    name: str
    shape: object
    rotation_t: np.ndarray
    translation: np.ndarray
    back: np.ndarray
    scale: float
    centre: np.ndarray
    radius: float
    back_rows: tuple


def _nearest(entry, co, limit):
    """``(signed distance in armature units, outward normal in armature space, triangle)`` of the
    tree-space point ``co`` (a list) from ``entry``'s surface when inside a closed mesh or within
    ``limit`` (tree units) of it, else None; see ``SceneObstacles.__call__``."""
    shape = entry.shape
    (x, y, z), (lx, ly, lz), (hx, hy, hz) = co, shape.low, shape.high
    gx, gy, gz = max(lx - x, x - hx, 0.0), max(ly - y, y - hy, 0.0), max(lz - z, z - hz, 0.0)
    if gx * gx + gy * gy + gz * gz > limit * limit:
        return None
    face = min(x - lx, hx - x, y - ly, hy - y, z - lz, hz - z)     # ≥ 0: inside the box
    # (a little beyond the face: a box collider's surface is its bounding box)
    search = limit if shape.is_open else max(limit, face * (1.0 + 1e-6) + 1e-9)
    location, face_normal, triangle, gap = shape.tree.find_nearest(co, search)
    if location is None and face >= 0.0 and shape.is_open:
        location, face_normal, triangle, gap = shape.tree.find_nearest(co)
    if location is None:
        return None
    ox, oy, oz = x - location[0], y - location[1], z - location[2]
    side = _side_normal(shape, triangle, face_normal, (ox, oy, oz), gap, location)
    inside = ox * side[0] + oy * side[1] + oz * side[2] < 0.0
    if not inside and gap > limit:
        return None
    if gap <= 1e-12:
        ox, oy, oz = face_normal
    elif inside:
        ox, oy, oz = -ox, -oy, -oz
    (a, b, c), (d, e, f), (g, h, k) = entry.back_rows
    nx, ny, nz = a * ox + b * oy + c * oz, d * ox + e * oy + f * oz, g * ox + h * oy + k * oz
    norm = max(math.sqrt(nx * nx + ny * ny + nz * nz), 1e-12)
    return (-gap if inside else gap) * entry.scale, (nx / norm, ny / norm, nz / norm), triangle


def _side_normal(shape, triangle, face, offset, gap, point):
    """The normal whose side of ``point`` (the nearest point on ``triangle``) the offset to the
    query lies on tells outside from inside: the face's own normal ``face`` when the offset is
    along it (``point`` inside the face), else the pseudo-normal of the edge or corner
    ``point`` lies on (``geometry.pseudo_normals``), found by its barycentric coordinates."""
    along = offset[0] * face[0] + offset[1] * face[1] + offset[2] * face[2]
    if gap <= 1e-12 or abs(along) >= gap * (1.0 - 1e-9):
        return face
    (ax, ay, az), (bx, by, bz), (cx, cy, cz) = shape.corners[triangle].tolist()
    ux, uy, uz, vx, vy, vz = bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az
    px, py, pz = point[0] - ax, point[1] - ay, point[2] - az
    d00, d01, d11 = ux * ux + uy * uy + uz * uz, ux * vx + uy * vy + uz * vz, vx * vx + vy * vy + vz * vz
    d20, d21 = px * ux + py * uy + pz * uz, px * vx + py * vy + pz * vz
    denominator = max(d00 * d11 - d01 * d01, 1e-300)
    v, w = (d11 * d20 - d01 * d21) / denominator, (d00 * d21 - d01 * d20) / denominator
    on = [weight <= _ON_EDGE for weight in (1.0 - v - w, v, w)]
    if sum(on) >= 2:
        return shape.corner_normals[triangle, on.index(False)].tolist()
    if sum(on) == 1:
        return shape.edge_normals[triangle, (on.index(True) + 1) % 3].tolist()
    return face


def _known(piece, entry, distances, where):
    """Per segment, its head's, middle's and tail's ``(distance in tree units, triangle)`` on
    ``entry`` as the point query found them (``SceneObstacles.segments``' ``samples``): the
    nearest triangle where that piece's was the nearest surface; ``(lower bound, None)`` where
    nothing was within the distance searched or another piece's surface was nearer outside it
    (this piece's is no nearer); None where the point lay inside another piece (nothing known)."""
    known = []
    for row, codes in zip((distances / entry.scale).tolist(), where.tolist()):
        known.append([(abs(d), code & 0xFFFFFFFF) if code >= 0 and code >> 32 == piece
                      else (d, None) if d >= 0.0 else None for d, code in zip(row, codes)])
    return known


def _segment_nearest(entry, a, b, limits, spacing, known=None):
    """``SceneObstacles.segments`` on one piece, in tree space: ``(which segments, s, signed
    distance, outward normal)`` of the segments ``a → b`` that have an answer. One segment at a
    time in Python floats (a handful per call: cheaper than array operations on them).

    Seeds ``h`` apart along the segment (``h`` at most ``spacing``) are searched within the
    bound plus ``h / 2``. Every seed's nearest distance ``gᵢ`` leaves the ball of that radius
    about it free of the surface, so between two consecutive seeds no point is nearer than
    ``contacts.nearest_between(gᵢ, gᵢ₊₁, h)``, and none within ``h / 2`` of a seed is nearer than
    ``gᵢ − h / 2``. The seeds' nearest triangles are tried, nearest seed first, each only while
    a point around its seed could still beat the nearest found (both bounds below it); then the
    triangle nearest to the closest point found, until no nearer one turns up."""
    tree, corners = entry.shape.tree, entry.shape.corners
    which, along, signed, outward = [], [], [], []
    for k, (head, tail, limit, step) in enumerate(zip(a.tolist(), b.tolist(), limits.tolist(),
                                                      spacing.tolist())):
        found = _one_segment(tree, corners, head, tail, limit, step,
                             None if known is None else known[k])
        if found is None:
            continue
        s, gap, triangle, on_triangle = found
        point = [h + s * (t - h) for h, t in zip(head, tail)]
        offset = [p - q for p, q in zip(point, on_triangle)]
        face = entry.shape.normals[triangle].tolist()
        side = _side_normal(entry.shape, triangle, face, offset, gap, on_triangle)
        inside = offset[0] * side[0] + offset[1] * side[1] + offset[2] * side[2] < 0.0
        if gap <= 1e-12:
            direction, value = face, gap
        else:
            direction = [(-o if inside else o) / gap for o in offset]
            value = -gap if inside else gap
        if inside or gap <= limit:
            which.append(k)
            along.append(s)
            signed.append(value)
            outward.append(direction)
    return (np.array(which, np.int64), np.array(along, float), np.array(signed, float),
            np.array(outward, float).reshape(-1, 3))


def _one_segment(tree, corners, head, tail, limit, spacing, known=None):
    """``(s, distance, triangle, point on it)`` of the nearest triangle found to the segment
    ``head → tail`` (see ``_segment_nearest``), or None when the seeds find none near enough.
    ``known``: the head's, middle's and tail's answers (``_known``), which stand for those seeds'
    searches (an even number of gaps puts a seed in the middle)."""
    dx, dy, dz = tail[0] - head[0], tail[1] - head[1], tail[2] - head[2]
    length = math.sqrt(dx * dx + dy * dy + dz * dz)
    gaps = max(2, math.ceil(length / max(spacing, 1e-9)))
    gaps += gaps % 2
    half = length / (2 * gaps)
    bound, seeds = limit, [None] * (gaps + 1)
    if known is not None:
        for j, answer in zip((0, gaps // 2, gaps), known):
            if answer is not None and answer[1] is not None:
                seeds[j] = answer
                bound = min(bound, answer[0])
        for j, answer in zip((0, gaps // 2, gaps), known):
            if answer is not None and answer[1] is None and answer[0] >= bound + half:
                seeds[j] = answer                   # nothing within its search: none nearer
    for j in range(gaps + 1):
        if seeds[j] is not None:
            continue
        f = j / gaps
        location, _, index, gap = tree.find_nearest(
            (head[0] + f * dx, head[1] + f * dy, head[2] + f * dz), bound + half)
        if location is None:
            seeds[j] = (bound + half, None)     # nothing nearer than that
        else:
            seeds[j] = (gap, index)
            bound = min(bound, gap)
    seeds = [(gap, j, index) for j, (gap, index) in enumerate(seeds)]
    between = [nearest_between_one(seeds[j][0], seeds[j + 1][0], 2.0 * half)
               for j in range(gaps)]
    best, tried = None, set()
    for gap, j, index in sorted(seeds):
        # below: no point around seed j can be nearer (``limit``: nor is one beyond it wanted)
        below = max(gap - half, min(between[max(j - 1, 0):j + 1]))
        if index is None or index in tried or below > limit or (
                best is not None and below >= best[1]):
            continue
        tried.add(index)
        s, point, distance = closest_segment_one_triangle(head, tail, *corners[index].tolist())
        if best is None or distance < best[1]:
            best = (s, distance, index, point)
    for _ in range(_REFINEMENTS):
        if best is None or best[1] <= 0.0:
            break
        s = best[0]
        location, _, index, gap = tree.find_nearest(
            (head[0] + s * dx, head[1] + s * dy, head[2] + s * dz), best[1])
        if location is None or gap >= best[1] - 1e-9 or index in tried:
            break
        tried.add(index)
        s, point, distance = closest_segment_one_triangle(head, tail, *corners[index].tolist())
        if distance >= best[1]:
            break
        best = (s, distance, index, point)
    return best
