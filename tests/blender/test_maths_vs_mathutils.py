"""The numpy engine maths agree with Blender's mathutils on random inputs.

mathutils stores and computes in float32.  Every input is first rounded through mathutils and read
back, so both sides see the same numbers and only float32 arithmetic separates them: a few ulp of
1 (~1e-7) for products and matrices, hence ``TOL = 2e-6``.  Blender's exponential map divides by
``sin(θ/2)`` in float32, so it is compared per sample at ``2e-6 (1 + θ)/sin(θ/2)`` (measured
worst case over 5000 samples: 0.23 of that), and only for ``|w| < 0.9999``: below θ ≈ 1e-3
Blender returns ~0 (its ``sin < 0.0005`` guard), which is not worth matching.
"""

import math

import bpy  # noqa: F401  (mathutils ships inside the bpy wheel)
import mathutils
import numpy as np
import pytest
from mathutils import Matrix, Quaternion, Vector

from dq_ik_addon.engine.dual_quaternion import (
    dq_from_rotation_translation,
    dq_to_matrix,
)
from dq_ik_addon.engine.quaternion import (
    matrix_to_quat,
    qcanonical,
    qmul,
    qnormalize,
    quat_from_rotvec,
    quat_to_matrix,
    quat_to_rotvec,
)
from dq_ik_addon.engine.swing_twist import swing_twist, swing_twist_params

N = 200
TOL = 2e-6
ANGLE_TOL = 2e-6


@pytest.fixture
def rng():
    return np.random.default_rng(2024)


def blender_quats(rng, n=N):
    """Random unit quaternions (both hemispheres) as mathutils objects and their float32 values."""
    quats = [Quaternion(q) for q in qnormalize(rng.normal(size=(n, 4)))]
    return quats, np.array([tuple(q) for q in quats])


def angle_tol(w, rotvec):
    """Per-sample tolerance of Blender's float32 exponential map (see the module docstring)."""
    return ANGLE_TOL * (1.0 + np.linalg.norm(rotvec, axis=-1)) / np.sqrt(1.0 - w**2)


def up_to_sign(a, b):
    return np.minimum(np.abs(a - b).max(axis=-1), np.abs(a + b).max(axis=-1))


def test_qmul(rng):
    qa, a = blender_quats(rng)
    qb, b = blender_quats(rng)
    expected = np.array([tuple(x @ y) for x, y in zip(qa, qb)])
    np.testing.assert_allclose(qmul(a, b), expected, atol=TOL)


def test_quat_to_matrix(rng):
    quats, q = blender_quats(rng)
    expected = np.array([np.array(x.to_matrix()) for x in quats])
    np.testing.assert_allclose(quat_to_matrix(q), expected, atol=TOL)


def test_matrix_to_quat(rng):
    quats, _ = blender_quats(rng)
    mats = [x.to_matrix() for x in quats]
    m = np.array([np.array(x) for x in mats])
    expected = np.array([tuple(x.to_quaternion()) for x in mats])
    assert np.all(up_to_sign(matrix_to_quat(m), expected) <= TOL)


def test_matrix_to_quat_scaled_columns(rng):
    """Blender normalizes the columns of a scaled matrix before extracting the rotation."""
    quats, _ = blender_quats(rng, 50)
    mats = [x.to_matrix() @ Matrix.Diagonal(Vector(s)) for x, s in zip(quats, rng.uniform(0.2, 5.0, (50, 3)))]
    m = np.array([np.array(x) for x in mats])
    expected = np.array([tuple(x.to_quaternion()) for x in mats])
    assert np.all(up_to_sign(matrix_to_quat(m), expected) <= TOL)


def test_quat_to_rotvec_matches_to_exponential_map(rng):
    quats, q = blender_quats(rng)
    keep = np.abs(q[:, 0]) < 0.9999
    expected = np.array([tuple(x.to_exponential_map()) for x in quats])
    err = np.abs(quat_to_rotvec(q) - expected).max(axis=-1)
    assert np.all(err[keep] <= angle_tol(q[:, 0], expected)[keep])
    # neither side canonicalizes: w < 0 gives the long way round, norm 2π − θ
    assert np.all(np.linalg.norm(expected[q[:, 0] < -0.1], axis=-1) > math.pi)


def test_quat_from_rotvec_matches_quaternion_from_vector(rng):
    r = rng.normal(size=(N, 3))
    r *= rng.uniform(0.0, 2 * math.pi, (N, 1)) / np.linalg.norm(r, axis=-1, keepdims=True)
    vectors = [Vector(x) for x in r]
    r = np.array([tuple(v) for v in vectors])
    expected = np.array([tuple(Quaternion(v)) for v in vectors])
    ours = quat_from_rotvec(r)
    assert np.all(up_to_sign(ours, expected) <= TOL)
    # Blender wraps the angle to [−π, π), i.e. returns the canonical (w ≥ 0) representative
    away_from_pi = np.abs(np.linalg.norm(r, axis=-1) - math.pi) > 1e-3
    np.testing.assert_allclose(qcanonical(ours)[away_from_pi], expected[away_from_pi], atol=TOL)


def test_swing_twist_matches_to_swing_twist_y(rng):
    quats, q = blender_quats(rng)
    blender = [x.to_swing_twist('Y') for x in quats]
    swing_b = np.array([tuple(s) for s, _ in blender])
    twist_b = np.array([t for _, t in blender])
    swing, twist = swing_twist(q)
    np.testing.assert_allclose(swing, swing_b, atol=TOL)
    np.testing.assert_allclose(twist, twist_b, atol=TOL)
    assert np.any(q[:, 0] < 0)  # w < 0 inputs are canonicalized the same way
    s_x, s_z, tau = swing_twist_params(q)
    rotvec_b = np.array([tuple(s.to_exponential_map()) for s, _ in blender])
    keep = swing_b[:, 0] < 0.9999
    err = np.maximum(np.abs(s_x - rotvec_b[:, 0]), np.abs(s_z - rotvec_b[:, 2]))
    assert np.all(err[keep] <= angle_tol(swing_b[:, 0], rotvec_b)[keep])
    np.testing.assert_allclose(tau, twist_b, atol=TOL)


def test_swing_twist_edge_cases():
    cases = [(0.0, 0.6, 0.0, 0.8), (0.0, 0.6, -0.5, 0.8), (-0.5, 0.5, 0.5, 0.5), (1.0, 0.0, 0.0, 0.0),
             (0.0, 0.0, 1.0, 0.0), (0.0, 0.0, -1.0, 0.0)]
    for case in cases:
        x = Quaternion(case).normalized()
        swing_b, twist_b = x.to_swing_twist('Y')
        swing, twist = swing_twist(np.array(tuple(x)))
        np.testing.assert_allclose(swing, tuple(swing_b), atol=TOL)
        np.testing.assert_allclose(twist, twist_b, atol=TOL)


def test_dq_to_matrix(rng):
    quats, q = blender_quats(rng)
    translations = [Vector(t) for t in rng.normal(size=(N, 3))]
    t = np.array([tuple(v) for v in translations])
    expected = np.array([np.array(Matrix.Translation(v) @ x.to_matrix().to_4x4())
                         for x, v in zip(quats, translations)])
    np.testing.assert_allclose(dq_to_matrix(dq_from_rotation_translation(q, t)), expected, atol=TOL)


def test_mathutils_is_float32():
    """Justifies the tolerances: mathutils rounds to float32."""
    assert Quaternion((1.0, 0.1, 0.0, 0.0))[1] == float(np.float32(0.1))
    assert mathutils.Vector((0.1, 0.0))[0] == float(np.float32(0.1))
