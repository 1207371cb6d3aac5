"""Live posing (``dqik.live``) through its tick (``dq_ik_addon/blender/solving/live_posing.LivePosing``): modal
operators and timers do not run in background mode, so the tests drive the tick as the timer
would, the way a user's script can."""

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from mathutils import Matrix, Quaternion

REACHED = 1e-4


def _live(dqik, obj):
    return dqik.api.LivePosing(obj)      # the scripting path (docs/live.md)


def _feet_and_hand(obj):
    """Feet planted at priority 1 and a hand target at priority 2 where the hand is now."""
    feet = sp.add_targets(obj, ["foot.L", "foot.R"], priority=1)
    for name, empty in feet.items():
        empty.location = sp.world_tail(obj, name)
    hand = sp.add_targets(obj, ["hand.L"], priority=2)["hand.L"]
    hand.location = sp.world_tail(obj, "hand.L")
    bpy.context.view_layer.update()
    return feet, hand


def test_ticks_track_moving_targets_and_idle_ticks_do_nothing(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet, hand = _feet_and_hand(obj)
    live = _live(dqik, obj)
    start = sp.world_tail(obj, "hand.L")
    for k in range(1, 21):            # 20 ticks, the hand target moving 1 cm per tick
        # matrix_world is current at once: the timer's tick sees the move before any update
        hand.matrix_world = Matrix.Translation(start + np.array([0.01, -0.005, -0.01]) * k)
        assert live.tick() is not None
    for _ in range(20):               # the remaining error is solved by the next ticks
        if live.tick() is None:
            break
    errors = sp.effector_errors(obj, {**feet, "hand.L": hand})
    assert errors.max() <= REACHED
    assert live.tick() is None        # nothing moved: no solve
    iterations = live.session.last_result.iterations
    assert live.tick() is None and live.session.last_result.iterations == iterations
    live.stop()


def test_the_rig_follows_a_target_through_blenders_updates(clean_scene, dqik):
    """While Blender's transform tool moves a target it takes the events in front of
    ``dqik.live``; each of its depsgraph updates makes a tick (``LivePosing.follow``), so the
    rig follows without the timer. An update with nothing moved (the tick's own pose write
    included) solves nothing, and nothing follows once live posing stopped."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet, hand = _feet_and_hand(obj)
    live = _live(dqik, obj)
    start = sp.world_tail(obj, "hand.L")
    for k in range(1, 21):
        hand.location = start + np.array([0.01, -0.005, -0.01]) * k
        before = live.last
        bpy.context.view_layer.update()
        assert live.last is not before
    errors = sp.effector_errors(obj, {**feet, "hand.L": hand})
    assert errors.max() <= REACHED
    followed = live.last
    for _ in range(3):
        bpy.context.view_layer.update()
    assert live.last is followed and live.tick() is None
    live.session.baking = True           # a bake solves the frames itself: live posing waits
    hand.location = start
    bpy.context.view_layer.update()
    assert live.last is followed and live.tick() is None
    live.session.baking = False
    live.stop()
    hand.location = start
    bpy.context.view_layer.update()
    assert live.last is followed
    assert np.linalg.norm(sp.world_tail(obj, "hand.L") - start) > 0.1


def test_ticks_in_updates_read_the_rig_again_only_when_an_update_reports_it(clean_scene, dqik):
    """A tick in a depsgraph update that reported only the moved target takes the rig's set-up
    as last checked (``set_up_watch``); a bone option changed between two moves reports the
    armature, so the next tick reads it: a forearm locked meanwhile stays as it is."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet, hand = _feet_and_hand(obj)
    live = _live(dqik, obj)
    bpy.context.view_layer.update()
    start, watch = sp.world_tail(obj, "hand.L"), live.session.watch
    trusted = []
    for k in range(1, 6):
        hand.location = start + np.array([0.0, -0.01, -0.01]) * k
        bpy.context.view_layer.update()
        trusted.append(watch.trusting)
    assert trusted[1:] == [True] * 4      # the first follows the tick's own write, outside one
    forearm = obj.pose.bones["forearm.L"]
    forearm.lock_rotation = (True, True, True)
    held = forearm.rotation_quaternion.copy()
    for k in range(6, 11):
        hand.location = start + np.array([0.0, -0.01, -0.01]) * k
        bpy.context.view_layer.update()
        trusted.append(watch.trusting)
    assert trusted[5] is False and all(trusted[6:])
    assert np.abs(np.array(forearm.rotation_quaternion) - np.array(held)).max() == 0.0
    errors = sp.effector_errors(obj, feet)
    assert errors.max() <= REACHED
    live.stop()
    # between two live posings no update is noted: the next one starts by checking the rig
    upper = obj.pose.bones["upper_arm.L"]
    upper.lock_rotation = (True, True, True)
    bpy.context.view_layer.update()      # evaluated with no live posing to note it
    kept = upper.rotation_quaternion.copy()
    live = _live(dqik, obj)
    hand.location = start + np.array([0.0, -0.01, 0.02])
    bpy.context.view_layer.update()
    assert watch.trusting is False
    assert np.abs(np.array(upper.rotation_quaternion) - np.array(kept)).max() == 0.0
    live.stop()


def test_a_pose_channel_set_between_two_moves_is_kept_by_the_next_tick(clean_scene, dqik):
    """Ticks in updates that reported only a moved target take the pose channels as the last
    tick wrote them, without reading them back (``SetUpWatch.stands``); a channel set from
    Python between two moves reports the armature, so the next tick reads the pose again and
    its write keeps the value set (a bone no chain moves: its channels are written as read)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet, hand = _feet_and_hand(obj)
    live = _live(dqik, obj)
    bpy.context.view_layer.update()
    start = sp.world_tail(obj, "hand.L")
    for k in range(1, 4):
        hand.location = start + np.array([0.0, -0.01, -0.01]) * k
        bpy.context.view_layer.update()
    assert live.session.watch.stands(True)
    other = obj.pose.bones["hand.R"]
    other.location = (0.01, 0.02, 0.03)
    other.rotation_quaternion = (0.9, 0.1, 0.2, 0.3)
    set_location, set_rotation = np.array(other.location), np.array(other.rotation_quaternion)
    before = live.last
    hand.location = start + np.array([0.0, -0.04, -0.04])
    bpy.context.view_layer.update()
    assert live.last is not before
    assert np.array_equal(np.array(other.location), set_location)
    assert np.array_equal(np.array(other.rotation_quaternion), set_rotation)
    assert sp.effector_errors(obj, {**feet, "hand.L": hand}).max() <= REACHED
    live.stop()


def test_a_tick_that_raises_leaves_no_pose_for_the_next_to_take_as_held(clean_scene, dqik):
    """A tick that raises after reading the rig (the drag released, no task left) has checked
    the set-up, so the next tick in an update may trust it; the pose it would take as held is
    gone with the failed tick, and a channel set meanwhile is read and kept."""
    obj = rigs.metarig("basic")
    other = bpy.data.objects.new("unrelated", None)
    bpy.context.scene.collection.objects.link(other)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='POSE')
    bpy.context.view_layer.update()
    live = _live(dqik, obj)
    tip = sp.world_tail(obj, "hand.L")
    live.drag("hand.L", tip + np.array([0.0, -0.1, -0.1]))
    assert live.tick() is not None          # the timer's tick writes the pose
    live.drag(None, None)
    bpy.context.view_layer.update()         # its tick in the update has no task: raises
    bone = obj.pose.bones["hand.R"]
    bone.rotation_quaternion = (0.9, 0.1, 0.2, 0.3)
    kept = np.array(bone.rotation_quaternion)
    bpy.context.view_layer.update()         # reports the armature: read, and raises again
    live.drag("hand.L", tip + np.array([0.0, -0.15, -0.1]))
    other.location = (1.0, 2.0, 3.0)
    before = live.last
    bpy.context.view_layer.update()         # trusted: nothing reported the armature since
    assert live.last is not before
    assert np.array_equal(np.array(bone.rotation_quaternion), kept)
    live.stop()


def test_ticks_read_the_channels_drivers_set_after_their_write(clean_scene, dqik,
                                                               monkeypatch):
    """A driver of a solved bone that reads another solved bone is evaluated again after a
    tick's write, with no update that reports the armature: the next tick takes the other
    channels as it wrote them but reads the driven ones, so what it starts from is what Blender
    holds."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet, hand = _feet_and_hand(obj)
    driver = obj.driver_add('pose.bones["spine.003"].rotation_quaternion', 3).driver
    driver.type = 'SCRIPTED'
    variable = driver.variables.new()
    variable.targets[0].id = obj
    variable.targets[0].data_path = 'pose.bones["forearm.L"].rotation_quaternion[1]'
    driver.expression = f"0.5 * {variable.name}"
    bpy.context.view_layer.update()
    live = _live(dqik, obj)
    bpy.context.view_layer.update()
    inputs, taken = dqik.dq_ik_addon.blender.solving.session.TickInputs, []
    read = inputs.read
    monkeypatch.setattr(inputs, "read", lambda *args, **kwargs: taken.append(
        read(*args, **kwargs)) or taken[-1])
    start, trusted, held = sp.world_tail(obj, "hand.L"), [], []
    for k in range(1, 6):
        held.append(dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj).key())
        hand.location = start + np.array([0.0, -0.03, -0.03]) * k
        bpy.context.view_layer.update()
        trusted.append(live.session.watch.trusting)
        assert taken[-1].snapshot.key() == held[-1]
    assert len(set(held)) == 5 and all(trusted[1:])      # the driver turned the spine each time
    live.stop()


