"""DQ IK settings that keys or drivers set: which they are, and their values now.

An F-curve or a driver on a ``PoseBone.dqik`` or ``Object.dqik`` setting (a task switched on at
frame 20, a weight that fades) changes the setting as Blender evaluates the animation, which
calls no ``update`` callback, so the session would keep solving with the old value. The session
compares ``values(obj)`` on every tick (``session.py``): the animated settings' current values,
read by path. Which paths are animated is read again only when the shape of the armature's
animation changes (its actions and slots, NLA strips, the number of F-curves in each channel bag,
the number of drivers), or when a path stops resolving (a bone renamed): on other ticks that
costs a few length reads. A path edited in place in the Graph Editor is taken at the next of
those changes.
"""

from ..keys.action_slots import channelbags, played_slots

_PATHS = {}     # Object.session_uid → (shape of its animation, the animated DQ IK paths)


def values(obj):
    """The current values of ``obj``'s animated DQ IK settings (a tuple, to compare by value;
    empty when none is animated). Every DQ IK setting is a single value, so a path is enough.
    Paths that do not resolve (a bone deleted with its curve left behind) are left out when
    the paths are read; one that stops resolving (its bone renamed) has them read again."""
    try:
        return tuple(obj.path_resolve(path) for path in animated_paths(obj))
    except ValueError:
        _PATHS.pop(obj.session_uid, None)
    return tuple(obj.path_resolve(path) for path in animated_paths(obj))


def _resolves(obj, path):
    try:
        obj.path_resolve(path)
    except ValueError:
        return False
    return True


def animated_paths(obj):
    """The data paths of ``obj``'s DQ IK settings that an F-curve of its action or of an NLA
    strip, or a driver, sets."""
    data = obj.animation_data
    if data is None:
        return ()
    bags = [bag for action, slot in played_slots(data) for bag in channelbags(action, slot)]
    shape = (tuple(bag.as_pointer() for bag in bags), tuple(len(bag.fcurves) for bag in bags),
             len(data.drivers))
    known = _PATHS.get(obj.session_uid)
    if known is not None and known[0] == shape:
        return known[1]
    curves = [fcurve for bag in bags for fcurve in bag.fcurves] + list(data.drivers)
    paths = tuple(sorted({fcurve.data_path for fcurve in curves
                          if (fcurve.data_path.startswith("dqik.") or ".dqik." in fcurve.data_path)
                          and _resolves(obj, fcurve.data_path)}))
    _PATHS[obj.session_uid] = (shape, paths)
    return paths

