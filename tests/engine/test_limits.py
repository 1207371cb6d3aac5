"""Swing/twist decomposition and the quarter-ellipse limit set of the README's "Limit
semantics": projection and violation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dq_ik_addon.engine.limits import SwingTwistLimits
from dq_ik_addon.engine.limits.swing_twist_projection import (
    LOCKED_TOLERANCE,
    LimitProjection,
    limit_violation,
    project_swing,
    project_to_limits,
)
from dq_ik_addon.engine.quaternion import (
    qcanonical,
    qmul,
    qnormalize,
    qrotate,
    quat_to_rotvec,
)
from dq_ik_addon.engine.swing_twist import (
    quat_from_swing_twist,
    swing_twist,
    swing_twist_params,
)

TOL = 1e-12
Y = np.array([0.0, 1.0, 0.0])


def random_quats(rng, n):
    return qnormalize(rng.normal(size=(n, 4)))


def make_limits(x_min, x_max, z_min, z_max, t_min=-np.pi, t_max=np.pi, enabled=True, n=None):
    values = [x_min, x_max, z_min, z_max, t_min, t_max]
    n = n or max(np.size(v) for v in values)
    arrays = [np.broadcast_to(np.asarray(v, dtype=float), (n,)).copy() for v in values]
    return SwingTwistLimits(*arrays, np.broadcast_to(np.asarray(enabled, dtype=bool), (n,)).copy())


def subset(limits, mask):
    return SwingTwistLimits(*(f[mask] for f in limits))


def ellipse_value(s_x, s_z, limits):
    """``(s_x/a)² + (s_z/b)²`` with the quadrant's semi-axes (x/0 = ∞, but 0 for |x| up to
    ``LOCKED_TOLERANCE``: rounding on a locked half-axis is not a violation)."""
    a = np.where(s_x >= 0, limits.swing_x_max, -limits.swing_x_min)
    b = np.where(s_z >= 0, limits.swing_z_max, -limits.swing_z_min)
    with np.errstate(divide="ignore", invalid="ignore"):
        fx = np.where(a > 0, (s_x / a) ** 2, np.where(np.abs(s_x) <= LOCKED_TOLERANCE, 0.0, np.inf))
        fz = np.where(b > 0, (s_z / b) ** 2, np.where(np.abs(s_z) <= LOCKED_TOLERANCE, 0.0, np.inf))
    return fx + fz


def on_boundary(s_x, s_z, limits, tol=1e-9):
    """The point is on the boundary of the set: on the arc of a closed quadrant containing it, or
    on the segment that a locked half-axis leaves of that quadrant."""
    result = np.zeros(np.shape(s_x), dtype=bool)
    for sx, sz in [(1, 1), (-1, 1), (-1, -1), (1, -1)]:
        in_quadrant = (sx * s_x >= -tol) & (sz * s_z >= -tol)
        a = limits.swing_x_max if sx > 0 else -limits.swing_x_min
        b = limits.swing_z_max if sz > 0 else -limits.swing_z_min
        u, v = np.maximum(sx * s_x, 0.0), np.maximum(sz * s_z, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ok_arc = (a > 0) & (b > 0) & (np.abs((u / a) ** 2 + (v / b) ** 2 - 1.0) <= tol)
        ok_x_locked = (a == 0) & (u <= tol) & (v <= b + tol)
        ok_z_locked = (b == 0) & (v <= tol) & (u <= a + tol)
        result |= in_quadrant & (ok_arc | ok_x_locked | ok_z_locked)
    return result


def boundary_samples(limits, i, m=20001):
    """Dense samples of the four quarter-ellipse arcs of bone i (a zero semi-axis gives a segment)."""
    alpha = np.linspace(0.0, np.pi / 2, m)
    pts = []
    for a, b in [(limits.swing_x_max[i], limits.swing_z_max[i]), (-limits.swing_x_min[i], limits.swing_z_max[i]),
                 (-limits.swing_x_min[i], -limits.swing_z_min[i]), (limits.swing_x_max[i], -limits.swing_z_min[i])]:
        pts.append(np.stack([a * np.cos(alpha), b * np.sin(alpha)], axis=-1))
    pts[1][:, 0] *= -1
    pts[2] *= -1
    pts[3][:, 1] *= -1
    return np.concatenate(pts)


def assert_closest(points, projected, limits):
    for i in range(len(points)):
        samples = boundary_samples(limits, i)
        spacing = np.linalg.norm(np.diff(samples, axis=0), axis=-1).max()
        sample_min = np.linalg.norm(samples - points[i], axis=-1).min()
        dist = np.linalg.norm(projected[i] - points[i])
        assert dist <= sample_min + 1e-12, (points[i], projected[i])
        assert sample_min <= dist + spacing + np.sqrt(2.0) * LOCKED_TOLERANCE  # both axes within it


@pytest.fixture
def rng():
    return np.random.default_rng(99)


# --- decomposition -------------------------------------------------------------------------------

def test_swing_twist_recomposes(rng):
    q = random_quats(rng, 1000)
    swing, tau = swing_twist(q)
    twist = np.stack([np.cos(tau / 2), np.zeros_like(tau), np.sin(tau / 2), np.zeros_like(tau)], axis=-1)
    np.testing.assert_allclose(qmul(swing, twist), qcanonical(q), atol=TOL)
    assert np.all(swing[:, 2] == 0.0)
    assert np.all(swing[:, 0] >= 0.0)
    np.testing.assert_allclose(np.linalg.norm(swing, axis=-1), 1.0, atol=TOL)
    assert np.all(np.abs(tau) <= np.pi)
    # the swing alone carries the bone axis; the twist does not move it
    np.testing.assert_allclose(qrotate(swing, Y), qrotate(q, Y), atol=TOL)


def test_swing_twist_sign_invariant(rng):
    """q and −q decompose the same way, to the last bits: numpy's SIMD ``sin``/``cos`` may give
    an element one ulp apart depending on where it falls in the array's memory (seen once in a
    few runs with ``assert_array_equal``)."""
    q = random_quats(rng, 500)
    s1, t1 = swing_twist(q)
    s2, t2 = swing_twist(-q)
    np.testing.assert_allclose(s1, s2, rtol=0.0, atol=1e-15)
    np.testing.assert_allclose(t1, t2, rtol=0.0, atol=1e-15)


def test_swing_twist_known_values():
    twist_only = np.array([np.cos(0.4), 0.0, np.sin(0.4), 0.0])
    swing, tau = swing_twist(twist_only)
    np.testing.assert_allclose(swing, [1.0, 0.0, 0.0, 0.0], atol=TOL)
    np.testing.assert_allclose(tau, 0.8, atol=TOL)
    s_x, s_z, tau = swing_twist_params(np.array([np.cos(0.3), np.sin(0.3), 0.0, 0.0]))
    np.testing.assert_allclose([s_x, s_z, tau], [0.6, 0.0, 0.0], atol=TOL)
    s_x, s_z, tau = swing_twist_params(np.array([np.cos(0.3), 0.0, 0.0, -np.sin(0.3)]))
    np.testing.assert_allclose([s_x, s_z, tau], [0.0, -0.6, 0.0], atol=TOL)


def test_swing_twist_singular_half_turn_swing():
    """Swing of π (w = y = 0): twist 0 and swing = q, as Blender; no NaN."""
    q = np.array([[0.0, 0.6, 0.0, 0.8], [0.0, -1.0, 0.0, 0.0], [1e-20, 0.6, 0.0, 0.8]])
    swing, tau = swing_twist(q)
    assert np.all(np.isfinite(swing)) and np.all(np.isfinite(tau))
    np.testing.assert_allclose(tau, 0.0, atol=TOL)
    np.testing.assert_allclose(swing, q, atol=TOL)
    s_x, s_z, _ = swing_twist_params(q)
    np.testing.assert_allclose(np.hypot(s_x, s_z), np.pi, atol=TOL)


def test_params_round_trip(rng):
    n = 1000
    r = rng.uniform(0.0, np.pi * 0.999, n)
    phi = rng.uniform(-np.pi, np.pi, n)
    s_x, s_z, tau = r * np.cos(phi), r * np.sin(phi), rng.uniform(-np.pi, np.pi, n)
    q = quat_from_swing_twist(s_x, s_z, tau)
    assert np.all(q[:, 0] >= 0.0)
    back = swing_twist_params(q)
    np.testing.assert_allclose(np.stack(back), np.stack([s_x, s_z, tau]), atol=1e-11)
    q = random_quats(rng, n)
    np.testing.assert_allclose(quat_from_swing_twist(*swing_twist_params(q)), qcanonical(q), atol=TOL)


def test_params_use_swing_exponential_map(rng):
    q = random_quats(rng, 300)
    swing, _ = swing_twist(q)
    s_x, s_z, _ = swing_twist_params(3.0 * q)  # normalized first
    rotvec = quat_to_rotvec(swing)
    np.testing.assert_allclose(np.stack([s_x, s_z], axis=-1), rotvec[:, [0, 2]], atol=TOL)
    np.testing.assert_array_equal(rotvec[:, 1], 0.0)


# --- swing projection ----------------------------------------------------------------------------

def test_inside_unchanged_bit_for_bit(rng):
    lim = make_limits(-0.5, 1.2, -0.3, 0.9, n=2000)
    s_x, s_z = rng.uniform(-1.5, 1.5, 2000), rng.uniform(-1.5, 1.5, 2000)
    inside = ellipse_value(s_x, s_z, lim) <= 1.0
    assert 100 < inside.sum() < 1900
    p_x, p_z = project_swing(s_x, s_z, lim)
    np.testing.assert_array_equal(p_x[inside], s_x[inside])
    np.testing.assert_array_equal(p_z[inside], s_z[inside])
    assert on_boundary(p_x[~inside], p_z[~inside], subset(lim, ~inside)).all()


@pytest.mark.parametrize("bounds", [
    (-0.5, 1.2, -0.3, 0.9),      # asymmetric
    (-1e-3, 2.5, -2.5, 1e-3),    # very eccentric quarters
    (0.0, 1.0, -0.5, 0.5),       # negative x half-axis locked
    (-0.7, 0.7, 0.0, 0.0),       # z locked: a segment on the x axis
    (0.0, 0.0, -0.4, 1.1),       # x locked: a segment on the z axis
    (0.0, 0.8, 0.0, 0.6),        # a single quarter-ellipse
    (0.0, 0.0, 0.0, 0.0),        # fully locked
])
def test_outside_projects_to_closest_boundary_point(rng, bounds):
    n = 60
    lim = make_limits(*bounds, n=n)
    pts = rng.uniform(-3.0, 3.0, size=(n, 2))
    pts[:8] = [[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0], [0.0, -2.0], [0.3, 1e-9], [1e-9, -0.7], [2, 2], [-2, -2]]
    p_x, p_z = project_swing(pts[:, 0], pts[:, 1], lim)
    outside = ellipse_value(pts[:, 0], pts[:, 1], lim) > 1.0
    assert on_boundary(p_x[outside], p_z[outside], subset(lim, outside)).all()
    assert_closest(pts, np.stack([p_x, p_z], axis=-1), lim)


def test_locked_half_axes():
    """Negative x and positive z locked: the set is one quarter-ellipse, x ∈ [0, 1], z ∈ [−0.5, 0]."""
    lim = make_limits(0.0, 1.0, -0.5, 0.0, n=5)
    p_x, p_z = project_swing(np.array([-0.3, 0.4, -0.3, 0.0, 1.5]), np.array([0.2, 0.3, -0.7, 0.0, 0.2]), lim)
    np.testing.assert_array_equal(p_x, [0.0, 0.4, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(p_z, [0.0, 0.0, -0.5, 0.0, 0.0])


def test_projection_on_axes_is_exact():
    lim = make_limits(-0.5, 1.2, -0.3, 0.9, n=4)
    p_x, p_z = project_swing(np.array([3.0, -3.0, 0.0, 0.0]), np.array([0.0, 0.0, 3.0, -3.0]), lim)
    np.testing.assert_allclose(p_x, [1.2, -0.5, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(p_z, [0.0, 0.0, 0.9, -0.3], atol=1e-15)


bound = st.one_of(st.just(0.0), st.floats(1e-3, 3.0))
coord = st.floats(-4.0, 4.0)


@settings(max_examples=300, deadline=None)
@given(st.tuples(bound, bound, bound, bound), st.lists(st.tuples(coord, coord), min_size=1, max_size=20))
def test_property_projection(bounds, points):
    x_lo, x_hi, z_lo, z_hi = bounds
    pts = np.array(points)
    n = len(pts)
    lim = make_limits(-x_lo, x_hi, -z_lo, z_hi, n=n)
    p_x, p_z = project_swing(pts[:, 0], pts[:, 1], lim)
    inside = ellipse_value(pts[:, 0], pts[:, 1], lim) <= 1.0
    # inside: unchanged; outside: on the boundary and the closest point
    assert np.array_equal(p_x[inside], pts[inside, 0]) and np.array_equal(p_z[inside], pts[inside, 1])
    assert on_boundary(p_x[~inside], p_z[~inside], subset(lim, ~inside)).all()
    assert np.all(ellipse_value(p_x, p_z, lim) <= 1.0 + 1e-9)
    # idempotent
    q_x, q_z = project_swing(p_x, p_z, lim)
    np.testing.assert_allclose(q_x, p_x, atol=1e-12)
    np.testing.assert_allclose(q_z, p_z, atol=1e-12)
    # the set is convex, so the projection is non-expansive; the origin is inside
    d_in = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1))
    d_out = np.hypot(p_x[:, None] - p_x[None, :], p_z[:, None] - p_z[None, :])
    assert np.all(d_out <= d_in + 1e-9)
    assert np.all(np.hypot(p_x, p_z) <= np.hypot(pts[:, 0], pts[:, 1]) + 1e-12)
    # optimality: P − p is an outward normal, so no boundary sample is closer
    assert_closest(pts[:3], np.stack([p_x, p_z], axis=-1)[:3], lim)


# --- rotations: violation and projection ---------------------------------------------------------

def random_limits(rng, n):
    def side():
        return np.where(rng.random(n) < 0.15, 0.0, rng.uniform(0.05, 2.5, n))
    return make_limits(-side(), side(), -side(), side(), -side(), side())


def test_violation_zero_iff_inside(rng):
    n = 3000
    lim = random_limits(rng, n)
    q = random_quats(rng, n)
    s_x, s_z, tau = swing_twist_params(q)
    inside = (ellipse_value(s_x, s_z, lim) <= 1.0) & (lim.twist_min <= tau) & (tau <= lim.twist_max)
    v = limit_violation(q, lim)
    assert np.all(v >= 0.0)
    np.testing.assert_array_equal(v == 0.0, inside)
    p_x, p_z = project_swing(s_x, s_z, lim)
    twist_excess = np.maximum(np.maximum(lim.twist_min - tau, tau - lim.twist_max), 0.0)
    np.testing.assert_allclose(v, np.maximum(np.hypot(s_x - p_x, s_z - p_z), twist_excess), atol=0)


def test_violation_values():
    lim = make_limits(-0.5, 0.5, -0.5, 0.5, -0.2, 0.3, n=3)
    q = quat_from_swing_twist(np.array([0.8, 0.0, 0.1]), np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.5, -0.3]))
    np.testing.assert_allclose(limit_violation(q, lim), [0.3, 0.2, 0.1], atol=1e-12)
    assert np.all(limit_violation(q, lim._replace(enabled=np.zeros(3, bool))) == 0.0)


def test_project_to_limits(rng):
    n = 3000
    lim = random_limits(rng, n)
    q = random_quats(rng, n)  # both hemispheres
    out = project_to_limits(q, lim)
    inside = limit_violation(q, lim) == 0.0
    assert 0 < inside.sum() < n
    np.testing.assert_array_equal(out[inside], q[inside])
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1.0, atol=TOL)
    assert np.all(np.sum(out * q, axis=-1) >= 0.0)  # stays in the input's hemisphere
    assert np.all(limit_violation(out, lim) <= 1e-9)
    s_x, s_z, tau = swing_twist_params(q[~inside])
    o_x, o_z, o_tau = swing_twist_params(out[~inside])
    sub = subset(lim, ~inside)
    p_x, p_z = project_swing(s_x, s_z, sub)
    swing_out = ellipse_value(s_x, s_z, sub) > 1.0
    assert on_boundary(o_x[swing_out], o_z[swing_out], subset(sub, swing_out)).all()
    np.testing.assert_allclose(o_x, p_x, atol=1e-11)
    np.testing.assert_allclose(o_z, p_z, atol=1e-11)
    np.testing.assert_allclose(o_tau, np.clip(tau, sub.twist_min, sub.twist_max), atol=1e-11)
    # idempotent
    np.testing.assert_allclose(project_to_limits(out, lim), out, atol=TOL)


def test_project_disabled_and_identity(rng):
    q = random_quats(rng, 50)
    lim = make_limits(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, enabled=False, n=50)
    np.testing.assert_array_equal(project_to_limits(q, lim), q)
    locked = lim._replace(enabled=np.ones(50, bool))
    out = project_to_limits(q, locked)
    np.testing.assert_allclose(np.abs(out[:, 0]), 1.0, atol=TOL)  # everything locked → identity
    ident = np.tile([1.0, 0.0, 0.0, 0.0], (50, 1))
    np.testing.assert_array_equal(project_to_limits(ident, locked), ident)


def test_project_twist_only_keeps_swing(rng):
    lim = make_limits(-1.0, 1.0, -1.0, 1.0, -0.1, 0.1, n=200)
    s = rng.uniform(-0.5, 0.5, size=(200, 2))
    tau = rng.choice([-1.0, 1.0], 200) * rng.uniform(0.2, 3.0, 200)
    out = project_to_limits(quat_from_swing_twist(s[:, 0], s[:, 1], tau), lim)
    o_x, o_z, o_tau = swing_twist_params(out)
    np.testing.assert_allclose(np.stack([o_x, o_z], axis=-1), s, atol=1e-12)
    np.testing.assert_allclose(o_tau, np.sign(tau) * 0.1, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.tuples(bound, bound, bound, bound, bound, bound),
       st.lists(st.tuples(*[st.floats(-1.0, 1.0)] * 4).filter(lambda t: sum(c * c for c in t) > 1e-6),
                min_size=1, max_size=10))
def test_property_rotation_projection(bounds, quats):
    x_lo, x_hi, z_lo, z_hi, t_lo, t_hi = bounds
    q = np.array(quats)
    n = len(q)
    lim = make_limits(-x_lo, x_hi, -z_lo, z_hi, -t_lo, t_hi, n=n)
    v = limit_violation(q, lim)
    out = project_to_limits(q, lim)
    assert np.all(np.isfinite(out)) and np.all(v >= 0.0)
    np.testing.assert_array_equal(out[v == 0.0], q[v == 0.0])
    assert np.all(limit_violation(out, lim) <= 1e-9)
    np.testing.assert_allclose(project_to_limits(out, lim), out, atol=1e-12)
    # the projection moves the swing by exactly its violation distance (when the twist is inside)
    s_x, s_z, tau = swing_twist_params(q)
    o_x, o_z, _ = swing_twist_params(out)
    twist_in = (lim.twist_min <= tau) & (tau <= lim.twist_max)
    moved = np.hypot(o_x - s_x, o_z - s_z)
    np.testing.assert_allclose(moved[twist_in], v[twist_in], atol=1e-9)


def test_retract_brings_parameters_inside(rng):
    """``LimitProjection.retraction`` (the solver's update of joints held on a limit): twist and locked
    half-axes clamped, a swing outside its quarter-ellipse scaled onto it towards the origin, a
    swing inside kept; the result is inside the limits and the projection leaves it alone."""
    n = 2000
    lim = random_limits(rng, n)
    params = np.stack([rng.uniform(-3.0, 3.0, n), rng.uniform(-3.0, 3.0, n),
                       rng.uniform(-np.pi, np.pi, n)], axis=-1)
    params[: n // 2, :2] *= 0.05            # half of them: swings near the centre
    projection = LimitProjection(lim)
    rows = rng.permutation(n)[: n // 2]     # a subset of the joints, in any order
    out = projection.retraction(rows)(params[rows])[0]
    sub = subset(lim, rows)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1.0, atol=TOL)
    assert np.all(out[:, 0] >= 0.0)
    assert np.all(limit_violation(out, sub) <= 1e-12)
    every = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    every[rows] = out
    np.testing.assert_array_equal(projection(every)[rows], out)
    o_x, o_z, o_tau = swing_twist_params(out)
    np.testing.assert_allclose(o_tau, np.clip(params[rows, 2], sub.twist_min, sub.twist_max), atol=1e-12)
    clamped = np.clip(params[rows, :2], np.stack([np.minimum(sub.swing_x_min, 0), np.minimum(sub.swing_z_min, 0)], -1)
                      - np.where(np.stack([sub.swing_x_min, sub.swing_z_min], -1) < 0, np.inf, 0.0),
                      np.stack([sub.swing_x_max, sub.swing_z_max], -1)
                      + np.where(np.stack([sub.swing_x_max, sub.swing_z_max], -1) > 0, np.inf, 0.0))
    ratio = ellipse_value(clamped[:, 0], clamped[:, 1], sub)
    inside = ratio <= 1.0
    np.testing.assert_allclose(np.stack([o_x, o_z], -1)[inside], clamped[inside], atol=1e-12)
    scaled = clamped[~inside] / np.sqrt(ratio[~inside])[:, None]
    np.testing.assert_allclose(np.stack([o_x, o_z], -1)[~inside], scaled, atol=1e-12)
    assert 0 < inside.sum() < rows.size


def test_swing_twist_jacobian_matches_central_differences(rng):
    """The analytic ∂(s_x, s_z, τ)/∂Δθ of the left update equals central differences of the
    decomposition, also at no swing (the series branch) and with w < 0 (canonicalized)."""
    from dq_ik_addon.engine.quaternion import qexp, qmul, qnormalize
    from dq_ik_addon.engine.swing_twist import swing_twist_jacobian
    q = qnormalize(rng.normal(size=(400, 4)))
    q[:4] = qnormalize(np.array([[1.0, 0, 0, 0], [np.cos(0.3), 0, np.sin(0.3), 0],
                                 [0.9, 1e-9, 0.1, 0], [-0.5, 0.3, 0.2, 0.1]]))
    q = q[np.hypot(q[:, 0], q[:, 2]) > 0.1]          # away from a swing of π, where it is undefined
    params, jacobian = swing_twist_jacobian(q)
    np.testing.assert_allclose(params, np.stack(swing_twist_params(q), axis=-1), atol=1e-14)
    h = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = 0.5 * h
        ahead = np.stack(swing_twist_params(qmul(qexp(e), q)), axis=-1)
        behind = np.stack(swing_twist_params(qmul(qexp(-e), q)), axis=-1)
        np.testing.assert_allclose(jacobian[:, :, k], (ahead - behind) / (2 * h), atol=1e-7)


def test_fold_start_swings_a_hinge_wherever_it_is_a_little_towards_its_centre():
    """Knees under the HUMANOID limits are hinges (swing Z locked, X from -15° to 125°): at
    rest, bent 30° and bent 100°, each swings a tenth of the way to the centre (55°) in X, its
    Z and twist kept at 0; folded by half (a target nearer), half of that."""
    knee = make_limits(np.radians(-15.0), np.radians(125.0), 0.0, 0.0, np.radians(-10.0),
                       np.radians(10.0), n=3)
    joints = knee.for_joints(np.arange(3), np.ones(3))
    bent = quat_from_swing_twist(np.radians([0.0, 30.0, 100.0]), np.zeros(3), np.zeros(3))
    s_x, s_z, tau = swing_twist_params(joints.fold_start(bent, np.ones(3, bool)))
    np.testing.assert_allclose(np.degrees(s_x), [5.5, 32.5, 95.5], atol=1e-9)
    np.testing.assert_allclose(np.concatenate([s_z, tau]), 0.0, atol=1e-12)
    half = swing_twist_params(joints.fold_start(bent, np.full(3, 0.5)))[0]
    np.testing.assert_allclose(np.degrees(half), [2.75, 31.25, 97.75], atol=1e-9)  # in proportion


def test_fold_start_swings_a_joint_resting_on_a_bound_a_little_into_its_range():
    """Three joints at rest (identity): one whose swing-X range starts at its rest (X from 0),
    one whose range holds the rest inside it, and the first again but not folding. Only the
    first is moved: a tenth of the way to the centre of its swing ranges, its twist kept."""
    limits = make_limits([0.0, -1.0, 0.0], [2.0, 1.0, 2.0], [-0.2, -1.0, -0.2], [0.2, 1.0, 0.2],
                         [-0.3, -1.0, -0.3], [0.1, 1.0, 0.1])
    joints = limits.for_joints(np.arange(3), np.ones(3))
    rest = np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
    folded = joints.fold_start(rest, np.array([True, True, False]))
    s_x, s_z, tau = swing_twist_params(folded)
    np.testing.assert_allclose([s_x[0], s_z[0], tau[0]], [0.1, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(folded[1:], rest[1:], atol=1e-12)
    assert joints.fold_start(rest, np.array([False, True, False])) is None