def test_a_frame_change_makes_the_next_tick_in_an_update_read_keyed_settings(clean_scene,
                                                                             dqik):
    """A frame change calls no depsgraph update handler, and keys may switch a task off: the
    tick after it checks the settings again (``sessions.armatures_changed``)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    _, hand = _feet_and_hand(obj)
    settings = obj.pose.bones["hand.L"].dqik
    for frame, on in ((1, True), (10, False)):
        settings.use_target = on
        obj.keyframe_insert('pose.bones["hand.L"].dqik.use_target', frame=frame)
    scene = bpy.context.scene
    scene.frame_set(1)
    live = _live(dqik, obj)
    start = sp.world_tail(obj, "hand.L")
    for k in range(1, 3):
        hand.location = start + np.array([0.0, -0.02, 0.0]) * k
        bpy.context.view_layer.update()
    scene.frame_set(10)
    resting = sp.world_tail(obj, "hand.L")
    hand.location = start + np.array([0.0, -0.1, 0.05])
    bpy.context.view_layer.update()
    assert live.session.watch.trusting is False
    assert "hand.L" not in {task.name for task in live.last.tasks}
    assert np.linalg.norm(sp.world_tail(obj, "hand.L") - resting) <= 1e-6
    live.stop()


def test_a_budget_stops_a_tick_early_and_the_next_goes_on(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet, hand = _feet_and_hand(obj)
    hand.location = sp.world_tail(obj, "hand.L") + np.array([0.25, -0.3, -0.2])
    bpy.context.view_layer.update()
    obj.dqik.time_budget_ms = 0.001
    live = _live(dqik, obj)
    first = live.tick()
    assert first.cut_short and first.iterations == 1
    second = live.tick()              # nothing moved, but the last tick was cut short
    assert second is not None and second.iterations >= 1
    obj.dqik.time_budget_ms = 1000.0
    while live.tick() is not None and live.session.last_result.cut_short:
        pass
    assert sp.effector_errors(obj, feet).max() <= REACHED
    live.stop()


def _random_modes_and_pose(obj, rng):
    modes = ('QUATERNION', 'XYZ', 'ZXY', 'YZX', 'AXIS_ANGLE')
    for pb in obj.pose.bones:
        pb.rotation_mode = modes[int(rng.integers(0, len(modes)))]
        q = Quaternion(rigs.random_quaternions(rng, 1, 0.3)[0])
        pb.rotation_quaternion = q
        pb.rotation_euler = q.to_euler(pb.rotation_mode if pb.rotation_mode in modes[1:4] else 'XYZ')
        axis, angle = q.to_axis_angle()
        pb.rotation_axis_angle = (angle, *axis)
        pb.location = rng.uniform(-0.01, 0.01, 3)
    bpy.context.view_layer.update()


def test_cancel_restores_the_starting_pose_bit_for_bit(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _random_modes_and_pose(obj, np.random.default_rng(3))
    feet, hand = _feet_and_hand(obj)
    hand.location = sp.world_tail(obj, "hand.L") + np.array([0.1, -0.2, -0.1])
    bpy.context.view_layer.update()
    live_posing = dqik.dq_ik_addon.blender.solving.live_posing
    before = live_posing.PoseSnapshot(obj)
    live = _live(dqik, obj)
    for _ in range(5):
        live.tick()
    assert live.start.changed_bones(obj)
    live.cancel()
    after = live_posing.PoseSnapshot(obj)
    for attr, values in before.channels.items():
        assert values.tobytes() == after.channels[attr].tobytes(), attr
    assert live.ended() == "stopped"


def test_confirm_keeps_the_pose_and_keys_the_changed_bones_with_auto_keying(clean_scene, dqik):
    obj = rigs.metarig("basic")
    feet, hand = _feet_and_hand(obj)
    hand.location = sp.world_tail(obj, "hand.L") + np.array([0.1, -0.2, -0.1])
    bpy.context.view_layer.update()
    scene = bpy.context.scene
    scene.frame_set(12)
    scene.tool_settings.use_keyframe_insert_auto = True
    live = _live(dqik, obj)
    live.tick()
    pose = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    changed = live.confirm(bpy.context)
    assert changed and set(changed) <= {"hand.L", "forearm.L", "upper_arm.L", "shoulder.L",
                                        "spine", "spine.001", "spine.002", "spine.003",
                                        "thigh.L", "shin.L", "foot.L", "thigh.R", "shin.R",
                                        "foot.R"}
    kept = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    assert all(pose.channels[a].tobytes() == kept.channels[a].tobytes() for a in pose.channels)
    keyed = {name for name in changed
             if obj.pose.bones[name].rotation_mode == 'QUATERNION'}
    paths = set()
    for fcurve in _fcurves(obj):
        paths.add(fcurve.data_path)
        assert [k.co[0] for k in fcurve.keyframe_points] == [12.0]
    assert {f'pose.bones["{name}"].rotation_quaternion' for name in keyed} <= paths
    scene.tool_settings.use_keyframe_insert_auto = False


def _fcurves(obj):
    """Every F-curve of the armature's action (slotted actions in 4.4+: layers → strips →
    channel bags)."""
    action = obj.animation_data.action
    slot = obj.animation_data.action_slot
    for layer in action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(slot)
            if bag is not None:
                yield from bag.fcurves


def test_drag_pulls_an_untargeted_bone_while_the_feet_hold(clean_scene, dqik):
    """A temporary task on a bone without a target pulls its tail to a point; the priority-1
    feet stay; releasing keeps the pose."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet, _ = _feet_and_hand(obj)
    obj.pose.bones["hand.L"].dqik.use_target = False
    sp.set_pose(obj, {"upper_arm.L": Quaternion((1, 0, 0), 0.4) @ Quaternion((0, 0, 1), 0.3),
                      "forearm.L": Quaternion((1, 0, 0), 0.5)})
    goal = sp.world_tail(obj, "forearm.L")       # reachable under the limits
    sp.clear_pose(obj)
    live = _live(dqik, obj)
    live.drag("forearm.L", goal)
    for _ in range(30):
        if live.tick() is None:
            break
    bpy.context.view_layer.update()
    assert np.linalg.norm(sp.world_tail(obj, "forearm.L") - goal) <= REACHED
    assert sp.effector_errors(obj, feet).max() <= REACHED
    held = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    live.drag(None, None)
    live.tick()
    live.tick()
    bpy.context.view_layer.update()
    assert np.linalg.norm(sp.world_tail(obj, "forearm.L") - goal) <= REACHED
    assert not held.changed_bones(obj)
    live.stop()


