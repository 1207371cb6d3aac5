"""Closest points of line segments and triangles, batched over pairs (numpy only).

Ericson, Real-Time Collision Detection §5.1.10: unless the segment crosses the triangle (then
they meet, distance 0, §5.3.6), the closest pair of a segment and a triangle has a segment end
against the triangle (§5.1.5) or the segment against one of the triangle's edges (§5.1.9). All
five candidates are computed for every pair and the nearest kept.
"""

import numpy as np

from .contacts import closest_points_of_segments
from .quaternion import row_dots

_TINY = 1e-12


def _cross(u, v):
    """Row-wise cross products of two (k, 3) arrays (``np.cross`` costs 10 µs a call more)."""
    ux, uy, uz = u.T
    vx, vy, vz = v.T
    return np.stack([uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx], axis=1)


def closest_on_triangles(points, a, b, c):
    """``(closest point, distance)`` of each point on its triangle ``abc``: the projection onto
    the plane when it falls inside, else the nearest point of the three edges (Ericson §5.1.5,
    by regions; a degenerate triangle is its edges)."""
    normal = _cross(b - a, c - a)
    area2 = row_dots(normal, normal)
    flat = area2 > _TINY * _TINY
    unit = normal / np.sqrt(np.where(flat, area2, 1.0))[:, None]
    height = row_dots(points - a, unit)
    foot = points - height[:, None] * unit
    inside = flat & _within(foot, a, b, c, normal)
    best = np.where(inside[:, None], foot, 0.0)
    distance = np.where(inside, np.abs(height), np.inf)
    for start, end in ((a, b), (b, c), (c, a)):
        edge = end - start
        length2 = row_dots(edge, edge)
        s = np.clip(row_dots(points - start, edge) / np.maximum(length2, _TINY), 0.0, 1.0)
        on_edge = start + s[:, None] * edge
        gap = np.linalg.norm(points - on_edge, axis=1)
        closer = gap < distance
        best = np.where(closer[:, None], on_edge, best)
        distance = np.where(closer, gap, distance)
    return best, distance


def _within(points, a, b, c, normal):
    """True where the points of the triangles' planes lie inside them: on the inner side of all
    three edges (signs of ``((v − u) × (p − u)) · n``)."""
    inside = np.ones(len(points), dtype=bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= row_dots(_cross(v - u, points - u), normal) >= 0.0
    return inside


def closest_segment_triangle(p0, p1, a, b, c):
    """Closest points of the segments ``p0p1`` and the triangles ``abc``, pair by pair:
    ``(s, point on the triangle, distance)`` with the segment's point ``p0 + s (p1 − p0)``
    (Ericson §5.1.10)."""
    direction = p1 - p0
    candidates = []                                   # (s, point on triangle, distance)
    for s_end, end in ((0.0, p0), (1.0, p1)):
        on_triangle, gap = closest_on_triangles(end, a, b, c)
        candidates.append((np.full(len(p0), s_end), on_triangle, gap))
    for start, end in ((a, b), (b, c), (c, a)):
        s, t = closest_points_of_segments(p0, p1, start, end)
        on_edge = start + t[:, None] * (end - start)
        candidates.append((s, on_edge, np.linalg.norm(p0 + s[:, None] * direction - on_edge,
                                                      axis=1)))
    candidates.append(_crossing(p0, direction, a, b, c))
    s, on_triangle, distance = candidates[0]
    for s_k, point_k, distance_k in candidates[1:]:
        closer = distance_k < distance
        s = np.where(closer, s_k, s)
        on_triangle = np.where(closer[:, None], point_k, on_triangle)
        distance = np.where(closer, distance_k, distance)
    return s, on_triangle, distance


def _crossing(p0, direction, a, b, c):
    """Where each segment crosses its triangle's plane inside the triangle: ``(s, point, 0)``,
    distance ``inf`` where it does not (Ericson §5.3.6, by the plane and the edge signs)."""
    normal = _cross(b - a, c - a)
    rate = row_dots(direction, normal)
    crosses = np.abs(rate) > _TINY
    s = row_dots(a - p0, normal) / np.where(crosses, rate, 1.0)
    point = p0 + s[:, None] * direction
    hit = crosses & (s >= 0.0) & (s <= 1.0) & _within(point, a, b, c, normal)
    return np.clip(s, 0.0, 1.0), point, np.where(hit, 0.0, np.inf)
