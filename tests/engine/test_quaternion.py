"""Quaternion maths: identities, round trips and robustness near 0 and π (float64, ≤ 1e-12)."""

import numpy as np
import pytest

from dq_ik_addon.engine.quaternion import (
    matrix_to_quat,
    qcanonical,
    qconj,
    qexp,
    qlog,
    qmul,
    qnormalize,
    qrotate,
    quat_from_axis_angle,
    quat_from_rotvec,
    quat_to_matrix,
    quat_to_rotvec,
)

TOL = 1e-12
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def random_quats(rng, n):
    return qnormalize(rng.normal(size=(n, 4)))


def random_unit_vectors(rng, n):
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def same_rotation(a, b, tol=TOL):
    """Quaternions equal up to the double cover."""
    d = np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1))
    return np.all(d <= tol)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def test_qmul_matches_matrix_product(rng):
    a, b = random_quats(rng, 500), random_quats(rng, 500)
    np.testing.assert_allclose(quat_to_matrix(qmul(a, b)), quat_to_matrix(a) @ quat_to_matrix(b), atol=TOL)


def test_qmul_associative_and_identity(rng):
    a, b, c = (rng.normal(size=(300, 4)) for _ in range(3))
    np.testing.assert_allclose(qmul(qmul(a, b), c), qmul(a, qmul(b, c)), atol=1e-11)
    np.testing.assert_array_equal(qmul(IDENTITY, a), a)
    np.testing.assert_array_equal(qmul(a, IDENTITY), a)


def test_hamilton_units():
    i, j, k = np.eye(4)[1:]
    np.testing.assert_array_equal(qmul(i, j), k)
    np.testing.assert_array_equal(qmul(j, k), i)
    np.testing.assert_array_equal(qmul(k, i), j)
    np.testing.assert_array_equal(qmul(i, i), -IDENTITY)


def test_conjugate_is_inverse(rng):
    q = random_quats(rng, 500)
    np.testing.assert_allclose(qmul(q, qconj(q)), np.broadcast_to(IDENTITY, q.shape), atol=TOL)
    np.testing.assert_allclose(qmul(qconj(q), q), np.broadcast_to(IDENTITY, q.shape), atol=TOL)


def test_qmul_broadcasts(rng):
    a = random_quats(rng, 6).reshape(2, 3, 4)
    b = random_quats(rng, 1)[0]
    assert qmul(a, b).shape == (2, 3, 4)
    assert qmul(b, a).shape == (2, 3, 4)
    assert qmul(a[:, :1], a).shape == (2, 3, 4)
    assert qrotate(a, np.ones(3)).shape == (2, 3, 3)
    assert quat_to_matrix(a).shape == (2, 3, 3, 3)
    assert matrix_to_quat(quat_to_matrix(a)).shape == (2, 3, 4)


def test_qnormalize_zero_is_identity(rng):
    q = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 3.0, 0.0, 4.0]])
    out = qnormalize(q)
    np.testing.assert_array_equal(out[0], IDENTITY)
    np.testing.assert_allclose(out[1], [0.0, 0.6, 0.0, 0.8], atol=TOL)
    assert np.all(np.isfinite(out))


def test_qcanonical(rng):
    q = random_quats(rng, 200)
    c = qcanonical(q)
    assert np.all(c[:, 0] >= 0.0)
    assert same_rotation(c, q, 0.0)
    np.testing.assert_array_equal(qcanonical(-c), c)


def test_qrotate_matches_matrix_and_sandwich(rng):
    q = random_quats(rng, 400)
    v = rng.normal(size=(400, 3))
    expected = np.einsum("nij,nj->ni", quat_to_matrix(q), v)
    np.testing.assert_allclose(qrotate(q, v), expected, atol=TOL)
    pure = np.concatenate([np.zeros((400, 1)), v], axis=1)
    sandwich = qmul(qmul(q, pure), qconj(q))
    np.testing.assert_allclose(sandwich[:, 1:], expected, atol=TOL)
    np.testing.assert_allclose(qrotate(-q, v), expected, atol=TOL)