def test_pin_makes_a_target_where_the_tail_stands(clean_scene, dqik):
    obj = rigs.metarig("basic")
    live = _live(dqik, obj)
    empty = live.pin("forearm.L")
    assert obj.pose.bones["forearm.L"].dqik.target == empty
    assert np.allclose(np.array(empty.location), sp.world_tail(obj, "forearm.L"), atol=1e-6)
    live.stop()


def test_live_posing_ends_cleanly(clean_scene, dqik, tmp_path):
    """Deleted target, Pose Mode left, another live posing started, file reloaded."""
    obj = rigs.metarig("basic")
    feet, hand = _feet_and_hand(obj)
    live = _live(dqik, obj)
    live.tick()
    bpy.data.objects.remove(hand)
    live.tick()
    assert any(t.status == 'MISSING' for t in live.session.last_result.tasks)
    bpy.ops.object.mode_set(mode='OBJECT')
    assert "left Pose Mode" in live.ended()
    bpy.ops.object.mode_set(mode='POSE')
    second = _live(dqik, obj)
    assert live.ended() == "stopped" and second.ended() is None
    path = str(tmp_path / "live.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    assert second.ended() is not None
    assert dqik.dq_ik_addon.blender.solving.live_posing.running() is None


def test_the_operator_says_it_needs_a_viewport(clean_scene, dqik):
    rigs.metarig("basic")
    with pytest.raises(RuntimeError, match="needs a 3D Viewport"):
        bpy.ops.dqik.live()


def test_disabling_the_extension_stops_live_posing_three_times(clean_scene, dqik):
    import importlib

    import addon_utils
    from extension_cli import MODULE
    obj = rigs.metarig("basic")
    _feet_and_hand(obj)
    for _ in range(3):
        live_posing = importlib.import_module(f"{MODULE}.dq_ik_addon.blender.solving.live_posing")
        live = live_posing.LivePosing(obj)
        live.tick()
        stops = []
        live.on_stop = lambda: stops.append(True)      # the operator removes its timer here
        addon_utils.disable(MODULE, default_set=True)
        try:
            assert live.ended() == "stopped" and stops == [True]
            assert live_posing.running() is None
        finally:
            addon_utils.enable(MODULE, default_set=True)


def test_ticks_cut_short_without_progress_end(clean_scene, dqik):
    """A hand target beyond reach with a budget too short to settle in one tick: the ticks stop
    once three in a row bring nothing closer, instead of solving forever; the third of them
    solves to the end, so what the ticks left is done."""
    obj = rigs.metarig("basic")
    feet, hand = _feet_and_hand(obj)
    hand.location = sp.world_tail(obj, "hand.L") + np.array([3.0, -2.0, 0.5])
    bpy.context.view_layer.update()
    obj.dqik.time_budget_ms = 0.5
    live = _live(dqik, obj)
    ticks = 0
    while live.tick() is not None:
        ticks += 1
        assert ticks < 300
    assert not live.last.cut_short
    assert sp.effector_errors(obj, feet).max() <= REACHED
    live.stop()


def test_a_budget_too_short_for_a_balanced_bodys_first_step_still_moves_it(clean_scene, dqik):
    """Human metarig, Humanoid preset, feet planted, Balance on, both hands moved 35 cm forward
    and 25 cm down at once, a 1 ms budget: its first ticks gain nothing, and the one that
    settles solves to the end (with ten times the budget, in 3 of 11 runs live posing idled
    with the hands where they were)."""
    obj = rigs.metarig("human")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    sp.plant_feet(obj, ["foot.L", "foot.R"])
    hands = sp.add_targets(obj, ["hand.L", "hand.R"], priority=3)
    for name, empty in hands.items():
        empty.location = sp.world_tail(obj, name)
    obj.dqik.use_balance = True
    obj.dqik.time_budget_ms = 1.0
    bpy.context.view_layer.update()
    live = _live(dqik, obj)
    live.tick()
    start = {name: sp.world_tail(obj, name) for name in hands}
    for empty in hands.values():
        empty.location = np.array(empty.location) + np.array([0.0, -0.35, -0.25])
    bpy.context.view_layer.update()
    ticks = 0
    while live.tick() is not None:
        ticks += 1
        assert ticks < 300
        bpy.context.view_layer.update()
    assert not live.last.cut_short
    assert min(np.linalg.norm(sp.world_tail(obj, name) - start[name]) for name in hands) > 0.2
    live.stop()


def test_cancel_takes_back_a_pin(clean_scene, dqik):
    obj = rigs.metarig("basic")
    _, hand = _feet_and_hand(obj)
    settings = obj.pose.bones["hand.L"].dqik
    live = _live(dqik, obj)
    empty = live.pin("hand.L")
    empty_name = empty.name
    assert settings.target == empty
    live.cancel()
    assert settings.target == hand and settings.use_target
    assert empty_name not in bpy.data.objects


def test_cancel_after_the_pin_and_its_earlier_target_were_deleted_restores_the_pose(clean_scene,
                                                                                  dqik):
    """The user deletes a pin's Empty (and the target the pin replaced) while live posing runs:
    Esc still takes the pin back and puts the starting pose back, without an error."""
    obj = rigs.metarig("basic")
    _, hand = _feet_and_hand(obj)
    live = _live(dqik, obj)
    start = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    empty = live.pin("hand.L")
    live.pin("forearm.L")
    empty.matrix_world = Matrix.Translation(sp.world_tail(obj, "hand.L") + np.array([0.0, -0.1, 0.1]))
    live.tick()
    assert live.start.changed_bones(obj)
    bpy.data.objects.remove(empty)
    bpy.data.objects.remove(hand)
    live.cancel()
    assert live.ended() == "stopped"
    assert obj.pose.bones["hand.L"].dqik.target is None
    assert obj.pose.bones["forearm.L"].dqik.target is None
    restored = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    assert all(start.channels[a].tobytes() == restored.channels[a].tobytes() for a in start.channels)


@pytest.mark.parametrize("hide", ["eye", "viewport", "collection", "excluded"])
def test_live_posing_ends_when_the_armature_is_hidden_in_any_way(clean_scene, dqik, hide):
    obj = rigs.metarig("basic")
    _feet_and_hand(obj)
    live = _live(dqik, obj)
    assert live.ended() is None
    if hide == "eye":
        obj.hide_set(True)
    elif hide == "viewport":
        obj.hide_viewport = True
    else:
        collection = bpy.data.collections.new("Rig")
        clean_scene.collection.children.link(collection)
        for owner in list(obj.users_collection):
            owner.objects.unlink(obj)
        collection.objects.link(obj)
        layer = bpy.context.view_layer.layer_collection.children[collection.name]
        if hide == "collection":
            collection.hide_viewport = True
        else:
            layer.exclude = True
    assert "was hidden" in live.ended()


def test_a_rig_without_targets_is_not_solved_again_until_something_moves(clean_scene, dqik):
    """No bone has a target yet (the user is about to drag one): the first tick says so, and
    the ticks after it do nothing until a bone is dragged."""
    obj = rigs.metarig("basic")
    live = _live(dqik, obj)
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError, match="no bone with an enabled"):
        live.tick()
    failed = live.session.last_result
    assert all(live.tick() is None for _ in range(5))
    assert live.session.last_result is failed
    live.drag("forearm.L", sp.world_tail(obj, "forearm.L") + np.array([0.0, -0.05, 0.0]))
    assert live.tick() is not None and not live.session.last_result.error
    live.stop()


