"""The viewport overlay's geometry on real rigs with the HUMANOID preset, measured against the
limit semantics in Blender's terms, the session's capsules and contacts, and the task targets;
its change key, its toggles and its drawing (offscreen, where Blender can draw headless)."""

import shutil
import warnings

import bpy
import numpy as np
import offscreen
import pytest
import rigs
import solve_problems as sp
from mathutils import Quaternion, Vector
from mathutils.bvhtree import BVHTree

WORLD = ((1.3, 0.0, 0.0, 0.4), (0.0, 0.0, -1.3, -0.2), (0.0, 1.3, 0.0, 0.1), (0.0, 0.0, 0.0, 1.0))


def humanoid(kind="basic", seed=3, dqik=None):
    """A metarig with HUMANOID limits, in a random pose inside them, moved, turned (90° about X)
    and scaled by 1.3 in the world, so that no frame is trivial."""
    obj = rigs.metarig(kind)
    assert bpy.ops.dqik.apply_preset(preset='HUMANOID') == {'FINISHED'}
    obj.matrix_world = [list(row) for row in WORLD]
    names = [pb.name for pb in obj.pose.bones]
    sp.set_pose(obj, sp.random_pose_in_limits(obj, names, np.random.default_rng(seed), dqik,
                                              max_free_angle=0.3))
    return obj


def lines_of(obj, dqik, layers=None):
    overlay = dqik.panels.overlay.layers
    lines = overlay.ArmatureLines()
    lines.update(obj, overlay.LAYERS if layers is None else layers)
    return lines.lines


def limit_lines_of(obj, dqik, layer):
    """The swing or twist layer's lines as built, in armature space and float64 (the drawn lists
    are the same in world space, in float32)."""
    overlay = dqik.panels.overlay.layers
    lines = overlay.limit_lines(obj, dqik.dq_ik_addon.blender.rig.arrays.evaluated_matrices(obj.pose.bones),
                                overlay.selected_mask(obj), (layer,),
                                overlay.read_bone_settings(obj))
    drawn = lines_of(obj, dqik, (layer,))
    for style, points in lines.items():
        np.testing.assert_allclose(to_armature(obj, drawn[style].astype(np.float64)), points,
                                   atol=1e-5)
    return lines


def to_armature(obj, points):
    inverse = np.linalg.inv(np.array(obj.matrix_world))
    return points @ inverse[:3, :3].T + inverse[:3, 3]


def parent_frame(pose_bone):
    """``(F, head, length)`` in armature space: the axes the bone's rotation channels act in,
    those of ``PoseBone.matrix · matrix_basis⁻¹`` made orthonormal (Y kept, X orthogonal to it),
    the head and the length."""
    matrix = np.array(pose_bone.matrix)
    frame = (matrix @ np.linalg.inv(np.array(pose_bone.matrix_basis)))[:3, :3]
    y = frame[:, 1] / np.linalg.norm(frame[:, 1])
    x = frame[:, 0] - (frame[:, 0] @ y) * y
    x /= np.linalg.norm(x)
    return np.column_stack([x, y, np.cross(x, y)]), matrix[:3, 3], pose_bone.length


def rotation_to(dqik, directions):
    """The shortest rotations taking +Y to the unit ``directions`` (pure swings, no twist), in
    float64 (mathutils works in float32)."""
    axes = np.cross([0.0, 1.0, 0.0], directions)
    angles = np.arctan2(np.linalg.norm(axes, axis=1), directions[:, 1])
    return dqik.dq_ik_addon.engine.quaternion.quat_from_axis_angle(axes, angles)


def limited_bones(obj):
    return [pb.name for pb in obj.pose.bones if pb.dqik.use_limits and pb.parent is not None]


