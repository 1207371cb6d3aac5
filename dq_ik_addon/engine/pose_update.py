"""The joint update of a step: ``q ← exp(½Δθ) ⊗ q``, keeping joints on the limits they rest on.

Joints turn by the left update (Bartelink §4.3), except the limited joints the step holds on a
limit (an active limit row, ``held``): those move their limit parameters, ``p ← p + S Δθ``
(``S = ∂p/∂Δθ`` at the step's pose, the same motion to first order), so the bounds they rest on,
linear in p, hold exactly; ``JointLimits.retraction`` then clamps what is left outside. Only
what is still outside goes through the projection (Baerlocher §3.7.2), usually nothing: a joint
on a limit no longer drifts off it by the exponential map's second-order terms.
"""

import numpy as np

from .quaternion import all_true, qcanonical, qexp, qmul


def turned(q, delta):
    """``exp(½Δθ) ⊗ q`` with ``w ≥ 0``: a product of unit quaternions, unit to rounding (every
    consumer is scale-invariant or normalizes: FK's ``quat_to_matrix``, the homogeneous
    swing/twist terms, the solve's start)."""
    return qcanonical(qmul(qexp(0.5 * delta), q))


class PoseUpdate:
    """Applies steps to the rotations of a solve's joints under its ``JointLimits`` (or none),
    and to the locations of its ``slides`` sliding bones (the last rows of the state, ``slides``
    module: ``l ← l + Δl``, unlimited).

    The step that is being tried sets ``held`` (its active limit rows, None: none) and
    ``tangent`` (every joint's parameters and S at its pose)."""

    def __init__(self, joints, limits, slides=0):
        self.joints, self.limits, self.slides = joints, limits, slides
        self.held = None
        self.tangent = None
        # (rotations, every joint's parameters, S or None) of the last update: the next limit
        # rows or chord at that very pose (the next iteration's, or the next solve's)
        self.terms = None
        self._held_for = None  # (the step's active limit rows, {every: ``_held_joints``})
        self._every_joint = np.arange(joints.size)

    def __call__(self, rotations, step, scale, current_parameters=False):
        """The state ``rotations`` after the step ``scale · step`` (``_turned``; the slides
        move by their part of it)."""
        delta = (scale * step).reshape(-1, 3)
        turning = self.joints.size
        new = self._turned(rotations, delta[:turning], current_parameters)
        if self.slides:
            new[-self.slides:, 1:] += delta[turning:]
        return new

    def _turned(self, rotations, delta, current_parameters):
        """``rotations`` after the joints' step ``delta`` (m,3), inside the limits. With
        ``current_parameters`` (a chord step, from a pose after this iteration's) p is evaluated
        at ``rotations``, and every joint moves by its parameters (an unlimited joint's ranges
        are open): a chord step is tiny, so the two motions differ by nothing it would notice,
        and the new pose's parameters are then known and inside the limits, with none to
        recompute and nothing to project."""
        new = rotations.copy()
        joints, limits = self.joints, self.limits
        if limits is None:
            new[joints] = turned(rotations.take(joints, axis=0), delta)
            return new
        held, params, sens, retract = self._held_joints(every=current_parameters)
        every = 0 < held.size == joints.size
        if held.size:
            if current_parameters:
                params = self.joint_terms(rotations, sensitivities=False)[0].take(held, axis=0)
            along = delta if every else delta.take(held, axis=0)
            turned_held, retracted = retract(params + np.einsum('kij,kj->ki', sens, along))
        if every:
            moved = turned_held
            if current_parameters:      # every joint is inside its limits: nothing to project
                new[joints] = moved
                self.terms = (new, retracted, None)
                return new
        else:
            moved = turned(rotations.take(joints, axis=0), delta)
            if held.size:
                moved[held] = turned_held
        # every joint's parameters at the new pose serve the projection's inside test and, if the
        # pose is kept as it is, the next limit rows or chord step
        params = limits.parameters(moved)
        projected = limits.project(moved, params)
        new[joints] = projected
        self.terms = (new, params, None) if projected is moved else None
        return new

    def joint_terms(self, rotations, sensitivities=True):
        """``(params, S)`` of every joint at ``rotations`` (S is None unless ``sensitivities``):
        the parameters the last update found when it made this very pose, and S once computed
        there (a trial whose pose a chord step or the tolerance ends on needs none), else
        computed."""
        known = self.terms
        here = known is not None and known[0] is rotations
        if here and (known[2] is not None or not sensitivities):
            return known[1], known[2]
        joint_rotations = rotations.take(self.joints, axis=0)
        if not sensitivities:
            return self.limits.parameters(joint_rotations), None
        terms = self.limits.terms(joint_rotations)
        if here:
            self.terms = (rotations, *terms)
        return terms

    def _held_joints(self, every=False):
        """``(held, params, S, retract)`` of this step: the joints (indices into ``joints``) with
        a limit row active at the end of the step (``every``: all joints) whose parameters can
        carry it (``JointLimits.tracks_parameters``); their parameters and S at the step's pose
        (``tangent``); and their retraction. Computed once per step, for every update."""
        rows = self.held
        if self._held_for is None or self._held_for[0] is not rows:     # a new step
            self._held_for = (rows, {})
        known = self._held_for[1]
        if every in known:
            return known[every]
        if rows is None:
            known[every] = (np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3, 3)), None)
            return known[every]
        params, sens = self.tangent
        held = np.zeros(self.joints.size, bool)
        if every:
            held[:] = True
        else:
            held[self.limits.row_joint[rows]] = True
        held &= self.limits.tracks_parameters(params)
        if all_true(held):      # every joint (a chord step, as a rule): no subsets to take
            every_joint = self._every_joint
            known[every] = (every_joint, params, sens, self.limits.retraction(every_joint))
            return known[every]
        held = held.nonzero()[0]
        known[every] = (held, params.take(held, axis=0), sens.take(held, axis=0),
                        self.limits.retraction(held))
        return known[every]
