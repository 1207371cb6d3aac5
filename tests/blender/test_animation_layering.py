"""IK over animation, on motion-capture clips the tests make themselves (``mocap_clips``: a
procedural walk written and read back with Blender's BVH exporter and importer; ``kick_clip``:
a kick, the same way): targets from the clip's own motion keep it, one frame gives one pose
however it is reached, edits with planted feet change only what they must without pops, targets
out of reach end quickly and smoothly, and a second bake keeps the first."""

import math

import bpy
import kick_clip as kc
import mocap_clips as mc
import numpy as np
import pytest

KEPT = math.radians(0.5)     # the animation kept
POP = math.radians(10.0)     # the largest turn between frames beyond the animation's own
SAME = 1e-4                  # radians: one pose


@pytest.fixture
def clip(clean_scene, dqik, tmp_path):
    """The walk with targets from its own motion, and the animation's chain rotations."""
    obj, targets = mc.clip_with_targets(tmp_path)
    frames = range(clean_scene.frame_start, clean_scene.frame_end + 1)
    return obj, targets, frames, mc.animation_rotations(obj, frames)


def _bake(dqik, obj, **options):
    """A ``FrameBake`` of ``obj`` over the scene's frame range with ``BakeOptions`` ``options``."""
    scene = bpy.context.scene
    return dqik.api.FrameBake(obj, scene, dqik.api.BakeOptions(
        scene.frame_start, scene.frame_end, **options))


def test_targets_from_the_clips_own_motion_keep_it_in_playback_and_in_the_bake(clip, dqik):
    obj, targets, frames, animation = clip
    assert all(target.animation_data.action for target in targets.values())
    obj.dqik.use_solve_on_frame_change = True
    rotations, iterations = mc.played(dqik, obj, frames)
    assert max(mc.angle_between(rotations[f], animation[f]).max() for f in frames) <= KEPT
    assert max(iterations.values()) <= 2
    report = _bake(dqik, obj, switch_off_tasks=True).finish()
    assert report.worst_error <= 1e-4
    baked = mc.animation_rotations(obj, frames)       # tasks off: the keys play
    assert max(mc.angle_between(baked[f], animation[f]).max() for f in frames) <= KEPT


def test_a_bake_of_some_frames_leaves_the_clip_playing_around_them(clip, dqik):
    """The left hand raised on frames 10-20 only, those frames baked into a new action: the
    clip (pushed down to the NLA, every bone animated there) plays outside them (the new
    action's Extrapolation is Nothing), the bake on them."""
    obj, targets, frames, animation = clip
    mc.shift_keys(targets["forearm.L"], 2, {f: 0.1 for f in range(10, 21)})
    report = dqik.api.FrameBake(obj, bpy.context.scene,
                                dqik.api.BakeOptions(10, 20, switch_off_tasks=True)).finish()
    assert "hold" not in report.describe()
    assert obj.animation_data.action_extrapolation == 'NOTHING'
    played = mc.animation_rotations(obj, frames)
    outside = [f for f in frames if not 10 <= f <= 20]
    assert max(mc.angle_between(played[f], animation[f]).max() for f in outside) <= 1e-6
    assert max(mc.angle_between(played[f], animation[f]).max() for f in range(12, 19)) > 0.05


def test_a_target_with_a_delta_transform_is_not_reused(clip, dqik):
    """Keyed location and rotation would be offset by it: sampling again makes a new target,
    and the untouched clip plays as it was."""
    obj, targets, frames, animation = clip
    offset = targets["forearm.L"]
    offset.delta_location = (0.0, 0.0, 0.2)
    mc.select(obj, ["forearm.L"])
    assert bpy.ops.dqik.targets_from_animation() == {'FINISHED'}
    made = obj.pose.bones["forearm.L"].dqik.target
    assert made is not offset and made.users_scene
    obj.dqik.use_solve_on_frame_change = True
    rotations, _ = mc.played(dqik, obj, frames)
    assert max(mc.angle_between(rotations[f], animation[f]).max() for f in frames) <= KEPT


def _edited(targets, frames):
    """The left hand raised 12 cm over the middle of the clip, the left foot lowered 15 cm, out
    of reach, over frames 4–40, each eased in and out and keyed on every frame."""
    mc.shift_keys(targets["forearm.L"], 2, {f: 0.12 * mc.bump(f, 14, 38, 6) for f in frames})
    mc.shift_keys(targets["shin.L"], 2, {f: -0.15 * mc.bump(f, 4, 40, 12) for f in frames})