def _moved_hand(obj, frame):
    """Feet and hand targets, the hand moved out of the pose, at ``frame``; the tick solved."""
    _, hand = _feet_and_hand(obj)
    hand.location = sp.world_tail(obj, "hand.L") + np.array([0.1, -0.2, -0.1])
    bpy.context.view_layer.update()
    bpy.context.scene.frame_set(frame)


@pytest.fixture
def auto_keying(clean_scene):
    """Auto-keying on; every auto-keying setting put back afterwards."""
    tools, edit = clean_scene.tool_settings, bpy.context.preferences.edit
    saved = [(owner, name, getattr(owner, name)) for owner, name in (
        (tools, "use_keyframe_insert_auto"), (tools, "auto_keying_mode"),
        (tools, "keyframe_type"), (tools, "use_keyframe_insert_keyingset"),
        (edit, "use_keyframe_insert_available"), (edit, "use_visual_keying"),
        (edit, "use_auto_keyframe_insert_needed"))]
    tools.use_keyframe_insert_auto = True
    yield tools, edit
    for owner, name, value in saved:
        setattr(owner, name, value)


def test_confirm_keys_with_the_scenes_keyframe_type_and_replace_mode(clean_scene, dqik,
                                                                     auto_keying):
    """As Blender's transform: the keys get the scene's keyframe type; in Replace mode nothing
    is keyed on a frame where the armature has no key, and only existing keys are replaced on
    one where it has."""
    tools, _ = auto_keying
    obj = rigs.metarig("basic")
    _moved_hand(obj, 12)
    tools.keyframe_type = 'BREAKDOWN'
    live = _live(dqik, obj)
    live.tick()
    changed = live.confirm(bpy.context)
    keys = [point for fcurve in _fcurves(obj) for point in fcurve.keyframe_points]
    assert keys and {point.type for point in keys} == {'BREAKDOWN'}
    curves = {fcurve.data_path for fcurve in _fcurves(obj)}
    channel_of = dqik.dq_ik_addon.blender.rig.rotation_modes.channel_of
    rotation = {name: obj.pose.bones[name].path_from_id(
        channel_of(obj.pose.bones[name].rotation_mode)) for name in changed}
    assert curves == set(rotation.values())
    tools.auto_keying_mode = 'REPLACE_KEYS'
    for frame, replaced in ((20, False), (12, True)):
        bpy.context.scene.frame_set(frame)
        before = {(f.data_path, f.array_index): len(f.keyframe_points) for f in _fcurves(obj)}
        obj.pose.bones["hand.L"].dqik.target.location.x += 0.02
        bpy.context.view_layer.update()
        live = _live(dqik, obj)
        live.tick()
        values = {name: obj.path_resolve(path)[:] for name, path in rotation.items()}
        live.confirm(bpy.context)
        after = {(f.data_path, f.array_index): len(f.keyframe_points) for f in _fcurves(obj)}
        assert after == before                          # no new curve, no new key
        if replaced:    # the keys on frame 12 now hold the new pose
            for name, path in rotation.items():
                at_12 = [f.evaluate(12) for f in sorted(_fcurves(obj), key=lambda f: f.array_index)
                         if f.data_path == path]
                assert np.allclose(at_12, values[name], atol=1e-6)