def on_swing_boundary(swing_x, swing_z, settings):
    """How far ``(s_x, s_z)`` is from the edge of the four quarter-ellipses: ``|e − 1|`` for the
    ellipse value e of its quadrant, or, in a quadrant with a locked half-axis (a zero bound),
    its distance from the other axis (the edge runs along it)."""
    a = settings.swing_x_max if swing_x >= 0 else -settings.swing_x_min
    b = settings.swing_z_max if swing_z >= 0 else -settings.swing_z_min
    if a == 0.0 or b == 0.0:
        return abs(swing_x) if a == 0.0 else abs(swing_z)
    return abs((swing_x / a) ** 2 + (swing_z / b) ** 2 - 1.0)


def test_swing_cone_points_lie_on_the_limit_boundary(clean_scene, dqik):
    obj = humanoid(dqik=dqik)
    swing_params = dqik.dq_ik_addon.engine.swing_twist.swing_twist_params
    names = limited_bones(obj)
    assert len(names) >= 15
    for name in names:
        rigs.select_bones(obj, [name])
        pose_bone = obj.pose.bones[name]
        settings = pose_bone.dqik
        lines = limit_lines_of(obj, dqik, "swing")
        frame, head, length = parent_frame(pose_bone)
        points = lines["swing"]
        rim = points[np.linalg.norm(points - head, axis=1) > 0.5 * length]
        assert len(rim) >= 2 * dqik.panels.overlay.geometry.CONE_SEGMENTS
        directions = np.linalg.solve(frame, (rim - head).T).T
        np.testing.assert_allclose(np.linalg.norm(directions, axis=1), length, rtol=1e-5)
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        turns = rotation_to(dqik, directions)
        s_x, s_z, tau = swing_params(turns)
        np.testing.assert_allclose(tau, 0.0, atol=1e-9)
        off = [on_swing_boundary(x, z, settings) for x, z in zip(s_x, s_z)]
        assert max(off) <= 1e-6, name
        # and in Blender: that rotation puts the tail on the cone point, and Blender's own
        # decomposition of it lies on the edge as well
        before = pose_bone.rotation_quaternion.copy()
        for point, turn in list(zip(rim, turns))[::16]:
            pose_bone.rotation_quaternion = Quaternion(turn)
            bpy.context.view_layer.update()
            np.testing.assert_allclose(to_armature(obj, sp.world_tail(obj, name)), point,
                                       atol=2e-5 * length)
            swing, _twist = pose_bone.rotation_quaternion.to_swing_twist('Y')
            exp = swing.to_exponential_map()
            assert on_swing_boundary(exp.x, exp.z, settings) <= 1e-4
        pose_bone.rotation_quaternion = before
        bpy.context.view_layer.update()
        # the current swing: from the head along the bone past the cone's edge
        start, end = lines["swing_current"]
        tail = np.array(pose_bone.tail)
        np.testing.assert_allclose(start, head, atol=1e-6)
        np.testing.assert_allclose((end - start) / np.linalg.norm(end - start),
                                   (tail - start) / np.linalg.norm(tail - start), atol=1e-5)


def test_twist_arc_ends_are_the_twist_limits(clean_scene, dqik):
    obj = humanoid(dqik=dqik, seed=5)
    engine = dqik.dq_ik_addon.engine
    for name in limited_bones(obj):
        rigs.select_bones(obj, [name])
        pose_bone = obj.pose.bones[name]
        settings = pose_bone.dqik
        lines = limit_lines_of(obj, dqik, "twist")["twist"]
        frame, head, length = parent_frame(pose_bone)
        matrix = np.array(pose_bone.matrix)
        bone_y = matrix[:3, 1] / np.linalg.norm(matrix[:3, 1])
        centre = head + 0.5 * length * bone_y
        starts, ends = lines[0::2], lines[1::2]
        radial = np.linalg.norm(starts - centre, axis=1) < 1e-5 * length
        assert radial.sum() == 2, name                      # a radius to each end of the arc
        # the bone's axes at each end, from the drawing: Y from the head to the arc's centre, Z
        # from the centre to the end; in the parent frame, decomposed by the engine
        drawn_centre = starts[radial][0]
        y_axis = (drawn_centre - head) / np.linalg.norm(drawn_centre - head)
        angles = []
        for end in ends[radial]:
            z_axis = end - drawn_centre
            z_axis -= (z_axis @ y_axis) * y_axis
            z_axis /= np.linalg.norm(z_axis)
            turned = np.linalg.solve(frame, np.column_stack([np.cross(y_axis, z_axis), y_axis,
                                                             z_axis]))
            angles.append(engine.swing_twist.swing_twist_params(
                engine.quaternion.matrix_to_quat(turned))[2])
        np.testing.assert_allclose(sorted(angles), [settings.twist_min, settings.twist_max],
                                   atol=1e-6, err_msg=name)
        # every arc point is at the arc's radius from the centre, around the bone
        arc = np.concatenate([starts[~radial], ends[~radial]])
        np.testing.assert_allclose(np.linalg.norm(arc - centre, axis=1), 0.2 * length, rtol=1e-5)
        np.testing.assert_allclose((arc - centre) @ bone_y, 0.0, atol=1e-5 * length)