def test_one_frame_gives_one_pose_however_it_is_reached(clip, dqik):
    obj, targets, frames, _ = clip
    _edited(targets, frames)
    _assert_one_pose(dqik, obj, frames)


def _assert_one_pose(dqik, obj, frames):
    """With Solve on Frame Change on ``obj``, each of the ``frames`` gives one pose of the chain
    bones (within ``SAME``) played forwards, backwards, by random jumps, stepped onto (and set
    again) and baked."""
    obj.dqik.use_solve_on_frame_change = True
    forwards, _ = mc.played(dqik, obj, frames)
    backwards, _ = mc.played(dqik, obj, reversed(frames))
    rng = np.random.default_rng(3)
    jumps, _ = mc.played(dqik, obj, rng.permutation(list(frames)).tolist())
    stepped, _ = mc.played(dqik, obj, [20, 21, 21, 22])
    bake = _bake(dqik, obj)
    bake.finish()
    obj.dqik.use_solve_on_frame_change = False
    names, solved = bake.solved()
    order = [mc.CHAIN.index(name) for name in names if name in mc.CHAIN]
    for frame in frames:
        for other in (backwards, jumps):
            assert mc.angle_between(other[frame], forwards[frame]).max() <= SAME, frame
        baked = solved[frame - frames[0]][[names.index(n) for n in mc.CHAIN]]
        assert mc.angle_between(baked, forwards[frame]).max() <= SAME, frame
    for frame in (20, 21, 22):
        assert mc.angle_between(stepped[frame], forwards[frame]).max() <= SAME
    assert order


def test_a_kick_is_kept_and_gives_one_pose_per_frame_with_its_foot_kicked_out_of_reach(
        clean_scene, dqik, tmp_path):
    """The kick (``kick_clip``: the leg swung to full extension, bones turning up to 26° a frame)
    with targets from its own motion: kept on every frame; then its kicking foot's target pushed
    on along the kick, 0.25 m at most over frames 24-44, out of the leg's reach on some of them:
    the arms keep the clip, and one frame gives one pose however it is reached."""
    obj, targets = mc.clip_with_targets(tmp_path, kc.FRAMES, kc.kick_clip)
    frames = range(1, kc.FRAMES + 1)
    animation = mc.animation_rotations(obj, frames)
    obj.dqik.use_solve_on_frame_change = True
    kept, _ = mc.played(dqik, obj, frames)
    assert max(mc.angle_between(kept[f], animation[f]).max() for f in frames) <= KEPT
    mc.shift_keys(targets[kc.KICK], 1, {f: -0.25 * mc.bump(f, 24, 44, 6) for f in frames})
    edited, _ = mc.played(dqik, obj, frames)
    statuses = set()
    for frame in frames:
        clean_scene.frame_set(frame)
        statuses |= {task.status for task in dqik.api.session_for(obj).last_result.tasks
                     if task.name == kc.KICK}
    assert statuses == {'MET', 'CLOSEST'}
    arms = [mc.CHAIN.index(name) for name in mc.CHAIN if "arm" in name]
    assert max(mc.angle_between(edited[f][arms], animation[f][arms]).max()
               for f in frames) <= KEPT
    _assert_one_pose(dqik, obj, frames)


def test_with_soft_reach_the_kick_keeps_its_clip_near_full_reach(clean_scene, dqik, tmp_path):
    """Soft Reach eases a target only beyond where the animation holds it (``TaskSet.anchor``):
    the kick's legs work within the last 5 % of their reach, and at Soft Reach 5 % its targets
    from its own motion keep it, with no iteration (its feet ended up to 14.5 mm short of them and
    its legs up to 10.7° off the clip before); Solve on a frame keeps what its frame change
    showed (it eased the legs 10.7° off again before it took the frame's animated pose too).
    """
    obj, _ = mc.clip_with_targets(tmp_path, kc.FRAMES, kc.kick_clip)
    frames = range(1, kc.FRAMES + 1)
    animation = mc.animation_rotations(obj, frames)
    obj.dqik.soft_reach = 0.05
    obj.dqik.use_solve_on_frame_change = True
    kept, iterations = mc.played(dqik, obj, frames)
    assert max(mc.angle_between(kept[f], animation[f]).max() for f in frames) <= KEPT
    assert max(iterations.values()) == 0
    clean_scene.frame_set(40)       # a leg straight: Solve eases as the frame change did
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    assert mc.angle_between(mc.chain_rotations(obj, mc.CHAIN), animation[40]).max() <= SAME