def test_confirm_keys_only_available_curves_or_the_active_keying_set(clean_scene, dqik,
                                                                     auto_keying):
    """Only Insert Available keys the bones' existing curves and adds none; Only Insert Keying
    Set with the Location keying set active keys the changed bones' locations, not their
    rotations."""
    tools, edit = auto_keying
    obj = rigs.metarig("basic")
    _moved_hand(obj, 5)
    obj.pose.bones["hand.L"].keyframe_insert("location", frame=1, group="hand.L")
    edit.use_keyframe_insert_available = True
    edit.use_auto_keyframe_insert_needed = False    # the location did not change: key it anyway
    live = _live(dqik, obj)
    live.tick()
    live.confirm(bpy.context)
    curves = list(_fcurves(obj))
    assert {f.data_path for f in curves} == {'pose.bones["hand.L"].location'}
    assert all([p.co[0] for p in f.keyframe_points] == [1.0, 5.0] for f in curves)
    edit.use_keyframe_insert_available = False
    tools.use_keyframe_insert_keyingset = True
    keying_sets = clean_scene.keying_sets_all
    keying_sets.active = next(k for k in keying_sets if k.bl_idname == 'Location')
    bpy.context.scene.frame_set(9)
    obj.pose.bones["hand.L"].dqik.target.location.x += 0.02
    bpy.context.view_layer.update()
    live = _live(dqik, obj)
    live.tick()
    changed = live.confirm(bpy.context)
    assert changed
    curves = {f.data_path for f in _fcurves(obj)}
    assert {obj.pose.bones[name].path_from_id("location") for name in changed} <= curves
    assert not any(path.endswith("rotation_quaternion") for path in curves)


