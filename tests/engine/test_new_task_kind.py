"""The task-kind seam: a kind defined outside the engine, in the tests alone
(``chains.PointOnPlane``), solves with the others. Nothing in the engine knows it: the solver
reads its rows through the ``TaskKind`` protocol. (``tests/blender/test_new_task_kind.py`` adds
it to the Blender side's table as well.)
"""

import os

import numpy as np
from chains import (
    PointOnPlane,
    identity_pose,
    random_pose_in_limits,
    straight_chain,
    uniform_limits,
)

from dq_ik_addon.engine.limits import limit_violation
from dq_ik_addon.engine.solver import Solver
from dq_ik_addon.engine.tasks import Position, Task

ENGINE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "dq_ik_addon", "engine")


def test_a_kind_defined_outside_the_engine_is_solved_under_priorities_and_limits():
    rng = np.random.default_rng(2)
    model = straight_chain(6, 0.4)
    limits = uniform_limits(6, swing=0.8, twist=0.4)
    world = model.matrices(random_pose_in_limits(rng, limits))
    tails = model.tails(world)
    normal = np.array([0.3, 0.2, 1.0]) / np.linalg.norm([0.3, 0.2, 1.0])
    plane = np.concatenate([normal, [normal.dot(tails[5])]])     # through a reachable tail
    tasks = [Task(Position, 2, tails[2], priority=1), Task(PointOnPlane, 5, plane, priority=2)]
    result = Solver(model, tasks, limits).solve(identity_pose(6))
    assert result.converged and result.errors.max() < 1e-5
    after = model.tails(model.matrices(result.rotations))
    assert np.linalg.norm(after[2] - tails[2]) < 1e-5
    assert abs(normal.dot(after[5]) - plane[3]) < 1e-5
    assert limit_violation(result.rotations, limits).max() <= 1e-6


def test_the_solver_names_no_task_kind():
    """The solver's modules reach tasks through ``TaskSet`` and the protocol only."""
    kinds = ("Position", "Orientation", "Aim", "SwingTwist", "swing_twist")
    for module in ("solver.py", "problem.py", "steps.py", "acceptance.py", "active_set.py",
                   "escapes.py", "pose_update.py"):
        with open(os.path.join(ENGINE, module), encoding="utf-8") as source:
            text = source.read()
        assert not [kind for kind in kinds if kind in text], module
