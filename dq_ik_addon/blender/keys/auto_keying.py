"""Auto-keying the bones live posing changed, as Blender's transform does
(``autokeyframe_pose_channel``, ``source/blender/animrig/intern/keyframing_auto.cc``):

- nothing unless Auto Keying is on (``ToolSettings.use_keyframe_insert_auto``); in its Replace
  mode, nothing unless the armature already has a key on the current frame, and then only
  existing keys are replaced (``INSERTKEY_REPLACE``);
- with Only Insert Keying Set and an active keying set, that keying set's paths are keyed, a
  relative one's generated for the bones (as ``ANIM_apply_keyingset`` with the pose bones as
  its sources);
- with Only Insert Available, every existing F-curve of each bone gets a key, and no curve is
  added;
- else each bone's rotation channel in its own rotation mode, and the location of the bones
  whose location changed (those the solve slides, ``PoseBone.dqik.use_translation``);
- always with the scene's keyframe type (``ToolSettings.keyframe_type``) and the preferences'
  Visual Keying, Only Insert Needed (for auto-keying) and the scene's Cycle-Aware Keying.

Blender's ``bpy_extras.anim_utils.AutoKeying`` (5.0; not in 4.5) does not give the same keys:
it keys Replace mode on frames without a key too, uses the class's key type instead of the
scene's and the preferences' general Only Insert Needed instead of the auto-keying one, keys
Only Insert Available through ``INSERTKEY_AVAILABLE`` on the bone's transform paths only, and
passes over absolute keying sets; so the transform's own rules are followed here.
"""

from ..rig.channel_paths import bone_channel
from ..rig.rotation_modes import channel_of
from .action_slots import slot_fcurves


def auto_key(context, obj, names, moved=()):
    """Key the pose bones ``names`` of ``obj`` on the current frame as Blender's transform
    would with the scene's auto-keying settings, ``moved`` (names) the ones whose location
    changed; returns whether anything was keyed."""
    scene = context.scene
    tools, preferences = scene.tool_settings, context.preferences.edit
    if not names or not tools.use_keyframe_insert_auto:
        return False
    frame = scene.frame_current + scene.frame_subframe
    replace = tools.auto_keying_mode == 'REPLACE_KEYS'
    if replace and not _has_key_on(obj, frame):
        return False
    options = {flag for flag, on in (("INSERTKEY_VISUAL", preferences.use_visual_keying),
                                     ("INSERTKEY_NEEDED", preferences.use_auto_keyframe_insert_needed),
                                     ("INSERTKEY_REPLACE", replace),
                                     ("INSERTKEY_CYCLE_AWARE", tools.use_keyframe_cycle_aware))
               if on}
    key = {"frame": frame, "options": options, "keytype": tools.keyframe_type}
    keying_set = scene.keying_sets_all.active
    if tools.use_keyframe_insert_keyingset and keying_set is not None:
        return _apply_keying_set(context, obj, names, keying_set, key)
    if preferences.use_keyframe_insert_available:
        return _key_available(obj, set(names), key)
    keyed = False
    for name in names:
        pose_bone = obj.pose.bones[name]
        path = channel_of(pose_bone.rotation_mode)
        keyed |= pose_bone.keyframe_insert(path, group=name, **key)
        if name in moved:
            keyed |= pose_bone.keyframe_insert("location", group=name, **key)
    return keyed


def _fcurves(obj):
    data = obj.animation_data
    return [] if data is None else list(slot_fcurves(data.action, data.action_slot))


def _has_key_on(obj, frame):
    """True when some F-curve of ``obj``'s action has a key on the scene frame ``frame``, in the
    action's own time when an NLA strip is being tweaked (``id_frame_has_keyframe``,
    ``BKE_nla_tweakedit_remap``)."""
    if obj.animation_data is None:
        return False
    frame = obj.animation_data.nla_tweak_strip_time_to_scene(frame, invert=True)
    return any(abs(point.co[0] - frame) < 1e-4
               for fcurve in _fcurves(obj) for point in fcurve.keyframe_points)


def _key_available(obj, names, key):
    """A key on every existing F-curve of the bones ``names``."""
    keyed = False
    for fcurve in _fcurves(obj):
        if bone_channel(fcurve.data_path)[0] in names:
            group = fcurve.group.name if fcurve.group is not None else ""
            keyed |= obj.keyframe_insert(fcurve.data_path, index=fcurve.array_index,
                                         group=group, **key)
    return keyed


def _apply_keying_set(context, obj, names, keying_set, key):
    """A key on each path of ``keying_set``: a relative one (the built-in Location, Rotation …)
    generates its paths for each of the bones ``names``, as ``ANIM_validate_keyingset`` does
    with the pose bones as its sources (``source/blender/editors/animation/keyingsets.cc``);
    an absolute one keys its own paths, passing over those whose ID was deleted."""
    paths, relative = keying_set.paths, not keying_set.is_path_absolute
    if relative:
        if keying_set.type_info is None:
            return False
        paths.clear()
        for name in names:
            keying_set.type_info.generate(context, keying_set, obj.pose.bones[name])
    keyed = False
    for path in [path for path in paths if path.id is not None]:   # deleted IDs are passed over
        group = {'NAMED': path.group, 'KEYINGSET': keying_set.bl_label}.get(path.group_method, "")
        keyed |= path.id.keyframe_insert(path.data_path, group=group, **key,
                                         index=-1 if path.use_entire_array else path.array_index)
    if relative:
        paths.clear()
    return keyed
