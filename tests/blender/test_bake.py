"""``dqik.bake``: what the keys play back, on Blender 4.5 and 5.0, through the real operator and
its frame loop (``dq_ik_addon/blender/keys/baking.FrameBake``)."""

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp

FRAMES = (1, 120)


def _animated_targets(obj, frames=FRAMES, amplitude=0.06):
    """Hand and foot targets keyed along smooth loops around points 12 cm from the rest tails
    towards the chain's root (bent limbs: reachable): feet at priority 1, hands at 2."""
    empties = sp.add_targets(obj, sp.EFFECTORS)
    for name in sp.EFFECTORS:
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
    first, last = frames
    for k, (name, empty) in enumerate(empties.items()):
        root = np.array(obj.matrix_world @ obj.pose.bones[name].parent.parent.head)
        rest = sp.world_tail(obj, name)
        rest += 0.12 * (root - rest) / np.linalg.norm(root - rest)
        for frame in np.linspace(first, last, 7):
            phase = 2 * np.pi * (frame - first) / (last - first) + k
            empty.location = rest + amplitude * np.array(
                [np.sin(phase), 0.5 * np.cos(phase), 0.7 * np.sin(2 * phase)])
            empty.keyframe_insert("location", frame=frame)
    bpy.context.view_layer.objects.active = obj
    return empties


def _fcurves(dqik, obj):
    """Every F-curve of the armature's action in its slot."""
    return _fcurves_of(dqik, obj.animation_data.action, obj)


def _fcurves_of(dqik, action, obj):
    """Every F-curve of ``action`` in the slot with the identifier of the armature's."""
    slot = action.slots.get(obj.animation_data.action_slot.identifier)
    return dqik.dq_ik_addon.blender.keys.keyed_frames.slot_fcurves(action, slot)


def _quaternion_keys(dqik, obj, name):
    """(K,4) keys of a bone's rotation_quaternion curves."""
    path = obj.pose.bones[name].path_from_id("rotation_quaternion")
    curves = sorted((fc for fc in _fcurves(dqik, obj) if fc.data_path == path),
                    key=lambda fc: fc.array_index)
    assert len(curves) == 4
    out = []
    for fc in curves:
        co = np.empty(2 * len(fc.keyframe_points))
        fc.keyframe_points.foreach_get("co", co)
        out.append(co[1::2])
    return np.array(out).T


def _baker(dqik, obj, **options):
    return dqik.api.FrameBake(obj, bpy.context.scene, dqik.api.BakeOptions(*FRAMES, **options))


def _played(obj, names, frames):
    """(F, k, 4) the bones' rotations Blender evaluates at each frame (in any rotation mode),
    and the effectors' errors (F, 4) against their targets."""
    scene = bpy.context.scene
    rotations, errors = [], []
    empties = {name: obj.pose.bones[name].dqik.target for name in sp.EFFECTORS}
    for frame in frames:
        scene.frame_set(int(frame))
        rotations.append([np.array(obj.pose.bones[name].matrix_basis.to_quaternion())
                          for name in names])
        errors.append(sp.effector_errors(obj, empties))
    return np.array(rotations), np.array(errors)


def _same_rotations(a, b):
    """Largest |1 - |<a, b>|| style distance: the norm of a - b up to sign, per rotation."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1)).max()


def test_baked_keys_play_the_solved_pose_with_the_tasks_off(clean_scene, dqik):
    """120 frames of animated targets: with the tasks off, every frame's keys give the solved
    rotations (≤ 1e-5) and meet the targets (≤ 0.1 mm); quaternion keys never flip sign, and no
    bone turns more between two frames than the targets' motion explains."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _animated_targets(obj)
    baker = _baker(dqik, obj)
    report = baker.finish()
    assert report.frames == 120 and report.worst_error <= 1e-4
    names, solved = baker.solved()
    assert not any(pb.dqik.use_target for pb in obj.pose.bones)
    played, errors = _played(obj, names, baker.frames)
    assert _same_rotations(played, solved) <= 1e-5
    assert errors.max() <= 1e-4
    for name in names:
        if obj.pose.bones[name].rotation_mode != 'QUATERNION':
            continue
        keys = _quaternion_keys(dqik, obj, name)
        assert len(keys) == 120
        dots = np.einsum("ki,ki->k", keys[1:], keys[:-1])
        assert dots.min() >= 0.0, name
        # the targets move at most about 2π·6 cm / 120 frames ≈ 6 mm a frame: a limb bone of
        # 0.2–0.5 m turns by a few hundredths of a radian a frame
        assert np.degrees(2 * np.arccos(np.clip(dots, -1, 1))).max() <= 5.0, name


