"""Escapes: a new start for tasks stalled short of a target their chain can reach.

Joint-limited IK has local minima (a knee bent backwards onto its hyperextension limit; a
straight chain asked to fold, which the Jacobian cannot see, Baerlocher §4.5.6; hips turned
half round, the hands reaching behind). For every such task, limited joints of its chain move
into their ranges (``JointLimits.escape_start``, each attempt to a different aim), unlimited ones
turn towards rest, halfway or all the way on alternate attempts (a free root carries the whole
body into the wrong basin), and unlimited joints of a straight chain bend by ``_UNFOLD_ANGLE``
about local X. These are random restarts in all but name after the first few (Baerlocher §4.5.6
on local minima): up to ``ATTEMPTS``, each ended early when it cannot beat the best pose
(``acceptance.hopeless``), and none after ``RETURNS`` of them fell back into the compromise they
escaped from (``Stalls``), and the result takes each part of the tasks (limbs that share no
moved joint) from the stall where it was best.

A chain of one bone (``reach_bound``'s exact reach) takes every target on its sphere: turning
freely it reaches it, and stalled pointing away it escapes as from any other local minimum;
under limits it reaches a part of the sphere, and a target off that part is a compromise, its
closest point on the edge of the range, which no escape improves.

A group of tasks with a target out of its chain's reach cannot be met: its tasks settle at
their weighted compromise, the chain stretched towards that target, and are not escaped from.
An escape restarts from inside the ranges, so escaping there would make a target dragged beyond
reach jump between compromises and cost every escape at every step. A group is the tasks of one
level linked through the joints they move (``Problem._groups``): a hand dragged beyond reach on
its own arm leaves the other arm of its level free to escape, while with chains to the root
both hands share the spine and settle together.

Before a fresh solve's first step, ``folded_start`` swings the hinges of the chains of unmet
targets within reach a little towards the centre of their ranges, so a nearly straight knee or
elbow starts bent the way it bends (the first escape's move, made small and in advance); and
``kept_start`` keeps the given start when what the solve finds from there is no better.
"""

import numpy as np

from .acceptance import better, compare_levels
from .independent_parts import PartBests
from .quaternion import qcanonical, qexp, qlog, qmul

ATTEMPTS = 16  # escapes per solve: 10 left 1 of 400 random problems on the 159-bone rig unsolved
# ... while a balance holds: 16 gave 1985 mm short over 16 far reaches on the metarigs, 4 gave
# 2136 (none: 3895) and bakes them at 15 frames/s instead of 8 (none: 22)
HELD_ATTEMPTS = 4
# Escapes end once this many of them have stalled on the compromise they escaped from
# (``Stalls``): at 2, three of 300 reachable problems on two-bone limbs under the HUMANOID
# limits were left short, their escapes stopped before the one that meets them
RETURNS = 3
# A solve that remembers its result (a frame change, a bake) does not restart a task within this
# fraction of the model's size L (``Problem.size``; radians for an angular task) of its target:
# nearly met, it stalled with the others, not in a local minimum of its own
NEAR = 1e-4
_UNFOLD_ANGLE = 0.15  # radians: enough for the Jacobian to see a fold, small beside any range
_STRAIGHT_COSINE = np.cos(np.radians(2.0))  # a chain within 2° of straight is straight
# A warm solve escapes again after futile escapes once an unmet task is this fraction closer
_FUTILE_CLOSER = 0.5
# A target this fraction of the model's size from its tail, or farther, folds its chain whole;
# a nearer one folds it in proportion (``folded_start``: a start near its targets, the last
# frame's result or a pose the user set, is barely moved, and the fold grows with the error
# without a step that would make nearby targets end in other poses)
_FOLD_FULL = 0.1


