"""``kept_rotations``: a keeper of influence w takes ``R (Rᵀ R_s)^w``, its rotation slerped
towards its source's along the shorter arc."""

import numpy as np
import pytest

from dq_ik_addon.engine.kept_rotations import slerp
from dq_ik_addon.engine.quaternion import (
    qcanonical,
    qconj,
    qexp,
    qlog,
    qmul,
    qnormalize,
    quat_from_rotvec,
)


@pytest.mark.parametrize("angle", [2.5, 1.0, 1e-3, 1e-7, 1e-9, 0.0])
def test_slerp_is_the_weighted_power_of_the_relative_rotation(angle):
    """``a exp(w log(a* b))`` with ``a* b`` canonical (either sign of b), to rounding, from
    2.5 rad down to none (the chord below 1e-6 rad); w = 0 gives a, w = 1 gives ±b."""
    rng = np.random.default_rng(3)
    a = qnormalize(rng.normal(size=(50, 4)))
    axes = rng.normal(size=(50, 3))
    turn = quat_from_rotvec(angle * axes / np.linalg.norm(axes, axis=1, keepdims=True))
    b = qmul(a, turn) * np.where(rng.random(50) < 0.5, -1.0, 1.0)[:, None]
    weights = rng.random(50)
    expected = qmul(a, qexp(weights[:, None] * qlog(qcanonical(qmul(qconj(a), b)))))
    got = slerp(a, b, weights)
    assert np.abs(qcanonical(got) - qcanonical(expected)).max() <= 1e-12
    assert np.abs(slerp(a, b, np.zeros(50)) - a).max() <= 1e-12
    assert np.abs(qcanonical(slerp(a, b, np.ones(50))) - qcanonical(b)).max() <= 1e-12