def test_bake_equals_playback_with_solve_on_frame_change(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _animated_targets(obj, frames=(1, 30))
    start = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    obj.dqik.use_solve_on_frame_change = True
    names = [pb.name for pb in obj.pose.bones]
    shown, _ = _played(obj, names, range(1, 31))
    obj.dqik.use_solve_on_frame_change = False
    start.restore(obj)
    bpy.context.view_layer.update()
    bpy.ops.dqik.bake(frame_start=1, frame_end=30)
    played, _ = _played(obj, names, range(1, 31))
    assert _same_rotations(played, shown) <= 1e-5


def _key_old_animation(obj):
    """An action of the user's own: the head and the left upper arm turning over frames 1–120,
    in a slot of the armature."""
    for frame, angle in ((1, 0.0), (60, 0.4), (120, -0.3)):
        for name in ("spine.006", "upper_arm.L"):
            pose_bone = obj.pose.bones[name]
            pose_bone.rotation_mode = 'QUATERNION'
            pose_bone.rotation_quaternion = (np.cos(angle / 2), np.sin(angle / 2), 0, 0)
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame, group=name)
    obj.pose.bones["spine.006"].rotation_quaternion = (1, 0, 0, 0)
    return obj.animation_data.action


def _head_rotations(obj, frames):
    scene = bpy.context.scene
    out = []
    for frame in frames:
        scene.frame_set(frame)
        out.append(np.array(obj.pose.bones["spine.006"].rotation_quaternion))
    return np.array(out)


def test_existing_animation_goes_to_the_nla_and_still_plays(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    old = _key_old_animation(obj)
    head_before = _head_rotations(obj, range(1, 121, 7))
    _animated_targets(obj)
    bpy.context.scene.frame_set(1)
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=120) == {'FINISHED'}
    data = obj.animation_data
    assert data.action is not old and data.action.get("dqik_bake") == obj.name
    assert obj.animation_data.nla_tracks[0].name == f"{old.name} (before DQ IK bake)"
    strips = [strip for track in data.nla_tracks for strip in track.strips]
    assert [strip.action for strip in strips] == [old]
    assert strips[0].action_slot is not None
    assert old.name in bpy.data.actions and old.users >= 1
    assert np.abs(_head_rotations(obj, range(1, 121, 7)) - head_before).max() <= 1e-6
    # the baked arm plays from the bake, on top of the old keys of upper_arm.L
    names = ["upper_arm.L", "forearm.L", "hand.L"]
    played, errors = _played(obj, names, range(1, 121, 7))
    assert errors.max() <= 1e-4


def test_baking_twice_keeps_one_action_one_slot_and_one_curve_per_channel(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    old = _key_old_animation(obj)
    _animated_targets(obj, frames=(1, 20))
    counts = []
    for _ in range(2):
        assert bpy.ops.dqik.bake(frame_start=1, frame_end=20,
                                 switch_off_tasks=False) == {'FINISHED'}
        data = obj.animation_data
        baked = [action for action in bpy.data.actions if action.get("dqik_bake")]
        counts.append((len(baked), len(bpy.data.actions), len(data.action.slots),
                       len(list(_fcurves(dqik, obj))), len(data.nla_tracks)))
    assert counts[0] == counts[1] and counts[0][0] == 1 and counts[0][2] == 1
    assert [strip.action for track in obj.animation_data.nla_tracks
            for strip in track.strips] == [old]
    report = _baker(dqik, obj).finish()                 # a third time: where is everything
    assert report.action == "metarig_DQIK" and len(bpy.data.actions) == counts[0][1]
    assert report.old_animation == (
        "keys replaced within the range in the DQ IK action 'metarig_DQIK'; the animation from "
        f"before plays from the NLA track '{old.name} (before DQ IK bake)'")


def test_baking_into_the_active_action_keeps_its_other_keys_and_a_copy(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    old = _key_old_animation(obj)
    _animated_targets(obj, frames=(1, 20))
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=20, action='ACTIVE',
                             switch_off_tasks=False) == {'FINISHED'}
    assert obj.animation_data.action is old
    backup = bpy.data.actions[f"{old.name} (before DQ IK bake)"]
    assert backup.use_fake_user
    path = obj.pose.bones["upper_arm.L"].path_from_id("rotation_quaternion")
    frames = sorted({k.co[0] for fc in _fcurves(dqik, obj) if fc.data_path == path
                     for k in fc.keyframe_points})
    assert frames == list(range(1, 21)) + [60.0, 120.0]     # the keys outside the range kept
    head = obj.pose.bones["spine.006"].path_from_id("rotation_quaternion")
    assert {k.co[0] for fc in _fcurves(dqik, obj) if fc.data_path == head
            for k in fc.keyframe_points} == {1.0, 60.0, 120.0}
    edited = next(fc for fc in _fcurves(dqik, obj) if fc.data_path == path)
    edited.keyframe_points[9].co.y = 0.5                    # a hand edit of frame 10
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=20, action='ACTIVE') == {'FINISHED'}
    second = {a for a in bpy.data.actions if a.name.startswith(f"{old.name} (before DQ IK bake)")}
    assert len(second) == 2                                 # each bake keeps what it replaced
    newest = (second - {backup}).pop()
    kept = next(fc for fc in _fcurves_of(dqik, newest, obj) if fc.data_path == path
                and fc.array_index == edited.array_index)
    assert kept.evaluate(10) == pytest.approx(0.5)


