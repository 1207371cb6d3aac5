"""``MovingJointsFK``: FK of the joints' part plus rigid offsets equals the full FK."""

import numpy as np
import pytest
from chains import random_tree, straight_chain

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine.chain_model import BoneFlags
from dq_ik_addon.engine.moving_joints_fk import GivenPose, MovingJointsFK


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
    np.testing.assert_allclose(fk.start(start, GivenPose(locations=locations)),
                               model.matrices(start, locations), atol=1e-12)
    for _ in range(3):
        moved = start.copy()
        moved[joints] = random_rotations(rng, joints.size)
        np.testing.assert_allclose(fk(moved), model.matrices(moved, locations), atol=1e-12)


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


@pytest.mark.parametrize("seed", range(5))
def test_every_bone_flag_and_scale_follows_the_full_fk(seed):
    """Bones that do not inherit rotation, use global location or inherit scale in any mode,
    with pose scales: the driven part (and the bones below joints that Blender does not pose
    rigidly on their parents) goes through Blender's parent transform; the result equals the
    full FK, the given evaluated pose being that FK."""
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, 30)
    flags = BoneFlags(rng.random(30) < 0.7, rng.random(30) < 0.7, rng.integers(0, 6, 30))
    model = ChainModel(tree.names, tree.parents, tree.rest_matrices, tree.lengths,
                       np.zeros(30, bool), flags)
    joints = np.sort(rng.choice(30, size=int(rng.integers(1, 8)), replace=False))
    locations = rng.normal(scale=0.1, size=(30, 3))
    scales = rng.uniform(0.6, 1.5, size=(30, 3))
    start = random_rotations(rng, 30)
    given = GivenPose(locations, scales, model.matrices(start, locations, scales))
    fk = MovingJointsFK(model, joints)
    np.testing.assert_allclose(fk.start(start, given), given.evaluated, atol=1e-10)
    moved = start.copy()
    moved[joints] = random_rotations(rng, joints.size)
    np.testing.assert_allclose(fk(moved), model.matrices(moved, locations, scales), atol=1e-10)


def test_a_chain_hangs_from_its_given_parent():
    """The parent of the driven part is taken as given (Blender's evaluated pose, constraints
    included), not from its channels: the chain follows it rigidly."""
    model = straight_chain(4)
    start = random_rotations(np.random.default_rng(4), 4)
    channels_fk = model.matrices(start)
    evaluated = channels_fk.copy()
    evaluated[:2, :3, 3] += [0.3, -0.2, 0.1]     # a constraint moved bones 0 and 1
    fk = MovingJointsFK(model, [2, 3])
    assert fk.hung.tolist() == [1]
    world = fk.start(start, GivenPose(evaluated=evaluated))
    np.testing.assert_allclose(world[:2], evaluated[:2], atol=1e-12)
    np.testing.assert_allclose(world[2:, :3, 3], channels_fk[2:, :3, 3] + [0.3, -0.2, 0.1],
                               atol=1e-12)


def test_riders_ride_on_their_parent_whatever_their_flags():
    """A rider (``ChainModel.riders``: placed by a constraint as a fixed transform of the bone it
    copies) keeps its start offset from its moved parent, even with flags Blender would not pose
    rigidly (inherit rotation off), and its own rotation channel is never read."""
    model = straight_chain(4)
    flags = BoneFlags(np.array([True, True, True, False]), np.ones(4, bool),
                      np.zeros(4, dtype=np.int64))
    rider = ChainModel(model.names, model.parents, model.rest_matrices, model.lengths,
                       model.connected, flags, riders=np.array([False, False, False, True]))
    assert rider.rigid[3] and not ChainModel(model.names, model.parents, model.rest_matrices,
                                             model.lengths, model.connected, flags).rigid[3]
    rng = np.random.default_rng(8)
    start = random_rotations(rng, 4)
    evaluated = rider.matrices(start)
    evaluated[3] = evaluated[2]                                      # a full copy of bone 2
    fk = MovingJointsFK(rider, [1])
    fk.start(start, GivenPose(evaluated=evaluated))
    moved = start.copy()
    moved[1] = random_rotations(rng, 1)[0]
    moved[3] = random_rotations(rng, 1)[0]                          # ignored: the constraint rules
    world = fk(moved)
    np.testing.assert_allclose(world[3], world[2], atol=1e-12)
    assert 3 not in fk.moving.tolist()


def test_a_bone_whose_local_transform_a_constraint_sets_keeps_it_as_evaluated():
    """A straight chain of five: joints 0 and 3 turn, bone 1 between them is set by a constraint
    in local space (``given_locals``): Blender's evaluated pose turns it by a fixed local
    rotation its channels do not hold. The FK takes that local transform from the evaluated
    pose, so the start is Blender's pose, and as the joints turn bone 1 keeps it: the FK is
    the full FK of channels that hold it. Without ``given_locals`` the start would differ."""
    model = straight_chain(5)
    rng = np.random.default_rng(4)
    start = random_rotations(rng, 5)
    held = start.copy()
    held[1] = random_rotations(rng, 1)[0]            # what the constraint makes of bone 1
    evaluated = model.matrices(held)
    fk = MovingJointsFK(model, [0, 3], given_locals=np.array([False, True, False, False, False]))
    np.testing.assert_allclose(fk.start(start, GivenPose(evaluated=evaluated)), evaluated,
                               atol=1e-12)
    moved = held.copy()
    moved[[0, 3]] = random_rotations(rng, 2)
    turned = start.copy()
    turned[[0, 3]] = moved[[0, 3]]
    np.testing.assert_allclose(fk(turned), model.matrices(moved), atol=1e-12)
    plain = MovingJointsFK(model, [0, 3])
    assert np.abs(plain.start(start, GivenPose(evaluated=evaluated)) - evaluated).max() > 0.1


def test_a_local_transform_is_keyed_and_one_that_translates_the_bone_is_not_taken():
    """``locals_key`` changes when the local transform a constraint sets changes (beyond float32
    noise), not otherwise; a constraint that translates the bone (which the reach bound would
    not see) leaves it to its channels."""
    model = straight_chain(5)
    rng = np.random.default_rng(5)
    held = random_rotations(rng, 5)
    fk = MovingJointsFK(model, [0, 3], given_locals=np.array([False, True, False, False, False]))
    evaluated = model.matrices(held)
    first = fk.locals_key(GivenPose(evaluated=evaluated))
    assert fk.locals_key(GivenPose(evaluated=evaluated + 1e-7)) == first
    turned = held.copy()
    turned[1] = random_rotations(rng, 1)[0]
    assert fk.locals_key(GivenPose(evaluated=model.matrices(turned))) == first + 1
    shifted = evaluated.copy()
    shifted[1:, :3, 3] += [0.0, 0.0, 0.3]            # bone 1 (and what it carries) moved
    fk.start(held, GivenPose(evaluated=shifted))
    assert fk.local_channels is None