def escape(problem, q, world, errors, attempt, settled_near=False):
    """The rotations to restart from for the ``attempt``-th escape at the stalled pose ``q``
    (FK ``world``, task errors ``errors``), or None when nothing can escape: a contact holds the
    pose, or no unmet task is within its chain's reach. A balance holding the centre of mass on
    its polygon's edge allows ``HELD_ATTEMPTS``: a body leaning the wrong way (the arm out
    sideways, the hips barely moved) is a local minimum too, and a restart may lean it better
    (a hand 1.1 m forward of the human metarig: 457 mm short without, 207 with), but most
    such stalls are the compromise itself, which every frame of a bake would pay again.
    With ``settled_near`` (a solve that remembers its result: a frame change, a bake), a task
    within ``NEAR`` × L of its target is not restarted (joints it shares with a stalled task
    still move): a whole solve stalled at a target out of reach restarted the nearly met hand
    of another limb from inside its ranges, 345 mm off and a 98° turn from one frame to the
    next on the mocap benchmark under the HUMANOID limits."""
    tasks, tol = problem.tasks, problem.settings.tolerance
    if problem.contacts is not None and problem.contacts.touching(world) or (
            attempt >= HELD_ATTEMPTS and tasks.holding(world)):
        return None  # held by an obstacle, or by a balance past a few restarts
    tails = tasks.tails(world)
    root_heads = world[problem.chain_roots, :3, 3]
    distance = np.linalg.norm(tasks.goals() - root_heads, axis=1)
    norms = tasks.norms(errors)
    unmet = norms >= problem.settings.task_tolerance(tasks.angular)
    if settled_near:
        unmet &= norms >= NEAR * np.where(tasks.angular, 1.0, problem.size)
    out_of_reach = tasks.reaches_point & np.where(
        problem.exact_reach, ~problem.free_chains, distance >= problem.chain_reach - tol)
    groups = problem.group_sums
    compromised = (groups.dot(out_of_reach) > 0.0).dot(groups) > 0.0
    stalled = unmet & ~compromised
    if not stalled.any():
        return None
    joints = problem.joints
    moved = tasks.joint_masks[stalled].any(axis=0)[joints]
    reach = tails - root_heads
    alignment = np.einsum('tj,tk,jk->tj', tasks.joint_masks.astype(float), reach,
                          world[:, :3, 1])
    straight = np.all(~tasks.joint_masks | (alignment >= _STRAIGHT_COSINE
                                            * np.linalg.norm(reach, axis=1)[:, None]), axis=1)
    bend = tasks.joint_masks[stalled & straight].any(axis=0)[joints]
    new = q.copy()
    delta = np.zeros((joints.size, 3))
    delta[:, 0] = np.where(bend, _UNFOLD_ANGLE, 0.0)
    new[joints] = qcanonical(qmul(qexp(0.5 * delta), q[joints]))
    free = moved if problem.limits is None else moved & ~problem.limits.limited
    if free.any():      # q^(1 − f): a fraction f of the way back to rest
        kept = 0.5 if attempt % 2 == 0 else 0.0
        new[joints[free]] = qcanonical(qexp(kept * qlog(qcanonical(new[joints[free]]))))
    if problem.limits is not None:
        new[joints] = problem.limits.escape_start(new[joints], moved, attempt)
    return new if not np.array_equal(new, q) else None


def folded_start(problem, q, world, measure):
    """``(q, world, unfolded)``: the start ``q`` of a solve (its FK ``world``), or, when the
    chains of position tasks it does not meet, with targets within reach, hold hinges (a knee,
    an elbow: one swing axis locked) or joints resting on a swing bound, the start with those
    swung a little towards the centre of their ranges (``JointLimits.fold_start``) and its FK;
    ``unfolded``: then the given start's state (``measure``'s), else None (``kept_start``).
    From the rest pose under the HUMANOID limits a knee or an elbow is nearly straight, and the
    first steps could as well straighten it on towards its hyperextension bound, where the
    descent crept and escaped (every frame of a keyed-target playback on limb chains), and
    neighbouring frames escaped into other poses; started bent a little the way the range
    bends, the limb meets its target directly, bent the same way on every frame. Every unmet
    task is taken, not only those nearer than the tip: a threshold on the distance made the
    targets crossing it jump between poses."""
    limits, tasks, tol = problem.limits, problem.tasks, problem.settings.tolerance
    if limits is None:
        return q, world, None
    goals = tasks.goals()
    roots = world[problem.chain_roots, :3, 3]
    beyond = np.where(problem.exact_reach, ~problem.free_chains,
                      np.linalg.norm(goals - roots, axis=1) >= problem.chain_reach - tol)
    error = np.linalg.norm(goals - tasks.tails(world), axis=1)
    folding = tasks.reaches_point & ~beyond & (error > tol)
    share = np.where(folding, np.minimum(1.0, error / (_FOLD_FULL * problem.size)), 0.0)
    joints = problem.joints
    folded = None if not folding.any() else limits.fold_start(
        q[joints], (tasks.joint_masks * share[:, None]).max(axis=0)[joints])
    if folded is None:
        return q, world, None
    start = q.copy()
    start[joints] = folded
    return start, problem.fk(start), measure(q, world)