def test_cancel_puts_back_the_frame_and_every_channel_and_keys_nothing(clean_scene, dqik):
    obj = rigs.metarig("basic")
    old = _key_old_animation(obj)
    _animated_targets(obj)
    scene = bpy.context.scene
    scene.frame_set(7)
    obj.pose.bones["forearm.R"].rotation_quaternion = (0.9, 0.1, 0.3, 0.0)   # not keyed
    before = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    actions = set(bpy.data.actions)
    baker = _baker(dqik, obj)
    for _ in range(10):
        baker.step()
    baker.cancel()
    after = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    for attr, values in before.channels.items():
        assert values.tobytes() == after.channels[attr].tobytes(), attr
    assert scene.frame_current == 7 and set(bpy.data.actions) == actions
    assert obj.animation_data.action is old and len(obj.animation_data.nla_tracks) == 0
    assert not dqik.dq_ik_addon.blender.solving.sessions.session_for(obj).baking
    assert all(pb.dqik.use_target for pb in obj.pose.bones if pb.name in sp.EFFECTORS)


def test_a_target_deleted_mid_bake_stops_it_with_everything_back(clean_scene, dqik):
    obj = rigs.metarig("basic")
    empties = _animated_targets(obj)
    before = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    baker = _baker(dqik, obj)
    for _ in range(5):
        baker.step()
    bpy.data.objects.remove(empties["hand.R"])
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError, match="frame 6.*hand.R"):
        baker.step()
    after = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    assert all(before.channels[a].tobytes() == after.channels[a].tobytes()
               for a in before.channels)
    assert obj.animation_data is None and bpy.context.scene.frame_current == 1


def test_the_operator_is_one_undo_step_and_refuses_bad_input_changing_nothing(clean_scene, dqik):
    assert dqik.operators.bake.DQIK_OT_bake.bl_options >= {'REGISTER', 'UNDO'}
    obj = rigs.metarig("basic")
    with pytest.raises(RuntimeError, match="no bone with an enabled DQ IK target"):
        bpy.ops.dqik.bake(frame_start=1, frame_end=10)
    _animated_targets(obj, frames=(1, 10))
    with pytest.raises(RuntimeError, match="empty or reversed"):
        bpy.ops.dqik.bake(frame_start=10, frame_end=3)
    assert obj.animation_data is None
    assert all(not action.get("dqik_bake") for action in bpy.data.actions)
    # invoked without a window (background mode, a script) it runs to the end, the scene's
    # range when none is given
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 2, 9
    assert bpy.ops.dqik.bake('INVOKE_DEFAULT') == {'FINISHED'}
    frames = {k.co[0] for fc in _fcurves(dqik, obj) for k in fc.keyframe_points}
    assert frames == set(range(2, 10))


def _linked_action(tmp_path, obj):
    """An action of another file, linked: the user's keys of the armature, read-only here."""
    action = _key_old_animation(obj)
    action.name = "Library Walk"
    path = str(tmp_path / "library.blend")
    bpy.data.libraries.write(path, {action})
    obj.animation_data.action = None
    bpy.data.actions.remove(action)
    with bpy.data.libraries.load(path, link=True) as (_source, linked):
        linked.actions = ["Library Walk"]
    action = linked.actions[0]
    obj.animation_data.action = action
    obj.animation_data.action_slot = action.slots[0]
    return action


def test_a_linked_or_overridden_action_is_refused_as_a_target_for_keys(clean_scene, dqik,
                                                                       tmp_path):
    obj = rigs.metarig("basic")
    action = _linked_action(tmp_path, obj)
    _animated_targets(obj, frames=(1, 10))
    with pytest.raises(RuntimeError, match="'Library Walk' of 'metarig' is linked"):
        bpy.ops.dqik.bake(frame_start=1, frame_end=10, action='ACTIVE')
    assert obj.animation_data.action is action and len(obj.animation_data.nla_tracks) == 0
    override = action.override_create(remap_local_usages=True)
    obj.animation_data.action = override
    with pytest.raises(RuntimeError, match="is a library override"):
        bpy.ops.dqik.bake(frame_start=1, frame_end=10, action='ACTIVE')
    # a new action can go on top: the linked one plays from the NLA
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=10) == {'FINISHED'}
    assert [strip.action.name for track in obj.animation_data.nla_tracks
            for strip in track.strips] == ["Library Walk"]


