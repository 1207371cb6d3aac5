"""``MovingJointsFK``: FK of the joints' part plus rigid offsets equals the full FK."""

import numpy as np
import pytest

from chains import random_tree
from ik_engine import ChainModel
from ik_engine.chain_model import MovingJointsFK


def random_rotations(rng, n):
    q = rng.normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(5))
def test_only_the_joints_rotate_and_every_bone_follows(seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 30)
    joints = np.sort(rng.choice(30, size=int(rng.integers(0, 8)), replace=False))
    locations = rng.normal(scale=0.1, size=(30, 3))
    start = random_rotations(rng, 30)
    fk = MovingJointsFK(model, joints)
    np.testing.assert_allclose(fk.start(start, locations), model.matrices(start, locations),
                               atol=1e-12)
    for _ in range(3):
        moved = start.copy()
        moved[joints] = random_rotations(rng, joints.size)
        np.testing.assert_allclose(fk(moved, locations), model.matrices(moved, locations),
                                   atol=1e-12)


def test_bones_of_an_unmoved_root_keep_their_start_pose():
    rest = np.tile(np.eye(4), (4, 1, 1))
    rest[:, 0, 3] = [0.0, 0.0, 2.0, 2.0]
    rest[:, 1, 3] = [0.0, 1.0, 0.0, 1.0]
    model = ChainModel.from_bones(list("abcd"), [-1, 0, -1, 2], rest, lengths=np.ones(4))
    fk = MovingJointsFK(model, [1])
    start = random_rotations(np.random.default_rng(1), 4)
    fk.start(start)
    moved = start.copy()
    moved[1] = [0.0, 1.0, 0.0, 0.0]
    np.testing.assert_allclose(fk(moved), model.matrices(moved), atol=1e-12)
    assert set(fk.rigid.tolist()) == {2, 3}