def kept_start(problem, best, unfolded, tolerance):
    """The best state of a solve from a folded start (``folded_start``), or the start it was
    folded from, ``unfolded``, when that solve neither met every task nor beat it by more than
    the ``tolerance`` in priority order: a start that was already the closest reachable pose
    (a bake played back with its tasks on, a result solved again) stays where it is, instead of
    ending at another compromise as good (limbs turned up to 114° on a played-back bake)."""
    if unfolded is None or problem.converged(best[2], best[3]) \
            or better(best[3], unfolded[3], tolerance, tolerance):
        return best
    return unfolded


class Stalls:
    """What the stalls of one solve found, for its escapes and its result.

    - Returns: the escapes that found the compromise they escaped from again, their descent stalled
      with the level errors of the best state before them, within a tenth of the tolerance, having
      found nothing better on the way. Random restarts that keep falling back into one pose say it
      is the closest reachable (Baerlocher §4.5.6: restarts end when they stop finding better
      minima): a target just beyond what the limits let a chain reach (a hand 1.4 mm short on the
      mocap benchmark under the HUMANOID preset) found it again on 4 of its 16 escapes and cost 83
      iterations, 49 ms; after ``RETURNS`` returns to one compromise (23 iterations there) the solve
      settles there. An escape that finds a better one starts the count again.
    - Each part's best stall (``independent_parts.PartBests``) where the solve's tasks fall
      into parts, so that the result takes every part where it was best.
    - A best state that a stall's restoration made (``Steps.settled``) was never descended
      from: once escapes end, one last descent starts there (``unexplored``), as a second press
      of Solve would (a hand reaching under Balance on a generated Rigify rig: 108 mm short,
      then met; another 342 -> 290 mm)."""

    def __init__(self, problem, tolerance):
        self.problem, self.tolerance = problem, tolerance
        self.count = 0
        self.left = None    # the best level errors when the last escape began
        self.bests = None if problem.parts is None else PartBests(problem.parts, tolerance)
        self.restored = None    # the last best state a restoration made
        self.final = False      # the last descent (from it) is under way
        self.first = None       # (level errors, task errors) of the best state at the first stall

    def settled(self, settled, state, best):
        """``settled`` (``Steps.settled`` of the stalled ``state`` against ``best``), noting it
        when it is a restored state that became the best, and as ``first`` at the first stall
        (what escapes that find nothing better leave: ``Solver``'s futility memory)."""
        if settled is not state and settled is not best:
            self.restored = settled
        if self.first is None:
            problem = self.problem
            self.first = (settled[3], np.sqrt(problem.tasks.squares(settled[2], problem.size)))
        return settled

    def unexplored(self, best):
        """True, once, when ``best`` is a restored state: the last descent starts from it."""
        if self.final or self.restored is not best:
            return False
        self.final = True
        return True

    def enough(self, state, groups, best):
        """Take the stalled ``state`` (its group errors ``groups``; ``best``: the best level
        errors now), count it if it is a return and say whether escapes should end."""
        if self.bests is not None:
            self.bests.see(state, groups)
        if self.left is None:
            return False
        margin, reached = 0.1 * self.tolerance, 0.5 * self.tolerance
        if compare_levels(best, self.left, margin, reached) < 0:
            self.count = 0      # a better compromise: the returns to the old one are void
        elif compare_levels(state[3], self.left, margin, reached) == 0:
            self.count += 1
        return self.count >= RETURNS

    def result(self, best, measure):
        """The solve's result from its ``best`` state: with every part where it was best after
        escapes (``PartBests.composed``; ``measure(q)``: a state of the rotations ``q``), else
        ``best``."""
        if self.bests is None or self.left is None:
            return best
        return self.bests.composed(best, self.problem.state_groups(best), measure)


def futile_here(futile, errors, tolerance):
    """True when the escapes of an earlier stall found nothing better by a tenth of the
    tolerance (``futile``: each task's
    error then, kept until a solve converges) and every task unmet now (``errors``) was unmet
    then and is no closer than ``_FUTILE_CLOSER`` (half) its error of then: a target dragged on
    beyond what the chain can reach under its limits (inside the bound of ``reach_bound``,
    which only a straight chain attains), where escaping again at every warm
    step would only repeat them. A task met then but not now, or one that came much closer, may
    be in a new local minimum: escapes run."""
    if futile is None:
        return False
    unmet = errors > tolerance
    return bool(np.all(~unmet | ((futile > tolerance) & (errors >= _FUTILE_CLOSER * futile))))