def test_capsule_wires_lie_at_the_radius_from_the_bone_segment(clean_scene, dqik):
    obj = humanoid(dqik=dqik)
    obj.dqik.use_self_collision = True
    geometry = dqik.panels.overlay.geometry
    lines = lines_of(obj, dqik, ("capsules",))
    assert set(lines) == {"capsule"}
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
    radii, enabled = sp.capsule_radii(obj, dqik, model)
    bones = [pb for pb, on, r in zip(obj.pose.bones, enabled, radii)
             if on and r >= dqik.dq_ik_addon.engine.contacts.MIN_RADIUS]
    wires = lines["capsule"].astype(np.float64).reshape(len(bones), geometry.CAPSULE_VERTICES, 3)
    world = obj.matrix_world
    for pose_bone, wire in zip(bones, wires):
        head, tail = np.array(world @ pose_bone.head), np.array(world @ pose_bone.tail)
        axis = tail - head
        t = np.clip((wire - head) @ axis / (axis @ axis), 0.0, 1.0)
        distance = np.linalg.norm(wire - head - t[:, None] * axis, axis=1)
        radius = 1.3 * radii[obj.pose.bones.find(pose_bone.name)]
        np.testing.assert_allclose(distance, radius, atol=1e-6, err_msg=pose_bone.name)
    obj.dqik.use_self_collision = False
    bpy.context.view_layer.update()
    assert lines_of(obj, dqik, ("capsules",)) == {}      # no collisions: no capsules