def _deform_matrices(rig, frames):
    """(F, d, 4, 4) the DEF bones' evaluated pose matrices at each frame."""
    scene = bpy.context.scene
    deform = [pb.name for pb in rig.pose.bones if pb.name.startswith("DEF-")]
    out = []
    for frame in frames:
        scene.frame_set(frame)
        out.append([np.array(rig.pose.bones[name].matrix) for name in deform])
    return np.array(out)


def test_a_rigify_rig_in_fk_is_baked_on_its_fk_controls_and_plays_without_dq_ik(clean_scene,
                                                                               dqik):
    """Production rig: the torso keyed to turn (the chains' parents move with the frames),
    targets on the FK hands and feet moving; the keys land on the FK controls only, and with
    the tasks off the DEF bones play where Solve on Frame Change put them."""
    rig = rigs.generate_rigify_rig()
    rigs.fk_mode(rig)
    frames = range(1, 13)
    effectors = [names[0] for names in rigs.RIGIFY_FK_LIMBS.values()]
    limbs = {name for names in rigs.RIGIFY_FK_LIMBS.values() for name in names}
    rng = np.random.default_rng(18)
    sp.set_pose(rig, {name: rigs.random_quaternions(rng, 1, 0.5)[0] for name in limbs})
    goals = {name: sp.world_tail(rig, "DEF-" + name.replace("_fk", "")) for name in effectors}
    sp.set_pose(rig, {name: (1.0, 0.0, 0.0, 0.0) for name in limbs})
    empties = sp.add_targets(rig, effectors, chain_count=4)
    torso = rig.pose.bones["torso"]
    torso.rotation_mode = 'QUATERNION'
    for frame in (1, 12):
        angle = 0.1 * (frame - 1) / 11
        torso.rotation_quaternion = (np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2))
        torso.keyframe_insert("rotation_quaternion", frame=frame)
        for k, (name, empty) in enumerate(empties.items()):
            empty.location = goals[name] + 0.02 * np.array([np.sin(frame + k) * (frame - 1) / 11,
                                                            0.0, 0.0])
            empty.keyframe_insert("location", frame=frame)
    bpy.context.view_layer.objects.active = rig
    bpy.context.scene.frame_set(1)
    start = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(rig)
    rig.dqik.use_solve_on_frame_change = True
    shown = _deform_matrices(rig, frames)
    rig.dqik.use_solve_on_frame_change = False
    bpy.context.scene.frame_set(1)
    start.restore(rig)
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=12) == {'FINISHED'}
    keyed = {fc.data_path.split('"')[1] for fc in _fcurves(dqik, rig)}
    assert keyed <= limbs and {"hand_fk.L", "foot_fk.R"} <= keyed
    played = _deform_matrices(rig, frames)
    assert np.abs(played - shown).max() <= 1e-5
    bpy.context.scene.frame_set(1)       # the FK pose's own tails: reachable
    for name in effectors:
        deform = sp.world_tail(rig, "DEF-" + name.replace("_fk", ""))
        assert np.linalg.norm(deform - goals[name]) <= 1e-4, name


def test_rotation_keys_are_continuous_in_every_mode_as_mathutils_makes_them(dqik):
    """A rotation turning past ±π about tilted axes: quaternion keys keep dot ≥ 0, Euler keys
    equal mathutils' ``to_euler(order, compat)`` chained frame to frame (no 2π jumps), axis-angle
    keys turn smoothly past π; each key still is the rotation it came from."""
    from mathutils import Euler, Quaternion
    rotation_keys = dqik.dq_ik_addon.blender.rig.rotation_modes
    angle = np.linspace(0.0, 3.5 * np.pi, 200)
    axis = np.array([0.3, 0.8, -0.5]) / np.linalg.norm([0.3, 0.8, -0.5])
    q = np.column_stack([np.cos(angle / 2), np.sin(angle / 2)[:, None] * axis])
    q[::3] *= -1.0                                         # sign flips, as a solver may give
    frames = q[:, None, :]
    quaternion = rotation_keys.channel_values(frames, 'QUATERNION', [[1.0, 0.0, 0.0, 0.0]])
    assert np.einsum("fki,fki->fk", quaternion[1:], quaternion[:-1]).min() >= 0.0
    for order in ('XYZ', 'ZXY', 'YZX'):
        euler = rotation_keys.channel_values(frames, order, [[0.0, 0.0, 0.0]])[:, 0]
        compat = Euler((0.0, 0.0, 0.0), order)
        for key, rotation in zip(euler, q):
            compat = Quaternion(rotation).to_euler(order, compat)
            assert np.abs(key - np.array(compat)).max() <= 1e-5     # mathutils: float32
        assert np.abs(np.diff(euler, axis=0)).max() <= 0.5
    axis_angle = rotation_keys.channel_values(frames, 'AXIS_ANGLE', [[0.0, 0.0, 1.0, 0.0]])[:, 0]
    assert np.abs(np.diff(axis_angle[:, 0])).max() <= 0.1
    back = [Quaternion(key[1:], key[0]) for key in axis_angle]
    assert max(abs(abs(b.dot(Quaternion(r))) - 1.0) for b, r in zip(back, q)) <= 1e-6


