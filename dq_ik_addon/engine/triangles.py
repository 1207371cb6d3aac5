"""Closest points of line segments and triangles, batched over pairs (numpy only).

Ericson, Real-Time Collision Detection §5.1.10: unless the segment crosses the triangle (then
they meet, distance 0, §5.3.6), the closest pair has an end of the segment over the triangle's
face (its projection onto the plane inside the triangle, §5.1.5) or lies on the segment and one
of the triangle's edges (§5.1.9). An end whose projection falls outside is never nearer than
the segment is to the edges, so the ends are looked at only over the face. All six candidates
(two ends, the crossing, three edges) are computed for every pair, stacked, and the nearest
kept: a few dozen array operations whatever the number of pairs.
"""

import math

import numpy as np

from .contacts import closest_points_of_segments

_TINY = 1e-12


def _cross(u, v):
    """Cross products along the last axis (``np.cross`` costs 10 µs a call more)."""
    ux, uy, uz = u[..., 0], u[..., 1], u[..., 2]
    vx, vy, vz = v[..., 0], v[..., 1], v[..., 2]
    return np.stack([uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx], axis=-1)


def _dots(u, v):
    """Dot products along the last axis."""
    return np.einsum('...j,...j->...', u, v)


def closest_segment_triangle(p0, p1, a, b, c):
    """Closest points of the segments ``p0p1`` and the triangles ``abc``, pair by pair:
    ``(s, point on the triangle, distance)`` with the segment's point ``p0 + s (p1 − p0)``
    (Ericson §5.1.10; a degenerate triangle is its edges)."""
    count = len(p0)
    direction = p1 - p0
    corners = np.stack([a, b, c])                          # (3, pairs, 3)
    edges = corners[[1, 2, 0]] - corners                   # ab, bc, ca
    normal = _cross(edges[0], -edges[2])
    area2 = _dots(normal, normal)
    flat = area2 > _TINY * _TINY
    unit = normal / np.sqrt(np.where(flat, area2, 1.0))[:, None]
    height = _dots(np.stack([p0, p1]) - a, unit)           # (2, pairs): of each end over the plane
    crossing = height[0] * height[1] < 0.0
    t = np.where(crossing, height[0] / np.where(crossing, height[0] - height[1], 1.0), 0.0)
    # the ends' projections and the crossing point, all in the plane: inside the triangle when
    # on the inner side of every edge, (p − u)·(n × (v − u)) ≥ 0 (§5.1.5)
    feet = np.stack([p0 - height[0, :, None] * unit, p1 - height[1, :, None] * unit,
                     p0 + t[:, None] * direction])
    inward = _cross(unit, edges)                           # (3 edges, pairs, 3)
    sides = np.einsum('knj,enj->ken', feet, inward) - _dots(corners, inward)
    over = (sides >= 0.0).all(axis=1) & flat
    over[2] &= crossing
    face_gap = np.where(over, np.concatenate([np.abs(height), np.zeros((1, count))]), np.inf)
    # the segment against each edge
    s_edge, t_edge = closest_points_of_segments(np.tile(p0, (3, 1)), np.tile(p1, (3, 1)),
                                                corners.reshape(-1, 3), (corners + edges)
                                                .reshape(-1, 3))
    on_edge = corners + t_edge.reshape(3, count, 1) * edges
    s_edge = s_edge.reshape(3, count)
    edge_gap = np.linalg.norm(p0 + s_edge[..., None] * direction - on_edge, axis=2)
    s = np.concatenate([np.stack([np.zeros(count), np.ones(count), t]), s_edge])
    points = np.concatenate([feet, on_edge])
    gaps = np.concatenate([face_gap, edge_gap])
    nearest = np.argmin(gaps, axis=0)
    pair = np.arange(count)
    return s[nearest, pair], points[nearest, pair], gaps[nearest, pair]