def test_replace_mode_finds_the_key_of_a_tweaked_nla_strip_in_its_own_time(clean_scene, dqik,
                                                                          auto_keying):
    """An action tweaked on an NLA strip that starts at frame 101: its key at action frame 1
    is on scene frame 101, so Replace mode replaces it there, as Blender's transform does."""
    tools, _ = auto_keying
    obj = rigs.metarig("basic")
    _moved_hand(obj, 1)
    arm = ("hand.L", "forearm.L", "upper_arm.L")
    for name in arm:
        obj.pose.bones[name].keyframe_insert("rotation_quaternion", frame=1, group=name)
    data = obj.animation_data
    strip = data.nla_tracks.new().strips.new("keys", 1, data.action)
    data.action = None
    strip.frame_start = 101
    data.use_tweak_mode = True
    bpy.context.scene.frame_set(101)
    tools.auto_keying_mode = 'REPLACE_KEYS'
    live = _live(dqik, obj)
    live.tick()
    values = {name: obj.pose.bones[name].rotation_quaternion[:] for name in arm}
    live.confirm(bpy.context)
    for name in arm:
        path = obj.pose.bones[name].path_from_id("rotation_quaternion")
        curves = sorted((f for f in _fcurves(obj) if f.data_path == path),
                        key=lambda f: f.array_index)
        assert [[p.co[0] for p in f.keyframe_points] for f in curves] == [[1.0]] * 4
        assert np.allclose([f.evaluate(1) for f in curves], values[name], atol=1e-6)


