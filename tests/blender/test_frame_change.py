"""Solve on frame change (``Object.dqik.use_solve_on_frame_change``, ``dq_ik_addon/blender/solving/frame_change.py``):
animated targets met on every frame of ``scene.frame_set``, every frame solved from its animated
pose (``solving/animated_start.py``; ``test_animation_layering.py`` checks what that keeps), errors
reported once and the option switched off, the option saved with the file, no
re-entrance, and a Workbench render of an animation that shows the solved pose."""

import importlib
import os

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Vector

REACHED = 1e-4      # 0.1 mm
FRAMES = 60
ARMS = ("hand.L", "forearm.L", "upper_arm.L", "shoulder.L",
        "hand.R", "forearm.R", "upper_arm.R", "shoulder.R")


def _module(dqik, name):
    return importlib.import_module(f"{dqik.__name__}.{name}")


def _arm_path(obj, dqik, rng, frames, keys=3):
    """The hand tails, {bone: (frames,3)}, in Blender's FK of arm poses interpolated (smoothstep
    in swing/twist parameters, which stays inside the limits) between ``keys`` random in-limit
    poses; the pose is left at rest."""
    st = dqik.dq_ik_addon.engine.swing_twist
    poses = [sp.random_pose_in_limits(obj, ARMS, rng, dqik) for _ in range(keys)]
    params = [{n: np.array(st.swing_twist_params(p[n])) for n in ARMS} for p in poses]
    out = {"hand.L": [], "hand.R": []}
    for s in np.linspace(0.0, keys - 1, frames):
        k = min(int(s), keys - 2)
        w = (s - k) * (s - k) * (3 - 2 * (s - k))
        sp.set_pose(obj, {n: st.quat_from_swing_twist(*((1 - w) * params[k][n]
                                                         + w * params[k + 1][n])) for n in ARMS})
        for name in out:
            out[name].append(sp.world_tail(obj, name))
    sp.clear_pose(obj)
    return {name: np.array(points) for name, points in out.items()}


def _animated_rig(dqik, frames=FRAMES, seed=7):
    """The basic metarig with HUMANOID limits, both feet planted (priority 1) and both hands
    (priority 2) following keyed Empties over ``frames`` frames (FK-reachable); option off."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    empties = sp.add_targets(obj, sp.EFFECTORS)
    for name in sp.EFFECTORS:
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
        if name.startswith("foot"):
            empties[name].location = sp.world_tail(obj, name)
    path = _arm_path(obj, dqik, np.random.default_rng(seed), frames)
    for name, points in path.items():
        for frame, point in enumerate(points, start=1):
            empties[name].location = point
            empties[name].keyframe_insert("location", frame=frame)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    return obj, empties


def _errors(obj, empties):
    """Each effector's distance to its Empty, in the pose as the frame change left it evaluated
    (no further update)."""
    return np.array([np.linalg.norm(sp.world_tail(obj, name)
                                    - np.array(empty.matrix_world.translation))
                     for name, empty in empties.items()])


@pytest.fixture
def starts(dqik, monkeypatch):
    """Records, for every tick, its frame and whether it started from the frame's animated pose
    (``animated``) or from the pose on screen."""
    session_class = _module(dqik, "dq_ik_addon.blender.solving.session").Session
    tick, seen = session_class.tick, []

    def recording(self, time_budget_ms=None, animated=False, view_layer=None):
        seen.append((bpy.context.scene.frame_current, animated))
        return tick(self, time_budget_ms, animated, view_layer)
    monkeypatch.setattr(session_class, "tick", recording)
    return seen


def test_animated_targets_are_met_on_every_frame(clean_scene, dqik, starts):
    obj, empties = _animated_rig(dqik)
    scene = clean_scene
    scene.frame_set(1)
    assert _errors(obj, empties)[:2].min() > 0.05       # the hands are not there by themselves
    obj.dqik.use_solve_on_frame_change = True
    worst = []
    for frame in range(1, FRAMES + 1):
        scene.frame_set(frame)
        worst.append(_errors(obj, empties).max())
    assert max(worst) <= REACHED, f"frame {int(np.argmax(worst)) + 1}: {max(worst)} m"
    # every frame starts from its animated pose
    assert starts == [(frame, True) for frame in range(1, FRAMES + 1)]
    assert obj.animation_data is None or obj.animation_data.action is None  # no keys
    snapshot = _module(dqik, "api").session_for(obj).last_result
    assert snapshot.status == 'MET'


def test_jumps_and_steps_alike_start_from_the_animated_pose_and_meet_the_targets(
        clean_scene, dqik, starts):
    obj, empties = _animated_rig(dqik)
    obj.dqik.use_solve_on_frame_change = True
    scene = clean_scene
    for frame in (5, 6, 50, 12, 13, 13, 60):
        scene.frame_set(frame)
        assert _errors(obj, empties).max() <= REACHED, frame
    assert [animated for _, animated in starts] == [True] * 7


def test_a_rig_that_only_a_second_view_layer_evaluates_is_solved_in_that_layer(clean_scene,
                                                                               dqik):
    """The character's collection excluded from the window's view layer and shown by a second
    one (a render-layer split): Blender calls the handler once per view layer's depsgraph, and
    the one that evaluates the rig finds its targets there, not in the window's layer."""
    obj, empties = _animated_rig(dqik, frames=10)
    scene = clean_scene
    character = bpy.data.collections.new("Character")
    scene.collection.children.link(character)
    for thing in [obj, *empties.values()]:
        for collection in thing.users_collection:
            collection.objects.unlink(thing)
        character.objects.link(thing)
    scene.view_layers.new("Characters")
    bpy.context.view_layer.layer_collection.children["Character"].exclude = True
    obj.dqik.use_solve_on_frame_change = True
    for frame in (3, 8):
        scene.frame_set(frame)
        assert obj.dqik.use_solve_on_frame_change, frame
        assert _errors(obj, empties).max() <= REACHED, frame