def test_an_edit_with_planted_feet_changes_only_what_it_must(clip, dqik):
    """Plant the feet, raise the left hand: the planted ankles hold still within each contact
    (reachable frames), the hand meets its target, the right arm keeps the animation, and no
    chain bone pops."""
    obj, targets, frames, animation = clip
    mc.select(obj, mc.FEET)
    assert bpy.ops.dqik.plant() == {'FINISHED'}
    phases = dqik.dq_ik_addon.blender.authoring.plant.contact_phases
    mc.shift_keys(targets["forearm.L"], 2, {f: 0.08 for f in frames})
    obj.dqik.use_solve_on_frame_change = True
    scene = bpy.context.scene
    ankles, rotations = {}, {}
    for frame in frames:
        scene.frame_set(frame)
        rotations[frame] = mc.chain_rotations(obj, mc.CHAIN)
        ankles[frame] = {n: np.array(obj.matrix_world @ obj.pose.bones[n].tail) for n in mc.FEET}
        hand = np.array(obj.matrix_world @ obj.pose.bones["forearm.L"].tail)
        assert np.linalg.norm(hand - np.array(targets["forearm.L"].matrix_world.translation)) \
            <= 1e-4, frame
    assert mc.worst_pop(rotations, animation) <= POP
    right_arm = [mc.CHAIN.index("upper_arm.R"), mc.CHAIN.index("forearm.R")]
    assert max(mc.angle_between(rotations[f][right_arm], animation[f][right_arm]).max()
               for f in frames) <= KEPT
    found = 0
    for name in mc.FEET:
        points = mc.keyed_locations(targets[name], frames)
        for phase in phases(np.array(frames, float), points, 30.0, 0.03, 0.2, 5):
            found += 1
            held = [ankles[f][name] for f in range(phase.first, phase.last + 1)]
            assert max(np.linalg.norm(p - held[0]) for p in held) <= 1e-3, (name, phase)
    assert found >= 4


def test_an_ankle_on_a_floor_follows_the_clips_path_over_it(clip, dqik):
    """The left ankle's target swapped for a floor Empty (Position Axes Z) at a stance height:
    every frame puts the ankle on the plane, and wherever the leg reaches the floor below the
    clip's ankle (stance, and the swing 22 cm up) the ankle keeps the clip's place on it (what
    the floor leaves free stays where the frame's animated pose has it; the least joint motion
    slid it 10 mm on the median frame, up to 427 mm); on the swing frames where it cannot, it
    slides within 2 mm of the least the leg's length allows."""
    obj, targets, frames, animation = clip
    scene = bpy.context.scene
    animated, hips = {}, {}
    for frame in frames:
        scene.frame_set(frame)
        animated[frame] = np.array(obj.matrix_world @ obj.pose.bones["shin.L"].tail)
        hips[frame] = np.array(obj.matrix_world @ obj.pose.bones["thigh.L"].head)
    leg = sum(obj.pose.bones[name].length for name in ("thigh.L", "shin.L"))
    height = float(np.percentile([animated[f][2] for f in frames], 30))
    floor = bpy.data.objects.new("floor", None)
    scene.collection.objects.link(floor)
    floor.location = (0.0, 0.0, height)
    settings = obj.pose.bones["shin.L"].dqik
    settings.target, settings.position_axes = floor, {'Z'}
    obj.dqik.use_solve_on_frame_change = True
    slid = {}
    for frame in frames:
        scene.frame_set(frame)
        ankle = np.array(obj.matrix_world @ obj.pose.bones["shin.L"].tail)
        assert abs(ankle[2] - height) <= 1e-4, frame
        slid[frame] = np.linalg.norm((ankle - animated[frame])[:2])
        radius = np.sqrt(leg ** 2 - (hips[frame][2] - height) ** 2)   # the floor within reach
        least = max(0.0, np.linalg.norm((animated[frame] - hips[frame])[:2]) - radius)
        assert slid[frame] <= (1e-4 if least == 0.0 else least + 2e-3), (frame, least)
    assert sum(slid[f] > 0.01 for f in frames) >= 8      # the swing that cannot reach it


