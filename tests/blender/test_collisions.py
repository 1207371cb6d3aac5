"""Collision-aware solving against real Blender meshes (``Object.dqik.colliders``)."""

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from mathutils import Quaternion, Vector

ARM = ["hand.L", "forearm.L", "upper_arm.L"]


def test_hand_behind_a_wall_stops_at_the_wall(clean_scene, dqik):
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    tail = sp.world_tail(obj, "hand.L")
    gap, behind = 0.15, 0.3
    sp.box("wall", (tail[0] - 0.6, tail[1] - gap - 0.05, tail[2] - 0.6),
        (tail[0] + 0.6, tail[1] - gap, tail[2] + 0.6), colliders)
    empties["hand.L"].location = tail + np.array([0.0, -behind, 0.0])
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert sp.deepest_clearance(obj, dqik, ARM) >= -1e-3
    radius = 0.15 * obj.data.bones["hand.L"].length
    error = np.linalg.norm(sp.world_tail(obj, "hand.L") - np.array(empties["hand.L"].location))
    optimum = behind - gap + radius + obj.dqik.margin
    assert error <= optimum + 0.01
    contacts = dqik.api.session_for(obj).last_result.contacts     # the wall's front face
    wall_front = tail[1] - gap
    assert "hand.L" in contacts.bones and len(contacts.points) == len(contacts.normals)
    np.testing.assert_allclose(contacts.points[:, 1], wall_front, atol=1e-5)
    np.testing.assert_allclose(contacts.normals, np.tile([0.0, 1.0, 0.0], (len(contacts.points), 1)),
                               atol=1e-5)
    assert contacts.clearances.min() >= -1e-3