def test_a_keyed_bone_the_solve_does_not_move_is_followed_on_every_frame(clean_scene, dqik):
    """The left forearm is locked (stiffness 1) and keyed: it bends further over the frames,
    and the hand target (chain of 3) is FK of that bend with the upper arm raised. Each frame
    takes the locked bone as keyed."""
    obj = rigs.metarig("basic")
    (empty,) = sp.add_targets(obj, ["hand.L"], chain_count=3).values()
    upper, forearm = obj.pose.bones["upper_arm.L"], obj.pose.bones["forearm.L"]
    forearm.dqik.stiffness = 1.0
    upper.rotation_mode = forearm.rotation_mode = 'QUATERNION'
    for frame in range(1, 11):
        forearm.rotation_quaternion = (np.cos(0.04 * frame), 0.0, 0.0, np.sin(0.04 * frame))
        forearm.keyframe_insert("rotation_quaternion", frame=frame)
        upper.rotation_quaternion = (np.cos(0.3), np.sin(0.3), 0.0, 0.0)
        bpy.context.view_layer.update()
        empty.location = sp.world_tail(obj, "hand.L")
        empty.keyframe_insert("location", frame=frame)
    upper.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    obj.dqik.use_solve_on_frame_change = True
    for frame in range(1, 11):
        clean_scene.frame_set(frame)
        assert _errors(obj, {"hand.L": empty}).max() <= REACHED, frame


def test_an_error_is_reported_once_and_switches_the_option_off(clean_scene, dqik, capfd):
    obj, empties = _animated_rig(dqik, frames=10)
    obj.dqik.use_solve_on_frame_change = True
    clean_scene.frame_set(1)
    assert _errors(obj, empties).max() <= REACHED
    for name in sp.EFFECTORS:               # a rig without tasks: the session refuses it
        obj.pose.bones[name].dqik.use_target = False
    capfd.readouterr()
    for frame in range(2, 8):
        clean_scene.frame_set(frame)        # never raises
    err = capfd.readouterr().err
    assert err.count("DQ IK: Solve on Frame Change is now off for 'metarig'") == 1, err
    assert "has no bone with an enabled DQ IK target" in err
    assert not obj.dqik.use_solve_on_frame_change
    snapshot = _module(dqik, "api").session_for(obj).last_result
    assert snapshot.status == 'ERROR' and "no bone with an enabled DQ IK target" in snapshot.error


