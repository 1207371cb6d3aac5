"""Loop tasks (``tasks.loop``): a bone held on another bone of the same model while that one
follows its own target, under priorities and limits; the shared ancestors are not the loop's."""

import numpy as np
import pytest

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine.quaternion import matrix_to_quat, qexp
from dq_ik_addon.engine.solver import Solver
from dq_ik_addon.engine.tasks import Loop, LoopOrientation, Orientation, Position, Task
from dq_ik_addon.engine.tasks.task import joint_masks


def two_arms():
    """A spine (0) with two three-bone arms, left 1–3 along +X, right 4–6 along −X."""
    parents = np.array([-1, 0, 1, 2, 0, 4, 5])
    rest = np.tile(np.eye(4), (7, 1, 1))
    rest[0, :3, 3] = (0.0, 0.0, 0.0)
    for first, sign in ((1, 1.0), (4, -1.0)):
        for k in range(3):
            rotation = np.array([[0.0, sign, 0.0], [-sign, 0.0, 0.0], [0.0, 0.0, 1.0]])
            rest[first + k, :3, :3] = rotation          # the bone's +Y along ±X
            rest[first + k, :3, 3] = (sign * 0.3 * k, 1.0, 0.0)
    lengths = np.array([1.0, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3])
    connected = np.array([False, False, True, True, False, True, True])
    return ChainModel.from_bones([f"b{i}" for i in range(7)], parents, rest, lengths=lengths,
                                 connected=connected)


def test_the_loop_moves_neither_the_partner_nor_the_shared_ancestors():
    model = two_arms()
    masks = joint_masks(model, [Task(Loop, 3, (), chain_count=0, partner=6)])
    assert masks[0].tolist() == [False, True, True, True, False, False, False]


@pytest.mark.parametrize("rotation", [False, True])
def test_two_hands_on_one_stick(rotation):
    """The right hand follows its target (priority 1, spine and right arm); the left hand's tail
    is held on the right hand's head (priority 2), with its rotation too when asked. (No
    limits: from arms spread straight, the left arm folds across the chest.)"""
    model = two_arms()
    goal = np.array([-0.2, 1.5, 0.4])
    tasks = [Task(Position, 6, goal, priority=1, chain_count=0),
             Task(Loop, 3, (), priority=2, chain_count=0, partner=6)]
    if rotation:
        tasks.append(Task(LoopOrientation, 3, (), priority=2, chain_count=0, partner=6))
    result = Solver(model, tasks).solve(np.tile([1.0, 0.0, 0.0, 0.0], (7, 1)))
    assert result.converged and result.errors.max() < 1e-5
    world = model.matrices(result.rotations)
    tails = model.tails(world)
    assert np.linalg.norm(tails[6] - goal) < 1e-5
    assert np.linalg.norm(tails[3] - world[6, :3, 3]) < 1e-4
    if rotation:
        q = matrix_to_quat(world[[3, 6], :3, :3])
        assert min(np.linalg.norm(q[0] - q[1]), np.linalg.norm(q[0] + q[1])) < 1e-4


def test_a_loop_has_no_target_of_its_own():
    model = two_arms()
    solver = Solver(model, [Task(Position, 6, (-0.2, 1.5, 0.4), chain_count=3),
                            Task(Loop, 3, (), chain_count=3, partner=6),
                            Task(Orientation, 0, qexp(np.zeros(3)), chain_count=1)])
    solver.retarget([(-0.1, 1.4, 0.3), (), (1.0, 0.0, 0.0, 0.0)])
    result = solver.solve(np.tile([1.0, 0.0, 0.0, 0.0], (7, 1)))
    tails = model.tails(model.matrices(result.rotations))
    assert np.linalg.norm(tails[6] - (-0.1, 1.4, 0.3)) < 1e-5