def test_the_collisions_toggle_solves_without_the_wall_and_keeps_it(clean_scene, dqik):
    """Collisions off (the Collision panel's header checkbox): the hand goes through the wall
    to its target, with Self Collision ignored too; the colliders stay set, and on again the
    hand stops at the wall (solved from the rest pose, in front of it)."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    tail = sp.world_tail(obj, "hand.L")
    sp.box("wall", (tail[0] - 0.6, tail[1] - 0.2, tail[2] - 0.6),
           (tail[0] + 0.6, tail[1] - 0.15, tail[2] + 0.6), colliders)
    empties["hand.L"].location = tail + np.array([-0.2, -0.3, 0.0])    # within the arm's reach
    obj.dqik.use_self_collision = True
    obj.dqik.use_collisions = False
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert sp.effector_errors(obj, empties).max() <= 1e-4
    snapshot = dqik.api.session_for(obj).last_result
    assert snapshot.contacts is None
    assert obj.dqik.colliders == colliders and obj.dqik.use_self_collision
    bpy.data.objects.remove(bpy.data.objects["wall"])    # Check Rig leaves the empty
    assert bpy.ops.dqik.build_chain() == {'FINISHED'}    # collection alone while off
    sp.box("wall", (tail[0] - 0.6, tail[1] - 0.2, tail[2] - 0.6),
           (tail[0] + 0.6, tail[1] - 0.15, tail[2] + 0.6), colliders)
    obj.dqik.use_collisions = True
    sp.clear_pose(obj)                                   # from in front of the wall again
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert sp.deepest_clearance(obj, dqik, ARM) >= -1e-3
    assert sp.effector_errors(obj, empties).max() > 0.1


def test_reachable_target_on_the_free_side_is_still_reached(clean_scene, dqik):
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    sp.box("floor", (-3, -3, -1.0), (3, 3, -0.2), colliders)
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    sp.set_pose(obj, {"upper_arm.L": Quaternion((1, 0, 0), 0.5), "forearm.L": Quaternion((1, 0, 0), 0.6)})
    empties["hand.L"].location = sp.world_tail(obj, "hand.L")  # reachable: FK of a pose
    sp.clear_pose(obj)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert np.linalg.norm(sp.world_tail(obj, "hand.L")
                          - np.array(empties["hand.L"].location)) < 1e-4
    assert sp.deepest_clearance(obj, dqik) >= -1e-6


def test_feet_on_the_floor_and_a_hand_target_under_a_table_top(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    colliders = sp.collider_collection(clean_scene, obj)
    tail = sp.world_tail(obj, "hand.L")
    sp.box("table", (tail[0] - 0.5, tail[1] - 0.8, 0.7), (tail[0] + 0.5, tail[1] + 0.2, 0.75),
        colliders)
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
    radii, _ = sp.capsule_radii(obj, dqik, model)
    floor_top = min(sp.world_tail(obj, n)[2] for n in ("foot.L", "foot.R")) \
        - radii.max() - obj.dqik.margin - 0.001
    sp.box("floor", (-3, -3, floor_top - 0.2), (3, 3, floor_top), colliders)
    feet = sp.add_targets(obj, ["foot.L", "foot.R"], priority=1)
    for name, empty in feet.items():
        empty.location = sp.world_tail(obj, name)
    hand = sp.add_targets(obj, ["hand.L"], priority=2)
    hand["hand.L"].location = (tail[0], tail[1] - 0.4, 0.55)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert sp.deepest_clearance(obj, dqik) >= -1e-3
    for name, empty in feet.items():
        assert np.linalg.norm(sp.world_tail(obj, name) - np.array(empty.location)) < 1e-4


def test_a_static_collider_builds_its_tree_once_over_100_solves(clean_scene, dqik):
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    bpy.ops.mesh.primitive_uv_sphere_add(segments=128, ring_count=80, radius=0.3,
                                         location=(0.6, -0.6, 1.0))
    sphere = bpy.context.active_object
    rigs.move_to_collection(sphere, colliders)
    bpy.context.view_layer.objects.active = obj
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    start = sp.world_tail(obj, "hand.L")
    for k in range(100):
        empties["hand.L"].location = start + np.array([0.0, -0.002 * k, 0.001 * k])
        sphere.location.x = 0.6 + 0.001 * k  # rigid motion: no rebuild
        bpy.context.view_layer.update()
        assert bpy.ops.dqik.solve() == {'FINISHED'}
    assert dqik.api.session_for(obj).obstacles.cache.tree_builds == 1


def test_collider_problems_are_clear_messages(clean_scene, dqik):
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    with pytest.raises(RuntimeError, match="holds no mesh"):
        bpy.ops.dqik.build_chain()
    empty_mesh = bpy.data.objects.new("nothing", bpy.data.meshes.new("nothing"))
    colliders.objects.link(empty_mesh)
    with pytest.raises(RuntimeError, match="has no faces"):
        bpy.ops.dqik.build_chain()
    colliders.objects.unlink(empty_mesh)


def test_build_chain_counts_collider_triangles(clean_scene, dqik, capfd):
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"])["hand.L"].location = sp.world_tail(obj, "hand.L")
    sp.box("wall", (1, 1, 0), (2, 2, 1), sp.collider_collection(clean_scene, obj))
    assert bpy.ops.dqik.build_chain() == {'FINISHED'}
    out = capfd.readouterr()
    assert "1 colliders (12 triangles)" in out.out + out.err


def _segment_gaps(dqik, obj, group_a, group_b):
    """Clearance (distance − both radii) between every capsule of ``group_a`` and of ``group_b``."""
    contacts = dqik.dq_ik_addon.engine.contacts
    rig = dqik.dq_ik_addon.blender.rig
    model = rig.model_reader.read_model(obj)
    pose = rig.pose.PoseArrays(obj)
    world = model.matrices(pose.rotations(), pose.location)
    radii, _ = sp.capsule_radii(obj, dqik, model)
    idx = {n: i for i, n in enumerate(model.names)}
    a = np.repeat([idx[n] for n in group_a], len(group_b))
    b = np.tile([idx[n] for n in group_b], len(group_a))
    heads, tails = world[:, :3, 3], model.tails(world)
    s, t = contacts.closest_points_of_segments(heads[a], tails[a], heads[b], tails[b])
    gap = np.linalg.norm(heads[a] + s[:, None] * (tails[a] - heads[a])
                         - heads[b] - t[:, None] * (tails[b] - heads[b]), axis=1)
    return gap - radii[a] - radii[b]


def test_self_collision_stops_a_hand_at_the_torso(clean_scene, dqik):
    obj = rigs.metarig("basic")
    torso = ["spine.001", "spine.002", "spine.003"]
    for name in torso:
        obj.pose.bones[name].dqik.radius = 0.12
    obj.dqik.use_self_collision = True
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    chest = obj.matrix_world @ obj.pose.bones["spine.002"].head
    empties["hand.L"].location = chest  # inside the torso
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert _segment_gaps(dqik, obj, ARM, torso).min() >= -1e-3
    obj.dqik.use_self_collision = False
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert _segment_gaps(dqik, obj, ARM, torso).min() < -0.05  # without it the hand goes in


def test_automatic_radius_comes_from_the_skin(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bone = obj.data.bones["forearm.L"]
    head, tail = np.array(bone.head_local), np.array(bone.tail_local)
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.mesh.primitive_cylinder_add(vertices=32, radius=0.07, depth=np.linalg.norm(tail - head) * 0.8)
    skin = bpy.context.active_object
    direction = (tail - head) / np.linalg.norm(tail - head)
    skin.rotation_mode = 'QUATERNION'
    skin.rotation_quaternion = Vector((0, 0, 1)).rotation_difference(Vector(direction))
    skin.location = (head + tail) / 2
    group = skin.vertex_groups.new(name="forearm.L")
    group.add(range(len(skin.data.vertices)), 1.0, 'REPLACE')
    modifier = skin.modifiers.new("Armature", 'ARMATURE')
    modifier.object = obj
    bpy.context.view_layer.update()
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
    radii, _ = sp.capsule_radii(obj, dqik, model)
    assert radii[model.index["forearm.L"]] == pytest.approx(0.07, abs=0.003)
    assert radii[model.index["hand.L"]] == pytest.approx(0.15 * model.lengths[model.index["hand.L"]])
    obj.pose.bones["forearm.L"].dqik.radius = 0.02
    radii, _ = sp.capsule_radii(obj, dqik, model)
    assert radii[model.index["forearm.L"]] == pytest.approx(0.02)


def test_contacts_follow_a_deforming_collider_on_frame_change(clean_scene, dqik):
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    tail = sp.world_tail(obj, "hand.L")
    floor = sp.box("floor", (tail[0] - 1, tail[1] - 1, tail[2] - 0.6), (tail[0] + 1, tail[1] + 1,
                                                                      tail[2] - 0.3), colliders)
    floor.shape_key_add(name="Basis")
    raised = floor.shape_key_add(name="raised")
    for i in range(4, 8):  # the top face comes up to 5 cm below the hand
        raised.data[i].co.z = tail[2] - 0.05
    raised.value = 0.0
    raised.keyframe_insert("value", frame=1)
    raised.value = 1.0
    raised.keyframe_insert("value", frame=10)
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    lowest = min((Quaternion(axis, angle) for axis in ((1, 0, 0), (0, 0, 1)) for angle in (-0.5, 0.5)),
                 key=lambda q: (sp.set_pose(obj, {"upper_arm.L": q}),
                                sp.world_tail(obj, "hand.L")[2])[1])
    sp.set_pose(obj, {"upper_arm.L": lowest})
    empties["hand.L"].location = sp.world_tail(obj, "hand.L")  # lower, reachable at frame 1
    sp.clear_pose(obj)
    clean_scene.frame_set(1)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    goal = np.array(empties["hand.L"].location)
    assert np.linalg.norm(sp.world_tail(obj, "hand.L") - goal) < 1e-4
    assert goal[2] < tail[2] - 0.05  # the raised floor will be above the goal
    clean_scene.frame_set(10)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert sp.deepest_clearance(obj, dqik, ARM) >= -1e-3
    assert sp.world_tail(obj, "hand.L")[2] > tail[2] - 0.05


def test_hundred_small_moves_never_tunnel_through_a_torus(clean_scene, dqik):
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    tail = sp.world_tail(obj, "hand.L")
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.mesh.primitive_torus_add(major_radius=0.25, minor_radius=0.04,
                                     location=(tail[0], tail[1] - 0.2, tail[2] - 0.25),
                                     rotation=(np.pi / 2, 0, 0))
    torus = bpy.context.active_object
    rigs.move_to_collection(torus, colliders)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='POSE')
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    keep = 0.15 * obj.data.bones["hand.L"].length + obj.dqik.margin
    for k in range(100):  # the goal sweeps down across the torus tube
        goal = tail + np.array([0.0, -0.2, 0.1 - 0.004 * k])
        empties["hand.L"].location = goal
        bpy.context.view_layer.update()
        assert bpy.ops.dqik.solve() == {'FINISHED'}
        bpy.context.view_layer.update()
        assert sp.deepest_clearance(obj, dqik, ARM[1:]) >= -1e-3, k
        # the hand keeps the clearance its target leaves it (ContactSet.seat), never less
        seated = min(abs(sp.obstacle_distance(obj, dqik, goal)) - keep, 0.0)
        assert sp.deepest_clearance(obj, dqik, ARM[:1]) >= seated - 1e-3, k


def test_an_open_mesh_collider_warns_once_by_name(clean_scene, dqik, capfd):
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"])["hand.L"].location = sp.world_tail(obj, "hand.L")
    colliders = sp.collider_collection(clean_scene, obj)
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.mesh.primitive_plane_add(size=2.0, location=(0.0, -0.5, 0.5))
    plane = bpy.context.active_object
    plane.name = "OpenPlane"
    rigs.move_to_collection(plane, colliders)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='POSE')
    capfd.readouterr()
    assert bpy.ops.dqik.build_chain() == {'FINISHED'}
    assert bpy.ops.dqik.build_chain() == {'FINISHED'}
    out = capfd.readouterr()
    text = out.out + out.err
    assert text.count("'OpenPlane' is not a closed mesh") == 1


def test_obstacle_query_reports_deep_points_inside_and_skips_far_ones(clean_scene, dqik):
    """Inside a closed collider every point gets its true (negative) depth, however small the
    distance asked for; outside, only points within it are reported."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    sp.box("block", (-1.0, 1.0, -1.0), (1.0, 3.0, 1.0), colliders)
    bpy.context.view_layer.update()
    obstacles = dqik.dq_ik_addon.blender.colliders.obstacles.SceneObstacles(
        obj, bpy.context.evaluated_depsgraph_get(), lambda message: None,
        dqik.dq_ik_addon.blender.colliders.obstacles.ColliderCache())
    points = np.array([[0.0, 2.0, 0.0],      # the centre: 1 m deep
                       [0.0, 1.2, 0.0],      # 0.2 m deep
                       [0.0, 0.95, 0.0],     # 5 cm in front
                       [0.0, -2.0, 0.0]])    # 3 m in front
    distance, normal = obstacles(points, np.full(4, 0.1))
    np.testing.assert_allclose(distance[:3], [-1.0, -0.2, 0.05], atol=1e-6)
    np.testing.assert_allclose(normal[1:3], [[0.0, -1.0, 0.0]] * 2, atol=1e-6)
    assert np.isinf(distance[3])


