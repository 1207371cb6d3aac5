"""A body for the demo's metarig, made the way a quick character is blocked out in Blender: a
Skin modifier over a wire skeleton of the main bones, applied, then bound to the armature by an
Armature modifier, each vertex weighted to the bone nearest it (Blender's automatic weights, bone
heat, finds no solution on this mesh headless). Renders then show a body, not only bones, and
the solve's automatic capsule radii come from real skin (the median distance of each bone's skin
vertices from it)."""

import numpy as np

# bone name → the Skin modifier's radius (m) around it; the .L bones stand for both sides
RADII = {"spine": 0.13, "spine.001": 0.13, "spine.002": 0.14, "spine.003": 0.15,
         "spine.004": 0.055, "spine.005": 0.055, "spine.006": 0.1,
         "shoulder.L": 0.06, "upper_arm.L": 0.05, "forearm.L": 0.04, "hand.L": 0.035,
         "thigh.L": 0.08, "shin.L": 0.055, "foot.L": 0.045, "toe.L": 0.035}


def _bones(obj):
    names = []
    for name in RADII:
        names += [name, name.replace(".L", ".R")] if name.endswith(".L") else [name]
    return [obj.data.bones[name] for name in names if name in obj.data.bones]


def build_body(obj):
    """The skinned body mesh of the metarig ``obj`` (at rest, in Pose Mode), parented to it with
    automatic weights; returns the mesh object."""
    import bpy
    from workbench import material
    points, edges, radii, index = [], [], [], {}

    def vertex(point, radius):
        key = tuple(np.round(point, 4))
        if key not in index:
            index[key] = len(points)
            points.append(tuple(point))
            radii.append(radius)
        return index[key]
    to_world = np.array(obj.matrix_world)
    bones = _bones(obj)
    names = {bone.name for bone in bones}

    def world(point):
        return (to_world @ np.append(point, 1.0))[:3]
    for bone in bones:
        radius = RADII[bone.name.replace(".R", ".L")]
        head = vertex(world(bone.head_local), radius)
        edges.append((head, vertex(world(bone.tail_local), radius)))
        if bone.parent is not None and bone.parent.name in names and not bone.use_connect:
            # one tree: a limb hangs from its parent's tail (the hips: from the pelvis's head)
            joint = bone.parent.head_local if bone.parent.parent is None else bone.parent.tail_local
            edges.append((vertex(world(joint), RADII[bone.parent.name.replace(".R", ".L")]),
                          head))
    mesh = bpy.data.meshes.new("body")
    mesh.from_pydata(points, edges, [])
    body = bpy.data.objects.new("body", mesh)
    bpy.context.scene.collection.objects.link(body)
    skin = body.modifiers.new("Skin", 'SKIN')
    skin.use_smooth_shade = True
    for data, radius in zip(mesh.skin_vertices[0].data, radii):
        data.radius = (radius, radius)
    mesh.skin_vertices[0].data[0].use_root = True
    body.modifiers.new("Smooth", 'SUBSURF').levels = 1
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.object.select_all(action='DESELECT')
    bpy.context.view_layer.objects.active = body
    body.select_set(True)
    for modifier in ("Skin", "Smooth"):
        bpy.ops.object.modifier_apply(modifier=modifier)
    body.data.materials.append(material("body", (0.80, 0.62, 0.50, 1.0)))
    _weigh_to_nearest_bone(body, obj, bones, world)
    body.parent = obj
    body.matrix_parent_inverse = obj.matrix_world.inverted()
    body.modifiers.new("Armature", 'ARMATURE').object = obj
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode='POSE')
    return body


def _weigh_to_nearest_bone(body, obj, bones, world):
    """A vertex group per bone of ``bones``, each vertex in the group of the bone whose segment
    lies nearest it, with weight 1."""
    coords = np.array([vertex.co[:] for vertex in body.data.vertices])
    heads = np.array([world(bone.head_local) for bone in bones])
    tails = np.array([world(bone.tail_local) for bone in bones])
    along = tails - heads
    t = np.clip(np.einsum('vbi,bi->vb', coords[:, None] - heads, along)
                / np.einsum('bi,bi->b', along, along), 0.0, 1.0)
    nearest = np.linalg.norm(coords[:, None] - (heads + t[..., None] * along), axis=2).argmin(1)
    for b, bone in enumerate(bones):
        members = np.flatnonzero(nearest == b).tolist()
        if members:
            body.vertex_groups.new(name=bone.name).add(members, 1.0, 'REPLACE')
