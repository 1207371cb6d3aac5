"""``dqik.bake``: what the keys play back, on Blender 4.5 and 5.0, through the real operator and
its frame loop (``dq_ik_addon/blender/keys/baking.FrameBake``): the solved pose with the tasks off,
the same frames Solve on Frame Change shows (also after a bake that keeps the tasks on), a Rigify
rig's FK controls, and the bones a bake keys ('SELECTED', 'ALL')."""

import bakes
import bpy
import numpy as np
import rigs
import solve_problems as sp


def _quaternion_keys(dqik, obj, name):
    """(K,4) keys of a bone's rotation_quaternion curves."""
    path = obj.pose.bones[name].path_from_id("rotation_quaternion")
    curves = sorted((fc for fc in bakes.fcurves(dqik, obj) if fc.data_path == path),
                    key=lambda fc: fc.array_index)
    assert len(curves) == 4
    out = []
    for fc in curves:
        co = np.empty(2 * len(fc.keyframe_points))
        fc.keyframe_points.foreach_get("co", co)
        out.append(co[1::2])
    return np.array(out).T


def _deform_matrices(rig, frames):
    """(F, d, 4, 4) the DEF bones' evaluated pose matrices at each frame."""
    scene = bpy.context.scene
    deform = [pb.name for pb in rig.pose.bones if pb.name.startswith("DEF-")]
    out = []
    for frame in frames:
        scene.frame_set(frame)
        out.append([np.array(rig.pose.bones[name].matrix) for name in deform])
    return np.array(out)


def test_baked_keys_play_the_solved_pose_with_the_tasks_off(clean_scene, dqik):
    """120 frames of animated targets on limb chains: with the tasks off, every frame's keys
    give the solved rotations (≤ 1e-5) and meet the targets (≤ 0.1 mm); quaternion keys never
    flip sign, and no bone turns more between two frames than the targets' motion explains.
    (Each frame is solved from the rig's pose, which nothing animates here, not from the frame
    before: with chains to the root, the spine they share can end in another of its redundant
    poses from one frame to the next; the README's known limits say so.)"""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    bakes.animated_targets(obj)
    for name in sp.EFFECTORS:
        obj.pose.bones[name].dqik.chain_count = 3
    baker = bakes.baker(dqik, obj)
    report = baker.finish()
    assert report.frames == 120 and report.worst_error <= 1e-4
    names, solved = baker.solved()
    assert not any(pb.dqik.use_target for pb in obj.pose.bones)
    played, errors = bakes.played(obj, names, baker.frames)
    assert bakes.same_rotations(played, solved) <= 1e-5
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
    bakes.animated_targets(obj, frames=(1, 30))
    start = dqik.dq_ik_addon.blender.rig.pose.PoseSnapshot(obj)
    obj.dqik.use_solve_on_frame_change = True
    names = [pb.name for pb in obj.pose.bones]
    shown, _ = bakes.played(obj, names, range(1, 31))
    obj.dqik.use_solve_on_frame_change = False
    start.restore(obj)
    bpy.context.view_layer.update()
    bpy.ops.dqik.bake(frame_start=1, frame_end=30)
    played, _ = bakes.played(obj, names, range(1, 31))
    assert bakes.same_rotations(played, shown) <= 1e-5


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
    keyed = {fc.data_path.split('"')[1] for fc in bakes.fcurves(dqik, rig)}
    assert keyed <= limbs and {"hand_fk.L", "foot_fk.R"} <= keyed
    played = _deform_matrices(rig, frames)
    assert np.abs(played - shown).max() <= 1e-5
    bpy.context.scene.frame_set(1)       # the FK pose's own tails: reachable
    for name in effectors:
        deform = sp.world_tail(rig, "DEF-" + name.replace("_fk", ""))
        assert np.linalg.norm(deform - goals[name]) <= 1e-4, name