def _floor_plane(obj, colliders, height, flipped):
    """A 6 m plane (open mesh) at ``height``, its normals up, or down when ``flipped``."""
    mesh = bpy.data.meshes.new("floor")
    corners = [(-3, -3, height), (3, -3, height), (3, 3, height), (-3, 3, height)]
    mesh.from_pydata(corners, [], [(3, 2, 1, 0) if flipped else (0, 1, 2, 3)])
    mesh.update()
    floor = bpy.data.objects.new("floor", mesh)
    colliders.objects.link(floor)
    return floor


def _planted_feet(obj, lift):
    """Feet targets ``lift`` above their rest tails, priority 1; returns (empties, sole height:
    the lowest head or tail of the foot bones, heels and toes included)."""
    feet = sp.add_targets(obj, ["foot.L", "foot.R"], priority=1)
    for name, empty in feet.items():
        empty.location = sp.world_tail(obj, name) + np.array([0.0, 0.0, lift])
    bones = [pb for pb in obj.pose.bones if pb.name.startswith(("foot", "toe", "heel"))]
    return feet, min(min(pb.head.z, pb.tail.z) for pb in bones)


def _feet_error(obj, feet):
    bpy.context.view_layer.update()
    return max(np.linalg.norm(sp.world_tail(obj, n) - np.array(e.location)) for n, e in feet.items())


