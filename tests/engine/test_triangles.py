"""Closest points of segments and triangles against a dense search (numpy only)."""

import numpy as np

from ik_engine.triangles import closest_on_triangles, closest_segment_triangle


def _dense_triangle(a, b, c, steps=120):
    """Points filling each triangle on a barycentric grid: (pairs, grid, 3)."""
    u, v = np.meshgrid(np.linspace(0, 1, steps), np.linspace(0, 1, steps))
    keep = u + v <= 1.0
    u, v = u[keep], v[keep]
    return a[:, None] + u[None, :, None] * (b - a)[:, None] + v[None, :, None] * (c - a)[:, None]


def test_closest_point_on_a_triangle_matches_a_dense_search():
    rng = np.random.default_rng(4)
    a, b, c, p = (rng.normal(size=(40, 3)) for _ in range(4))
    c[:3] = a[:3] + 0.5 * (b[:3] - a[:3])     # degenerate (flat) triangles
    point, distance = closest_on_triangles(p, a, b, c)
    np.testing.assert_allclose(np.linalg.norm(point - p, axis=1), distance, atol=1e-12)
    dense = np.linalg.norm(_dense_triangle(a, b, c) - p[:, None], axis=2).min(axis=1)
    assert np.all(distance <= dense + 1e-12)
    assert np.all(distance >= dense - 0.03)


def test_closest_segment_triangle_matches_a_dense_search():
    rng = np.random.default_rng(5)
    a, b, c, p0, p1 = (rng.normal(size=(60, 3)) for _ in range(5))
    p1[:4] = p0[:4]                          # a segment that is a point
    s, on_triangle, distance = closest_segment_triangle(p0, p1, a, b, c)
    on_segment = p0 + s[:, None] * (p1 - p0)
    np.testing.assert_allclose(np.linalg.norm(on_segment - on_triangle, axis=1), distance,
                               atol=1e-12)
    grid = np.linspace(0.0, 1.0, 150)
    segment = p0[:, None] + grid[None, :, None] * (p1 - p0)[:, None]
    triangle = _dense_triangle(a, b, c, 60)
    dense = np.array([np.linalg.norm(seg[:, None] - tri[None], axis=2).min()
                      for seg, tri in zip(segment, triangle)])
    assert np.all(distance <= dense + 1e-12)
    assert np.all(distance >= dense - 0.05)
    assert np.sum(distance == 0.0) >= 1       # some random segments pierce their triangle
