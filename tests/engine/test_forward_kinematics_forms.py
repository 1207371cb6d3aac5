"""The FK in both forms: ``ChainModel.forward`` (unit dual quaternions composed down the chain)
equals ``ChainModel.matrices`` (the hot path's 4×4 matrices), and the dual-quaternion form of the
solver's FK and joint frames that ``benchmarks/fk_forms.py`` times gives the solver the same
matrices and Jacobian columns."""

import os
import sys

import numpy as np
import pytest
from chains import random_tree

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine.dual_quaternion import (
    dq_from_rotation_translation,
    dq_mul,
    dq_times_rotation,
    dq_times_translation,
    dq_to_matrix,
)
from dq_ik_addon.engine.jacobian import JointFrames
from dq_ik_addon.engine.moving_joints_fk import GivenPose, MovingJointsFK

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks"))
import fk_forms  # noqa: E402

TOL = 1e-12


def random_pose(rng, n):
    """Unnormalized rotations (the FK normalizes them, as Blender does) and locations."""
    return rng.normal(size=(n, 4)) * rng.uniform(0.5, 2.0, size=(n, 1)), \
        rng.normal(scale=0.2, size=(n, 3))


@pytest.mark.parametrize("seed", range(5))
def test_dual_quaternion_chain_equals_the_matrix_chain(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, 40)
    connected = rng.random(40) < 0.5                     # connected bones ignore their location
    model = ChainModel(tree.names, tree.parents, tree.rest_matrices, tree.lengths, connected)
    rotations, locations = random_pose(rng, 40)
    for loc in (None, locations):
        pose = model.forward(rotations, loc)
        np.testing.assert_allclose(dq_to_matrix(pose), model.matrices(rotations, loc), atol=TOL)
        np.testing.assert_allclose(np.linalg.norm(pose[:, :4], axis=1), 1.0, atol=TOL)
        np.testing.assert_allclose(np.sum(pose[:, :4] * pose[:, 4:], axis=1), 0.0, atol=TOL)


def test_right_factors_are_dual_quaternion_products():
    rng = np.random.default_rng(3)
    dq = dq_from_rotation_translation(rng.normal(size=(50, 4)), rng.normal(size=(50, 3)))
    dq /= np.linalg.norm(dq[:, :4], axis=1, keepdims=True)
    t, q = rng.normal(size=(50, 3)), rng.normal(size=(50, 4))
    slide = dq_from_rotation_translation(np.tile([1.0, 0.0, 0.0, 0.0], (50, 1)), t)
    np.testing.assert_allclose(dq_times_translation(dq, t), dq_mul(dq, slide), atol=TOL)
    turn = np.concatenate([q, np.zeros((50, 4))], axis=1)
    np.testing.assert_allclose(dq_times_rotation(dq, q), dq_mul(dq, turn), atol=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_the_benchmarked_dual_quaternion_form_gives_the_solver_the_same_arrays(seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 30)
    joints = np.sort(rng.choice(30, size=8, replace=False))
    matrix_fk, dq_fk = MovingJointsFK(model, joints), fk_forms.DualQuaternionFK(model, joints)
    frames = JointFrames(model, joints)
    screw_frames = fk_forms.ScrewAxisFrames(model, joints, dq_fk)
    start, locations = random_pose(rng, 30)
    given = GivenPose(locations=locations)
    np.testing.assert_allclose(dq_fk.start(start, given), matrix_fk.start(start, given), atol=TOL)
    moved = start.copy()
    moved[joints] = rng.normal(size=(8, 4))
    world = dq_fk(moved)
    np.testing.assert_allclose(world, matrix_fk(moved), atol=TOL)
    for ours, theirs in zip(screw_frames(world), frames(world)):
        np.testing.assert_allclose(ours, theirs, atol=TOL)
