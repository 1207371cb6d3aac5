"""A chain straightening towards its reach: the radial error a Newton step solves for is taken in
the square root of the shortfall (``straightening``), so a target out of reach, or one at the
edge of it, is met in as few iterations as one well inside."""

import numpy as np
import pytest
from chains import straight_chain

from dq_ik_addon.engine.quaternion import qexp
from dq_ik_addon.engine.solver import Solver, SolverSettings
from dq_ik_addon.engine.straightening import straightened
from dq_ik_addon.engine.tasks import Position, Task


def test_the_radial_error_asks_for_the_newton_step_in_the_square_root_of_the_shortfall():
    """The component along the radius to the point scaled by ``2a/(a + a*)``, ``a = √(R − r)``,
    ``a* = √(R − r*)`` (along it, ``r* − r`` becomes ``2a (a − a*)``); the components across it
    as they were; rows of chains that do not reach straight unchanged."""
    rng = np.random.default_rng(3)
    origins, reach = rng.normal(size=(6, 3)), np.array([2.0, 1.5, 1.0, 2.0, 0.0, 1.2])
    tails = origins + rng.normal(size=(6, 3)) * 0.3
    errors = rng.normal(size=(6, 3)) * 0.2
    out = straightened(errors, tails, origins, reach)
    points = tails + errors - origins
    unit = points / np.linalg.norm(points, axis=1)[:, None]
    r, r_point = np.linalg.norm(tails - origins, axis=1), np.linalg.norm(points, axis=1)
    a, a_point = np.sqrt(np.maximum(reach - r, 0.0)), np.sqrt(np.maximum(reach - r_point, 0.0))
    radial = np.einsum("ij,ij->i", out, unit)
    across = out - radial[:, None] * unit
    kept = reach > 0.0
    factor = 2.0 * a[kept] / (a + a_point)[kept]
    assert np.allclose(radial[kept], factor * np.einsum("ij,ij->i", errors, unit)[kept])
    assert np.allclose(across, errors - np.einsum("ij,ij->i", errors, unit)[:, None] * unit)
    assert np.array_equal(out[~kept], errors[~kept])


def bent(chain_bones, bend):
    """A chain of ``chain_bones`` along +Y with every joint but the root's bent ``bend`` radians
    about X (a knee, an elbow)."""
    half = np.zeros((chain_bones, 3))
    half[1:, 0] = bend / 2.0
    return qexp(half)


@pytest.mark.parametrize("bones", [2, 3])
@pytest.mark.parametrize("bend", [0.35, 0.7, 1.4])
def test_a_bent_limb_reaching_for_a_target_out_of_reach_straightens_in_a_few_iterations(
        bones, bend):
    """A limb bent 20-80° with a target beyond its reach straight ahead ends straight towards it,
    as close as it reaches (within the tolerance of the point just short of its reach it is
    solved for), in at most six iterations (it took 6-11: Newton's step halves the bend at a
    double root); off its line it ends as close too."""
    length, settings = 0.5, SolverSettings()
    reach = bones * length
    for direction in ((0.0, 1.0, 0.0), (0.6, 0.8, 0.0), (0.0, 0.6, -0.8)):
        goal = np.array(direction) * 1.3 * reach
        result = Solver(straight_chain(bones, length), [Task(Position, bones - 1, goal)],
                        settings=settings).solve(bent(bones, bend))
        assert not result.converged
        assert result.errors[0] == pytest.approx(0.3 * reach, abs=2e-4 * reach)
        if direction[1] == 1.0:
            assert result.iterations <= 6
