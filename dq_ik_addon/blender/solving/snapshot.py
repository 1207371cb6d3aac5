"""What a session's tick gives back: ``SolveSnapshot`` (how the solve ended, one ``TaskReport``
per bone with tasks, the contacts) and the comparisons of two snapshots' errors that live
posing and the measure of the pose shown make."""

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..settings.task_kinds import is_angular


@dataclass(frozen=True)
class TaskReport:
    """One bone's tasks' outcome: ``'MET'`` (within the tolerance), ``'CLOSEST'`` (the closest
    pose the solve found), ``'MISSING'`` (its target could not be found) or ``'SKIPPED'`` (its
    target moves with the solve, ``target_dependencies``). ``errors``: the error of each kind
    of task it has, keyed by the kind's report (``task_kinds.TASK_KINDS``: ``'position'`` in
    metres, ``'rotation'``, of its orientation or aim task, in radians); empty for the last two
    statuses."""

    name: str
    status: str
    errors: dict = field(default_factory=dict)

    @property
    def position_error(self):
        """The position error in metres (None without a position task; NaN when not solved)."""
        return self._error('position')

    @property
    def rotation_error(self):
        """The orientation or aim error in radians (None without one; NaN when not solved)."""
        return self._error('rotation')

    def _error(self, report):
        if self.status in ('MISSING', 'SKIPPED'):
            return float("nan")
        return self.errors.get(report)

    def describe(self):
        """The task for a report: ``hand.L 0.0123 mm`` (and an angular error in degrees)."""
        if self.status == 'MISSING':
            return f"{self.name} target missing"
        if self.status == 'SKIPPED':
            return f"{self.name} skipped"
        return " ".join([self.name, *(format_error(report, value)
                                      for report, value in self.errors.items())])


def format_error(report, value):
    """An error as the user reads it: ``12.3 mm`` for a length (metres), ``4.5°`` for an angle
    (radians)."""
    if is_angular(report):
        return f"{math.degrees(value):.3g}°"
    return f"{value * 1e3:.3g} mm"


@dataclass(frozen=True)
class SceneContacts:
    """The capsule samples of a result within the margin plus 1 % of the chain size of a
    collider, in world space: each sample's bone name, the nearest point on the collider, its
    outward normal, and the clearance past the margin (metres; negative: penetrating)."""

    bones: tuple
    points: np.ndarray
    normals: np.ndarray
    clearances: np.ndarray

    @classmethod
    def from_engine(cls, contacts, model, matrix_world, unit):
        """From the engine's ``Contacts`` (armature space) of an armature with ``matrix_world``
        and ``world_unit`` ``unit``."""
        world = np.array(matrix_world)
        normals = contacts.normals @ np.linalg.inv(world[:3, :3])
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        return cls(tuple(model.names[i] for i in contacts.bones.tolist()),
                   contacts.points @ world[:3, :3].T + world[:3, 3], normals,
                   contacts.clearances * unit)


@dataclass(frozen=True)
class SolveSnapshot:
    """The last tick of a session. ``status`` is ``'MET'`` when the solve converged,
    ``'CLOSEST'`` when it stopped short of the tolerance: at the closest reachable pose, or,
    with ``cut_short``, at Max Iterations or the time budget while still improving;
    ``'ERROR'`` when the tick failed (``error`` says why; nothing was written). ``ms`` is the
    whole tick's time.
    ``contacts``: the ``SceneContacts`` of the result (None without colliders). ``balance_of``:
    with Balance on, what gives the world centre of mass and support polygon of the result
    (``balance``), else None."""

    tasks: tuple = ()
    iterations: int = 0
    converged: bool = False
    ms: float = 0.0
    warnings: tuple = ()
    error: str = ""
    contacts: object = None
    cut_short: bool = False
    balance_of: object = field(default=None, repr=False, compare=False)

    @cached_property
    def balance(self):
        """With Balance on, the world centre of mass and support polygon ((3,), (p,3)) of the
        result (``center_of_mass``, ``support_polygon``), else None: taken when first asked
        for (the overlay's and the sidebar's redraws, a script), not on every tick."""
        return None if self.balance_of is None else self.balance_of()

    @property
    def center_of_mass(self):
        """The world centre of mass of the result (None without Balance)."""
        return None if self.balance is None else self.balance[0]

    @property
    def support_polygon(self):
        """The world support polygon of the result, counter-clockwise from above (None
        without Balance)."""
        return None if self.balance is None else self.balance[1]

    @property
    def status(self):
        return 'ERROR' if self.error else ('MET' if self.converged else 'CLOSEST')

    def largest_distance(self):
        """The largest finite error in metres of any task's length kinds (None without one)."""
        distances = [value for task in self.tasks for kind, value in task.errors.items()
                     if not is_angular(kind) and math.isfinite(value)]
        return max(distances, default=None)

    def describe(self):
        """One line for a report: how the solve ended and each task's error."""
        if self.error:
            return self.error
        state = "converged" if self.converged else (
            "stopped while still improving (Max Iterations or the time budget; solve again to go "
            "on)" if self.cut_short else "closest reachable")
        return (f"{state} in {self.iterations} iterations; "
                + ", ".join(task.describe() for task in self.tasks))


def closer(before, after, tolerance):
    """True when some task of the snapshot ``after`` is closer than in ``before`` by more than
    ``tolerance`` (or the two differ in their tasks)."""
    def errors(snapshot):
        return {(task.name, report): value for task in snapshot.tasks
                for report, value in task.errors.items()}
    old, new = errors(before), errors(after)
    return old.keys() != new.keys() or any(new[key] < old[key] - tolerance for key in new)


def farther(shown, solved, tolerance):
    """True when the ``TaskReport`` ``shown`` is farther from its target, in any of its errors,
    than ``solved`` by more than ``tolerance``."""
    return any(value > solved.errors[report] + tolerance
               for report, value in shown.errors.items() if report in solved.errors)
