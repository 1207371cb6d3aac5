"""Where a bake's keys go, and writing them: slotted actions on Blender 4.5 and 5.0 alike.

Blender 4.4 made actions slotted and 5.0 removed ``Action.fcurves``: keys live in
``action.layers[0].strips[0].channelbag(slot)`` (an action has at most one layer, a layer one
keyframe strip), the slot being the one assigned in ``AnimData.action_slot``
(https://docs.blender.org/api/5.0/change_log.html, ``bpy_extras/anim_utils.py``
``action_ensure_channelbag_for_slot``). 4.5's ``ActionChannelbagFCurves.new`` takes no group, so
curves are grouped by bone through ``channelbag.groups`` on both versions.

``prepare_action`` picks the action and says where the animation that was there went:

- ``'NEW'``: a new action made for the bake (marked ``ACTION_MARK``) becomes the active one.
  An active action that is not one is pushed down to a new NLA track first, with its slot,
  blend type and influence, as ``nla.action_pushdown`` does (that operator refuses to run from
  scripts; Wiggle 2 and jiggle physics push down the same way): every channel of it the bake
  does not key still plays from there (the NLA is switched on if it was off). When the NLA
  tracks playing underneath animate every channel the bake keys, the new action's Extrapolation
  is Nothing (``action_extrapolation``): it does not hold its first and last keys around its
  frames, so a bake of a few frames leaves the rest of the shot playing as it was (a channel
  they do not animate would fall to its default there, so otherwise it holds, as before, and the
  report says so). An active action
  with no slot for the armature plays nothing for it and is only replaced. When the active
  action is the one an earlier bake made for this armature, in a slot no other object uses,
  that action is baked into again (``'ACTIVE'``), so baking twice leaves one action, one slot
  and one curve per channel, with a copy of what the new bake replaced; a DQ IK action another
  armature shares (a linked duplicate) is pushed down like any other, so its bake stays.
- ``'ACTIVE'``: the keys go into the active action (a new one when there is none); its state
  before each bake into it is kept as a copy with a fake user.
- An armature with an action but no slot gets the action's unused slot named for it, or a new
  one: never a slot another object plays.

``write_curves`` writes each curve in one pass: on a new curve ``keyframe_points.add`` and
``foreach_set`` of the keys (linear, sorted, unique: no ``fcurve.update`` needed,
``KeyframesCo.insert_keyframes_into_new_action``); on an existing one the keys outside the baked
range are kept with every setting (handles, interpolation, easing, key type), the baked range
is replaced, and one ``fcurve.update`` sorts them and recalculates the kept keys' automatic
handles.
"""

import bpy
import numpy as np
from bpy_extras import anim_utils

from ..errors import ArmatureError
from .action_slots import channelbags

ACTION_MARK = "dqik_bake"               # on an action a bake made: the armature's name
_PUSHED = " (before DQ IK bake)"        # ends the name of an NLA track a bake pushed down
# every setting of a kept key: (Keyframe property, width, dtype)
_KEY_FIELDS = (("co", 2, np.float32), ("handle_left", 2, np.float32),
               ("handle_right", 2, np.float32), ("interpolation", 1, np.int32),
               ("handle_left_type", 1, np.int32), ("handle_right_type", 1, np.int32),
               ("easing", 1, np.int32), ("type", 1, np.int32), ("back", 1, np.float32),
               ("amplitude", 1, np.float32), ("period", 1, np.float32))


def _linear():
    return bpy.types.Keyframe.bl_rna.properties["interpolation"].enum_items["LINEAR"].value


def refuse_unkeyable(obj, mode):
    """Raise ``ArmatureError`` when the bake's keys cannot go where ``mode`` puts them (before
    anything changes): NLA tweak mode, or an active action to key that is linked or a library
    override (its curves cannot take new keys)."""
    data = obj.animation_data
    if data is None:
        return
    if data.use_tweak_mode:
        raise ArmatureError(f"'{obj.name}' is in NLA tweak mode; leave it (NLA editor, Tab) "
                            "before baking")
    action, _ = target_action(obj, mode)
    if action is None:
        return
    if action.library is not None or action.override_library is not None:
        kind = "linked" if action.library is not None else "a library override"
        raise ArmatureError(f"The action '{action.name}' of '{obj.name}' is {kind} and cannot "
                            "take keys; bake into a New Action instead")


