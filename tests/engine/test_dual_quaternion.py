"""Dual-quaternion maths: pose convention, products, inverse and matrices."""

import numpy as np
import pytest

from dq_ik_addon.engine.dual_quaternion import (
    dq_conj,
    dq_from_matrix,
    dq_from_rotation_translation,
    dq_mul,
    dq_rotation,
    dq_to_matrix,
    dq_translation,
)
from dq_ik_addon.engine.quaternion import (
    qconj,
    qmul,
    qnormalize,
    qrotate,
    quat_to_matrix,
)

TOL = 1e-12
DQ_IDENTITY = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])


def random_quats(rng, n):
    return qnormalize(rng.normal(size=(n, 4)))


def random_dqs(rng, n):
    return dq_from_rotation_translation(random_quats(rng, n), rng.normal(size=(n, 3)) * 2.0)


def transform_point(dq, p):
    """``p' = R p + t`` of the pose ``dq`` (Bartelink Prop. 4.2.12), from its rotation and translation."""
    return qrotate(dq_rotation(dq), p) + dq_translation(dq)


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
    np.testing.assert_allclose(transform_point(dq, p), expected, atol=TOL)
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
    np.testing.assert_allclose(sandwich[:, 5:], transform_point(dq, p), atol=TOL)
    homogeneous = np.einsum("nij,nj->ni", dq_to_matrix(dq), np.concatenate([p, np.ones((300, 1))], axis=1))
    np.testing.assert_allclose(homogeneous[:, :3], transform_point(dq, p), atol=TOL)


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
    np.testing.assert_allclose(transform_point(dq_mul(rotation, translation), p), qrotate(q, p + t), atol=TOL)


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


def test_broadcasting(rng):
    a = random_dqs(rng, 6).reshape(2, 3, 8)
    assert dq_mul(a, DQ_IDENTITY).shape == (2, 3, 8)
    assert dq_to_matrix(a).shape == (2, 3, 4, 4)
    assert dq_from_matrix(dq_to_matrix(a)).shape == (2, 3, 8)
    assert dq_from_rotation_translation(DQ_IDENTITY[:4], np.zeros((5, 3))).shape == (5, 8)
    np.testing.assert_allclose(qmul(a[..., :4], qconj(a[..., :4]))[..., 0], 1.0, atol=TOL)
