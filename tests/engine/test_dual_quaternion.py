"""Dual-quaternion maths: pose convention, products, matrices, normalization and the screw exp/log."""

import numpy as np
import pytest

from dq_ik_addon.dual_quaternion import (
    dq_conj,
    dq_exp,
    dq_from_matrix,
    dq_from_rotation_translation,
    dq_log,
    dq_mul,
    dq_normalize,
    dq_rotation,
    dq_to_matrix,
    dq_transform_point,
    dq_translation,
)
from dq_ik_addon.quaternion import (
    qcanonical,
    qconj,
    qexp,
    qmul,
    qnormalize,
    qrotate,
    quat_from_axis_angle,
    quat_to_matrix,
)

TOL = 1e-12
DQ_IDENTITY = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


def random_quats(rng, n):
    return qnormalize(rng.normal(size=(n, 4)))


def random_dqs(rng, n):
    return dq_from_rotation_translation(random_quats(rng, n), rng.normal(size=(n, 3)) * 2.0)


def random_unit_vectors(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def assert_unit(dq, tol=TOL):
    real, dual = dq[..., :4], dq[..., 4:]
    np.testing.assert_allclose(np.linalg.norm(real, axis=-1), 1.0, atol=tol)
    np.testing.assert_allclose(np.sum(real * dual, axis=-1), 0.0, atol=tol)


@pytest.fixture
def rng():
    return np.random.default_rng(4321)


def test_pose_convention_maps_p_to_Rp_plus_t(rng):
    q, t, p = random_quats(rng, 300), rng.normal(size=(300, 3)), rng.normal(size=(300, 3))
    dq = dq_from_rotation_translation(q, t)
    expected = np.einsum("nij,nj->ni", quat_to_matrix(q), p) + t
    np.testing.assert_allclose(dq_transform_point(dq, p), expected, atol=TOL)
    np.testing.assert_array_equal(dq_rotation(dq), q)
    np.testing.assert_allclose(dq_translation(dq), t, atol=TOL)
    assert_unit(dq)


def test_point_transform_matches_sandwich_and_matrix(rng):
    """``1 + ε p' = q̂ (1 + ε p) q̂̄*`` (Bartelink Prop. 4.2.12) and ``M [p, 1]``."""
    dq, p = random_dqs(rng, 300), rng.normal(size=(300, 3))
    point = np.concatenate([np.tile(DQ_IDENTITY[:4], (300, 1)), np.zeros((300, 1)), p], axis=1)
    combined_conj = np.concatenate([qconj(dq[:, :4]), -qconj(dq[:, 4:])], axis=1)
    sandwich = dq_mul(dq_mul(dq, point), combined_conj)
    np.testing.assert_allclose(sandwich[:, :4], point[:, :4], atol=TOL)
    np.testing.assert_allclose(sandwich[:, 5:], dq_transform_point(dq, p), atol=TOL)
    homogeneous = np.einsum("nij,nj->ni", dq_to_matrix(dq), np.concatenate([p, np.ones((300, 1))], axis=1))
    np.testing.assert_allclose(homogeneous[:, :3], dq_transform_point(dq, p), atol=TOL)


def test_product_matches_matrix_product_and_is_associative(rng):
    a, b, c = random_dqs(rng, 300), random_dqs(rng, 300), random_dqs(rng, 300)
    np.testing.assert_allclose(dq_to_matrix(dq_mul(a, b)), dq_to_matrix(a) @ dq_to_matrix(b), atol=1e-11)
    np.testing.assert_allclose(dq_mul(dq_mul(a, b), c), dq_mul(a, dq_mul(b, c)), atol=1e-11)
    assert_unit(dq_mul(a, b))
    np.testing.assert_array_equal(dq_mul(DQ_IDENTITY, a), a)


def test_translate_then_rotate_order(rng):
    """``(1 + ε t/2) r`` = translation ∘ rotation; ``r (1 + ε t/2)`` maps p to ``R(p + t)``."""
    q, t, p = random_quats(rng, 100), rng.normal(size=(100, 3)), rng.normal(size=(100, 3))
    translation = dq_from_rotation_translation(np.tile(DQ_IDENTITY[:4], (100, 1)), t)
    rotation = dq_from_rotation_translation(q, np.zeros(3))
    np.testing.assert_allclose(dq_mul(translation, rotation), dq_from_rotation_translation(q, t), atol=TOL)
    np.testing.assert_allclose(dq_transform_point(dq_mul(rotation, translation), p), qrotate(q, p + t), atol=TOL)


def test_conjugate_is_inverse(rng):
    dq = random_dqs(rng, 300)
    ident = np.broadcast_to(DQ_IDENTITY, dq.shape)
    np.testing.assert_allclose(dq_mul(dq, dq_conj(dq)), ident, atol=TOL)
    np.testing.assert_allclose(dq_mul(dq_conj(dq), dq), ident, atol=TOL)
    np.testing.assert_allclose(dq_to_matrix(dq_conj(dq)), np.linalg.inv(dq_to_matrix(dq)), atol=1e-11)


def test_matrix_round_trips(rng):
    dq = random_dqs(rng, 500)
    m = dq_to_matrix(dq)
    back = dq_from_matrix(m)
    canonical = np.where(dq[:, :1] < 0.0, -dq, dq)
    np.testing.assert_allclose(back, canonical, atol=TOL)
    np.testing.assert_allclose(dq_to_matrix(back), m, atol=TOL)
    np.testing.assert_allclose(dq_to_matrix(-dq), m, atol=TOL)  # double cover
    np.testing.assert_array_equal(m[:, 3], np.tile([0.0, 0.0, 0.0, 1.0], (500, 1)))
    assert_unit(back)


def test_normalize(rng):
    dq = random_dqs(rng, 300)
    np.testing.assert_allclose(dq_normalize(dq), dq, atol=1e-15)
    noisy = dq * rng.uniform(0.5, 2.0, size=(300, 1)) + rng.normal(scale=1e-3, size=(300, 8))
    out = dq_normalize(noisy)
    assert_unit(out)
    np.testing.assert_allclose(dq_normalize(out), out, atol=1e-15)
    np.testing.assert_allclose(out[:, :4], qnormalize(noisy[:, :4]), atol=TOL)
    # a uniformly scaled DQ keeps its rotation and translation
    scaled = dq * 3.0
    np.testing.assert_allclose(dq_normalize(scaled), dq, atol=TOL)
    np.testing.assert_array_equal(dq_normalize(np.zeros(8)), DQ_IDENTITY)


def test_log_exp_round_trip(rng):
    dq = random_dqs(rng, 1000)  # both hemispheres of the real part
    np.testing.assert_allclose(dq_exp(dq_log(dq)), dq, atol=TOL)
    phi = random_unit_vectors(rng, 1000) * rng.uniform(0.0, 0.99 * np.pi, size=(1000, 1))
    xi = np.concatenate([phi, rng.normal(size=(1000, 3))], axis=1)
    np.testing.assert_allclose(dq_log(dq_exp(xi)), xi, atol=1e-10)
    assert_unit(dq_exp(xi))


def test_exp_real_part_and_dual_derivative(rng):
    """``exp(φ + ερ) = e^φ + ε (d/ds) e^{φ + sρ}`` (dual-number rule), checked by central differences."""
    xi = np.concatenate([rng.normal(size=(200, 3)), rng.normal(size=(200, 3))], axis=1)
    out = dq_exp(xi)
    np.testing.assert_allclose(out[:, :4], qexp(xi[:, :3]), atol=TOL)
    h = 1e-6
    fd = (qexp(xi[:, :3] + h * xi[:, 3:]) - qexp(xi[:, :3] - h * xi[:, 3:])) / (2 * h)
    np.testing.assert_allclose(out[:, 4:], fd, atol=1e-8)


def test_pure_translation(rng):
    t = rng.normal(size=(100, 3))
    dq = dq_from_rotation_translation(np.tile(DQ_IDENTITY[:4], (100, 1)), t)
    log = dq_log(dq)
    np.testing.assert_array_equal(log[:, :3], 0.0)
    np.testing.assert_allclose(log[:, 3:], t / 2, atol=TOL)
    np.testing.assert_allclose(dq_exp(log), dq, atol=TOL)
    np.testing.assert_array_equal(dq_exp(np.zeros(6)), DQ_IDENTITY)
    np.testing.assert_array_equal(dq_log(DQ_IDENTITY), np.zeros(6))


def test_screw_parameters(rng):
    """Screw by θ about the line through p with direction u, sliding d: ``log = ½(θu, θ p×u + d u)``."""
    n = 300
    u, p = random_unit_vectors(rng, n), rng.normal(size=(n, 3))
    theta, d = rng.uniform(-3.0, 3.0, size=(n, 1)), rng.normal(size=(n, 1))
    q = quat_from_axis_angle(u, theta[:, 0])
    t = p - qrotate(q, p) + d * u  # x ↦ R(x − p) + p + d u
    dq = dq_from_rotation_translation(q, t)
    expected = 0.5 * np.concatenate([theta * u, theta * np.cross(p, u) + d * u], axis=1)
    np.testing.assert_allclose(dq_log(dq), expected, atol=1e-11)


def test_exp_is_one_parameter_group(rng):
    xi = np.concatenate([rng.normal(size=(200, 3)) * 0.5, rng.normal(size=(200, 3))], axis=1)
    s, t = 0.3, 0.45
    np.testing.assert_allclose(dq_mul(dq_exp(s * xi), dq_exp(t * xi)), dq_exp((s + t) * xi), atol=TOL)


def test_log_robust_near_zero_rotation(rng):
    u, t = random_unit_vectors(rng, 50), rng.normal(size=(50, 3))

    def log_at(angle):
        dq = dq_from_rotation_translation(quat_from_axis_angle(u, np.full(50, angle)), t)
        return dq, dq_log(dq)

    for angle in [0.0, 1e-300, 1e-16, 1e-10, 1e-6, 1e-3]:
        dq, log = log_at(angle)
        assert np.all(np.isfinite(log))
        np.testing.assert_allclose(dq_exp(log), dq, atol=TOL)
        np.testing.assert_allclose(log[:, :3], angle / 2 * u, atol=1e-15)
        np.testing.assert_allclose(log[:, 3:], t / 2, atol=max(angle, 1e-15) * np.abs(t).max())
    # the Taylor branch (half angle < 1e-4) joins the closed form
    below, above = log_at(2e-4 * (1 - 1e-12))[1], log_at(2e-4 * (1 + 1e-12))[1]
    assert np.abs(below - above).max() < 1e-14


def test_log_near_half_turn(rng):
    """Rotations by about π (real w ≈ 0, either sign) are regular points of the log."""
    u, t = random_unit_vectors(rng, 50), rng.normal(size=(50, 3))
    for angle in [np.pi - 1e-6, np.pi, np.pi + 1e-6]:
        dq = dq_from_rotation_translation(quat_from_axis_angle(u, np.full(50, angle)), t)
        log = dq_log(dq)
        assert np.all(np.isfinite(log))
        np.testing.assert_allclose(dq_exp(log), dq, atol=TOL)
        np.testing.assert_allclose(np.linalg.norm(log[:, :3], axis=-1), angle / 2, atol=1e-12)


def test_canonical_log_is_short_way(rng):
    dq = random_dqs(rng, 200)
    canonical = np.where(dq[:, :1] < 0.0, -dq, dq)
    np.testing.assert_allclose(canonical[:, :4], qcanonical(dq[:, :4]), atol=0)
    assert np.all(np.linalg.norm(dq_log(canonical)[:, :3], axis=-1) <= np.pi / 2 + 1e-15)


def test_broadcasting(rng):
    a = random_dqs(rng, 6).reshape(2, 3, 8)
    assert dq_mul(a, DQ_IDENTITY).shape == (2, 3, 8)
    assert dq_to_matrix(a).shape == (2, 3, 4, 4)
    assert dq_from_matrix(dq_to_matrix(a)).shape == (2, 3, 8)
    assert dq_log(a).shape == (2, 3, 6)
    assert dq_exp(dq_log(a)).shape == (2, 3, 8)
    assert dq_transform_point(a, np.zeros(3)).shape == (2, 3, 3)
    assert dq_from_rotation_translation(DQ_IDENTITY[:4], np.zeros((5, 3))).shape == (5, 8)
    np.testing.assert_allclose(qmul(a[..., :4], qconj(a[..., :4]))[..., 0], 1.0, atol=TOL)