def test_a_target_out_of_reach_and_back_ends_quickly_and_moves_only_its_chain(clip, dqik):
    obj, targets, frames, animation = clip
    _edited(targets, frames)
    obj.dqik.use_solve_on_frame_change = True
    rotations, iterations = mc.played(dqik, obj, frames)
    assert max(iterations.values()) <= 20
    others = [mc.CHAIN.index(n) for n in ("thigh.R", "shin.R", "upper_arm.R", "forearm.R")]
    assert max(mc.angle_between(rotations[f][others], animation[f][others]).max()
               for f in frames) <= KEPT
    statuses = {name: set() for name in mc.FEET}
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        for task in dqik.api.session_for(obj).last_result.tasks:
            if task.name in statuses:
                statuses[task.name].add(task.status)
    assert statuses == {"shin.L": {'MET', 'CLOSEST'}, "shin.R": {'MET'}}


def test_under_humanoid_limits_a_target_out_of_reach_leaves_the_other_chains_theirs(
        clean_scene, dqik, tmp_path):
    """The mocap benchmark's edit (``benchmarks/mocap.py``: 96 frames, the feet planted, the
    left hand raised 12 cm over frames 20–70, the left foot lowered 15 cm, out of reach, over
    30–80) with the HUMANOID preset applied (the clip's elbows leave the preset's hinge, so the
    limits move them off the animation): the right hand, which the animation meets, stays within
    0.5 mm of its target on every frame (a stall of the whole solve at the unreachable foot
    leaves it 0.1 mm off on a few frames), and the right arm turns no more than ``POP`` between
    frames beyond the animation's own. That stall once restarted the right arm, nearly met,
    from inside its ranges: 345 mm off and a 98° turn on frame 77."""
    obj, targets = mc.clip_with_targets(tmp_path, 96)
    frames = range(1, 97)
    right_arm = ["upper_arm.R", "forearm.R"]
    animation = mc.animation_rotations(obj, frames)
    mc.select(obj, mc.FEET)
    assert bpy.ops.dqik.plant() == {'FINISHED'}

    mc.shift_keys(targets["forearm.L"], 2, {f: 0.12 * mc.bump(f, 20, 70, 6) for f in frames})
    mc.shift_keys(targets["shin.L"], 2, {f: -0.15 * mc.bump(f, 30, 80, 12) for f in frames})
    assert bpy.ops.dqik.apply_preset() == {'FINISHED'}
    for name in mc.FEET + mc.HANDS:
        obj.pose.bones[name].dqik.chain_count = 2
    obj.dqik.use_solve_on_frame_change = True
    rotations = {}
    for frame in frames:
        clean_scene.frame_set(frame)
        rotations[frame] = mc.chain_rotations(obj, right_arm)
        hand = np.array(obj.matrix_world @ obj.pose.bones["forearm.R"].tail)
        assert np.linalg.norm(hand - np.array(targets["forearm.R"].matrix_world.translation)) \
            <= 5e-4, frame
    rows = [mc.CHAIN.index(name) for name in right_arm]
    assert mc.worst_pop(rotations, {f: animation[f][rows] for f in frames}) <= POP


def test_with_soft_reach_a_target_crossing_the_reach_does_not_pop(clip, dqik):
    """The same edit with Soft Reach (5 %): as the foot's target crosses the leg's reach, the
    knee eases out instead of snapping straight (without it, the swinging foot crosses the reach
    at several centimetres a frame and the knee turns up to 19° in one frame: near full
    extension, a centimetre of target is degrees of knee, whatever the solver)."""
    obj, targets, frames, animation = clip
    _edited(targets, frames)
    obj.dqik.soft_reach = 0.05
    obj.dqik.use_solve_on_frame_change = True
    rotations, iterations = mc.played(dqik, obj, frames)
    assert mc.worst_pop(rotations, animation) <= POP
    assert max(iterations.values()) <= 20


def test_a_second_bake_keeps_the_first_with_its_hand_edits(clip, dqik):
    obj, targets, frames, _ = clip
    _edited(targets, frames)
    _bake(dqik, obj, switch_off_tasks=False).finish()
    action = obj.animation_data.action
    bag = action.layers[0].strips[0].channelbag(obj.animation_data.action_slot)
    curve = next(c for c in bag.fcurves if "forearm.L" in c.data_path)
    curve.keyframe_points[10].co.y += 0.25            # a hand polish on the first bake
    polished = curve.keyframe_points[10].co.y
    report = _bake(dqik, obj, switch_off_tasks=False).finish()
    assert obj.animation_data.action == action
    kept = [a for a in bpy.data.actions if a != action and a.name.startswith(action.name)]
    assert kept and "kept as" in report.old_animation
    old = kept[-1].layers[0].strips[0].channelbag(obj.animation_data.action_slot)
    copy = old.fcurves.find(curve.data_path, index=curve.array_index)
    assert copy.keyframe_points[10].co.y == pytest.approx(polished)
    assert curve.keyframe_points[10].co.y != pytest.approx(polished)