def closest_segment_one_triangle(p0, p1, a, b, c):
    """``closest_segment_triangle`` for one pair given as 3-sequences of floats, in Python floats
    (a few microseconds against a hundred for the array operations on a few pairs):
    ``(s, point on the triangle as a tuple, distance)``.

    Two shortcuts of §5.1.10: a segment that crosses the face meets it there (nothing is nearer
    than 0), and a segment whose ends both lie over the face without crossing it is nearest at
    the end nearer to the plane (over the face the distance is the height, linear along the
    segment); the edges are looked at only otherwise."""
    px, py, pz = p0
    ax, ay, az = a
    bx, by, bz = b
    cx, cy, cz = c
    dx, dy, dz = p1[0] - px, p1[1] - py, p1[2] - pz
    edges = ((ax, ay, az, bx - ax, by - ay, bz - az), (bx, by, bz, cx - bx, cy - by, cz - bz),
             (cx, cy, cz, ax - cx, ay - cy, az - cz))
    best, best_s, best_point = math.inf, 0.0, (ax, ay, az)
    ux, uy, uz = edges[0][3:]
    vx, vy, vz = cx - ax, cy - ay, cz - az
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    area2 = nx * nx + ny * ny + nz * nz
    if area2 > _TINY * _TINY:
        scale = 1.0 / math.sqrt(area2)
        nx, ny, nz = nx * scale, ny * scale, nz * scale
        h0 = (px - ax) * nx + (py - ay) * ny + (pz - az) * nz
        h1 = h0 + dx * nx + dy * ny + dz * nz
        feet = ((h0 / (h0 - h1), 0.0),) if h0 * h1 < 0.0 else ()
        feet += ((0.0, h0), (1.0, h1)) if abs(h0) <= abs(h1) else ((1.0, h1), (0.0, h0))
        over = 0
        for s, height in feet:
            fx, fy, fz = px + s * dx - height * nx, py + s * dy - height * ny, \
                pz + s * dz - height * nz
            for ex, ey, ez, gx, gy, gz in edges:    # on the inner side of every edge (§5.1.5)
                if ((gy * (fz - ez) - gz * (fy - ey)) * nx + (gz * (fx - ex) - gx * (fz - ez)) * ny
                        + (gx * (fy - ey) - gy * (fx - ex)) * nz) < 0.0:
                    break
            else:
                if height == 0.0:      # the crossing, or an end in the face
                    return s, (fx, fy, fz), 0.0
                over += 1
                if abs(height) < best:
                    best, best_s, best_point = abs(height), s, (fx, fy, fz)
        if over == 2 and len(feet) == 2:
            return best_s, best_point, best
    best *= best
    for ex, ey, ez, gx, gy, gz in edges:
        s, t = _closest_of_two_segments(p0, (dx, dy, dz), (ex, ey, ez), (gx, gy, gz))
        qx, qy, qz = ex + t * gx, ey + t * gy, ez + t * gz
        rx, ry, rz = px + s * dx - qx, py + s * dy - qy, pz + s * dz - qz
        gap2 = rx * rx + ry * ry + rz * rz
        if gap2 < best:
            best, best_s, best_point = gap2, s, (qx, qy, qz)
    return best_s, best_point, math.sqrt(best)


def _closest_of_two_segments(p, d1, q, d2):
    """``(s, t)`` of the closest points ``p + s d1`` and ``q + t d2`` of two segments, in floats
    (Ericson §5.1.9, as ``contacts.closest_points_of_segments``)."""
    rx, ry, rz = p[0] - q[0], p[1] - q[1], p[2] - q[2]
    a = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]
    e = d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2]
    f = d2[0] * rx + d2[1] * ry + d2[2] * rz
    if a <= _TINY:
        return 0.0, (min(max(f / e, 0.0), 1.0) if e > _TINY else 0.0)
    c = d1[0] * rx + d1[1] * ry + d1[2] * rz
    if e <= _TINY:
        return min(max(-c / a, 0.0), 1.0), 0.0
    b = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2]
    denom = a * e - b * b
    s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > _TINY else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        return min(max(-c / a, 0.0), 1.0), 0.0
    if t > 1.0:
        return min(max((b - c) / a, 0.0), 1.0), 1.0
    return s, t
