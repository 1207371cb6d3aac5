"""Refuse the settings and transforms a solve cannot use, naming the armature, the bone, the
setting and its value.

The ranges a property declares (``properties.py``) do not keep every value out. Measured with
bpy 5.0.1 and 4.5.15: NaN passes the hard minimum and maximum, an infinite value is stored as the
largest single-precision float (3.4e38), and a raw ID property write
(``pose_bone.dqik["weight"] = -1``) skips the range altogether. So every value a solve reads is
checked against the range its property declares, read from RNA (``bpy.types.Property`` ``name``,
``hard_min``, ``hard_max``, ``subtype``), when it is read: once per session build (the task
settings, the limits and stiffness of the bones the solve models, the capsule radii and the
armature's solver settings), not on a warm tick.

A magnitude of ``FAR`` (1e30) or more counts as infinite: Blender stores an assigned ``inf`` as
3.4e38, which is finite in float64 but overflows the single-precision products of ``mathutils``,
and no setting or place in a scene means anything that large (the observable universe is about
9e26 m across).
"""

import math

import numpy as np

from ..errors import ArmatureError

FAR = 1e30
# a world axis shorter than this, or axes spanning less than this fraction of the volume of the
# box of their lengths, make the armature's matrix (stored in single precision, whose rounding is
# 6e-8 of a value) too close to singular to bring targets into armature space
_SHORTEST_AXIS = 1e-6
_FLATTEST_VOLUME = 1e-6
_LIMIT_PAIRS = (("swing_x_min", "swing_x_max"), ("swing_z_min", "swing_z_max"),
                ("twist_min", "twist_max"))
_NO_INT_MAX = 2 ** 31 - 1    # an IntProperty without a declared maximum


def within_reach(values):
    """Elementwise: the magnitude is below ``FAR`` (False for NaN and ±inf)."""
    return np.abs(values) < FAR


def check_armature_settings(obj, fields):
    """Refuse the armature's ``Object.dqik`` ``fields`` when one is NaN, infinite or outside its
    property's range."""
    settings = obj.dqik
    properties = settings.bl_rna.properties
    for field in fields:
        problem = _out_of_range(properties[field], getattr(settings, field))
        if problem:
            raise ArmatureError(f"'{obj.name}': {problem}")


def check_bone_settings(obj, names, fields, values):
    """Refuse ``PoseBone.dqik`` settings: ``values`` is (len(names), len(fields)), the ``fields``
    of the bones ``names``. A value is refused when NaN, infinite or outside its property's range,
    and a swing/twist minimum when it is above its maximum (both among ``fields``). The values are
    compared at once; only a refusal looks at them bone by bone, for the message."""
    if not len(names):
        return
    values = np.asarray(values, dtype=np.float64).reshape(len(names), len(fields))
    properties = obj.pose.bones[0].dqik.bl_rna.properties
    declared = [properties[field] for field in fields]
    low = np.array([prop.hard_min for prop in declared])
    high = np.array([prop.hard_max for prop in declared])
    fine = within_reach(values) & (values >= low) & (values <= high)
    pairs = [(fields.index(a), fields.index(b)) for a, b in _LIMIT_PAIRS
             if a in fields and b in fields]
    for a, b in pairs:
        fine[:, a] &= values[:, a] <= values[:, b]
    if fine.all():
        return
    row = int(np.flatnonzero(~fine.all(axis=1))[0])
    raise ArmatureError(f"'{obj.name}' bone '{names[row]}': "
                        f"{_first_problem(declared, values[row].tolist(), pairs)}")


def check_armature_transform(obj):
    """Refuse an armature whose world matrix is not finite, or whose scale is zero or degenerate
    on some axis (its own or its parents'): targets could not be brought into its space."""
    matrix = obj.matrix_world
    if not all(abs(value) < FAR for row in matrix for value in row):
        raise ArmatureError(f"'{obj.name}' has a world transform that is not finite; clear its "
                            "location, rotation and scale (Alt+G, Alt+R, Alt+S) or its parent's")
    axes = matrix.to_3x3()
    lengths = [column.length for column in axes.col]
    if min(lengths) < _SHORTEST_AXIS or \
            abs(axes.determinant()) < _FLATTEST_VOLUME * math.prod(lengths):
        scale = ", ".join(f"{length:.3g}" for length in lengths)
        raise ArmatureError(f"'{obj.name}' has a zero or degenerate scale (world axes {scale} "
                            "long); give it and its parents a non-zero scale on every axis")


def non_finite_coordinate(location):
    """The first coordinate of ``location`` that is NaN or infinite (``FAR`` or more), as text,
    or None."""
    bad = [value for value in location if not abs(value) < FAR]
    return f"{bad[0]:.3g}" if bad else None


def _first_problem(declared, values, pairs):
    """The first problem among one bone's ``values`` (of the RNA properties ``declared``): a value
    that is not finite, else a minimum above its maximum, else a value out of its range."""
    problems = [_out_of_range(prop, value) for prop, value in zip(declared, values)]
    not_finite = [problem for problem, value in zip(problems, values)
                  if problem and not within_reach(value)]
    if not_finite:
        return not_finite[0]
    for a, b in pairs:
        if values[a] > values[b]:
            return _above(declared[a], values[a], declared[b], values[b])
    return next(problem for problem in problems if problem)


def _out_of_range(prop, value):
    """Why ``value`` of the property ``prop`` (RNA) cannot be used, with what to give instead,
    or None."""
    if abs(value) < FAR and prop.hard_min <= value <= prop.hard_max:    # (NaN: False)
        return None
    infinite = " (infinite)" if math.isfinite(value) and not within_reach(value) else ""
    return f"{prop.name} is {_shown(prop, value)}{infinite}; give it {_expected(prop)}"


def _above(low_prop, low, high_prop, high):
    return (f"{low_prop.name}, {_shown(low_prop, low)}, is above {high_prop.name}, "
            f"{_shown(high_prop, high)}; give {low_prop.name} {_expected(low_prop)} and "
            f"{high_prop.name} {_expected(high_prop)}")


def _expected(prop):
    """The values ``prop`` takes: ``a finite value ≥ 0``, ``a value from -180° to 0°``, ``a
    whole number from 1 to 32``."""
    whole = prop.type == 'INT'
    if prop.hard_max >= (_NO_INT_MAX if whole else FAR):
        return f"{'a whole number' if whole else 'a finite value'} ≥ {_bound(prop, prop.hard_min)}"
    return (f"{'a whole number' if whole else 'a value'} from {_bound(prop, prop.hard_min)} "
            f"to {_bound(prop, prop.hard_max)}")


def _bound(prop, value):
    if prop.type == 'INT':
        return str(int(value))
    return f"{math.degrees(value):.4g}°" if prop.subtype == 'ANGLE' else f"{value:.4g}"


def _shown(prop, value):
    """``value`` as a user reads it: angles in degrees with the radians stored (what a raw ID
    property write gives), whole numbers as such."""
    if not within_reach(value):
        return f"{value:.3g}"
    if prop.type == 'INT':
        return str(int(value))
    if prop.subtype == 'ANGLE':
        return f"{math.degrees(value):.4g}° ({value:.4g} rad)"
    return f"{value:.4g}"
