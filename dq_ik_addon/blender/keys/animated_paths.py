"""What an object's animation sets: the data paths of the F-curves of the action and NLA strips
it plays and of its drivers. They are read again only when the shape of its animation changes
(its actions and slots, NLA strips, the number of F-curves in each channel bag, the number of
drivers): on other calls that costs a few length reads. A path edited in place in the Graph
Editor is taken at the next of those changes."""

from .action_slots import channelbags, played_slots

_PATHS = {}     # Object.session_uid → (shape of its animation, its animated data paths)


def animated_paths(obj):
    """``(shape, paths)``: the shape of ``obj``'s animation (to cache what is derived from
    it) and the frozen set of the data paths its F-curves and drivers set."""
    data = obj.animation_data
    if data is None:
        return None, frozenset()
    bags = [bag for action, slot in played_slots(data) for bag in channelbags(action, slot)]
    shape = (tuple(bag.as_pointer() for bag in bags), tuple(len(bag.fcurves) for bag in bags),
             len(data.drivers))
    known = _PATHS.get(obj.session_uid)
    if known is not None and known[0] == shape:
        return known
    curves = [fcurve for bag in bags for fcurve in bag.fcurves] + list(data.drivers)
    _PATHS[obj.session_uid] = shape, frozenset(fcurve.data_path for fcurve in curves)
    return _PATHS[obj.session_uid]
