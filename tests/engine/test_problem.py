"""What ``problem`` builds a solve from: damping, step clamps and contact bands as fractions of
the chain size (a scaled rig solves alike), and joint columns weighed by stiffness."""

import numpy as np
import pytest
from chains import identity_pose, random_pose_in_limits, straight_chain, uniform_limits

from dq_ik_addon.engine.solver import SolverSettings, solve
from dq_ik_addon.engine.tasks import Position, Task


@pytest.mark.parametrize("reach", [0.0, 1.3])
def test_a_scaled_rig_is_solved_with_the_same_rotations(reach):
    """Damping, step clamps and contact bands are fractions of the chain size: a rig and its
    target 100 times larger (with the tolerance, in metres, 100 times larger) give the same
    rotations, iteration for iteration; for a target in reach (FK of an in-limit pose) and for one
    1.3 times the chain's length away, where the stretched chain is near singular and damped."""
    limits = uniform_limits(5)
    pose = random_pose_in_limits(np.random.default_rng(12), limits)
    results = []
    for scale in (1.0, 100.0):
        model = straight_chain(5, length=scale)
        goal = model.tails(model.matrices(pose))[4]
        if reach:
            goal = goal / np.linalg.norm(goal) * reach * 5 * scale
        results.append(solve(model, identity_pose(5), [Task(Position, 4, goal)], limits=limits,
                             settings=SolverSettings(tolerance=1e-5 * scale, max_iterations=200)))
    small, large = results
    assert reach or (small.errors[0] < 1e-5 and large.errors[0] < 1e-3)
    assert small.iterations == large.iterations
    np.testing.assert_allclose(small.rotations, large.rotations, atol=1e-9)


def test_stiffness_one_locks_and_stiffer_moves_less():
    model = straight_chain(3)
    goal = np.array([1.0, 2.0, 0.5])
    locked = solve(model, identity_pose(3), [Task(Position, 2, goal)], stiffness=[1.0, 0.0, 0.0])
    assert np.allclose(locked.rotations[0], [1, 0, 0, 0])
    soft = solve(model, identity_pose(3), [Task(Position, 2, goal)], stiffness=[0.0, 0.0, 0.0])
    stiff = solve(model, identity_pose(3), [Task(Position, 2, goal)], stiffness=[0.9, 0.0, 0.0])
    angle = lambda q: 2 * np.arccos(min(1.0, abs(q[0])))
    assert angle(stiff.rotations[0]) < angle(soft.rotations[0])
    assert stiff.errors[0] < 1e-5