def _random_rotation_modes(obj, names, seed):
    rng = np.random.default_rng(seed)
    modes = ('QUATERNION', 'XYZ', 'ZXY', 'AXIS_ANGLE')
    for name in names:
        obj.pose.bones[name].rotation_mode = modes[int(rng.integers(0, len(modes)))]


def _held_then_moved_targets(obj):
    """The feet and hands held still from frame 1 to 40, then moving linearly 3 cm until 120
    (linear keys), from points 12 cm inside the rest tails."""
    empties = sp.add_targets(obj, sp.EFFECTORS)
    preferences = bpy.context.preferences.edit
    interpolation = preferences.keyframe_new_interpolation_type
    preferences.keyframe_new_interpolation_type = 'LINEAR'
    for k, (name, empty) in enumerate(empties.items()):
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
        root = np.array(obj.matrix_world @ obj.pose.bones[name].parent.parent.head)
        rest = sp.world_tail(obj, name)
        rest += 0.12 * (root - rest) / np.linalg.norm(root - rest)
        for frame, offset in ((1, 0.0), (40, 0.0), (120, 0.03)):
            empty.location = rest + offset * np.array([np.cos(k), np.sin(k), 0.5])
            empty.keyframe_insert("location", frame=frame)
    preferences.keyframe_new_interpolation_type = interpolation
    bpy.context.view_layer.objects.active = obj
    return empties


def test_cleanup_drops_keys_and_keeps_every_target_within_its_tolerance(clean_scene, dqik):
    """Cleanup with a 0.1 mm tolerance on bones in quaternion, Euler and axis-angle modes: most
    keys go (the targets hold, then move steadily), and on every frame the keys play back each
    target within 0.1 mm."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _random_rotation_modes(obj, sp.chain_bones(obj, sp.EFFECTORS), 4)
    _held_then_moved_targets(obj)
    baker = _baker(dqik, obj, cleanup_tolerance=1e-4)
    report = baker.finish()
    assert report.worst_error <= 1e-4
    every_frame = 120 * sum(
        4 if obj.pose.bones[name].rotation_mode in ('QUATERNION', 'AXIS_ANGLE') else 3
        for name in report.bones)
    assert report.keys < 0.25 * every_frame
    _, errors = _played(obj, [], range(1, 121))
    assert errors.max() <= 1e-4


def test_keyed_frames_bake_only_where_targets_have_keys(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _random_rotation_modes(obj, sp.chain_bones(obj, sp.EFFECTORS), 5)
    _animated_targets(obj)
    baker = _baker(dqik, obj, frames='KEYED')
    expected = np.round(np.linspace(1, 120, 7)).astype(int)
    assert baker.frames.tolist() == sorted(set(expected.tolist()))
    report = baker.finish()
    assert report.frames == 7
    for fcurve in _fcurves(dqik, obj):
        assert [k.co[0] for k in fcurve.keyframe_points] == baker.frames.tolist()
    names, solved = baker.solved()
    played, errors = _played(obj, names, baker.frames)
    assert _same_rotations(played, solved) <= 1e-5 and errors.max() <= 1e-4


def test_selected_and_all_bones_key_the_other_bones_as_animated(clean_scene, dqik):
    """'SELECTED' keys the selected bones, 'ALL' every bone; a bone the solve does not move is
    keyed with its animated rotation, location and scale, so the action plays alone."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _key_old_animation(obj)
    head_before = _head_rotations(obj, range(1, 21))
    _animated_targets(obj, frames=(1, 20))
    bones = obj.data.bones if bpy.app.version < (5, 0, 0) else obj.pose.bones
    for item in bones:
        item.select = item.name in ("spine.006", "hand.L")
    report = _baker(dqik, obj, bones='SELECTED', switch_off_tasks=False).finish()
    assert set(report.bones) == {"spine.006", "hand.L"}
    paths = {fc.data_path.rsplit(".", 1)[1] for fc in _fcurves(dqik, obj)
             if "spine.006" in fc.data_path}
    assert paths == {"rotation_quaternion", "location", "scale"}
    report = _baker(dqik, obj, bones='ALL').finish()
    assert len(report.bones) == len(obj.pose.bones)
    obj.animation_data.nla_tracks[0].mute = True         # the bake's action alone
    assert np.abs(_head_rotations(obj, range(1, 21)) - head_before).max() <= 1e-6


