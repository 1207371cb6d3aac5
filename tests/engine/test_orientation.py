"""The orientation task kind: its error turns the short way."""

import numpy as np
from chains import identity_pose, straight_chain

from dq_ik_addon.engine.tasks import Orientation, Task, TaskSet


def test_orientation_error_takes_the_short_way():
    model = straight_chain(2)
    target = np.array([np.cos(0.2), 0.0, 0.0, np.sin(0.2)])
    for sign in (1.0, -1.0):
        tasks = TaskSet(model, [Task(Orientation, 1, sign * target)])
        rotation, = tasks.errors(model.matrices(identity_pose(2)))
        assert np.allclose(rotation[0], [0, 0, 0.4])