def test_a_floor_whose_normals_face_down_is_named_and_left_out(clean_scene, dqik, capfd):
    """Issue 20: a one-sided floor 5 mm under the soles, normals pointing down, used to drive the
    priority-1 feet 160–355 mm off; it is now named with what to do, and left out."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    feet, soles = _planted_feet(obj, 0.0)
    _floor_plane(obj, colliders, soles - 0.005, flipped=True)
    hand = sp.add_targets(obj, ["hand.L"], priority=2)
    hand["hand.L"].location = sp.world_tail(obj, "hand.L") + np.array([0.1, -0.2, -0.1])
    capfd.readouterr()
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    text = capfd.readouterr().out
    assert "the normals of 'floor' face away from 'metarig'; flip them" in text
    assert _feet_error(obj, feet) <= 1e-4
    warnings = dqik.api.session_for(obj).last_result.warnings
    assert any("'floor' face away" in w for w in warnings)


@pytest.mark.parametrize("lift", [0.0, 0.002])
def test_feet_planted_on_a_floor_stand_on_it(clean_scene, dqik, lift):
    """A correctly facing floor 5 mm under the soles, feet targets on their rest tails (or 2 mm
    higher): the feet stand on their targets (the foot capsules keep only the clearance their
    targets have, ``ContactSet.seat``), the hand still reaches, and the contacts agree with the
    tasks: no foot sample is reported deeper than the tolerance."""
    obj = rigs.metarig("basic")
    bpy.ops.dqik.apply_preset(preset='HUMANOID')
    colliders = sp.collider_collection(clean_scene, obj)
    feet, soles = _planted_feet(obj, lift)
    _floor_plane(obj, colliders, soles - 0.005, flipped=False)
    hand = sp.add_targets(obj, ["hand.L"], priority=2)
    sp.set_pose(obj, {"upper_arm.L": Quaternion((1, 0, 0), 0.5), "forearm.L": Quaternion((1, 0, 0), 0.6)})
    hand["hand.L"].location = sp.world_tail(obj, "hand.L")
    sp.clear_pose(obj)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    tolerance = obj.dqik.tolerance
    assert _feet_error(obj, feet) <= tolerance
    assert np.linalg.norm(sp.world_tail(obj, "hand.L") - np.array(hand["hand.L"].location)) <= 1e-4
    contacts = dqik.api.session_for(obj).last_result.contacts
    assert contacts.clearances.min(initial=0.0) >= -tolerance
    assert sp.deepest_clearance(obj, dqik, ["thigh.L", "shin.L", "thigh.R", "shin.R"]) >= -1e-3


def _glove(obj, length=0.15):
    """A bone 'glove' parented to the root, not to the arm, whose Copy Transforms (world space,
    at the hand's tail) places it as an extension of hand.L: a bone that follows the arm only
    through a constraint, as Rigify's deform and finger bones do."""
    bpy.ops.object.mode_set(mode='EDIT')
    bones = obj.data.edit_bones
    glove = bones.new("glove")
    hand = bones["hand.L"]
    glove.head = hand.tail
    glove.tail = hand.tail + (hand.tail - hand.head).normalized() * length
    glove.align_roll(hand.z_axis)
    glove.parent = bones["spine"]
    bpy.ops.object.mode_set(mode='POSE')
    copy = obj.pose.bones["glove"].constraints.new('COPY_TRANSFORMS')
    copy.target, copy.subtarget, copy.head_tail = obj, "hand.L", 1.0
    bpy.context.view_layer.update()


def test_a_bone_that_follows_the_arm_through_a_constraint_is_kept_out_of_colliders(clean_scene,
                                                                                    dqik):
    """The glove follows hand.L only through its constraint: the session re-parents it to the
    hand as a rider (``constraint_followers``), so its capsule is kept out of a box that the
    hand's own pose would push it into; its ridden pose is Blender's. When a later constraint
    takes over (an IK/FK switch), the next solve re-parents it."""
    obj = rigs.metarig("basic")
    _glove(obj)
    switch = obj.pose.bones["glove"].constraints.new('COPY_TRANSFORMS')   # off: influence 0
    switch.target, switch.subtarget = obj, "spine"
    slider = switch.driver_add("influence").driver
    obj.pose.bones["spine"]["IK_FK"] = 0.0                   # the slider the driver reads
    variable = slider.variables.new()
    variable.targets[0].id, variable.targets[0].data_path = obj, 'pose.bones["spine"]["IK_FK"]'
    slider.expression = variable.name
    rng = np.random.default_rng(3)
    sp.set_pose(obj, {name: rigs.random_quaternions(rng, 1, 0.5)[0] for name in ARM})
    tail = sp.world_tail(obj, "hand.L")
    glove_tail = sp.world_tail(obj, "glove")
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    empties["hand.L"].location = tail
    centre = tail + (glove_tail - tail) * 0.8
    colliders = sp.collider_collection(clean_scene, obj)
    sp.box("block", centre - 0.03, centre + 0.03, colliders)
    bpy.context.view_layer.update()
    assert sp.deepest_clearance(obj, dqik, ["glove"]) < -0.03     # the FK pose goes through it
    sp.clear_pose(obj)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert sp.deepest_clearance(obj, dqik, ["glove"]) >= -1e-3
    assert sp.deepest_clearance(obj, dqik, ARM) >= -1e-3
    session = dqik.api.session_for(obj)
    model = session.model
    glove = model.index["glove"]
    assert model.riders[glove] and model.names[model.parents[glove]] == "hand.L"
    assert sp.effector_errors(obj, empties).max() <= 1e-4
    solver = session.solver
    pose = dqik.dq_ik_addon.blender.rig.pose.PoseArrays(obj)
    solved = solver.pose_matrices(pose.rotations(solver.modelled_mask))
    row = int(np.flatnonzero(solver.bones == glove)[0])
    assert np.abs(solved[row] - pose.evaluated[glove]).max() <= 1e-5
    # dragged, the glove keeps its own parent (its channels are what the drag turns); released,
    # it rides the hand again
    session.drag("glove", sp.world_tail(obj, "glove"))
    session.tick()
    assert session.model.names[session.model.parents[glove]] == "spine"
    session.drag(None, None)
    session.tick()
    assert session.model.riders[glove] and session.model.names[session.model.parents[glove]] == "hand.L"
    # the switch, as Rigify's IK/FK slider: the later Copy Transforms from the spine takes over
    obj.pose.bones["spine"]["IK_FK"] = 1.0
    obj.update_tag()
    bpy.context.view_layer.update()
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    assert session.model.names[session.model.parents[glove]] == "spine"