def test_cleanup_keeps_the_keys_that_hold_the_arm_out_of_a_passing_collider(clean_scene, dqik):
    """The hand holds still on its target while a box sweeps through where the forearm was:
    every frame's solve swings the elbow out of its way, and the hand never moves. Cleanup
    with a 5 mm tolerance may drop every key the task does not need, but not those that keep
    the arm out of the box: on every frame the keys play the arm clear of it (within the
    tolerance of the solved clearance)."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    arm = ["hand.L", "forearm.L", "upper_arm.L"]
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    empties["hand.L"].location = sp.world_tail(obj, "hand.L")
    elbow = np.array(obj.matrix_world @ obj.pose.bones["forearm.L"].center)
    passing = sp.box("passing", (-0.04, -0.04, -0.04), (0.04, 0.04, 0.04), colliders)
    for frame, side in ((1, -0.3), (60, 0.3)):
        passing.location = elbow + np.array([0.0, side, 0.0])
        passing.keyframe_insert("location", frame=frame)
    clean_scene.frame_start, clean_scene.frame_end = 1, 60
    bpy.context.view_layer.objects.active = obj
    solved = []
    for frame in range(1, 61):
        clean_scene.frame_set(frame)
        assert bpy.ops.dqik.solve() == {'FINISHED'}
        bpy.context.view_layer.update()
        solved.append(sp.deepest_clearance(obj, dqik, arm))
    sp.clear_pose(obj)
    plain = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 60))
    for _ in range(5):
        plain.step()
    assert plain.states == []    # without Clean Up no frame's collider is kept in memory
    plain.cancel()
    tolerance = 5e-3
    report = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(
        1, 60, cleanup_tolerance=tolerance)).finish()
    assert report.keys < 0.25 * 60 * 4 * len(report.bones)     # most keys were dropped
    played = []
    for frame in range(1, 61):
        clean_scene.frame_set(frame)
        played.append(sp.deepest_clearance(obj, dqik, arm))
    assert min(solved) >= -1e-3
    assert min(played) >= min(solved) - tolerance, (min(played), min(solved))


def test_playback_after_a_bake_that_keeps_the_tasks_on_shows_the_baked_keys(clean_scene, dqik):
    """Solve on Frame Change stays on through a bake that keeps the tasks: the frames played
    after it show the baked keys (the first frame after the bake starts from them, not from the
    bake's last solved frame)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _animated_targets(obj, frames=(1, 30))
    scene = bpy.context.scene
    obj.dqik.use_solve_on_frame_change = True
    scene.frame_set(1)
    bpy.ops.dqik.bake(frame_start=1, frame_end=30, switch_off_tasks=False)
    assert obj.dqik.use_solve_on_frame_change
    names = [pb.name for pb in obj.pose.bones]
    shown, _ = _played(obj, names, range(2, 8))
    obj.dqik.use_solve_on_frame_change = False
    played, _ = _played(obj, names, range(2, 8))
    assert _same_rotations(played, shown) <= 1e-5


def _short_bake(obj, **options):
    """A 20-frame bake of ``obj``'s animated targets through the operator."""
    bpy.context.view_layer.objects.active = obj
    return bpy.ops.dqik.bake(frame_start=1, frame_end=20, **options)


@pytest.mark.parametrize("mode", ['ACTIVE', 'NEW'])
def test_an_action_without_a_slot_for_the_armature_never_gets_another_objects_slot(clean_scene,
                                                                                    dqik, mode):
    """The armature is given a cube's action but no slot: a bake, into the active action or a
    new one, gives it a slot of its own, and the cube's animation stays as it was."""
    obj = rigs.metarig("basic")
    _animated_targets(obj, frames=(1, 20))
    cube = bpy.data.objects.new("Cube", None)
    clean_scene.collection.objects.link(cube)
    for frame, z in ((1, 0.0), (20, 2.0)):
        cube.location = (3.0, 0.0, z)
        cube.keyframe_insert("location", frame=frame)
    before = sorted((f.data_path, f.array_index) for f in _fcurves(dqik, cube))
    obj.animation_data_create().action = cube.animation_data.action
    assert obj.animation_data.action_slot is None
    assert _short_bake(obj, action=mode) == {'FINISHED'}
    slot = obj.animation_data.action_slot
    assert slot != cube.animation_data.action_slot and list(slot.users()) == [obj]
    assert sorted((f.data_path, f.array_index) for f in _fcurves(dqik, cube)) == before
    assert not obj.animation_data.nla_tracks        # it played nothing: nothing to push down
    clean_scene.frame_set(20)
    assert np.allclose(obj.matrix_world.translation, (0.0, 0.0, 0.0))


def test_a_linked_duplicates_bake_is_kept_when_the_other_bakes(clean_scene, dqik):
    """Two armatures share the DQ IK action one of them baked (a linked duplicate): a New
    Action bake of the other makes its own action and leaves the first one's keys as they
    were."""
    obj = rigs.metarig("basic")
    _animated_targets(obj, frames=(1, 20))
    assert _short_bake(obj, switch_off_tasks=False) == {'FINISHED'}
    first = obj.animation_data.action
    keys = lambda: [tuple(k.co) for f in _fcurves_of(dqik, first, obj)  # noqa: E731
                    for k in f.keyframe_points]
    before = keys()
    twin = obj.copy()
    clean_scene.collection.objects.link(twin)
    twin.animation_data.action = first
    twin.animation_data.action_slot = obj.animation_data.action_slot
    twin.pose.bones["hand.L"].dqik.target.location.z += 0.05
    assert _short_bake(twin) == {'FINISHED'}
    assert twin.animation_data.action is not first
    assert keys() == before


def test_locked_curves_refuse_the_bake_and_muted_or_driven_ones_are_named(clean_scene, dqik):
    obj = rigs.metarig("basic")
    old = _key_old_animation(obj)
    _animated_targets(obj, frames=(1, 20))
    path = obj.pose.bones["upper_arm.L"].path_from_id("rotation_quaternion")
    curve = next(f for f in _fcurves(dqik, obj) if f.data_path == path)
    curve.lock = True
    before = [tuple(k.co) for k in curve.keyframe_points]
    with pytest.raises(RuntimeError, match="locked"):
        _short_bake(obj, action='ACTIVE')
    assert [tuple(k.co) for k in curve.keyframe_points] == before
    assert not [a for a in bpy.data.actions if a is not old and a.name.startswith(old.name)]
    curve.lock, curve.mute = False, True
    driver = obj.pose.bones["forearm.L"].driver_add("rotation_quaternion", 1)
    driver.driver.expression = "0"
    baker = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 20, action='ACTIVE'))
    warnings = " ".join(baker.finish().warnings)
    assert "upper_arm.L" in warnings and "muted" in warnings
    assert "forearm.L" in warnings and "driver" in warnings


