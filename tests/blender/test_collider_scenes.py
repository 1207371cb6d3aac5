"""Colliders as users build them (issue 16, deliverable 3), in real Blender.

Each scene puts one obstacle, built the usual way, in the path of the left arm and pulls the
hand through it. The capsules' deepest penetration is then measured independently of the add-on's
query: a ``mathutils.bvhtree.BVHTree`` of the obstacle's evaluated meshes in world space, from
``depsgraph.object_instances`` (instances included), inside or outside by ray parity, at 50
points along each arm bone.
"""

import bmesh  # (importable only once bpy is)
import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from mathutils import Matrix, Vector
from mathutils.bvhtree import BVHTree

ARM = ["hand.L", "forearm.L", "upper_arm.L"]
_RAY = Vector((0.31, 0.52, 0.79)).normalized()    # off every axis of the test geometry


def _mesh_object(name, bm, collection):
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    obj = bpy.data.objects.new(name, mesh)
    collection.objects.link(obj)
    return obj


def cube(name, collection):
    """Blender's default cube (2 m, centred)."""
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=2.0)
    return _mesh_object(name, bm, collection)


def cylinder(name, radius, depth, collection):
    """A closed cylinder along Z, centred."""
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, segments=32, radius1=radius, radius2=radius,
                          depth=depth)
    return _mesh_object(name, bm, collection)


def world_tree(names):
    """BVH tree of the evaluated meshes, world space, of every object instance whose object (or
    instancer) is named in ``names``."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    vertices, polygons = [], []
    for instance in depsgraph.object_instances:
        source = instance.parent if instance.is_instance else instance.object
        if source.original.name not in names or instance.object.type not in {'MESH', 'CURVE'}:
            continue
        evaluated = instance.object
        mesh = evaluated.to_mesh()
        matrix = instance.matrix_world.copy()
        base = len(vertices)
        vertices += [matrix @ v.co for v in mesh.vertices]
        polygons += [[base + i for i in p.vertices] for p in mesh.polygons]
        evaluated.to_mesh_clear()
    assert polygons, names
    return BVHTree.FromPolygons(vertices, polygons)


def _inside(tree, point):
    """Ray parity: an odd number of surface crossings along ``_RAY`` means inside."""
    crossings, origin = 0, Vector(point)
    while True:
        hit = tree.ray_cast(origin, _RAY)[0]
        if hit is None:
            return crossings % 2 == 1
        crossings += 1
        origin = hit + _RAY * 1e-6


def deepest_penetration(obj, dqik, tree, names=ARM, samples=50):
    """Deepest penetration (metres) of the capsules of ``names`` past the margin: radius + margin
    less the signed distance, at ``samples`` points along each bone; negative: clear."""
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
    radii, _ = sp.capsule_radii(obj, dqik, model)
    worst = -np.inf
    for name in names:
        pose_bone = obj.pose.bones[name]
        head, tail = obj.matrix_world @ pose_bone.head, obj.matrix_world @ pose_bone.tail
        keep = radii[model.index[name]] + obj.dqik.margin
        for f in np.linspace(0.0, 1.0, samples):
            point = head.lerp(tail, f)
            distance = tree.find_nearest(point)[3]
            signed = -distance if _inside(tree, point) else distance
            worst = max(worst, keep - signed)
    return worst


def _reach_through(obj, offset=(0.0, -0.45, 0.0)):
    """Pull the left hand by ``offset`` from its rest tail (through the obstacle) and solve;
    returns the target."""
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    goal = sp.world_tail(obj, "hand.L") + np.array(offset)
    empties["hand.L"].location = goal
    bpy.context.view_layer.update()
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    return goal


def _wall_in_front(obj):
    """Centre of a wall 15 cm in front of (−Y) the left hand's rest tail."""
    tail = sp.world_tail(obj, "hand.L")
    return Vector((tail[0], tail[1] - 0.15 - 0.04, tail[2]))


def _check(obj, dqik, names, goal):
    bpy.context.view_layer.update()
    depth = deepest_penetration(obj, dqik, world_tree(names))
    assert depth <= 1e-3, depth
    assert np.linalg.norm(sp.world_tail(obj, "hand.L") - goal) > 0.05   # the obstacle held it


@pytest.mark.parametrize("scale, turn", [((0.6, 0.04, 1.2), 0.0), ((0.6, -0.04, 1.2), 0.3),
                                         ((-0.6, 0.04, -1.2), 0.2)])
