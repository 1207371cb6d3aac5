"""The reach bound of a chain follows its given pose: pose scale (own and inherited) and the
locations of bones that are not connected lengthen the chain, and a target the chain reaches in
that pose is met, not taken as out of reach and reported converged short of it."""

import numpy as np
import pytest
from chains import random_tree, straight_chain

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine import problem as problem_module
from dq_ik_addon.engine.bone_parent_transform import NONE
from dq_ik_addon.engine.chain_model import BoneFlags
from dq_ik_addon.engine.moving_joints_fk import GivenPose
from dq_ik_addon.engine.quaternion import qexp
from dq_ik_addon.engine.solver import Solver, SolverSettings
from dq_ik_addon.engine.tasks import Position, Task


def bent_pose(rng, n):
    """Every bone turned by up to about a radian about a random axis."""
    return qexp(0.5 * rng.normal(scale=0.6, size=(n, 3)))


def offset_chain():
    """Three 0.5 m bones along +Y, the last one not connected (its head 0.2 m past the second's
    tail at rest)."""
    model = straight_chain(3, 0.5)
    rest = model.rest_matrices.copy()
    rest[2, 1, 3] += 0.2
    return ChainModel.from_bones(model.names, model.parents, rest, lengths=model.lengths,
                                 connected=np.array([False, True, False]))


def not_inheriting_scale():
    """Three 0.5 m bones along +Y, the last one inheriting no scale (``NONE``)."""
    model = straight_chain(3, 0.5)
    flags = BoneFlags.default(3)
    flags.inherit_scale[2] = NONE
    return ChainModel(model.names, model.parents, model.rest_matrices, model.lengths,
                      model.connected, flags)


POSES = {
    "scaled": (straight_chain(3, 0.5), None, np.array([[1.0, 1.5, 1.0], [1, 1, 1], [1, 1, 1]])),
    "scaled, not inherited": (not_inheriting_scale(), None,
                              np.array([[1.0, 1.5, 1.0], [1, 1.2, 1], [1, 1, 1]])),
    "offset": (offset_chain(), np.array([[0.0, 0, 0], [0, 0, 0], [0.1, 0.4, -0.1]]), None),
}


@pytest.mark.parametrize("name", POSES)
@pytest.mark.parametrize("seed", range(8))
def test_a_target_the_posed_chain_reaches_is_met(name, seed):
    """Met, or (a parent scaled non-uniformly: the Jacobian ignores its shear, README) still
    closing in when the iterations run out; never converged or settled short of it."""
    model, locations, scales = POSES[name]
    rng = np.random.default_rng(seed)
    goal = model.tails(model.matrices(bent_pose(rng, 3), locations, scales))[2]
    start = bent_pose(rng, 3)
    result = Solver(model, [Task(Position, 2, goal)], locations=locations,
                    scales=scales).solve(start)
    reached = model.tails(model.matrices(result.rotations, locations, scales))[2]
    assert np.linalg.norm(reached - goal) == pytest.approx(result.errors[0], abs=1e-12)
    assert result.converged == (result.errors[0] < 1e-5)
    assert result.converged or (name == "scaled" and result.cut_short)


def test_the_reach_bound_follows_the_given_pose():
    """Scaled by 1.5 along its length, the first bone's hop and, inherited, the rest of the
    chain grow by as much (the bound, not the bent start's shorter distance); a new given pose
    (``hang``, what ``Solver.retarget`` calls) sets it anew."""
    problem = _problem(straight_chain(3, 0.5), [Task(Position, 2, (0.0, 5.0, 0.0))])
    assert problem.chain_reach == pytest.approx([1.5])
    scales = np.ones((3, 3))
    scales[0] = (1.0, 1.5, 1.0)
    problem.hang(GivenPose.of(problem.bones, None, scales, None))
    assert problem.chain_reach == pytest.approx([2.25])
    problem.hang(GivenPose.of(problem.bones, None, None, None))
    assert problem.chain_reach == pytest.approx([1.5])


def _problem(model, tasks, locations=None, scales=None):
    """The ``Problem`` a ``Solver`` of ``tasks`` builds, hung from the given pose."""
    problem = problem_module.Problem(model, tasks, None, None, SolverSettings(), None, None,
                                     None, False)
    problem.hang(GivenPose.of(problem.bones, locations, scales, None))
    return problem


@pytest.mark.parametrize("seed", range(6))
def test_no_pose_of_the_joints_reaches_beyond_the_bound(seed):
    """Random trees with every inherit flag, non-uniform pose scales and locations: the tail of
    each task's bone stays within the bound of its chain root's head in random poses."""
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, 12)
    flags = BoneFlags(rng.random(12) < 0.8, rng.random(12) < 0.7, rng.integers(0, 6, 12))
    model = ChainModel(tree.names, tree.parents, tree.rest_matrices, tree.lengths,
                       rng.random(12) < 0.3, flags)
    scales = rng.uniform(0.5, 1.6, (12, 3))
    locations = rng.normal(scale=0.2, size=(12, 3))
    tasks = [Task(Position, int(bone), (0.0, 0.0, 0.0), chain_count=int(rng.integers(0, 4)))
             for bone in rng.choice(12, 4, replace=False)]
    problem = _problem(model, tasks, locations, scales)
    roots, bones = problem.bones[problem.chain_roots], problem.bones[problem.tasks.bones]
    for _ in range(50):
        world = model.matrices(qexp(0.5 * rng.normal(scale=1.5, size=(12, 3))), locations,
                               scales)
        reached = np.linalg.norm(model.tails(world)[bones] - world[roots, :3, 3], axis=1)
        assert np.all(reached <= problem.chain_reach * (1.0 + 1e-9))