def test_an_unexpected_exception_is_reported_once_and_switches_the_option_off(
        clean_scene, dqik, capfd, monkeypatch):
    obj, empties = _animated_rig(dqik, frames=10)
    obj.dqik.use_solve_on_frame_change = True

    def broken(self, time_budget_ms=None, animated=False, view_layer=None):
        raise RuntimeError("something went wrong")
    monkeypatch.setattr(_module(dqik, "dq_ik_addon.blender.solving.session").Session, "tick", broken)
    capfd.readouterr()
    for frame in range(1, 6):
        clean_scene.frame_set(frame)
    err = capfd.readouterr().err
    assert err.count("DQ IK: Solve on Frame Change is now off") == 1, err
    assert "RuntimeError: something went wrong" in err
    assert not obj.dqik.use_solve_on_frame_change
    assert _module(dqik, "api").session_for(obj).last_result.status == 'ERROR'


def test_edit_mode_is_skipped_without_switching_the_option_off(clean_scene, dqik, capfd):
    obj, empties = _animated_rig(dqik, frames=5)
    obj.dqik.use_solve_on_frame_change = True
    bpy.ops.object.mode_set(mode='EDIT')
    capfd.readouterr()
    clean_scene.frame_set(3)
    assert "DQ IK" not in capfd.readouterr().err
    bpy.ops.object.mode_set(mode='POSE')
    assert obj.dqik.use_solve_on_frame_change
    clean_scene.frame_set(4)
    assert _errors(obj, empties).max() <= REACHED