def test_a_keying_set_path_to_a_deleted_object_is_passed_over(clean_scene, dqik, auto_keying):
    """Only Insert Keying Set with an absolute keying set one of whose paths lost its object:
    the other paths are keyed, without an error."""
    tools, _ = auto_keying
    obj = rigs.metarig("basic")
    _moved_hand(obj, 3)
    keying_set = clean_scene.keying_sets.new(idname="dqik_test", name="Test")
    keying_set.paths.add(obj, obj.pose.bones["hand.L"].path_from_id("rotation_quaternion"))
    gone = bpy.data.objects.new("Gone", None)
    clean_scene.collection.objects.link(gone)
    keying_set.paths.add(gone, "location")
    bpy.data.objects.remove(gone)
    clean_scene.keying_sets_all.active = keying_set
    tools.use_keyframe_insert_keyingset = True
    live = _live(dqik, obj)
    live.tick()
    live.confirm(bpy.context)
    assert {f.data_path for f in _fcurves(obj)} == {'pose.bones["hand.L"].rotation_quaternion'}


@pytest.mark.parametrize("name", ["hand.L", 'a"b', "a\\b", 'x"]y'])
def test_pose_bone_paths_give_back_the_bone_name(clean_scene, dqik, name):
    obj = rigs.metarig("basic")
    obj.pose.bones["hand.L"].name = name
    path = obj.pose.bones[name].path_from_id("location")
    assert dqik.dq_ik_addon.blender.rig.channel_paths.bone_channel(path) == (name, "location")