def test_a_new_action_bake_switches_the_nla_on_so_the_pushed_down_action_plays(clean_scene,
                                                                                 dqik):
    obj = rigs.metarig("basic")
    _key_old_animation(obj)
    head_before = _head_rotations(obj, range(1, 21, 4))
    _animated_targets(obj, frames=(1, 20))
    obj.animation_data.use_nla = False
    assert _short_bake(obj) == {'FINISHED'}
    assert obj.animation_data.use_nla
    assert np.abs(_head_rotations(obj, range(1, 21, 4)) - head_before).max() <= 1e-6


def test_a_keyed_rotation_mode_stops_the_bake_changing_nothing(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _animated_targets(obj, frames=(1, 20))
    forearm = obj.pose.bones["forearm.L"]
    forearm.rotation_mode = 'QUATERNION'
    forearm.keyframe_insert("rotation_mode", frame=1)
    forearm.rotation_mode = 'XYZ'
    forearm.keyframe_insert("rotation_mode", frame=10)
    curves = len(list(_fcurves(dqik, obj)))
    with pytest.raises(RuntimeError, match="rotation mode of forearm.L"):
        _short_bake(obj, action='ACTIVE')
    assert len(list(_fcurves(dqik, obj))) == curves


def test_keyed_frames_follow_a_target_moved_by_a_constraint_or_a_driver(clean_scene, dqik):
    """KEYED frames: a target that copies a keyed Empty's location, and one whose driver reads
    another keyed Empty, bake the frames of those Empties' keys."""
    obj = rigs.metarig("basic")
    empties = sp.add_targets(obj, ["hand.L", "hand.R"])
    leader = bpy.data.objects.new("Leader", None)
    reader = bpy.data.objects.new("Read", None)
    for thing, frame in ((leader, 7), (reader, 13)):
        clean_scene.collection.objects.link(thing)
        thing.keyframe_insert("location", frame=frame)
    empties["hand.L"].constraints.new('COPY_LOCATION').target = leader
    driver = empties["hand.R"].driver_add("location", 2).driver
    variable = driver.variables.new()
    variable.targets[0].id = reader
    variable.targets[0].data_path = "location.z"
    driver.expression = variable.name
    frames = dqik.dq_ik_addon.blender.keys.baking.bake_frames(obj, dqik.api.BakeOptions(1, 20, frames='KEYED'))
    assert frames.tolist() == [1, 7, 13, 20]


def test_steps_that_miss_the_end_frame_bake_it_too_and_frames_past_blenders_are_refused(
        clean_scene, dqik):
    obj = rigs.metarig("basic")
    bake_frames = dqik.dq_ik_addon.blender.keys.baking.bake_frames
    assert bake_frames(obj, dqik.api.BakeOptions(1, 10, step=4)).tolist() == [1, 5, 9, 10]
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError, match="past the frames"):
        bake_frames(obj, dqik.api.BakeOptions(1, 2_000_000))


