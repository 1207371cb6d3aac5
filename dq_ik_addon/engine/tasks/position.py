"""Position task: the bone's tail onto a target point.

``e = t − p`` with p the tail (armature space); its Jacobian column for joint axis a_jk about the
head c_j is ``a_jk × (p − c_j)`` (Baerlocher Table 4.1; ``jacobian.task_jacobian``), and its
second-order change under a step is ``jacobian.second_order_motion``'s positional term.

A target farther from its chain's root head o than the chain's reach R (``Effectors.reach``, an
upper bound in the given pose, pose scale and bone locations included: ``reach_bound``) is
solved for as the point ``o + A (t − o)/‖t − o‖`` instead (``Effectors.aim``: A just short of R
on a chain whose joints turn freely, just past it elsewhere, ``TaskSet.set_reach``): the clamped error of Buss and Kim
(Selectively damped least squares, 2005, §3) and Baerlocher's clamp of the task increment
(§4.4, §5.2), taken on the target's distance from the chain, so that a target out of reach pulls
its chain the same way wherever it lies along a direction from it (10 m, 1 km or 10,000 km), and
its error weighs in its level as a target just out of reach does, not a thousand times more.
On a chain of one bone, whose tail stays at the distance R from its head, every target is taken
on that sphere (A = R, nearer targets too): the closest point it reaches; and the error is the
arc to it along the sphere (``_along_the_sphere``). Reports give the true distance.

With a soft width s > 0 (``SolverSettings.soft_reach``, chains that slide no bone; A is then just
short of R on limited chains too, which settle at a compromise with the eased point where their
limits keep them from it), a
target beyond ``A − s`` is solved for at the distance ``A − s·exp(−(d − (A − s))/s)`` instead, which
meets ``d`` with its slope at ``A − s`` and nears A without reaching it: soft IK (A. Nicholas,
"Soft IK", 2009), so that a limb near full extension eases out instead of snapping straight when
its target crosses the reach.

Near full extension a Newton step solves for the radial error scaled as ``straightening``
explains (``newton_errors``).
"""

import numpy as np

from ..jacobian import second_order_motion, task_jacobian
from ..quaternion import any_true, row_dots
from ..straightening import straightened
from .kind import TaskKind


class Position(TaskKind):
    """Tails onto target points (k,3), in metres."""

    reaches_point = True

    def errors(self, effectors):
        return toward(self.targets, effectors) - effectors.tails

    def jacobian(self, frame, effectors, mask):
        return task_jacobian(frame, effectors.tails, mask, False,
                             self.kept(effectors))[0]

    def second_order(self, motion, effectors, errors):
        return second_order_motion(motion.frame, effectors.tails, motion.delta, motion.chain,
                                   motion.ancestors)[0]

    def newton_errors(self, effectors, errors):
        """``straightened`` errors on chains that reach straight; a loop's partner moves with the
        solve: its errors as they are."""
        if effectors.straight is None or not self.reaches_point:
            return errors
        return straightened(errors, effectors.tails, effectors.origins, effectors.straight)


def toward(targets, effectors):
    """(k,3) the points the solve takes for ``targets``: a target beyond its chain's reach
    brought in along its direction from the chain's root (``Effectors.reach``, ``aim``), eased
    in over the soft width (module docstring); on a chain of one bone, the tail plus the arc to
    that point on its sphere (``_along_the_sphere``)."""
    if effectors.reach is None:
        return targets
    offset = targets - effectors.origins
    distance = np.sqrt(row_dots(offset, offset))
    soft, aim = effectors.soft, effectors.aim
    start = np.where(soft > 0.0, aim - soft, effectors.reach)
    far = distance > start
    if not any_true(far):
        return targets
    eased = aim - soft * np.exp(-np.maximum(distance - start, 0.0) / np.maximum(soft, 1e-300))
    scale = np.where(soft > 0.0, eased, aim) / np.where(far, distance, 1.0)
    points = np.where(far[:, None], effectors.origins + offset * scale[:, None], targets)
    exact = far & (effectors.reach == 0.0) & (aim > 0.0)
    if any_true(exact):
        points[exact] = _along_the_sphere(points[exact], effectors.tails[exact],
                                          effectors.origins[exact])
    return points


def _along_the_sphere(points, tails, origins):
    """The tails plus the arcs to ``points`` on the spheres about ``origins`` they lie on,
    ``r θ t̂`` along the great circles' tangents at the tails (k,3): the shortest arc, as an
    orientation task's error is. Its length grows up to πr as the point goes round behind the
    bone, where the chord ``p − t`` lies along the bone and out of the Jacobian's range, so
    that a chain of one bone pointing away from its target turns round instead of stalling;
    near the point the two agree to first order."""
    radial, wanted = tails - origins, points - origins
    radius = np.sqrt(row_dots(radial, radial))
    unit = radial / radius[:, None]
    direction = wanted / np.sqrt(row_dots(wanted, wanted))[:, None]
    cosine = row_dots(unit, direction)
    across = direction - cosine[:, None] * unit
    sine = np.sqrt(row_dots(across, across))
    # right behind the bone any direction across it is the shortest way round: the one of
    # least |component| of the axis
    other = np.eye(3)[np.argmin(np.abs(unit), axis=1)]
    fallback = np.cross(unit, other)
    tangent = np.where((sine > 1e-12)[:, None], across / np.maximum(sine, 1e-300)[:, None],
                       fallback / np.sqrt(row_dots(fallback, fallback))[:, None])
    return tails + (radius * np.arctan2(sine, cosine))[:, None] * tangent