def _hand_against_a_wall(scene):
    """``(rig, wall)``: the basic metarig with HUMANOID limits, its left hand's target beyond a
    wall cube in its collider collection, solved (the hand's capsules touch the wall)."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    colliders = bpy.data.collections.new("Colliders")
    scene.collection.children.link(colliders)
    obj.dqik.colliders = colliders
    tail = sp.world_tail(obj, "hand.L")
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=tail + np.array([0.0, -0.15 - 0.5, 0.0]))
    wall = bpy.context.active_object
    rigs.move_to_collection(wall, colliders)
    bpy.context.view_layer.objects.active = obj
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    empties["hand.L"].location = tail + np.array([0.0, -0.4, 0.0])
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    return obj, wall


def test_contact_points_lie_on_the_obstacle(clean_scene, dqik):
    obj, wall = _hand_against_a_wall(clean_scene)
    contacts = dqik.api.session_for(obj).last_result.contacts
    assert len(contacts.points) > 0
    lines = lines_of(obj, dqik)
    marks = lines["contact"].astype(np.float64)
    count = len(contacts.points)
    drawn = marks[:2 * count:2]         # each contact's normal line starts on its point
    np.testing.assert_allclose(drawn, contacts.points, atol=1e-6)
    normals = marks[1:2 * count:2] - drawn
    np.testing.assert_allclose(normals / np.linalg.norm(normals, axis=1, keepdims=True),
                               contacts.normals, atol=1e-5)
    tree = BVHTree.FromObject(wall, bpy.context.evaluated_depsgraph_get())   # in its own space
    to_wall = wall.matrix_world.inverted()
    for point in drawn:
        _location, _normal, _index, distance = tree.find_nearest(to_wall @ Vector(point))
        assert distance <= 1e-5
    assert "capsule_touching" in lines and "capsule" in lines
    # the capsules the solve tests: the left arm's and those the hand carries, not the others
    geometry = dqik.panels.overlay.geometry
    drawn = sum(len(lines[style]) for style in ("capsule", "capsule_touching"))
    tested = dqik.dq_ik_addon.blender.solving.sessions.tested_capsules_of(obj)
    assert drawn == len(tested) * geometry.CAPSULE_VERTICES
    assert {"upper_arm.L", "forearm.L", "hand.L"} <= tested
    assert not tested & {"upper_arm.R", "thigh.L", "head", "spine"}
    # by default the selected bones' capsules and the touching ones; All Capsules: every one
    touching = set(contacts.bones)
    rigs.select_bones(obj, ["upper_arm.L"])
    lines = lines_of(obj, dqik)
    assert len(lines["capsule_touching"]) == len(touching) * geometry.CAPSULE_VERTICES
    assert len(lines.get("capsule", ())) == len({"upper_arm.L"} - touching) * \
        geometry.CAPSULE_VERTICES
    obj.dqik.show_overlay_all_capsules = True
    lines = lines_of(obj, dqik)
    assert sum(len(lines[style]) for style in ("capsule", "capsule_touching")) == drawn


def test_task_lines_join_effectors_and_targets_in_the_colour_of_their_status(clean_scene, dqik):
    obj = rigs.metarig("basic")
    empties = sp.add_targets(obj, ["hand.L", "hand.R", "foot.L"], chain_count=3)
    sp.set_pose(obj, {"forearm.L": Quaternion((1, 0, 0), 0.4)})
    empties["hand.L"].location = sp.world_tail(obj, "hand.L")          # reachable: FK
    sp.clear_pose(obj)
    empties["hand.R"].location = (-5.0, 0.0, 1.0)                       # out of reach
    obj.pose.bones["hand.R"].dqik.priority = 2
    obj.pose.bones["foot.L"].dqik.target = None                         # missing
    bpy.context.view_layer.update()
    before = lines_of(obj, dqik, ("tasks",))
    assert set(before) == {"task_unsolved", "task_failed"}
    bpy.ops.dqik.solve()
    bpy.context.view_layer.update()
    lines = lines_of(obj, dqik, ("tasks",))
    assert set(lines) == {"task_met", "task_closest", "task_failed"}
    for style, name in (("task_met", "hand.L"), ("task_closest", "hand.R")):
        start, end = lines[style].astype(np.float64)
        np.testing.assert_allclose(start, sp.world_tail(obj, name), atol=1e-5)
        np.testing.assert_allclose(end, np.array(empties[name].matrix_world.translation),
                                   atol=1e-5)
    cross = lines["task_failed"].astype(np.float64)
    np.testing.assert_allclose(cross.mean(axis=0), sp.world_tail(obj, "foot.L"), atol=1e-5)


def test_nothing_is_drawn_outside_pose_mode_or_without_settings(clean_scene, dqik):
    overlay = dqik.panels.overlay.layers
    obj = rigs.metarig("basic")                    # no limits, tasks or colliders
    assert overlay.shown_layers(obj) == overlay.LAYERS
    assert lines_of(obj, dqik) == {}
    obj.dqik.show_overlay = False
    assert overlay.shown_layers(obj) == ()
    obj.dqik.show_overlay = True
    obj.dqik.show_overlay_capsules = False
    assert "capsules" not in overlay.shown_layers(obj)
    bpy.ops.object.mode_set(mode='OBJECT')
    assert overlay.shown_layers(obj) == ()
    empty = bpy.data.objects.new("empty", None)
    assert overlay.shown_layers(empty) == ()
    assert overlay.shown_layers(None) == ()


def test_lines_are_made_again_only_when_what_they_show_changes(clean_scene, dqik):
    overlay = dqik.panels.overlay.layers
    obj = humanoid(dqik=dqik)
    obj.dqik.use_self_collision = True
    sp.add_targets(obj, ["hand.L"], chain_count=3)
    rigs.select_bones(obj, ["forearm.L"])
    lines = overlay.ArmatureLines()
    layers = overlay.LAYERS
    assert lines.update(obj, layers)
    assert not lines.update(obj, layers)              # a redraw of an unchanged rig
    obj.pose.bones["forearm.L"].rotation_quaternion = Quaternion((1, 0, 0), 0.2)
    bpy.context.view_layer.update()
    assert lines.update(obj, layers)                   # the pose
    assert not lines.update(obj, layers)
    obj.pose.bones["forearm.L"].dqik.twist_max = 0.1
    bpy.context.view_layer.update()
    assert lines.update(obj, layers)                   # a limit
    rigs.select_bones(obj, ["upper_arm.L"])
    assert lines.update(obj, layers)                   # the selection
    bpy.ops.dqik.solve()
    assert lines.update(obj, layers)                   # the result
    obj.pose.bones["hand.L"].dqik.target.location.x += 0.1
    bpy.context.view_layer.update()
    assert lines.update(obj, layers)                   # a target
    assert lines.update(obj, layers[:-1])             # the layers shown
    assert not lines.update(obj, layers[:-1])
    assert lines.builds == 7


def test_overlay_toggles_leave_the_session_alone_and_are_saved(clean_scene, dqik, tmp_path):
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"], chain_count=3)
    session = dqik.api.session_for(obj)
    session.tick()
    session.live_tick(8.0)
    for name in ("show_overlay", "show_overlay_swing", "show_overlay_twist",
                 "show_overlay_capsules", "show_overlay_contacts", "show_overlay_tasks"):
        setattr(obj.dqik, name, False)
    bpy.context.view_layer.update()
    assert session.live_tick(8.0) is None      # nothing to solve again: the session is clean
    name, path = obj.name, str(tmp_path / "overlay.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    settings = bpy.data.objects[name].dqik
    assert not any(getattr(settings, name) for name in (
        "show_overlay", "show_overlay_swing", "show_overlay_twist", "show_overlay_capsules",
        "show_overlay_contacts", "show_overlay_tasks"))


def test_the_overlay_draws_offscreen_in_the_colours_of_its_layers(clean_scene, dqik):
    """Drawn by ``overlay_draw.draw_overlay``, the draw handler's work, into an offscreen buffer
    through a camera: every layer's colour is on the picture."""
    if not offscreen.initialise_gpu():
        pytest.skip("Blender cannot draw on this machine, not even after a render")
    draw = dqik.panels.overlay.draw
    obj = humanoid(dqik=dqik)
    obj.dqik.use_self_collision = True
    sp.add_targets(obj, ["hand.L"], chain_count=3)["hand.L"].location = (-3.0, 0.0, 0.0)
    bpy.ops.dqik.solve()
    rigs.select_bones(obj, ["forearm.L"])
    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    clean_scene.collection.objects.link(camera)
    # behind the forearm's head, looking down the bone: the cone and the arc face the camera
    head, tail = (obj.matrix_world @ getattr(obj.pose.bones["forearm.L"], end)
                  for end in ("head", "tail"))
    camera.location = head - 4.0 * (tail - head)
    camera.rotation_euler = (tail - head).to_track_quat('-Z', 'Y').to_euler()
    bpy.context.view_layer.update()
    size = (320, 240)
    system = bpy.context.preferences.system
    pixels = offscreen.draw_offscreen(lambda: draw.draw_overlay(obj, None, system),
                                      *offscreen.camera_matrices(camera, size), size)
    batches = draw.armature_batches(obj, dqik.panels.overlay.layers.LAYERS)
    assert batches is draw.armature_batches(obj, dqik.panels.overlay.layers.LAYERS)  # kept
    drawn = pixels[..., 3] > 0.0
    assert 0.005 < drawn.mean() < 0.5
    colours = draw.STYLE_COLOURS
    shown = dqik.panels.overlay.layers.ArmatureLines()
    shown.update(obj, dqik.panels.overlay.layers.LAYERS)
    opaque = pixels[..., 3] > 0.25
    colour = pixels[opaque, :3] / pixels[opaque, 3:]       # blended onto transparent black
    for style in ("swing", "twist", "capsule", "swing_current", "task_closest"):
        assert style in shown.lines
        close = np.all(np.abs(colour - np.array(colours[style][:3])) < 0.03, axis=-1)
        assert close.sum() >= 10, style