def test_disabling_the_extension_mid_bake_puts_back_the_frame_and_the_pose(clean_scene, dqik):
    import addon_utils
    from extension_cli import MODULE
    obj = rigs.metarig("basic")
    _animated_targets(obj, frames=(1, 20))
    clean_scene.frame_set(3)
    start = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    baker = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 20))
    ended = []
    baker.on_end = lambda: ended.append(True)       # the operator removes its timer here
    for _ in range(5):
        baker.step()
    assert start.changed_bones(obj) and clean_scene.frame_current == 5
    addon_utils.disable(MODULE, default_set=True)
    try:
        assert ended == [True] and clean_scene.frame_current == 3
        assert start.changed_bones(obj) == []
    finally:
        addon_utils.enable(MODULE, default_set=True)


def test_keyed_task_settings_are_solved_played_and_baked_as_keyed(clean_scene, dqik):
    """The left hand's position task keyed on until frame 5 and off from frame 6 (its rotation
    task stays): Solve, Solve on Frame Change and a bake all follow the keys, so from frame 6
    the hand is no longer pulled to its moving target."""
    obj = rigs.metarig("basic")
    _animated_targets(obj, frames=(1, 12))
    settings = obj.pose.bones["hand.L"].dqik
    settings.use_rotation = True
    path = 'pose.bones["hand.L"].dqik.use_position'
    for frame, on in ((5, True), (6, False)):
        settings.use_position = on
        obj.keyframe_insert(path, frame=frame)
    target = settings.target
    scene = bpy.context.scene

    def hand_error():
        return float(np.linalg.norm(sp.world_tail(obj, "hand.L")
                                    - np.array(target.matrix_world.translation)))
    scene.frame_set(10)
    assert not settings.use_position
    bpy.context.view_layer.objects.active = obj
    bpy.ops.dqik.solve()
    report = dqik.api.session_for(obj).last_result
    assert report.tasks[[t.name for t in report.tasks].index("hand.L")].position_error is None
    scene.frame_set(3)
    obj.dqik.use_solve_on_frame_change = True
    errors = {}
    for frame in range(3, 11):
        scene.frame_set(frame)
        bpy.context.view_layer.update()
        errors[frame] = hand_error()
    obj.dqik.use_solve_on_frame_change = False
    assert max(errors[f] for f in range(3, 6)) <= 1e-4 and min(errors[f] for f in (8, 10)) > 1e-3
    report = dqik.api.FrameBake(obj, scene, dqik.api.BakeOptions(1, 12)).finish()
    assert report.frames == 12
    scene.frame_set(4)
    assert hand_error() <= 1e-4


def test_switch_tasks_off_leaves_the_tasks_it_did_not_bake(clean_scene, dqik):
    """A task with no target is left out of the bake (with a warning): Switch Tasks Off switches
    the baked tasks off and leaves that one on."""
    obj = rigs.metarig("basic")
    _animated_targets(obj, frames=(1, 5))
    waiting = obj.pose.bones["forearm.R"].dqik
    waiting.use_target = True
    report = dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 5)).finish()
    assert any("forearm.R" in warning for warning in report.warnings)
    assert waiting.use_target
    assert not any(obj.pose.bones[name].dqik.use_target for name in sp.EFFECTORS)


@pytest.mark.parametrize("options", [dict(frame_start=1.5), dict(step=float("nan")),
                                     dict(cleanup_tolerance=float("nan")),
                                     dict(cleanup_tolerance=-1.0)])
def test_script_bake_options_out_of_their_kind_are_refused_changing_nothing(clean_scene, dqik,
                                                                           options):
    obj = rigs.metarig("basic")
    _animated_targets(obj, frames=(1, 5))
    given = {"frame_start": 1, "frame_end": 5, **options}
    start, end = given.pop("frame_start"), given.pop("frame_end")
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError):
        dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(start, end, **given))
    assert obj.animation_data is None or obj.animation_data.action is None


def test_a_deleted_armature_is_refused_by_name(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.data.objects.remove(obj)
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError, match="deleted"):
        dqik.api.FrameBake(obj, clean_scene, dqik.api.BakeOptions(1, 5))


def test_a_keyed_setting_of_a_deleted_or_renamed_bone_does_not_stop_solving(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _animated_targets(obj, frames=(1, 5))
    for bone in ("breast.L", "breast.R"):
        obj.keyframe_insert(f'pose.bones["{bone}"].dqik.stiffness', frame=1)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    obj.pose.bones["breast.R"].name = "chest_R"
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.ops.object.mode_set(mode='EDIT')
    obj.data.edit_bones.remove(obj.data.edit_bones["breast.L"])
    bpy.ops.object.mode_set(mode='POSE')
    assert bpy.ops.dqik.solve() == {'FINISHED'}
