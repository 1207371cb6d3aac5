"""The task kinds a bone's settings switch on, in one table (``TASK_KINDS``): the setting that
enables each, the engine kind it becomes (a module of the engine's ``tasks``), its target from
the goal's armature-space matrix, its options, and the error it reports
(``TaskReport.errors``, keyed by ``report``; kinds that report under one key give that key the
larger of their errors).

Adding a kind touches the engine's ``tasks`` module, this table and the ``PoseBone.dqik``
property that enables it (``properties.py``), nothing else: reading the sources, building the
tasks, reporting and the task list all go through the table.
"""

from typing import Callable, NamedTuple

import numpy as np

from ...engine import Aim, AxesPosition, Balance, Loop, LoopOrientation, Orientation, Position
from ..errors import ArmatureError

# ``PoseBone.dqik.aim_axis`` as a unit vector in the bone's frame
AIM_AXIS_VECTORS = {'TRACK_X': (1.0, 0.0, 0.0), 'TRACK_Y': (0.0, 1.0, 0.0),
                    'TRACK_Z': (0.0, 0.0, 1.0), 'TRACK_NEGATIVE_X': (-1.0, 0.0, 0.0),
                    'TRACK_NEGATIVE_Y': (0.0, -1.0, 0.0), 'TRACK_NEGATIVE_Z': (0.0, 0.0, -1.0)}


class TaskKindEntry(NamedTuple):
    """One row of the table: ``setting``, the ``PoseBone.dqik`` bool that enables the kind;
    ``label``, how messages name it; ``kind``, the engine's ``TaskKind``; ``target(goal,
    matrix, options)``, its target from the goal (``goal``: (4,4) numpy, ``matrix``: the same
    as a mathutils Matrix); ``options(settings, name)``, its options from the bone's settings;
    ``report``, the ``TaskReport.errors`` key of its error; ``option_setting``, the
    ``PoseBone.dqik`` property the Bone panel shows for its options (None: none);
    ``from_head``: the overlay draws its line from the bone's head, not its tail;
    ``applies(settings, loop)``: whether the row is the one for these settings, when several
    rows share a ``setting``; ``loop``: the target is another bone of the same armature, held
    by a loop task (``Task.partner``). None: any settings, no loop."""

    setting: str
    label: str
    kind: type
    target: Callable
    options: Callable
    report: str
    option_setting: object = None
    from_head: bool = False
    applies: Callable = None


def _no_options(_settings, _name):
    return ()


def _axes(settings, _name):
    """The indices of the bone's Position Axes (``PoseBone.dqik.position_axes``)."""
    return tuple(index for index, axis in enumerate("XYZ") if axis in settings.position_axes)


def _projected(goal, _matrix, axes):
    """The goal's point and the projector onto the directions its own ``axes`` hold
    (``AxesPosition``'s target): one axis, the normal ``n`` of the plane the other two span
    (``P = n nᵀ``: Z alone keeps the tail on the target's XY plane); two, all but the third
    axis's line ``d`` (``P = I − d dᵀ``). Taken from the goal's columns as they are, so a
    sheared target keeps its plane or line; where the other two columns span no plane (one
    scaled to zero: a floor Empty flattened (1, 0, 1)), the chosen axis itself is the normal,
    and where the third axis is scaled to zero (1, 1, 0), the line is the normal of the chosen
    two. NaN where neither is defined (``_DEGENERATE``), and the task is skipped."""
    columns, point = goal[:3, :3].T, goal[:3, 3]
    others = [columns[i] for i in range(3) if i not in axes]
    chosen = [columns[i] for i in axes]
    plane, line = (others, chosen) if len(axes) == 1 else (chosen, others)
    normal = _unit(np.cross(*plane), np.prod([np.linalg.norm(c) for c in plane]))
    along = _unit(line[0], max(np.linalg.norm(c) for c in columns))
    if len(axes) == 1:
        held = normal if normal is not None else along
        projector = None if held is None else np.outer(held, held)
    else:
        free = along if along is not None else normal
        projector = None if free is None else np.eye(3) - np.outer(free, free)
    return np.full(12, np.nan) if projector is None else \
        np.concatenate([point, projector.ravel()])


def _unit(vector, size):
    """``vector`` of unit length, or None when it is within ``_DEGENERATE`` of nothing beside
    ``size`` (or ``size`` is nothing)."""
    length = np.linalg.norm(vector)
    return vector / length if length > _DEGENERATE * size > 0.0 else None


# A direction this small beside the lengths it comes from is none: an axis scaled to zero, two
# axes parallel
_DEGENERATE = 1e-9


def _none(_goal, _matrix, _options):
    """A loop's target: none, its partner bone is (``Task.partner``)."""
    return ()


def _aim_axis(settings, name):
    """The bone's Aim Axis as a unit vector; a raw ID property outside the enum reads as ''."""
    axis = AIM_AXIS_VECTORS.get(settings.aim_axis, ())
    if not axis:
        raise ArmatureError(f"'{settings.id_data.name}' bone '{name}': Aim Axis is not one of "
                            f"{', '.join(AIM_AXIS_VECTORS)}; pick it again in the Bone panel")
    return axis


TASK_KINDS = (
    TaskKindEntry("use_position", "position", Position, lambda goal, _, __: goal[:3, 3],
                  _no_options, "position", option_setting="position_axes",
                  applies=lambda settings, loop: not loop and len(settings.position_axes) == 3),
    TaskKindEntry("use_position", "position", AxesPosition, _projected, _axes, "position",
                  applies=lambda settings, loop: not loop
                  and 0 < len(settings.position_axes) < 3),
    TaskKindEntry("use_position", "position", Loop, _none, _no_options, "position",
                  applies=lambda _, loop: loop),
    TaskKindEntry("use_rotation", "rotation", Orientation,     # the goal's scale dropped
                  lambda _, matrix, __: np.array(matrix.to_quaternion()), _no_options,
                  "rotation"),
    TaskKindEntry("use_rotation", "rotation", LoopOrientation, _none, _no_options, "rotation",
                  applies=lambda _, loop: loop),
    TaskKindEntry("use_aim", "aim", Aim, lambda goal, _, __: goal[:3, 3], _aim_axis, "rotation",
                  option_setting="aim_axis", from_head=True),
)


def enabled_parts(settings, name, loop=False):
    """``((entry, options), ...)``: the kinds the bone's ``PoseBone.dqik`` ``settings`` enable,
    in table order, each with its options; ``loop``: its target is a loop partner."""
    return tuple((entry, entry.options(settings, name))
                 for entry in enabled_entries(settings, loop))


def enabled_entries(settings, loop=False):
    """The table's entries of the kinds the bone's ``PoseBone.dqik`` ``settings`` enable."""
    return [entry for entry in TASK_KINDS if getattr(settings, entry.setting) and (
        not loop if entry.applies is None else entry.applies(settings, loop))]


def labels():
    """The kinds' labels, for a message: ``position, rotation and aim``."""
    names = list(dict.fromkeys(entry.label for entry in TASK_KINDS))
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]


def report_of(kind):
    """The ``TaskReport.errors`` key of the engine kind ``kind`` (a drag is a ``Position``; the
    balance, no bone's kind, reports how far the centre of mass is outside its support)."""
    return "balance" if kind is Balance else next(entry.report for entry in TASK_KINDS
                                                  if entry.kind is kind)


def is_angular(report):
    """True when the errors reported under ``report`` are angles (radians), else lengths."""
    return report != "balance" and next(entry.kind.angular for entry in TASK_KINDS
                                        if entry.report == report)