def test_bone_settings_are_read_again_only_after_a_settings_edit(clean_scene, dqik):
    """A pose change (a live tick, a frame change) remakes the lines from the kept
    ``BoneSettings``; setting a DQ IK property, or undo, has them read again."""
    overlay = dqik.panels.overlay.layers
    obj = humanoid(dqik=dqik)
    sp.add_targets(obj, ["hand.L"], chain_count=3)
    rigs.select_bones(obj, ["forearm.L"])
    lines = overlay.ArmatureLines()
    assert lines.update(obj, overlay.LAYERS)
    kept = lines.rig.settings
    obj.pose.bones["forearm.L"].rotation_quaternion = Quaternion((1, 0, 0), 0.2)
    bpy.context.view_layer.update()
    assert lines.update(obj, overlay.LAYERS)
    assert lines.rig.settings is kept
    obj.pose.bones["hand.R"].dqik.use_target = True
    assert lines.update(obj, overlay.LAYERS)
    assert lines.rig.settings is not kept
    assert lines.rig.settings.tasks == tuple(sorted(
        obj.pose.bones.find(name) for name in ("hand.L", "hand.R")))
    edits = dqik.dq_ik_addon.blender.settings.edits.settings_edits(obj)
    handler = dqik.dq_ik_addon.blender.settings.edits.note_settings_edit
    assert all(handler in getattr(bpy.app.handlers, name)
               for name in ("undo_post", "redo_post", "load_post"))
    handler(bpy.context.scene, None)
    assert dqik.dq_ik_addon.blender.settings.edits.settings_edits(obj) != edits
    edits = dqik.dq_ik_addon.blender.settings.edits.settings_edits(obj)
    bpy.data.objects.remove(bpy.data.objects["target_hand.L"])     # no update callback
    assert dqik.dq_ik_addon.blender.settings.edits.settings_edits(obj) != edits
    # a key that switches a task off calls no update callback either
    edits = dqik.dq_ik_addon.blender.settings.edits.settings_edits(obj)
    settings = obj.pose.bones["hand.R"].dqik
    for frame, on in ((1, True), (10, False)):
        settings.use_target = on
        obj.keyframe_insert('pose.bones["hand.R"].dqik.use_target', frame=frame)
    bpy.context.scene.frame_set(1)
    assert lines.update(obj, overlay.LAYERS)
    assert obj.pose.bones.find("hand.R") in lines.rig.settings.tasks
    bpy.context.scene.frame_set(10)
    assert lines.update(obj, overlay.LAYERS)
    assert obj.pose.bones.find("hand.R") not in lines.rig.settings.tasks