def test_settings_survive_save_and_reload_and_it_still_solves(clean_scene, dqik, tmp_path):
    obj, _ = _animated_rig(dqik, frames=20)
    settings = obj.dqik
    settings.use_solve_on_frame_change = True
    settings.max_iterations, settings.tolerance, settings.damping = 250, 2e-6, 0.07
    settings.rest_weight, settings.time_budget_ms, settings.margin = 0.2, 12.0, 0.02
    assert clean_scene.render.use_lock_interface       # switched on with the option
    path = str(tmp_path / "frames.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["metarig"]
    settings = obj.dqik
    assert settings.use_solve_on_frame_change
    assert settings.max_iterations == 250 and settings.damping == pytest.approx(0.07)
    assert settings.rest_weight == pytest.approx(0.2)
    assert settings.tolerance == pytest.approx(2e-6) and settings.time_budget_ms == 12.0
    assert settings.margin == pytest.approx(0.02)
    assert bpy.context.scene.render.use_lock_interface
    empties = {name: bpy.data.objects[f"target_{name}"] for name in sp.EFFECTORS}
    for frame in (1, 2, 3, 15):
        bpy.context.scene.frame_set(frame)
        assert _errors(obj, empties).max() <= REACHED, frame


def test_the_handler_never_reenters_itself(clean_scene, dqik, monkeypatch):
    """A tick that changes the frame (what the handler itself never does) does not solve again
    inside the solve."""
    obj, empties = _animated_rig(dqik, frames=10)
    obj.dqik.use_solve_on_frame_change = True
    session_class = _module(dqik, "dq_ik_addon.blender.solving.session").Session
    tick, depth, calls = session_class.tick, [0], []

    def reentering(self, time_budget_ms=None, animated=False, view_layer=None):
        calls.append(depth[0])
        depth[0] += 1
        try:
            scene = bpy.context.scene
            scene.frame_set(scene.frame_current)
            return tick(self, time_budget_ms, animated, view_layer)
        finally:
            depth[0] -= 1
    monkeypatch.setattr(session_class, "tick", reentering)
    for frame in (1, 2, 3):
        clean_scene.frame_set(frame)
    assert calls == [0, 0, 0]
    assert obj.dqik.use_solve_on_frame_change
    assert _errors(obj, empties).max() <= REACHED


def test_one_handler_after_disabling_and_enabling(dqik):
    import addon_utils
    from extension_cli import MODULE

    def ours():
        return [f for f in bpy.app.handlers.frame_change_post
                if f.__module__.startswith(MODULE)]
    assert len(ours()) == 1
    for _ in range(2):
        addon_utils.disable(MODULE, default_set=True)
        assert ours() == []
        addon_utils.enable(MODULE, default_set=True)
        assert len(ours()) == 1


# -- rendering ---------------------------------------------------------------------------------
SIZE = 64


def _skinned_marker(obj, bone, size=0.05):
    """A cube of ``size`` centred on ``bone``'s tail at rest, skinned to that bone alone."""
    centre = sp.world_tail(obj, bone)
    mesh = bpy.data.meshes.new("marker")
    corners = [centre + size / 2 * np.array([x, y, z])
               for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata([tuple(c) for c in corners], [], faces)
    marker = bpy.data.objects.new("marker", mesh)
    bpy.context.scene.collection.objects.link(marker)
    marker.vertex_groups.new(name=bone).add(list(range(8)), 1.0, 'REPLACE')
    marker.modifiers.new("Armature", 'ARMATURE').object = obj
    return marker


def _front_camera(scene, centre, scale):
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    scene.collection.objects.link(camera)
    camera.data.type, camera.data.ortho_scale = 'ORTHO', scale
    camera.location = Vector(centre) + Vector((0.0, -5.0, 0.0))
    camera.rotation_euler = (np.pi / 2, 0.0, 0.0)
    scene.camera = camera
    return camera


def _alpha_centroid(path):
    image = bpy.data.images.load(path)
    try:
        pixels = np.empty(image.size[0] * image.size[1] * 4, dtype=np.float32)
        image.pixels.foreach_get(pixels)
        alpha = pixels.reshape(image.size[1], image.size[0], 4)[:, :, 3]
    finally:
        bpy.data.images.remove(image)
    rows, cols = np.nonzero(alpha > 0.5)
    assert rows.size, path
    return np.array([cols.mean() + 0.5, rows.mean() + 0.5])    # pixels from the bottom left


def _projected(scene, camera, point):
    return np.array(world_to_camera_view(scene, camera, Vector(point)))[:2] * SIZE


def test_a_workbench_render_of_the_animation_shows_the_solved_pose(clean_scene, dqik, tmp_path):
    """Frames 5, 20 and 35 rendered headless with Workbench (``render.render(animation=True)``)
    while the interface's depsgraph stays at frame 30: a cube skinned to hand.L is drawn where
    each rendered frame's target is, not where frame 30's is nor where the unsolved hand is."""
    scene = clean_scene
    obj, empties = _animated_rig(dqik, frames=40, seed=11)
    _skinned_marker(obj, "hand.L")
    rest = sp.world_tail(obj, "hand.L")
    targets = {}
    for frame in (5, 20, 30, 35):
        scene.frame_set(frame)
        targets[frame] = np.array(empties["hand.L"].matrix_world.translation)
    camera = _front_camera(scene, np.mean(list(targets.values()) + [rest], axis=0), 1.6)
    render = scene.render
    render.engine = 'BLENDER_WORKBENCH'
    render.resolution_x = render.resolution_y = SIZE
    render.resolution_percentage = 100
    render.film_transparent = True
    render.image_settings.file_format = 'PNG'
    render.image_settings.color_mode = 'RGBA'
    render.filepath = str(tmp_path / "frame_")
    scene.frame_start, scene.frame_end, scene.frame_step = 5, 35, 15
    obj.dqik.use_solve_on_frame_change = True
    scene.frame_set(30)
    bpy.ops.render.render(animation=True)
    assert scene.frame_current == 30
    for frame in (5, 20, 35):
        drawn = _alpha_centroid(os.path.join(str(tmp_path), f"frame_{frame:04d}.png"))
        wanted = _projected(scene, camera, targets[frame])
        assert np.linalg.norm(drawn - wanted) <= 1.0, (frame, drawn, wanted)
        for elsewhere in (targets[30], rest):
            assert np.linalg.norm(drawn - _projected(scene, camera, elsewhere)) > 3.0, frame


def test_lock_interface_is_turned_on_with_the_option_and_back_off_with_the_last_one(clean_scene,
                                                                                   dqik):
    """Render > Lock Interface, which solving in a render needs, goes on with the option and
    back off when the scene's last armature turns it off; a scene the user locked stays locked."""
    first, _ = _animated_rig(dqik, frames=3)
    second = bpy.data.objects.new("second", bpy.data.armatures.new("second"))
    clean_scene.collection.objects.link(second)
    render = clean_scene.render
    render.use_lock_interface = False
    first.dqik.use_solve_on_frame_change = True
    second.dqik.use_solve_on_frame_change = True
    assert render.use_lock_interface
    first.dqik.use_solve_on_frame_change = False
    assert render.use_lock_interface                    # the second armature still solves
    second.dqik.use_solve_on_frame_change = False
    assert not render.use_lock_interface
    render.use_lock_interface = True                    # locked by the user
    first.dqik.use_solve_on_frame_change = True
    first.dqik.use_solve_on_frame_change = False
    assert render.use_lock_interface


def test_lock_interface_stays_the_users_and_is_given_back_when_the_armature_is_deleted(
        clean_scene, dqik):
    """A lock the user unlocks and locks again while the option is on is the user's own: the
    option going off leaves it. A lock DQ IK took is given back when the armature that needed it
    is deleted."""
    rig, _ = _animated_rig(dqik, frames=3)
    render = clean_scene.render
    render.use_lock_interface = False
    rig.dqik.use_solve_on_frame_change = True
    assert render.use_lock_interface
    render.use_lock_interface = False                   # the user unlocks ...
    rig.location.x += 0.1                               # ... and goes on working
    bpy.context.view_layer.update()
    render.use_lock_interface = True                    # ... and locks it again
    rig.dqik.use_solve_on_frame_change = False
    assert render.use_lock_interface
    render.use_lock_interface = False
    rig.dqik.use_solve_on_frame_change = True
    assert render.use_lock_interface
    bpy.data.objects.remove(rig)
    bpy.context.view_layer.update()
    assert not render.use_lock_interface


def test_a_scene_that_gets_an_armature_solving_on_frame_change_is_locked_once(clean_scene,
                                                                              dqik):
    """An armature with the option on linked into another scene (as appending or linking one
    does) locks that scene's interface too; unlocked by the user, it stays unlocked."""
    rig, _ = _animated_rig(dqik, frames=3)
    rig.dqik.use_solve_on_frame_change = True
    other = bpy.data.scenes.new("Shot")
    assert not other.render.use_lock_interface
    other.collection.objects.link(rig)
    bpy.context.view_layer.update()
    assert other.render.use_lock_interface
    other.render.use_lock_interface = False                 # the user's choice
    rig.location.x += 0.1
    bpy.context.view_layer.update()
    other.collection.objects.link(bpy.data.objects.new("Prop", None))
    bpy.context.view_layer.update()
    assert not other.render.use_lock_interface


def test_a_lock_the_user_had_on_is_theirs_to_take_off(clean_scene, dqik):
    """Lock Interface on before the option: DQ IK notes it as the user's; unlocked by the user,
    it stays unlocked when objects come and go."""
    rig, _ = _animated_rig(dqik, frames=3)
    render = clean_scene.render
    render.use_lock_interface = True
    rig.dqik.use_solve_on_frame_change = True
    render.use_lock_interface = False
    clean_scene.collection.objects.link(bpy.data.objects.new("Prop", None))
    bpy.context.view_layer.update()
    assert not render.use_lock_interface


def test_straight_limbs_keyed_nothing_else_fold_in_fewer_iterations(clean_scene, dqik,
                                                                     monkeypatch):
    """Basic metarig under the HUMANOID limits, nothing animated: hand and foot targets (Chain
    Length 3) keyed on 12 frames at the tails of random limb poses inside the limits. Every frame
    starts from the rest pose, whose knees and elbows are hinges nearly straight (a little
    inside their hyperextension bound); the solve first swings them a tenth of the way towards
    the centre of their ranges, the way they bend (``escapes.folded_start``), so the first
    steps do not straighten them on backwards: every frame is met, in 96 iterations (133
    started as they are, the fold switched off here)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset()
    effectors = ["foot.L", "foot.R", "hand.L", "hand.R"]
    empties = sp.add_targets(obj, effectors, chain_count=3)
    bones = obj.pose.bones
    limbs = [bone.name for effector in effectors
             for bone in (bones[effector], bones[effector].parent, bones[effector].parent.parent)]
    rng = np.random.default_rng(7)
    for frame in range(1, 13):
        sp.set_pose(obj, sp.random_pose_in_limits(obj, limbs, rng, dqik))
        for name, empty in empties.items():
            empty.location = sp.world_tail(obj, name)
            empty.keyframe_insert("location", frame=frame)
    sp.clear_pose(obj)
    obj.dqik.use_solve_on_frame_change = True
    session = dqik.api.session_for(obj)

    def playback():
        iterations = 0
        for frame in range(1, 13):
            bpy.context.scene.frame_set(frame)
            assert session.last_result.status == 'MET', session.last_result.describe()
            iterations += session.last_result.iterations
        return iterations
    folded = playback()
    session.invalidate()
    monkeypatch.setattr(_module(dqik, "dq_ik_addon.engine.solver"), "folded_start",
                        lambda problem, q, world, measure: (q, world, None))
    straight = playback()
    assert folded <= 0.8 * straight