def test_a_cancelled_bake_stays_cancelled(clip, dqik):
    obj, _, _, _ = clip
    bake = _bake(dqik, obj)
    bake.step()
    bake.cancel()
    with pytest.raises(dqik.api.ArmatureError, match="cancelled"):
        bake.finish()
    assert f"{obj.name}_DQIK" not in bpy.data.actions
    assert all(pb.dqik.use_target for pb in obj.pose.bones if pb.name in mc.FEET + mc.HANDS)


def test_a_target_keyed_not_finite_stops_a_bake_with_its_own_message(clip, dqik):
    obj, targets, frames, _ = clip
    mc.shift_keys(targets["forearm.R"], 0, {12: float("nan")})
    with pytest.raises(dqik.api.ArmatureError, match="frame 12.*forearm.R.*not finite"):
        _bake(dqik, obj).finish()


def test_rigs_that_target_each_other_are_named_and_never_met(clip, dqik):
    """Two copies of the clip, each hand's target the other rig's hand bone: both warn, and
    neither reports its hand met."""
    obj, _, _, _ = clip
    other = obj.copy()
    other.data = obj.data.copy()
    bpy.context.scene.collection.objects.link(other)
    other.location.x += 0.4
    for rig, partner in ((obj, other), (other, obj)):
        settings = rig.pose.bones["forearm.L"].dqik
        settings.target, settings.subtarget = partner, "forearm.R"
    snapshot = dqik.api.session_for(obj).tick()
    hand = {t.name: t for t in snapshot.tasks}["forearm.L"]
    assert hand.status == 'CLOSEST'
    assert any("follows 'walk.001'" in w and "forearm.L" in w for w in snapshot.warnings)


def test_a_rig_aiming_at_another_rigs_solved_bone_follows_what_that_rig_shows(clip, dqik):
    """The clip's left hand on a second rig's right wrist (its ``hand.R`` head), that rig's own
    right hand raised 15 cm by DQ IK on frame change: the first rig is solved after the second
    (though the view layer lists it first), so in playback its hand is on the wrist shown, and
    its bake gives the pose it played."""
    obj, targets, frames, _ = clip
    other = obj.copy()
    other.data = obj.data.copy()
    bpy.context.scene.collection.objects.link(other)
    other.location.x += 0.5
    raised = targets["forearm.R"].copy()
    raised.animation_data.action = targets["forearm.R"].animation_data.action.copy()
    bpy.context.scene.collection.objects.link(raised)
    mc.shift_keys(raised, 2, {f: 0.15 for f in frames})
    raised.location.x += 0.5
    for name in mc.FEET + mc.HANDS:
        other.pose.bones[name].dqik.use_target = name == "forearm.R"
    other.pose.bones["forearm.R"].dqik.target = raised
    settings = obj.pose.bones["forearm.L"].dqik
    settings.target, settings.subtarget = other, "hand.R"
    obj.dqik.use_solve_on_frame_change = other.dqik.use_solve_on_frame_change = True
    scene, played = bpy.context.scene, {}
    for frame in frames:
        scene.frame_set(frame)
        wrist = other.matrix_world @ other.pose.bones["hand.R"].head
        assert (obj.matrix_world @ obj.pose.bones["forearm.L"].tail - wrist).length <= 1e-4
        played[frame] = mc.chain_rotations(obj, mc.CHAIN)
    obj.dqik.use_solve_on_frame_change = False
    _bake(dqik, obj, switch_off_tasks=True).finish()
    for frame in frames:
        scene.frame_set(frame)
        assert mc.angle_between(mc.chain_rotations(obj, mc.CHAIN), played[frame]).max() <= SAME