def curve_warnings(obj, mode, paths):
    """Raise ``ArmatureError`` when a curve the bake would key, ``paths`` ``(data_path,
    index)``, is locked in the action it keys into (Blender's keying refuses locked curves,
    ``BKE_fcurve_is_keyframable``); else the warnings for keys that would not play: on muted
    curves, and on channels a driver sets."""
    action, slot = target_action(obj, mode)
    bag = None
    if action is not None and slot is not None and action.layers and action.layers[0].strips:
        bag = action.layers[0].strips[0].channelbag(slot)
    found = {} if bag is None else {
        (path, index): fcurve for path, index in paths
        if (fcurve := bag.fcurves.find(path, index=index)) is not None}
    locked = sorted(f"{path}[{index}]" for (path, index), fcurve in found.items()
                    if _flag(fcurve, "lock"))
    if locked:
        raise ArmatureError(f"{len(locked)} curves of the action '{action.name}' the bake would "
                            f"key are locked ({', '.join(locked[:3])}…); unlock them, or bake "
                            "into a New Action")
    muted = sorted({path for (path, _), fcurve in found.items() if _flag(fcurve, "mute")})
    drivers = obj.animation_data.drivers if obj.animation_data is not None else None
    driven = sorted({path for path, index in paths
                     if drivers is not None and drivers.find(path, index=index) is not None})
    return ([f"the keys on {path} do not play: its curve in '{action.name}' is muted"
             for path in muted]
            + [f"the keys on {path} do not play: a driver sets that channel" for path in driven])


def _flag(fcurve, name):
    """``fcurve``'s ``lock`` or ``mute``, or its group's."""
    return getattr(fcurve, name) or (fcurve.group is not None and getattr(fcurve.group, name))


def target_action(obj, mode):
    """The action and slot a bake in ``mode`` keys into if they exist already (else None and
    None): the active action with ``'ACTIVE'``, or with ``'NEW'`` this armature's own DQ IK
    action; its slot only if it is the armature's."""
    data = obj.animation_data
    action = None if data is None else data.action
    if action is None or not (mode == 'ACTIVE' or _own_bake(obj, data)):
        return None, None
    return action, data.action_slot


def _own_bake(obj, data):
    """True when the active action is the one an earlier bake made for ``obj``, in a slot no
    other object plays."""
    slot = data.action_slot
    return data.action.get(ACTION_MARK) == obj.name and slot is not None and all(
        user == obj for user in slot.users())


def prepare_action(obj, mode, paths=()):
    """The channelbag to key into, after making or picking the action (see the module
    docstring), and a sentence that says where the animation that was there is now. ``paths``:
    the data paths the keys will set (a new action's Extrapolation is Nothing when the NLA
    underneath animates every one of them)."""
    data = obj.animation_data_create()
    action, _ = target_action(obj, mode)
    if action is not None:
        where = _kept_before(action, data)
    else:
        where = _underneath(data) if data.action is None else _put_aside(data)
        action = bpy.data.actions.new(f"{obj.name}_DQIK")
        action[ACTION_MARK] = obj.name
        data.action = action
        underneath = {fcurve.data_path for track in _playing_tracks(data) for strip in track.strips
                      if not strip.mute
                      for bag in channelbags(strip.action, strip.action_slot)
                      for fcurve in bag.fcurves if not fcurve.mute}
        # around its frames, what is underneath plays where it animates every baked channel
        data.action_extrapolation = 'NOTHING' if underneath and set(paths) <= underneath \
            else 'HOLD'
        if data.action_extrapolation == 'HOLD' and underneath:
            where += "; the bake's first and last keys hold around its frames, as the NLA " \
                "underneath does not animate all of its channels"
    if data.action_slot is None:
        data.action_slot = _slot_for(obj, action)
    if action.get(ACTION_MARK):
        data.action_blend_type, data.action_influence = 'REPLACE', 1.0
    return _channelbag(action, data.action_slot), where


def _channelbag(action, slot):
    """The channelbag of ``slot`` in ``action``'s keyframe strip, made if need be: Blender's
    ``anim_utils.action_ensure_channelbag_for_slot`` (5.0); 4.5 has it only as a private
    function (``_ensure_channelbag_exists``), whose three steps this repeats there."""
    ensure = getattr(anim_utils, "action_ensure_channelbag_for_slot", None)
    if ensure is not None:
        return ensure(action, slot)
    layer = action.layers[0] if action.layers else action.layers.new("Layer")
    strip = layer.strips[0] if layer.strips else layer.strips.new(type='KEYFRAME')
    return strip.channelbag(slot, ensure=True)


def _slot_for(obj, action):
    """The slot of ``action`` for ``obj``: an unused one Blender would pick for it (its
    identifier ``OB<name>``), else a new one."""
    identifier = f"OB{obj.name}"
    mine = [slot for slot in action.slots if slot.identifier == identifier and not slot.users()]
    return mine[0] if mine else action.slots.new('OBJECT', obj.name)


def _playing_tracks(data):
    """The NLA tracks that play: none with the NLA off, the solo track if there is one, else
    every track with strips that is not muted."""
    if not data.use_nla:
        return []
    tracks = [track for track in data.nla_tracks if not track.mute and track.strips]
    solo = [track for track in tracks if track.is_solo]
    return solo or tracks


def _underneath(data):
    """Where the animation is when there was no active action: the NLA tracks that play on
    under the new action, unchanged, or none."""
    tracks = [track.name for track in _playing_tracks(data)]
    if not tracks:
        return "no earlier animation"
    return (f"no active action; the NLA track{'s' if len(tracks) > 1 else ''} "
            f"{', '.join(repr(name) for name in tracks)} play{'' if len(tracks) > 1 else 's'} "
            "on underneath, unchanged")


