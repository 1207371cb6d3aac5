"""Workbench renders of posed armatures for the demo: armatures are not drawn by a render, so a
proxy mesh stands in for the bones (one Blender-style octahedral bone shape per pose bone, from
the evaluated ``PoseBone.matrix`` and length), spheres for the targets; a floor, a camera framed
on given points, and a caption burnt into each image.

Bone colours by role: ``leg`` blue, ``arm`` green, ``spine`` purple, ``other`` grey; target
spheres red for priority 1, orange for priority 2; colliders a see-through grey-blue.
"""

import os

import numpy as np
from console import captured_output

RESOLUTION = (800, 600)
BONE_ROLES = ("leg", "arm", "spine", "other")

COLOURS = {
    "leg": (0.10, 0.35, 0.85, 1.0),
    "arm": (0.15, 0.65, 0.30, 1.0),
    "spine": (0.55, 0.30, 0.80, 1.0),
    "other": (0.55, 0.55, 0.55, 1.0),
    "priority_1": (0.90, 0.05, 0.05, 1.0),
    "priority_2": (1.00, 0.50, 0.00, 1.0),
    "priority_3": (0.95, 0.80, 0.10, 1.0),
    "floor": (0.85, 0.85, 0.82, 1.0),
    "wall": (0.55, 0.60, 0.70, 0.35),
}

# Blender's octahedral bone shape in bone space, for a bone of length 1 (head at 0, tail at +Y).
_OCTAHEDRON_VERTS = np.array([(0, 0, 0), (0.1, 0.1, 0.1), (0.1, 0.1, -0.1), (-0.1, 0.1, -0.1),
                              (-0.1, 0.1, 0.1), (0, 1, 0)], dtype=float)
_OCTAHEDRON_FACES = [(0, 2, 1), (0, 3, 2), (0, 4, 3), (0, 1, 4),
                     (5, 1, 2), (5, 2, 3), (5, 3, 4), (5, 4, 1)]


def material(name, colour):
    import bpy
    mat = bpy.data.materials.get(name) or bpy.data.materials.new(name)
    mat.diffuse_color = colour
    return mat


def bone_roles(obj, feet, hands):
    """{bone name: role}: the bones from the ``feet`` up to the root ``leg``, from the ``hands``
    up ``arm``, those they share ``spine``, the others ``other``."""
    import solve_problems as sp
    legs, arms = set(sp.chain_bones(obj, feet)), set(sp.chain_bones(obj, hands))
    roles = {}
    for pb in obj.pose.bones:
        in_leg, in_arm = pb.name in legs, pb.name in arms
        roles[pb.name] = "spine" if in_leg and in_arm else "leg" if in_leg else \
            "arm" if in_arm else "other"
    return roles


def build_bone_proxy(obj, roles, name="bone_proxies"):
    """One mesh object: an octahedral bone shape per pose bone named in ``roles`` ({bone name:
    one of ``BONE_ROLES``}, which colours it), in its current (evaluated) pose."""
    import bpy
    old = bpy.data.objects.get(name)
    if old is not None:
        mesh = old.data
        bpy.data.objects.remove(old)
        bpy.data.meshes.remove(mesh)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    world = np.array(obj.matrix_world)
    verts, faces, slots = [], [], []
    for pb in evaluated.pose.bones:
        if pb.name not in roles:
            continue
        matrix = world @ np.array(pb.matrix)
        local = _OCTAHEDRON_VERTS * pb.length
        start = len(verts)
        verts.extend((local @ matrix[:3, :3].T + matrix[:3, 3]).tolist())
        faces.extend(tuple(start + i for i in face) for face in _OCTAHEDRON_FACES)
        slots.extend([BONE_ROLES.index(roles[pb.name])] * len(_OCTAHEDRON_FACES))
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    for role in BONE_ROLES:
        mesh.materials.append(material(f"bone_{role}", COLOURS[role]))
    mesh.polygons.foreach_set("material_index", slots)
    mesh.update()
    proxy = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(proxy)
    proxy.show_in_front = True      # over a skinned body (``skinned_body``)
    return proxy