def test_batches_leave_out_empty_segments_and_share_a_colour(clean_scene, dqik):
    """One batch per colour (the current swing and twist are both yellow), the thin capsules
    first; a twist arc of zero range adds no segment."""
    if not offscreen.initialise_gpu():
        pytest.skip("Blender cannot draw on this machine, not even after a render")
    draw = dqik.panels.overlay.draw
    point = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    segment = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], dtype=np.float32)
    batches = draw.make_batches({"twist": np.concatenate([point, segment]), "swing": point,
                                 "swing_current": segment, "twist_current": segment,
                                 "capsule": segment})
    assert [(colour, thin) for colour, thin, _batch in batches] == [
        (draw.STYLE_COLOURS["capsule"], True), (draw.STYLE_COLOURS["twist"], False),
        (draw.STYLE_COLOURS["swing_current"], False)]
    np.testing.assert_array_equal(draw.drawn_segments(np.concatenate([point, segment, point])),
                                  segment)


def test_each_armature_keeps_its_lines_across_alternating_draws(clean_scene, dqik):
    """Viewports showing different armatures draw them in turn: each one's lines are built
    once, not on every draw; a deleted armature's are dropped."""
    if not offscreen.initialise_gpu():
        pytest.skip("Blender cannot draw on this machine, not even after a render")
    draw, layers = dqik.panels.overlay.draw, dqik.panels.overlay.layers.LAYERS
    first = rigs.metarig("basic")
    target = sp.add_targets(first, ["hand.L"], chain_count=3)["hand.L"]
    second = bpy.data.objects.new("second", first.data)
    clean_scene.collection.objects.link(second)
    bpy.context.view_layer.update()
    second.pose.bones["hand.R"].dqik.use_target = True
    second.pose.bones["hand.R"].dqik.target = target
    for _ in range(3):
        for obj in (first, second):
            assert draw.armature_batches(obj, layers)
    assert [draw.drawn_lines(obj).builds for obj in (first, second)] == [1, 1]
    gone = second.session_uid
    bpy.data.objects.remove(second)
    draw.armature_batches(first, layers)
    assert gone not in draw._Drawn.by_armature