def test_exp_log_round_trip(rng):
    q = random_quats(rng, 1000)  # both hemispheres
    np.testing.assert_allclose(qexp(qlog(q)), q, atol=TOL)
    w = random_unit_vectors(rng, 1000) * rng.uniform(0.0, np.pi * (1 - 1e-9), size=(1000, 1))
    np.testing.assert_allclose(qlog(qexp(w)), w, atol=1e-11)


def test_exp_is_half_angle():
    q = qexp(np.array([0.0, 0.0, np.pi / 4]))  # 90° about z
    np.testing.assert_allclose(q, [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)], atol=TOL)
    np.testing.assert_allclose(qrotate(q, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], atol=TOL)


def test_exp_log_near_zero_no_nan_and_continuous(rng):
    u = random_unit_vectors(rng, 50)
    for n in [0.0, 1e-300, 1e-20, 1e-12, 1e-8, 1e-4 * (1 - 1e-12), 1e-4, 1e-4 * (1 + 1e-12), 1e-3]:
        w = n * u
        q = qexp(w)
        assert np.all(np.isfinite(q))
        np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=TOL)
        np.testing.assert_allclose(q[:, 1:], np.sin(n) * u, rtol=1e-15, atol=1e-300)
        np.testing.assert_allclose(qlog(q), w, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(qexp(np.zeros(3)), IDENTITY)
    np.testing.assert_array_equal(qlog(IDENTITY), np.zeros(3))
    below, above = qexp(1e-4 * (1 - 1e-12) * u), qexp(1e-4 * (1 + 1e-12) * u)
    assert np.abs(below - above).max() < 1e-15  # Taylor branch joins the closed form


def test_log_near_pi_and_minus_one(rng):
    u = random_unit_vectors(rng, 50)
    # a 2π rotation, q = −1: any axis, norm π
    w = qlog(-IDENTITY)
    np.testing.assert_allclose(np.linalg.norm(w), np.pi, atol=TOL)
    np.testing.assert_allclose(qexp(w), -IDENTITY, atol=TOL)
    # half angle approaching π/2 (rotation π): continuous through w = 0
    for eps in [1e-3, 1e-9, 1e-15, 0.0, -1e-15, -1e-9]:
        q = np.concatenate([np.full((50, 1), eps), np.sqrt(1 - eps**2) * u], axis=1)
        log = qlog(q)
        assert np.all(np.isfinite(log))
        np.testing.assert_allclose(log, (np.pi / 2 - np.arcsin(eps)) * u, atol=1e-12)
        np.testing.assert_allclose(qexp(log), q, atol=TOL)
    # approaching −1: still finite and round-trips
    for eps in [1e-3, 1e-8, 1e-12]:
        q = qnormalize(np.concatenate([-np.ones((50, 1)), eps * u], axis=1))
        np.testing.assert_allclose(qexp(qlog(q)), q, atol=TOL)


def test_log_is_scale_invariant(rng):
    q = random_quats(rng, 100)
    np.testing.assert_allclose(qlog(3.7 * q), qlog(q), atol=TOL)


def test_rotvec_full_angle_and_blender_non_canonical(rng):
    u = random_unit_vectors(rng, 200)
    theta = rng.uniform(0.0, np.pi, size=(200, 1))
    q = quat_from_axis_angle(u, theta[:, 0])
    np.testing.assert_allclose(quat_to_rotvec(q), theta * u, atol=1e-12)
    # like Blender's to_exponential_map(): −q is the long way round, norm 2π − θ
    np.testing.assert_allclose(np.linalg.norm(quat_to_rotvec(-q), axis=-1), 2 * np.pi - theta[:, 0], atol=1e-12)
    np.testing.assert_allclose(quat_to_rotvec(qcanonical(-q)), theta * u, atol=1e-12)


def test_rotvec_round_trips(rng):
    q = random_quats(rng, 1000)
    np.testing.assert_allclose(quat_from_rotvec(quat_to_rotvec(q)), q, atol=TOL)
    r = random_unit_vectors(rng, 1000) * rng.uniform(0.0, 2 * np.pi * (1 - 1e-9), size=(1000, 1))
    np.testing.assert_allclose(quat_to_rotvec(quat_from_rotvec(r)), r, atol=1e-10)


def test_rotvec_reparametrization_same_rotation(rng):
    """``r`` and ``(1 − 2π/‖r‖) r`` are the same rotation (Bartelink §4.3)."""
    r = random_unit_vectors(rng, 300) * rng.uniform(np.pi, 2 * np.pi, size=(300, 1))
    n = np.linalg.norm(r, axis=-1, keepdims=True)
    assert same_rotation(quat_from_rotvec(r), quat_from_rotvec((1 - 2 * np.pi / n) * r))


def test_rotvec_zero():
    np.testing.assert_array_equal(quat_from_rotvec(np.zeros(3)), IDENTITY)
    np.testing.assert_array_equal(quat_to_rotvec(IDENTITY), np.zeros(3))


def test_quat_to_matrix_is_rotation_and_normalizes(rng):
    q = random_quats(rng, 300)
    m = quat_to_matrix(q)
    np.testing.assert_allclose(m @ np.swapaxes(m, -1, -2), np.broadcast_to(np.eye(3), m.shape), atol=TOL)
    np.testing.assert_allclose(np.linalg.det(m), 1.0, atol=TOL)
    np.testing.assert_allclose(quat_to_matrix(2.5 * q), m, atol=TOL)
    np.testing.assert_allclose(quat_to_matrix(-q), m, atol=TOL)
    np.testing.assert_array_equal(quat_to_matrix(np.zeros(4)), np.eye(3))


def test_matrix_to_quat_round_trip(rng):
    q = random_quats(rng, 1000)
    back = matrix_to_quat(quat_to_matrix(q))
    np.testing.assert_allclose(back, qcanonical(q), atol=TOL)
    assert np.all(back[:, 0] >= 0.0)


def test_matrix_to_quat_near_pi_all_branches(rng):
    """Rotations by π (trace −1) and near it, about the axes and at random: every Shepperd branch."""
    axes = np.concatenate([np.eye(3), -np.eye(3), random_unit_vectors(rng, 200)])
    for angle in [np.pi, np.pi - 1e-9, np.pi - 1e-4, 1e-9, 0.0]:
        q = quat_from_axis_angle(axes, np.full(len(axes), angle))
        back = matrix_to_quat(quat_to_matrix(q))
        assert np.all(np.isfinite(back))
        assert same_rotation(back, q, 1e-12)
        np.testing.assert_allclose(quat_to_matrix(back), quat_to_matrix(q), atol=TOL)


def test_matrix_to_quat_ignores_column_scale(rng):
    q = random_quats(rng, 100)
    m = quat_to_matrix(q) * rng.uniform(0.1, 10.0, size=(100, 1, 3))
    np.testing.assert_allclose(matrix_to_quat(m), qcanonical(q), atol=TOL)


def test_axis_angle(rng):
    axis = rng.normal(size=(200, 3))
    angle = rng.uniform(-2 * np.pi, 2 * np.pi, size=200)
    u = axis / np.linalg.norm(axis, axis=-1, keepdims=True)
    np.testing.assert_allclose(quat_from_axis_angle(axis, angle), quat_from_rotvec(angle[:, None] * u), atol=TOL)
    np.testing.assert_array_equal(quat_from_axis_angle(np.zeros(3), 1.0), IDENTITY)
    q = quat_from_axis_angle([0.0, 0.0, 2.0], np.array([np.pi / 2, np.pi]))
    np.testing.assert_allclose(qrotate(q, [1.0, 0.0, 0.0]), [[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]], atol=TOL)