def _put_aside(data):
    """The active action out of the way; returns where it is now. With a slot, it goes down to
    a new NLA track (``_push_down``); without one it played nothing for the armature, and is
    left as it is."""
    if data.action_slot is None:
        name, data.action = data.action.name, None
        return f"the action '{name}' had no slot for this armature and is unchanged"
    return _push_down(data)


def _push_down(data):
    """Move the active action to a new NLA track (its slot, blend type and influence kept; the
    NLA switched on) and leave no active action; returns where it went."""
    action, slot = data.action, data.action_slot
    track = data.nla_tracks.new()
    track.name = f"{action.name}{_PUSHED}"
    start = float(action.frame_range[0])
    strip = track.strips.new(action.name, int(start), action)
    strip.frame_start_ui = start      # strips.new takes whole frames only
    strip.action_slot = slot
    strip.blend_type = data.action_blend_type
    if data.action_influence < 1.0:
        strip.use_animated_influence, strip.influence = True, data.action_influence
    data.action = None
    switched = "" if data.use_nla else " (the NLA, which was off, is on now)"
    data.use_nla = True
    return f"the action '{action.name}' now plays from the NLA track '{track.name}'{switched}"


def _kept_before(action, data):
    """Where the animation from before this bake into ``action`` is: a copy of the action,
    made now (one per bake: each keeps what that bake replaced, a DQ IK action's earlier bake
    and the hand edits on it included), and for this armature's DQ IK action also the NLA
    tracks its first bake pushed down."""
    backup = action.copy()
    backup.name = f"{action.name}{_PUSHED}"
    backup.use_fake_user = True
    backup.pop(ACTION_MARK, None)       # a copy is no bake's own action
    kept = f"its state before is kept as '{backup.name}'"
    if _own_bake(data.id_data, data):
        pushed = [track.name for track in data.nla_tracks if track.name.endswith(_PUSHED)]
        return (f"keys replaced within the range in the DQ IK action '{action.name}'; {kept}"
                + ("" if not pushed else "; the animation from before its first bake plays "
                   "from the NLA track " + ", ".join(f"'{name}'" for name in pushed)))
    users = [] if data.action_slot is None else [
        user.name for user in data.action_slot.users() if user != data.id_data]
    shared = "" if not users else (f"; its slot is shared with {', '.join(users)}, whose "
                                   "animation changes too")
    return f"keys written into the action '{action.name}'; {kept}{shared}"


def write_curves(channelbag, curves, frame_range):
    """Write ``curves``, each ``(data_path, array_index, group, frames (K,), values (K,))``:
    new curves in one pass, existing ones keeping their keys outside ``frame_range`` (the
    first and last baked frame)."""
    linear = _linear()
    groups = {group.name: group for group in channelbag.groups}
    for data_path, index, group_name, frames, values in curves:
        fcurve = channelbag.fcurves.find(data_path, index=index)
        points = np.empty((len(frames), 2), dtype=np.float32)
        points[:, 0], points[:, 1] = frames, values
        if fcurve is None:
            fcurve = channelbag.fcurves.new(data_path, index=index)
            group = groups.get(group_name)
            if group is None:
                group = groups[group_name] = channelbag.groups.new(group_name)
            fcurve.group = group
            _add_keys(fcurve.keyframe_points, points, linear)
        else:
            _replace_range(fcurve, points, frame_range, linear)


def _add_keys(keyframe_points, points, linear):
    keyframe_points.add(len(points))
    keyframe_points.foreach_set("co", points.ravel())
    keyframe_points.foreach_set("interpolation", np.full(len(points), linear, dtype=np.int32))


def _replace_range(fcurve, points, frame_range, linear):
    """Keep the keys of ``fcurve`` outside ``frame_range`` with every setting, put ``points``
    (linear keys) in place of the others."""
    keys = fcurve.keyframe_points
    count = len(keys)
    old = {}
    for name, width, dtype in _KEY_FIELDS:
        values = np.empty(count * width, dtype=dtype)
        keys.foreach_get(name, values)
        old[name] = values.reshape(count, width) if width > 1 else values
    frames = old["co"][:, 0]
    kept = (frames < frame_range[0] - 1e-4) | (frames > frame_range[1] + 1e-4)
    new = len(points)
    keys.clear()
    keys.add(int(kept.sum()) + new)
    for name, width, dtype in _KEY_FIELDS:
        values = np.concatenate([old[name][kept], _new_key_field(name, points, linear, dtype)])
        keys.foreach_set(name, values.ravel())
    fcurve.update()


def _new_key_field(name, points, linear, dtype):
    """``name`` of the new linear keys at ``points`` (handles at the key, Blender's defaults
    for the rest: ``KEYFRAME`` type, automatic easing, clamped-auto handles)."""
    if name in ("co", "handle_left", "handle_right"):
        return points.astype(dtype)
    if name == "interpolation":
        return np.full(len(points), linear, dtype=dtype)
    default = bpy.types.Keyframe.bl_rna.properties[name].default
    if isinstance(default, str):
        default = bpy.types.Keyframe.bl_rna.properties[name].enum_items[default].value
    return np.full(len(points), default, dtype=dtype)
