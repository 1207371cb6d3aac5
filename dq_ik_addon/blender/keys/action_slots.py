"""The action slots an object plays and the F-curves they hold: Blender 4.4 made actions slotted
and 5.0 removed ``Action.fcurves``, so keys live in ``action.layers → strips →
channelbag(slot)`` (https://docs.blender.org/api/5.0/change_log.html)."""


def played_slots(data):
    """``(action, slot)`` of the assigned action and of every NLA strip of the ``AnimData``
    ``data`` (muted or not)."""
    return [(data.action, data.action_slot)] + [
        (strip.action, strip.action_slot) for track in data.nla_tracks for strip in track.strips]


def slot_fcurves(action, slot):
    """Every F-curve ``action`` holds for ``slot`` (none for a missing action or slot)."""
    for bag in channelbags(action, slot):
        yield from bag.fcurves


def channelbags(action, slot):
    """The channel bags ``action`` holds for ``slot`` (layers → strips; none for a missing
    action or slot)."""
    if action is None or slot is None:
        return []
    return [bag for layer in action.layers for strip in layer.strips
            if (bag := strip.channelbag(slot)) is not None]
