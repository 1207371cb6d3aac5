"""What a solve gives back and what can be measured of a pose outside the solve's loop.

- ``SolveResult``: the outcome of one ``Solver.solve``.
- ``SolveState``: what one solve saw of the world (each task batch's targets, the given pose its
  chains hang from, the obstacle query), kept per frame by a bake so that its clean-up can
  measure that frame again later.
- ``measure``: each task's error and the contacts' penetration of a pose given by rotations
  (FK hung from a given pose, ``moving_joints_fk.MovingJointsFK``) or by pose matrices (the pose
  Blender evaluated, constraints included). Errors are the tasks' true errors
  (``TaskSet.true_errors``: metres, radians for angular kinds); the penetration is the total
  depth by which the capsules sink past their clearance (``ContactSet.penetration``).
"""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class SolveResult:
    """``rotations`` (n,4) of every bone; ``errors`` (T,) of each task (given order; metres, or
    radians for angular kinds); ``level_errors``: the level errors of every iteration, in
    priority order (the total contact penetration first when there are contacts; a level of
    several groups of tasks sharing no moved joint: the sum of their norms,
    ``Problem.level_errors``); ``contacts``:
    ``contact_set.Contacts`` at the result (None without obstacles); ``steps``: how many full and
    chord steps, prioritized decompositions and escapes the solve took. ``cut_short``: the solve
    neither converged nor settled at the closest reachable pose, but ran out of
    ``max_iterations`` or of its time budget while still improving; solving again goes on.
    ``locations`` (n,3): every bone's pose location with the solve's slides (``slides``; None
    when nothing slides). ``matrices`` (b,4,4): the modelled bones' pose matrices at the result,
    as the solve's FK computed them."""

    rotations: np.ndarray
    iterations: int
    errors: np.ndarray
    converged: bool
    level_errors: list = field(default_factory=list)
    contacts: object = None
    steps: dict = field(default_factory=dict)
    cut_short: bool = False
    locations: np.ndarray = None
    matrices: np.ndarray = None


@dataclass(frozen=True)
class SolveState:
    """What one solve saw: ``targets``, each task batch's (k, width) targets; ``given``, the
    ``GivenPose`` its chains hung from; ``obstacles``, the obstacle query (None without
    contacts)."""

    targets: tuple
    given: object
    obstacles: object


@dataclass(frozen=True)
class Measure:
    """Each task's error (T,) (metres; radians for angular kinds) and the contacts' total
    penetration (None without contacts)."""

    errors: np.ndarray
    penetration: object


def state_of(problem, given):
    """The ``SolveState`` of ``problem`` now, hung from ``given``."""
    return SolveState(tuple(batch.targets.copy() for batch in problem.tasks.batches), given,
                      None if problem.contacts is None else problem.contacts.obstacles)


def put_back(problem, state):
    """Give ``problem`` the targets and obstacles of ``state`` (and seat the targets against
    them, ``ContactSet.seat``)."""
    for batch, targets in zip(problem.tasks.batches, state.targets):
        batch.set_targets(targets)
    if problem.contacts is not None:
        problem.contacts.obstacles = state.obstacles
        problem.seat_targets()


def measure(problem, given, rotations=None, matrices=None):
    """The ``Measure`` of the modelled bones posed by ``rotations`` (b,4), hung from ``given``,
    or by their armature-space pose ``matrices`` (b,4,4)."""
    world = problem.fk.start(rotations, given) if matrices is None else \
        np.ascontiguousarray(matrices, dtype=np.float64)
    errors = problem.tasks.norms(problem.tasks.true_errors(world))
    return Measure(errors, None if problem.contacts is None else problem.contacts.penetration(world))
