"""What an object's animation sets: the data paths (and the components of each, by array index)
of the F-curves of the action and NLA strips it plays and of its drivers, muted ones left out.
They are read again only when the shape of its animation changes (its actions and slots, the
NLA strips not muted, the number of F-curves in each channel bag, the number of drivers): on
other calls that costs a few length reads. A path edited, or a curve muted, in place in the
Graph Editor is taken at the next of those changes."""

from .action_slots import channelbags

_PATHS = {}     # Object.session_uid → (shape of its animation, its animated data paths, and
                # their animated (path, array index))


def animated_paths(obj):
    """``(shape, paths)``: the shape of ``obj``'s animation (to cache what is derived from
    it) and the frozen set of the data paths its F-curves and drivers set (muted curves, NLA
    tracks and strips set nothing)."""
    return _animated(obj)[:2]


def animated_components(obj):
    """``(shape, components)``: ``animated_paths``' shape, and the frozen set of the
    ``(data path, array index)`` its F-curves and drivers set: which components of a channel
    are animated (a rotation keyed on X alone)."""
    shape, _, components = _animated(obj)
    return shape, components


def _animated(obj):
    """``(shape, paths, components)`` of ``obj``'s animation (``animated_paths``,
    ``animated_components``), read again only when its shape changed (module docstring)."""
    data = obj.animation_data
    if data is None:
        return None, frozenset(), frozenset()
    played = [(data.action, data.action_slot)] + [
        (strip.action, strip.action_slot) for track in data.nla_tracks if not track.mute
        for strip in track.strips if not strip.mute]
    bags = [bag for action, slot in played for bag in channelbags(action, slot)]
    shape = (tuple(bag.as_pointer() for bag in bags), tuple(len(bag.fcurves) for bag in bags),
             len(data.drivers))
    known = _PATHS.get(obj.session_uid)
    if known is not None and known[0] == shape:
        return known
    curves = [fcurve for bag in bags for fcurve in bag.fcurves] + list(data.drivers)
    components = frozenset((fcurve.data_path, fcurve.array_index) for fcurve in curves
                           if not fcurve.mute)
    _PATHS[obj.session_uid] = shape, frozenset(path for path, _ in components), components
    return _PATHS[obj.session_uid]