def test_selected_and_all_bones_key_the_other_bones_as_animated(clean_scene, dqik):
    """'SELECTED' keys the selected bones, 'ALL' every bone; a bone the solve does not move is
    keyed with its animated rotation, location and scale, so the action plays alone."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    bakes.key_old_animation(obj)
    head_before = bakes.bone_rotations(obj, range(1, 21))
    bakes.animated_targets(obj, frames=(1, 20))
    bones = obj.data.bones if bpy.app.version < (5, 0, 0) else obj.pose.bones
    for item in bones:
        item.select = item.name in ("spine.006", "hand.L")
    report = bakes.baker(dqik, obj, bones='SELECTED', switch_off_tasks=False).finish()
    assert set(report.bones) == {"spine.006", "hand.L"}
    paths = {fc.data_path.rsplit(".", 1)[1] for fc in bakes.fcurves(dqik, obj)
             if "spine.006" in fc.data_path}
    assert paths == {"rotation_quaternion", "location", "scale"}
    report = bakes.baker(dqik, obj, bones='ALL').finish()
    assert len(report.bones) == len(obj.pose.bones)
    obj.animation_data.nla_tracks[0].mute = True         # the bake's action alone
    assert np.abs(bakes.bone_rotations(obj, range(1, 21)) - head_before).max() <= 1e-6


def test_playback_after_a_bake_that_keeps_the_tasks_on_shows_the_baked_keys(clean_scene, dqik):
    """Solve on Frame Change stays on through a bake that keeps the tasks: the frames played
    after it show the baked keys (the first frame after the bake starts from them, not from the
    bake's last solved frame)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    bakes.animated_targets(obj, frames=(1, 30))
    scene = bpy.context.scene
    obj.dqik.use_solve_on_frame_change = True
    scene.frame_set(1)
    bpy.ops.dqik.bake(frame_start=1, frame_end=30, switch_off_tasks=False)
    assert obj.dqik.use_solve_on_frame_change
    names = [pb.name for pb in obj.pose.bones]
    shown, _ = bakes.played(obj, names, range(2, 8))
    obj.dqik.use_solve_on_frame_change = False
    played, _ = bakes.played(obj, names, range(2, 8))
    assert bakes.same_rotations(played, shown) <= 1e-5


def test_a_bake_played_back_with_its_tasks_on_keeps_its_closest_reachable_poses(clean_scene,
                                                                               dqik):
    """HUMANOID limits, limb chains (Chain Length 3), the feet at rest, the hands keyed 1.5 m
    out from the shoulders in random directions (beyond reach: every frame a closest reachable
    pose), baked with the tasks kept on, then played with Solve on Frame Change: each frame
    starts from its baked keys, already where its solve settles, and stays within 10° of them
    (a fresh solve that swung the knees and elbows first, ``escapes.folded_start``, and kept
    what it found ended elsewhere, up to 114°)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    effectors = ["foot.L", "foot.R", "hand.L", "hand.R"]
    empties = sp.add_targets(obj, effectors, chain_count=3)
    rng = np.random.default_rng(1)
    for frame in range(1, 21):
        for name, empty in empties.items():
            point = sp.world_tail(obj, name)
            if name.startswith("hand"):
                way = rng.normal(size=3)
                point = np.array(obj.pose.bones[name.replace("hand", "upper_arm")].head) \
                    + 1.5 * way / np.linalg.norm(way)
            empty.location = point
            empty.keyframe_insert("location", frame=frame)
    scene = bpy.context.scene
    scene.frame_set(1)
    assert bpy.ops.dqik.bake(frame_start=1, frame_end=20, switch_off_tasks=False) == {'FINISHED'}

    def rotations():
        return np.array([pb.rotation_quaternion[:] for pb in obj.pose.bones])
    baked = []
    for frame in range(1, 21):
        scene.frame_set(frame)
        baked.append(rotations())
    obj.dqik.use_solve_on_frame_change = True
    for frame in range(1, 21):
        scene.frame_set(frame)
        turn = 2.0 * np.arccos(np.clip(np.abs((baked[frame - 1] * rotations()).sum(1)), 0, 1))
        assert np.degrees(turn).max() <= 10.0, frame
