"""Closest points of segments and triangles against a dense search (numpy only)."""

import numpy as np

from dq_ik_addon.engine.triangles import (
    closest_segment_one_triangle,
    closest_segment_triangle,
)


def _dense_triangle(a, b, c, steps=120):
    """Points filling each triangle on a barycentric grid: (pairs, grid, 3)."""
    u, v = np.meshgrid(np.linspace(0, 1, steps), np.linspace(0, 1, steps))
    keep = u + v <= 1.0
    u, v = u[keep], v[keep]
    return a[:, None] + u[None, :, None] * (b - a)[:, None] + v[None, :, None] * (c - a)[:, None]


def _dense_distance(p0, p1, a, b, c):
    """Each segment's distance to its triangle over 150 points along it and a grid on it."""
    grid = np.linspace(0.0, 1.0, 150)
    segment = p0[:, None] + grid[None, :, None] * (p1 - p0)[:, None]
    return np.array([np.linalg.norm(seg[:, None] - tri[None], axis=2).min()
                     for seg, tri in zip(segment, _dense_triangle(a, b, c, 60))])


def test_closest_segment_triangle_matches_a_dense_search():
    rng = np.random.default_rng(5)
    a, b, c, p0, p1 = (rng.normal(size=(60, 3)) for _ in range(5))
    p1[:4] = p0[:4]                          # a segment that is a point
    s, on_triangle, distance = closest_segment_triangle(p0, p1, a, b, c)
    on_segment = p0 + s[:, None] * (p1 - p0)
    np.testing.assert_allclose(np.linalg.norm(on_segment - on_triangle, axis=1), distance,
                               atol=1e-12)
    dense = _dense_distance(p0, p1, a, b, c)
    assert np.all(distance <= dense + 1e-12)
    assert np.all(distance >= dense - 0.05)
    assert np.sum(distance == 0.0) >= 1       # some random segments pierce their triangle


def _awkward_pairs(count=200):
    """Random pairs, and the cases a closed form gets wrong: segments that are points, degenerate
    triangles, segments in the triangle's plane, parallel to it above its face, and crossing it."""
    rng = np.random.default_rng(6)
    a, b, c, p0, p1 = (rng.normal(size=(count, 3)) for _ in range(5))
    p1[:10] = p0[:10]                                        # points
    c[10:20] = a[10:20] + 0.3 * (b[10:20] - a[10:20])        # flat triangles
    for rows, height in ((slice(20, 40), 0.0), (slice(40, 60), 0.2)):   # in the plane, above it
        normal = np.cross(b[rows] - a[rows], c[rows] - a[rows])
        normal /= np.linalg.norm(normal, axis=1)[:, None]
        for end in (p0, p1):
            end[rows] -= (np.einsum('ij,ij->i', end[rows] - a[rows], normal) - height)[:, None] \
                * normal
    centre = (a[60:80] + b[60:80] + c[60:80]) / 3            # through the face
    p0[60:80], p1[60:80] = centre - p0[60:80], centre + p0[60:80]
    return p0, p1, a, b, c


def test_one_triangle_in_floats_matches_the_arrays():
    p0, p1, a, b, c = _awkward_pairs()
    s, on_triangle, distance = closest_segment_triangle(p0, p1, a, b, c)
    for i in range(len(p0)):
        s_i, point_i, distance_i = closest_segment_one_triangle(
            *(v[i].tolist() for v in (p0, p1, a, b, c)))
        assert abs(distance_i - distance[i]) <= 1e-12
        on_segment = p0[i] + s_i * (p1[i] - p0[i])
        assert abs(np.linalg.norm(on_segment - point_i) - distance_i) <= 1e-12


def test_awkward_pairs_match_a_dense_search():
    p0, p1, a, b, c = _awkward_pairs(80)
    _, _, distance = closest_segment_triangle(p0, p1, a, b, c)
    dense = _dense_distance(p0, p1, a, b, c)
    assert np.all(distance <= dense + 1e-12)
    assert np.all(distance >= dense - 0.05)
    assert np.all(distance[60:80] == 0.0)
