"""Newton's step for a chain straightening towards its reach.

Near full extension the distance of a chain's tail from its root's head o is quadratic in the
bend: r ≈ R − cθ² on a chain that turns freely (R its exact reach, ``Effectors.straight``). A
point at r* = R − cθ*² (a target out of reach, solved for just short of R; one eased in by Soft
Reach; one nearly at full reach) is then a double root of r = r*, at which Newton's iteration
converges only linearly: its step takes θ to (θ + θ*²/θ)/2, halving the bend each iteration (a
knee bent 20° took four iterations to get to the 1.6° it settles at, where a reachable target
takes one or two). In a = √(R − r) ≈ √c·θ the equation is linear, a simple root, so the step
asks the radial component of the error for ``2a (a − a*)`` instead of ``r* − r = (a − a*)(a +
a*)``: it is scaled by ``2a/(a + a*)`` (2 far from the point, 1 at it; derived here). On two
bones of equal length, r = R cos(θ/2) and a ∝ sin(θ/4), nearly linear in θ over the whole
bend. Only the step solves for these errors; the line search and the stop tests weigh the
true ones (the step's first-order prediction included), so a step that overshoots is cut as
any other. Contacts may hold a chain bent where this model does not apply: not with them.
"""

import numpy as np

from .quaternion import any_true, row_dots


def straightened(errors, tails, origins, straight):
    """``errors`` (k,3) with the radial component of each row whose chain reaches straight
    (``straight`` (k,) its reach R, 0 for none) scaled by ``2a/(a + a*)``, ``a = √(R − r)``
    at the tail (``tails``, r from the chain root's head in ``origins``) and ``a* = √(R − r*)``
    at the point solved for, ``tails + errors`` (module docstring)."""
    if not any_true(straight > 0.0):
        return errors
    tails = tails - origins
    points = errors + tails
    r, r_point = np.sqrt(row_dots(tails, tails)), np.sqrt(row_dots(points, points))
    a = np.sqrt(np.maximum(straight - r, 0.0))
    both = a + np.sqrt(np.maximum(straight - r_point, 0.0))
    scaled = (straight > 0.0) & (both > 0.0) & (r_point > 0.0)
    factor = np.where(scaled, 2.0 * a / np.where(scaled, both, 1.0), 1.0)
    unit = points / np.where(scaled, r_point, 1.0)[:, None]
    return errors + ((factor - 1.0) * row_dots(errors, unit))[:, None] * unit


def newton_levels(problem, world, errors, levels):
    """``levels`` ((J_k, e_k) per priority level) with the errors a Newton step solves for at
    ``world`` (``TaskSet.newton_errors``), or None when they are the same or there are
    contacts."""
    if problem.contacts is not None:
        return None
    wanted = problem.tasks.newton_errors(world, errors)
    return None if wanted is errors else \
        list(zip([jac for jac, _ in levels], problem.level_task_errors(wanted)))