def test_a_task_line_follows_its_target_bone(clean_scene, dqik):
    """A task whose target is a bone of another armature: posing that bone moves the line's
    end (its pose is part of the change key)."""
    overlay = dqik.panels.overlay.layers
    obj = rigs.metarig("basic")
    bpy.ops.object.mode_set(mode='OBJECT')
    control = bpy.data.objects.new("control", bpy.data.armatures.new("control"))
    clean_scene.collection.objects.link(control)
    bpy.context.view_layer.objects.active = control
    bpy.ops.object.mode_set(mode='EDIT')
    goal = control.data.edit_bones.new("goal")
    goal.head, goal.tail = (0.5, -0.5, 1.0), (0.5, -0.5, 1.2)
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='POSE')
    settings = obj.pose.bones["hand.L"].dqik
    settings.use_target, settings.target, settings.subtarget = True, control, "goal"
    lines = overlay.ArmatureLines()
    assert lines.update(obj, ("tasks",))
    np.testing.assert_allclose(lines.lines["task_unsolved"][1], (0.5, -0.5, 1.0), atol=1e-6)
    control.pose.bones["goal"].location = (0.0, 0.0, 0.7)      # along the bone: world −Y
    bpy.context.view_layer.update()
    assert lines.update(obj, ("tasks",))
    np.testing.assert_allclose(lines.lines["task_unsolved"][1], (0.5, -1.2, 1.0), atol=1e-6)
    assert not lines.update(obj, ("tasks",))


def test_a_renamed_bone_keeps_its_capsule(clean_scene, dqik):
    """After a bone is renamed (in Pose Mode: same addresses), the lines are made with the new
    names: the capsule of a bone the next solve tests by its new name is still drawn."""
    overlay = dqik.panels.overlay.layers
    obj = rigs.metarig("basic")
    obj.dqik.use_self_collision = True
    obj.dqik.show_overlay_all_capsules = True
    sp.add_targets(obj, ["hand.L"], chain_count=3)["hand.L"].location = (-3.0, 0.0, 1.0)
    bpy.ops.dqik.solve()
    lines = overlay.ArmatureLines()
    assert lines.update(obj, ("capsules",))
    before = len(lines.lines["capsule"])
    obj.pose.bones["hand.L"].name = "paw.L"
    bpy.ops.dqik.solve()                                    # tests "paw.L" now
    assert "paw.L" in dqik.dq_ik_addon.blender.solving.sessions.tested_capsules_of(obj)
    assert lines.update(obj, ("capsules",))
    assert len(lines.lines["capsule"]) == before
    assert "paw.L" in lines.rig.model.names