def test_a_scaled_cube_wall_holds_the_arm(clean_scene, dqik, scale, turn):
    """A cube scaled non-uniformly (one or two axes negative, turned about Z) is a wall."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    wall = cube("wall", colliders)
    wall.location, wall.scale, wall.rotation_euler = _wall_in_front(obj), scale, (0.0, 0.0, turn)
    goal = _reach_through(obj)
    _check(obj, dqik, {"wall"}, goal)


def test_a_collection_instance_holds_the_arm(clean_scene, dqik):
    """A cube in a collection that is not in the scene, instanced by an Empty of the collider
    collection (moved, turned, scaled; the collection's instance offset too)."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    props = bpy.data.collections.new("Props")
    wall = cube("wall", props)
    props.instance_offset = (0.3, -0.2, 0.1)
    wall.location = Vector((0.3, -0.2, 0.1))
    wall.scale = (0.6, 0.04, 1.2)
    nested = bpy.data.collections.new("Set")      # an instance of an instance
    inner = bpy.data.objects.new("inner", None)
    inner.instance_type, inner.instance_collection = 'COLLECTION', props
    nested.objects.link(inner)
    empty = bpy.data.objects.new("dressing", None)
    empty.instance_type, empty.instance_collection = 'COLLECTION', nested
    colliders.objects.link(empty)
    empty.matrix_world = Matrix.LocRotScale(_wall_in_front(obj), None, None) \
        @ Matrix.Rotation(0.25, 4, 'Z') @ Matrix.Diagonal((1.0, 1.5, 1.0, 1.0))
    goal = _reach_through(obj)
    _check(obj, dqik, {"dressing"}, goal)


def test_a_2cm_pole_across_the_forearm_holds_it(clean_scene, dqik):
    """A pole 2 cm thick across the forearm's path a quarter of the way from the elbow: between
    the capsule's samples (elbow and middle, 5.4 cm either side)."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    forearm = obj.pose.bones["forearm.L"]
    head, tail = obj.matrix_world @ forearm.head, obj.matrix_world @ forearm.tail
    pole = cylinder("pole", 0.01, 1.0, colliders)
    pole.location = head.lerp(tail, 0.25) + Vector((0.0, -0.1, 0.0))
    goal = _reach_through(obj, offset=(0.0, -0.4, 0.0))
    _check(obj, dqik, {"pole"}, goal)


def test_a_bevelled_curve_holds_the_arm(clean_scene, dqik):
    """A curve evaluated to a mesh (bevelled, filled caps): a bar across the forearm's path."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    curve = bpy.data.curves.new("bar", 'CURVE')
    curve.dimensions, curve.bevel_depth, curve.use_fill_caps = '3D', 0.015, True
    spline = curve.splines.new('POLY')
    spline.points.add(1)
    spline.points[0].co, spline.points[1].co = (0.0, 0.0, -0.5, 1.0), (0.0, 0.0, 0.5, 1.0)
    bar = bpy.data.objects.new("bar", curve)
    colliders.objects.link(bar)
    forearm = obj.pose.bones["forearm.L"]
    bar.location = (obj.matrix_world @ forearm.head).lerp(obj.matrix_world @ forearm.tail, 0.7) \
        + Vector((0.0, -0.1, 0.0))
    goal = _reach_through(obj, offset=(0.0, -0.4, 0.0))
    _check(obj, dqik, {"bar"}, goal)


def test_a_mesh_with_a_modifier_and_a_shape_key_holds_the_arm(clean_scene, dqik):
    """A plane made solid by a Solidify modifier, moved into the arm's path by a shape key."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    bm = bmesh.new()
    bmesh.ops.create_grid(bm, x_segments=4, y_segments=4, size=0.6)
    bmesh.ops.rotate(bm, verts=bm.verts, cent=(0, 0, 0), matrix=Matrix.Rotation(np.pi / 2, 3, 'X'))
    panel = _mesh_object("panel", bm, colliders)
    panel.location = _wall_in_front(obj) + Vector((0.0, 0.0, 2.0))     # far above at rest
    modifier = panel.modifiers.new("Solidify", 'SOLIDIFY')
    modifier.thickness, modifier.use_even_offset = 0.05, True
    panel.shape_key_add(name="Basis")
    lowered = panel.shape_key_add(name="lowered")
    for point in lowered.data:
        point.co.z -= 2.0
    lowered.value = 1.0
    goal = _reach_through(obj)
    _check(obj, dqik, {"panel"}, goal)


def test_a_mesh_deformed_by_another_armature_holds_the_arm(clean_scene, dqik):
    """A wall skinned to a second armature, 1.5 m above the arm's path at rest; the posed bone
    of that armature brings it down into the path."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(clean_scene, obj)
    other = bpy.data.objects.new("lift", bpy.data.armatures.new("lift"))
    clean_scene.collection.objects.link(other)
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.context.view_layer.objects.active = other
    bpy.ops.object.mode_set(mode='EDIT')
    bone = other.data.edit_bones.new("lift")
    bone.head, bone.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 0.3)     # the bone's Y axis is world Z
    bpy.ops.object.mode_set(mode='OBJECT')
    wall = cube("wall", colliders)
    wall.data.transform(Matrix.Translation(_wall_in_front(obj) + Vector((0.0, 0.0, 1.5)))
                        @ Matrix.Diagonal((0.6, 0.04, 1.2, 1.0)))
    wall.vertex_groups.new(name="lift").add(range(len(wall.data.vertices)), 1.0, 'REPLACE')
    wall.modifiers.new("Armature", 'ARMATURE').object = other
    other.pose.bones["lift"].location = (0.0, -1.5, 0.0)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode='POSE')
    goal = _reach_through(obj)
    _check(obj, dqik, {"wall"}, goal)


def test_a_point_on_a_floor_beside_a_table_standing_on_it_is_outside(clean_scene, dqik):
    """The table's bottom face lies in the floor's top plane: a point on the floor half a metre
    away has its nearest table point on a bottom edge, where the bottom face's normal says
    inside (-0.5 m) and the edge's pseudo-normal outside (``geometry.pseudo_normals``)."""
    obj = rigs.metarig("basic")
    colliders = sp.collider_collection(bpy.context.scene, obj)
    sp.box("floor", (-2, -2, -0.2), (2, 2, 0.0), colliders)
    sp.box("table", (-0.6, -0.9, 0.0), (0.6, -0.45, 0.75), colliders)
    bpy.context.view_layer.update()
    for point in ((0.14, 0.0459, 1e-5), (0.0, -0.3, 1e-6), (0.7, -0.3, 1e-6)):
        assert sp.obstacle_distance(obj, dqik, np.array(point)) >= -1e-9, point
    assert sp.obstacle_distance(obj, dqik, np.array((0.0, -0.6, 0.3))) < -0.1   # in the table
