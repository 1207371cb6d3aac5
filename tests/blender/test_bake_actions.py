"""``dqik.bake``: where the keys go and what is kept: a new DQ IK action with the animation from
before pushed down to the NLA (and the NLA switched on), baking into the active action (its other
keys and a copy kept), baking twice, slots of their own, linked duplicates, linked or overridden
actions, locked, muted and driven curves."""

import bakes
import bpy
import numpy as np
import pytest
import rigs


def _linked_action(tmp_path, obj):
    """An action of another file, linked: the user's keys of the armature, read-only here."""
    action = bakes.key_old_animation(obj)
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


def test_existing_animation_goes_to_the_nla_and_still_plays(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    old = bakes.key_old_animation(obj)
    head_before = bakes.bone_rotations(obj, range(1, 121, 7))
    bakes.animated_targets(obj)
    bpy.context.scene.frame_set(1)
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=120) == {'FINISHED'}
    data = obj.animation_data
    assert data.action is not old and data.action.get("dqik_bake") == obj.name
    assert obj.animation_data.nla_tracks[0].name == f"{old.name} (before DQ IK bake)"
    strips = [strip for track in data.nla_tracks for strip in track.strips]
    assert [strip.action for strip in strips] == [old]
    assert strips[0].action_slot is not None
    assert old.name in bpy.data.actions and old.users >= 1
    assert np.abs(bakes.bone_rotations(obj, range(1, 121, 7)) - head_before).max() <= 1e-6
    # the baked arm plays from the bake, on top of the old keys of upper_arm.L
    names = ["upper_arm.L", "forearm.L", "hand.L"]
    played, errors = bakes.played(obj, names, range(1, 121, 7))
    assert errors.max() <= 1e-4


def test_the_report_names_the_nla_tracks_that_play_on_under_a_bake(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    old = bakes.key_old_animation(obj)
    data = obj.animation_data
    track = data.nla_tracks.new()
    track.name = "Walk"
    track.strips.new("walk", 1, old)
    data.action = None
    bakes.animated_targets(obj, frames=(1, 10))
    report = dqik.api.FrameBake(obj, bpy.context.scene, dqik.api.BakeOptions(1, 10)).finish()
    assert "the NLA track 'Walk' plays on underneath, unchanged" in report.describe()
    # the track animates the head and an upper arm, not every baked bone: the bake holds
    assert data.action_extrapolation == 'HOLD'
    assert "first and last keys hold around its frames" in report.describe()


def test_baking_twice_keeps_one_action_one_slot_one_curve_per_channel_and_a_copy(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    old = bakes.key_old_animation(obj)
    bakes.animated_targets(obj, frames=(1, 20))
    counts = []
    for _ in range(2):
        assert bpy.ops.dqik.bake(frame_start=1, frame_end=20,
                                 switch_off_tasks=False) == {'FINISHED'}
        data = obj.animation_data
        baked = [action for action in bpy.data.actions if action.get("dqik_bake")]
        counts.append((len(baked), len(bpy.data.actions), len(data.action.slots),
                       len(list(bakes.fcurves(dqik, obj))), len(data.nla_tracks)))
    # the same action, slot, curves and tracks; one more action: the copy of the first bake
    assert counts[0][0] == counts[1][0] == 1 and counts[0][2] == counts[1][2] == 1
    assert counts[0][3:] == counts[1][3:] and counts[1][1] == counts[0][1] + 1
    assert [strip.action for track in obj.animation_data.nla_tracks
            for strip in track.strips] == [old]
    report = bakes.baker(dqik, obj).finish()                 # a third time: where is everything
    assert report.action == "metarig_DQIK" and len(bpy.data.actions) == counts[0][1] + 2
    assert report.old_animation == (
        "keys replaced within the range in the DQ IK action 'metarig_DQIK'; its state before is "
        "kept as 'metarig_DQIK (before DQ IK bake).001'; the animation from before its first "
        f"bake plays from the NLA track '{old.name} (before DQ IK bake)'")


def test_baking_into_the_active_action_keeps_its_other_keys_and_a_copy(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    old = bakes.key_old_animation(obj)
    bakes.animated_targets(obj, frames=(1, 20))
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=20, action='ACTIVE',
                             switch_off_tasks=False) == {'FINISHED'}
    assert obj.animation_data.action is old
    backup = bpy.data.actions[f"{old.name} (before DQ IK bake)"]
    assert backup.use_fake_user
    path = obj.pose.bones["upper_arm.L"].path_from_id("rotation_quaternion")
    frames = sorted({k.co[0] for fc in bakes.fcurves(dqik, obj) if fc.data_path == path
                     for k in fc.keyframe_points})
    assert frames == list(range(1, 21)) + [60.0, 120.0]     # the keys outside the range kept
    head = obj.pose.bones["spine.006"].path_from_id("rotation_quaternion")
    assert {k.co[0] for fc in bakes.fcurves(dqik, obj) if fc.data_path == head
            for k in fc.keyframe_points} == {1.0, 60.0, 120.0}
    edited = next(fc for fc in bakes.fcurves(dqik, obj) if fc.data_path == path)
    edited.keyframe_points[9].co.y = 0.5                    # a hand edit of frame 10
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=20, action='ACTIVE') == {'FINISHED'}
    second = {a for a in bpy.data.actions if a.name.startswith(f"{old.name} (before DQ IK bake)")}
    assert len(second) == 2                                 # each bake keeps what it replaced
    newest = (second - {backup}).pop()
    kept = next(fc for fc in bakes.fcurves_of(dqik, newest, obj) if fc.data_path == path
                and fc.array_index == edited.array_index)
    assert kept.evaluate(10) == pytest.approx(0.5)


def test_a_linked_or_overridden_action_is_refused_as_a_target_for_keys(clean_scene, dqik,
                                                                       tmp_path):
    obj = rigs.metarig("basic")
    action = _linked_action(tmp_path, obj)
    bakes.animated_targets(obj, frames=(1, 10))
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


@pytest.mark.parametrize("mode", ['ACTIVE', 'NEW'])
def test_an_action_without_a_slot_for_the_armature_never_gets_another_objects_slot(clean_scene,
                                                                                    dqik, mode):
    """The armature is given a cube's action but no slot: a bake, into the active action or a
    new one, gives it a slot of its own, and the cube's animation stays as it was."""
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj, frames=(1, 20))
    cube = bpy.data.objects.new("Cube", None)
    clean_scene.collection.objects.link(cube)
    for frame, z in ((1, 0.0), (20, 2.0)):
        cube.location = (3.0, 0.0, z)
        cube.keyframe_insert("location", frame=frame)
    before = sorted((f.data_path, f.array_index) for f in bakes.fcurves(dqik, cube))
    obj.animation_data_create().action = cube.animation_data.action
    assert obj.animation_data.action_slot is None
    assert bakes.short_bake(obj, action=mode) == {'FINISHED'}
    slot = obj.animation_data.action_slot
    assert slot != cube.animation_data.action_slot and list(slot.users()) == [obj]
    assert sorted((f.data_path, f.array_index) for f in bakes.fcurves(dqik, cube)) == before
    assert not obj.animation_data.nla_tracks        # it played nothing: nothing to push down
    clean_scene.frame_set(20)
    assert np.allclose(obj.matrix_world.translation, (0.0, 0.0, 0.0))


