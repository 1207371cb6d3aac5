"""One-parameter joints (``limits.swing_twist_rows.turning_axes``): a joint whose limits lock
every swing/twist parameter but one turns about that parameter's axis alone."""

import numpy as np
import pytest
from chains import identity_pose, random_pose_in_limits, straight_chain, uniform_limits

from dq_ik_addon.engine.limits import SwingTwistLimits, limit_violation
from dq_ik_addon.engine.limits.swing_twist_rows import turning_axes
from dq_ik_addon.engine.solver import solve
from dq_ik_addon.engine.swing_twist import swing_twist_params
from dq_ik_addon.engine.tasks import Position, Task

_ONE_FREE = {"swing_x": (("swing_z", "twist"), 0), "swing_z": (("swing_x", "twist"), 1),
             "twist": (("swing_x", "swing_z"), 2)}


@pytest.mark.parametrize("free", sorted(_ONE_FREE))
def test_single_axis_joints_stay_on_their_axis_while_the_chain_reaches(free):
    """Joints whose limits lock every swing/twist parameter but one (a knee: side swing and twist
    locked) turn about that parameter's axis alone (``turning_axes``: their other two columns are
    zeroed); the chain still reaches FK targets made inside the limits."""
    rng = np.random.default_rng(4)
    model = straight_chain(4, 0.5)
    limits = uniform_limits(4, swing=0.8, twist=0.5)
    single = np.array([False, True, False, True])
    locked, kept = _ONE_FREE[free]
    for name in locked:
        getattr(limits, name + "_min")[single] = 0.0
        getattr(limits, name + "_max")[single] = 0.0
    getattr(limits, free + "_min")[single] = -0.05
    getattr(limits, free + "_max")[single] = 1.2
    for _ in range(20):
        truth = random_pose_in_limits(rng, limits)
        goal = model.tails(model.matrices(truth))[3]
        result = solve(model, identity_pose(4), [Task(Position, 3, goal)], limits=limits)
        assert result.errors[0] <= 1e-4
        params = np.array(swing_twist_params(result.rotations[single]))
        assert np.abs(np.delete(params, kept, axis=0)).max() <= 1e-9
        assert limit_violation(result.rotations, limits).max() <= 1e-6


def test_turning_axes_zero_the_locked_axes_of_one_parameter_joints():
    #            knee (s_x)  s_z only   twist only  locked    two free   disabled knee
    low = np.array([[-0.1, 0.0, 0.0, 0.0, 0.0, -0.1],       # swing_x_min
                    [0.0, -0.5, 0.0, 0.0, 0.0, 0.0],        # swing_z_min
                    [0.0, 0.0, -1.0, 0.0, -1.0, 0.0]])      # twist_min
    high = np.array([[2.0, 0.0, 0.0, 0.0, 0.5, 2.0],
                     [0.0, 0.5, 0.0, 0.0, 0.0, 0.0],
                     [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]])
    limits = SwingTwistLimits(low[0], high[0], low[1], high[1], low[2], high[2],
                              np.array([True] * 5 + [False]))
    np.testing.assert_array_equal(turning_axes(limits), [[1, 0, 0], [0, 0, 1], [0, 1, 0],
                                                         [0, 0, 0], [1, 1, 1], [1, 1, 1]])