def test_contacts_follow_the_collisions_toggle(clean_scene, dqik):
    """With Collisions off the last solve's contacts are hidden, as the capsules are."""
    overlay = dqik.panels.overlay.layers
    obj, _wall = _hand_against_a_wall(clean_scene)
    assert len(dqik.api.session_for(obj).last_result.contacts.points)
    lines = overlay.ArmatureLines()
    lines.update(obj, overlay.LAYERS)
    assert "contact" in lines.lines and "capsule_touching" in lines.lines
    obj.dqik.use_collisions = False
    assert lines.update(obj, overlay.LAYERS)
    assert not {"contact", "capsule", "capsule_touching"} & set(lines.lines)
    obj.dqik.use_collisions = True
    assert lines.update(obj, overlay.LAYERS)
    assert "contact" in lines.lines


def test_a_bone_scaled_to_zero_draws_nothing_and_no_warning(clean_scene, dqik):
    overlay = dqik.panels.overlay.layers
    obj = humanoid(dqik=dqik)
    obj.dqik.use_self_collision = True
    obj.dqik.show_overlay_all_capsules = True
    rigs.select_bones(obj, ["upper_arm.L", "forearm.L", "upper_arm.R"])
    shown = {style: len(points) for style, points in lines_of(obj, dqik).items()}
    obj.pose.bones["upper_arm.L"].scale = (0.0, 0.0, 0.0)  # and so its children
    bpy.context.view_layer.update()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lines = lines_of(obj, dqik)
    assert all(np.isfinite(points).all() for points in lines.values())
    for style in ("swing", "twist", "capsule"):
        assert 0 < len(lines[style]) < shown[style], style      # upper_arm.R's are left
    assert overlay.finite_segments(np.array([[0.0, 0, 0], [1, 0, 0], [np.nan, 0, 0],
                                             [1, 0, 0]])).shape == (2, 3)


def test_a_library_reload_refreshes_the_task_list_and_the_overlay(clean_scene, dqik, tmp_path):
    """The settings a library reload brings (a new task on a library override) show in the
    task list and the overlay: the reload counts as a settings edit."""
    task_rows = dqik.panels.task_rows
    overlay = dqik.panels.overlay.layers
    rig = rigs.metarig("basic")
    sp.add_targets(rig, ["hand.L"], chain_count=3)
    bpy.ops.object.mode_set(mode='OBJECT')
    name, library = rig.name, str(tmp_path / "rig.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library)
    rig.pose.bones["hand.R"].dqik.use_target = True
    rig.pose.bones["hand.R"].dqik.target = bpy.data.objects["target_hand.L"]
    changed = str(tmp_path / "changed.blend")
    bpy.ops.wm.save_as_mainfile(filepath=changed, copy=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (_source, linked):
        linked.objects = [name, "target_hand.L"]
    for obj in linked.objects:
        bpy.context.scene.collection.objects.link(obj)
    rig = linked.objects[0].override_create(remap_local_usages=True)
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode='POSE')
    lines = overlay.ArmatureLines()
    lines.update(rig, ("tasks",))
    assert [row.name for row in task_rows.task_rows(rig)] == ["hand.L"]
    assert len(lines.lines["task_unsolved"]) == 2
    shutil.copy(changed, library)
    bpy.data.libraries[0].reload()
    assert rig.pose.bones["hand.R"].dqik.use_target
    assert [row.name for row in task_rows.task_rows(rig)] == ["hand.L", "hand.R"]
    assert lines.update(rig, ("tasks",))
    assert len(lines.lines["task_unsolved"]) == 4