def test_a_linked_duplicates_bake_is_kept_when_the_other_bakes(clean_scene, dqik):
    """Two armatures share the DQ IK action one of them baked (a linked duplicate): a New
    Action bake of the other makes its own action and leaves the first one's keys as they
    were."""
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj, frames=(1, 20))
    assert bakes.short_bake(obj, switch_off_tasks=False) == {'FINISHED'}
    first = obj.animation_data.action
    keys = lambda: [tuple(k.co) for f in bakes.fcurves_of(dqik, first, obj)  # noqa: E731
                    for k in f.keyframe_points]
    before = keys()
    twin = obj.copy()
    clean_scene.collection.objects.link(twin)
    twin.animation_data.action = first
    twin.animation_data.action_slot = obj.animation_data.action_slot
    twin.pose.bones["hand.L"].dqik.target.location.z += 0.05
    assert bakes.short_bake(twin) == {'FINISHED'}
    assert twin.animation_data.action is not first
    assert keys() == before


def test_locked_curves_refuse_the_bake_and_muted_or_driven_ones_are_named(clean_scene, dqik):
    obj = rigs.metarig("basic")
    old = bakes.key_old_animation(obj)
    bakes.animated_targets(obj, frames=(1, 20))
    path = obj.pose.bones["upper_arm.L"].path_from_id("rotation_quaternion")
    curve = next(f for f in bakes.fcurves(dqik, obj) if f.data_path == path)
    curve.lock = True
    before = [tuple(k.co) for k in curve.keyframe_points]
    with pytest.raises(RuntimeError, match="locked"):
        bakes.short_bake(obj, action='ACTIVE')
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
    bakes.key_old_animation(obj)
    head_before = bakes.bone_rotations(obj, range(1, 21, 4))
    bakes.animated_targets(obj, frames=(1, 20))
    obj.animation_data.use_nla = False
    assert bakes.short_bake(obj) == {'FINISHED'}
    assert obj.animation_data.use_nla
    assert np.abs(bakes.bone_rotations(obj, range(1, 21, 4)) - head_before).max() <= 1e-6
