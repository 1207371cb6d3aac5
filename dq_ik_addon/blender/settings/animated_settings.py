"""DQ IK settings that keys or drivers set: which they are, and their values now.

An F-curve or a driver on a ``PoseBone.dqik`` or ``Object.dqik`` setting (a task switched on at
frame 20, a weight that fades) changes the setting as Blender evaluates the animation, which
calls no ``update`` callback, so the session would keep solving with the old value. The session
compares ``values(obj)`` on every tick (``session.py``): the animated settings' current values,
read by path. Which paths are animated is read again only when the shape of the armature's
animation changes (``keys.animated_paths``) or when a path stops resolving (a bone renamed).
"""

from ..keys.animated_paths import animated_paths

_SETTINGS = {}  # Object.session_uid → (shape of its animation, the animated DQ IK paths)


def values(obj):
    """The current values of ``obj``'s animated DQ IK settings (a tuple, to compare by value;
    empty when none is animated). Every DQ IK setting is a single value, so a path is enough.
    Paths that do not resolve (a bone deleted with its curve left behind) are left out when
    the paths are read; one that stops resolving (its bone renamed) has them read again."""
    try:
        return tuple(obj.path_resolve(path) for path in settings_paths(obj))
    except ValueError:
        _SETTINGS.pop(obj.session_uid, None)
    return tuple(obj.path_resolve(path) for path in settings_paths(obj))


def _resolves(obj, path):
    try:
        obj.path_resolve(path)
    except ValueError:
        return False
    return True


def settings_paths(obj):
    """The data paths of ``obj``'s DQ IK settings that an F-curve of its action or of an NLA
    strip, or a driver, sets (``keys.animated_paths``)."""
    shape, paths = animated_paths(obj)
    known = _SETTINGS.get(obj.session_uid)
    if known is not None and known[0] == shape:
        return known[1]
    found = tuple(sorted(path for path in paths if (path.startswith("dqik.") or ".dqik." in path)
                         and _resolves(obj, path)))
    _SETTINGS[obj.session_uid] = (shape, found)
    return found
