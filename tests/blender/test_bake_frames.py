"""``dqik.bake``: which frames are baked: KEYED frames (the targets' keys, also through a
constraint or a driver), steps that miss the end frame, frames past Blender's refused."""

import bakes
import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp


def test_keyed_frames_bake_only_where_targets_have_keys(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    bakes.random_rotation_modes(obj, sp.chain_bones(obj, sp.EFFECTORS), 5)
    bakes.animated_targets(obj)
    baker = bakes.baker(dqik, obj, frames='KEYED')
    expected = np.round(np.linspace(1, 120, 7)).astype(int)
    assert baker.frames.tolist() == sorted(set(expected.tolist()))
    report = baker.finish()
    assert report.frames == 7
    for fcurve in bakes.fcurves(dqik, obj):
        assert [k.co[0] for k in fcurve.keyframe_points] == baker.frames.tolist()
    names, solved = baker.solved()
    played, errors = bakes.played(obj, names, baker.frames)
    assert bakes.same_rotations(played, solved) <= 1e-5 and errors.max() <= 1e-4


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
    frames = dqik.dq_ik_addon.blender.keys.bake_options.bake_frames(
        obj, dqik.api.BakeOptions(1, 20, frames='KEYED'))
    assert frames.tolist() == [1, 7, 13, 20]


@pytest.mark.parametrize("reverse", [False, True])
def test_keyed_frames_follow_an_nla_strip_through_its_repeats(clean_scene, dqik, reverse):
    """A target's keys on frames 1, 5 and 10 played by a strip twice as slow, repeated 3 times
    from frame 101 (forwards, or in reverse): the bake keys every frame the strip plays a key
    on (only the first cycle's were found)."""
    obj = rigs.metarig("basic")
    empty = sp.add_targets(obj, ["hand.L"])["hand.L"]
    for frame in (1, 5, 10):
        empty.location.x = frame * 0.01
        empty.keyframe_insert("location", frame=frame)
    data = empty.animation_data
    strip = data.nla_tracks.new().strips.new("keys", 101, data.action)
    data.action = None
    strip.scale, strip.repeat, strip.use_reverse = 2.0, 3.0, reverse
    frames = dqik.dq_ik_addon.blender.keys.bake_options.bake_frames(
        obj, dqik.api.BakeOptions(90, 200, frames='KEYED'))
    forward = [101 + 2 * (key - 1) + 18 * cycle for cycle in range(3) for key in (1, 5, 10)]
    played = sorted({155 - (f - 101) for f in forward} if reverse else set(forward))
    assert frames.tolist() == [90] + played + [200]


def test_steps_that_miss_the_end_frame_bake_it_too_and_frames_past_blenders_are_refused(
        clean_scene, dqik):
    obj = rigs.metarig("basic")
    bake_frames = dqik.dq_ik_addon.blender.keys.bake_options.bake_frames
    assert bake_frames(obj, dqik.api.BakeOptions(1, 10, step=4)).tolist() == [1, 5, 9, 10]
    with pytest.raises(dqik.dq_ik_addon.blender.errors.ArmatureError, match="past the frames"):
        bake_frames(obj, dqik.api.BakeOptions(1, 2_000_000))


def test_the_report_counts_the_frames_stopped_at_max_iterations(clean_scene, dqik):
    """Max Iterations 1 leaves every frame short of its reachable targets: the report counts
    them and says so; at the default, none."""
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj)
    obj.dqik.max_iterations = 1
    short = bakes.baker(dqik, obj, frames='KEYED', switch_off_tasks=False).finish()
    assert short.cut_short == short.frames and "stopped at Max Iterations" in short.describe()
    obj.dqik.max_iterations = 300
    full = bakes.baker(dqik, obj, frames='KEYED').finish()
    assert full.cut_short == 0 and "Max Iterations" not in full.describe()
