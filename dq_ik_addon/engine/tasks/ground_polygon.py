"""The support polygon on the ground plane (``balance``): the plane's basis, the convex hull of
the supporting bones' ends projected on it, and a point's signed distance from it."""

import numpy as np

from ..quaternion import row_dots


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
    return flat[convex_hull(flat)].dot(plane.T) + height * up, tuple(plane.T)


def polygon_distance(point, polygon):
    """``(d, n)``: the signed distance of the 2-D ``point`` from the convex counter-clockwise
    ``polygon`` (p,2) (positive outside) and the unit outward direction it is measured along."""
    return nearest_boundary(point, polygon)[:2]


def nearest_boundary(point, polygon):
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
    on = length <= 1e-9 * lengths[nearest]     # on the boundary: the edge's normal, not noise
    return length, normals[nearest] if on else offsets[nearest] / length, nearest, \
        float(along[nearest])


class _Cyclic(dict):
    """``_NEXT[p]``: the index of each vertex's successor in a cyclic polygon of p vertices."""

    def __missing__(self, count):
        self[count] = np.roll(np.arange(count), -1)
        return self[count]


_NEXT = _Cyclic()


def convex_hull(points):
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