def test_pin_again_takes_the_pin_back_and_keeps_the_pose(clean_scene, dqik):
    """P on a bone pinned in this live posing unpins it: the bone's earlier target comes back,
    the pin's Empty goes, and the pose stays; the other pins hold."""
    obj = rigs.metarig("basic")
    _, hand = _feet_and_hand(obj)
    live = _live(dqik, obj)
    first = live.pin("hand.L")
    other = live.pin("forearm.L")
    first_name = first.name
    pose = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    assert live.pin("hand.L") is None
    settings = obj.pose.bones["hand.L"].dqik
    assert settings.target == hand and settings.use_target
    assert first_name not in bpy.data.objects
    assert obj.pose.bones["forearm.L"].dqik.target == other
    kept = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    assert all(pose.channels[a].tobytes() == kept.channels[a].tobytes() for a in pose.channels)
    assert live.pin("hand.L") is not None                   # pinned anew
    live.cancel()
    assert settings.target == hand
    assert obj.pose.bones["forearm.L"].dqik.target is None


def test_live_reports_the_error_blender_shows_when_a_constraint_overrides_the_solve(
        clean_scene, dqik):
    """A Limit Rotation on the forearm holds it straight whatever the solve writes: after
    Blender evaluates a live tick's pose, the live result is measured on what is shown."""
    obj = rigs.metarig("basic")
    _, hand = _feet_and_hand(obj)
    limit = obj.pose.bones["forearm.L"].constraints.new('LIMIT_ROTATION')
    limit.use_limit_x = limit.use_limit_y = limit.use_limit_z = True
    limit.owner_space = 'LOCAL'
    hand.location = sp.world_tail(obj, "hand.L") + np.array([-0.15, -0.2, -0.1])
    bpy.context.view_layer.update()
    live = _live(dqik, obj)
    live.tick()
    bpy.context.view_layer.update()      # Blender evaluates the pose: the live result follows
    shown = float(np.linalg.norm(sp.world_tail(obj, "hand.L") - np.array(hand.location)))
    report = {t.name: t for t in live.last.tasks}["hand.L"]
    assert shown > 0.01
    assert report.position_error == pytest.approx(shown, abs=1e-5)
    assert report.status == 'CLOSEST'
    live.stop()


def test_the_timer_tick_measures_a_tick_made_in_blenders_update(clean_scene, dqik):
    """The rig follows a target through Blender's updates with a Limit Rotation overriding the
    solve: the tick made inside the last update is measured by the next timer tick."""
    obj = rigs.metarig("basic")
    _, hand = _feet_and_hand(obj)
    limit = obj.pose.bones["forearm.L"].constraints.new('LIMIT_ROTATION')
    limit.use_limit_x = limit.use_limit_y = limit.use_limit_z = True
    limit.owner_space = 'LOCAL'
    live = _live(dqik, obj)
    live.tick()
    start = sp.world_tail(obj, "hand.L")
    for k in range(1, 4):      # the transform tool: a move and an update each time
        hand.location = start + np.array([-0.05, -0.07, -0.03]) * k
        bpy.context.view_layer.update()
    live.tick()                # nothing moved since: only the measurement
    shown = float(np.linalg.norm(sp.world_tail(obj, "hand.L") - np.array(hand.location)))
    assert shown > 0.01
    assert {t.name: t for t in live.last.tasks}["hand.L"].position_error == \
        pytest.approx(shown, abs=1e-5)
    live.stop()