def test_a_one_bone_chain_whose_target_comes_nearer_than_its_length_ends_at_once(clip, dqik):
    """The forearm alone (Chain Length 1), its target pulled 40 % of the way to the elbow on
    every frame: out of reach inside the forearm's sphere, and the animated forearm points at
    it already, so every frame ends at once, reporting the pull (it ran to 65-81 iterations)."""
    obj, targets, frames, animation = clip
    obj.pose.bones["forearm.L"].dqik.chain_count = 1
    scene, pulls = bpy.context.scene, {}
    for frame in frames:
        scene.frame_set(frame)
        bone = obj.pose.bones["forearm.L"]
        pulls[frame] = np.array(obj.matrix_world @ bone.head - obj.matrix_world @ bone.tail) * 0.4
    for axis in range(3):
        mc.shift_keys(targets["forearm.L"], axis, {f: pulls[f][axis] for f in frames})
    obj.dqik.use_solve_on_frame_change = True
    rotations, iterations = mc.played(dqik, obj, frames)
    assert max(iterations.values()) <= 1
    assert max(mc.angle_between(rotations[f], animation[f]).max() for f in frames) <= KEPT
    report = {task.name: task for task in dqik.api.session_for(obj).last_result.tasks}
    assert report["forearm.L"].status == 'CLOSEST'
    assert report["forearm.L"].errors["position"] == pytest.approx(
        np.linalg.norm(pulls[frames[-1]]), abs=1e-4)


def _skating_target(obj, frames):
    """The left foot's target: a skate along −Y on the ground, 6 cm/s, lifted half of every
    second (a contact of 12 frames a second at 24 fps), keyed on ``frames``."""
    empty = bpy.data.objects.new("skate", None)
    bpy.context.scene.collection.objects.link(empty)
    settings = obj.pose.bones["shin.L"].dqik
    settings.use_target, settings.target = True, empty
    for frame in frames:
        empty.location = (0.0, -0.002 * frame, max(0.0, 0.15 * math.sin(2 * math.pi * frame / 24)))
        empty.keyframe_insert("location", frame=frame)
    return empty


def test_plant_holds_keys_between_frames_and_refuses_thresholds_that_are_not_finite(clip, dqik):
    """A target keyed on half frames is held on all of its keys (the half-frame ones kept the
    skating: 5 mm of jitter); a Height or Speed of NaN is refused (it found no contact)."""
    obj, _, _, _ = clip
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 60
    empty = _skating_target(obj, [1 + 0.5 * i for i in range(119)])
    mc.select(obj, ["shin.L"])
    for bad in ({"height": math.nan}, {"speed": math.nan}):
        with pytest.raises(RuntimeError, match="must be a finite value"):
            bpy.ops.dqik.plant(**bad)
    assert bpy.ops.dqik.plant() == {'FINISHED'}
    held = []
    for step in range(12):
        frame = 15 + 0.5 * step
        scene.frame_set(int(frame), subframe=frame % 1)
        held.append(empty.matrix_world.translation.y)
    assert max(held) - min(held) <= 1e-6


def test_plant_works_over_the_frames_a_target_is_keyed_on(clip, dqik):
    """A target keyed on part of the shot (frames -10 to 30 of a scene playing 1 to 60) is
    planted over its keys: contacts found in the part before the scene's start too, and the
    frames past its last key untouched; Start and End plant a part of them only."""
    obj, _, _, _ = clip
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 60
    empty = _skating_target(obj, range(-10, 31))
    mc.select(obj, ["shin.L"])

    def skate():
        held = []
        for frame in (-10, -9, -8, -7):     # the contact at the start of the keys (-12 to 0)
            scene.frame_set(frame)
            held.append(empty.matrix_world.translation.y)
        return max(held) - min(held)
    assert bpy.ops.dqik.plant(frame_start=5, frame_end=30) == {'FINISHED'}
    assert skate() == pytest.approx(0.006, abs=1e-6)
    with pytest.raises(RuntimeError, match="no key on frame 31"):
        bpy.ops.dqik.plant(frame_start=5, frame_end=40)
    assert bpy.ops.dqik.plant() == {'FINISHED'}
    assert skate() <= 1e-6
    curve = empty.animation_data.action.layers[0].strips[0].channelbag(
        empty.animation_data.action_slot).fcurves.find("location", index=1)
    assert [k.co[0] for k in curve.keyframe_points] == list(range(-10, 31))


def test_targets_from_animation_refuses_frames_blender_does_not_play(clip, dqik):
    obj, _, _, _ = clip
    mc.select(obj, ["forearm.L"])
    with pytest.raises(RuntimeError, match="goes past the frames Blender plays"):
        bpy.ops.dqik.targets_from_animation(frame_start=1048570, frame_end=1048600)