def build_target_spheres(obj, empties, radius):
    """A small UV sphere at every target Empty ({bone: empty}), coloured by the priority of the
    bone's task on ``obj`` and parented to the Empty (so it follows it)."""
    import bmesh
    import bpy
    spheres = []
    for bone, empty in empties.items():
        mesh = bpy.data.meshes.new(f"sphere_{bone}")
        bm = bmesh.new()
        bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=radius)
        bm.to_mesh(mesh)
        bm.free()
        for poly in mesh.polygons:
            poly.use_smooth = True
        priority = f"priority_{obj.pose.bones[bone].dqik.priority}"
        mesh.materials.append(material(priority, COLOURS[priority]))
        sphere = bpy.data.objects.new(f"sphere_{bone}", mesh)
        bpy.context.scene.collection.objects.link(sphere)
        sphere.parent = empty
        sphere.show_in_front = True      # a target behind a limb stays visible
        spheres.append(sphere)
    return spheres


def setup_render(scene):
    """Workbench at ``RESOLUTION``, a caption stamp, a light world, a floor and a camera;
    returns the camera and the floor."""
    import bpy
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.render.resolution_x, scene.render.resolution_y = RESOLUTION
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = 'PNG'
    scene.render.image_settings.color_mode = 'RGB'
    scene.render.image_settings.compression = 100
    shading = scene.display.shading
    shading.light = 'STUDIO'
    shading.color_type = 'MATERIAL'
    shading.show_shadows = True
    shading.shadow_intensity = 0.35
    shading.show_cavity = True
    shading.cavity_type = 'WORLD'
    shading.show_object_outline = True
    scene.display.light_direction = (0.35, -0.45, 0.82)
    world = bpy.data.worlds.new("demo_world")
    world.color = (0.82, 0.86, 0.92)
    scene.world = world
    # A caption burnt into each image.
    render = scene.render
    render.use_stamp = True
    for flag in ("date", "time", "render_time", "frame", "frame_range", "memory", "hostname",
                 "camera", "lens", "scene", "marker", "filename", "sequencer_strip"):
        setattr(render, f"use_stamp_{flag}", False)
    render.use_stamp_note = True
    render.use_stamp_labels = False
    render.stamp_font_size = 16
    render.stamp_foreground = (0.05, 0.05, 0.05, 1.0)
    render.stamp_background = (1.0, 1.0, 1.0, 0.6)

    floor_mesh = bpy.data.meshes.new("floor")
    size = 1.6
    floor_mesh.from_pydata([(-size, -size, 0), (size, -size, 0), (size, size, 0), (-size, size, 0)],
                           [], [(0, 1, 2, 3)])
    floor_mesh.materials.append(material("floor", COLOURS["floor"]))
    floor = bpy.data.objects.new("floor", floor_mesh)
    scene.collection.objects.link(floor)

    camera = bpy.data.objects.new("camera", bpy.data.cameras.new("camera"))
    camera.data.lens = 50
    scene.collection.objects.link(camera)
    scene.camera = camera
    return camera, floor


def frame_camera(camera, points, margin=1.2, view=(0.45, -1.0, 0.22)):
    """Point the camera at the points from ``view`` (a direction from the character towards the
    camera; by default the front-right, the character's left side on the right of the image)
    and move it back until they all fit, plus a margin."""
    import bpy
    from mathutils import Vector
    points = np.asarray(points, dtype=float)
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    view = Vector(view).normalized()
    camera.location = Vector(centre) + view * 10.0
    camera.rotation_euler = (-view).to_track_quat('-Z', 'Y').to_euler()
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    location, _ = camera.camera_fit_coords(depsgraph, points.ravel().tolist())
    distance = (Vector(location) - Vector(centre)).dot(view)
    camera.location = Vector(location) + view * (distance * (margin - 1.0))
    bpy.context.view_layer.update()


def render(scene, path, caption):
    """Render the scene's camera to ``path`` with ``caption`` stamped; returns the file name."""
    import bpy
    scene.render.stamp_note_text = caption
    scene.render.filepath = path
    with captured_output():
        bpy.ops.render.render(write_still=True)
    return os.path.basename(path)


def bone_points(obj):
    """World-space heads and tails of every pose bone, as they are now."""
    import bpy
    bpy.context.view_layer.update()
    return [tuple(obj.matrix_world @ p) for pb in obj.pose.bones for p in (pb.head, pb.tail)]
