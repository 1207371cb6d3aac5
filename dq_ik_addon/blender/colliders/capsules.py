"""Capsule radii of the bones: each bone's collision capsule (``PoseBone.dqik.radius``), or,
automatically, the median distance from the bone's rest segment of the skin vertices weighted to
it (the meshes the armature deforms), else a fraction of its length."""

import bpy
import numpy as np

from ..rig.model_reader import world_unit
from ..settings.validation import check_bone_settings
from .geometry import vertices

_WEIGHT_CUTOFF = 0.5
_LENGTH_FRACTION = 0.15


def _skinned_meshes(obj):
    """Mesh objects deformed by ``obj`` through an Armature modifier."""
    return [o for o in bpy.data.objects if o.type == 'MESH' and any(
        m.type == 'ARMATURE' and m.object == obj for m in o.modifiers)]


def skin_radii(obj, model, cache):
    """Per bone name: the median distance from the bone's rest segment of the vertices weighted
    ≥ 0.5 to its vertex group, over every mesh the armature deforms (rest coordinates)."""
    found = {}
    to_armature = np.linalg.inv(np.array(obj.matrix_world))
    heads = model.rest_matrices[:, :3, 3]
    tails = model.tails(model.rest_matrices)
    index = {name: i for i, name in enumerate(model.names)}
    for mesh_obj in _skinned_meshes(obj):
        mesh = mesh_obj.data
        key = (mesh.name, len(mesh.vertices))
        if key not in cache.skin_radii:
            coords = vertices(mesh).astype(np.float64)
            coords = coords @ (to_armature @ np.array(mesh_obj.matrix_world))[:3, :3].T \
                + (to_armature @ np.array(mesh_obj.matrix_world))[:3, 3]
            groups = {g.index: g.name for g in mesh_obj.vertex_groups if g.name in index}
            members = {name: [] for name in groups.values()}
            for vertex in mesh.vertices:
                for element in vertex.groups:
                    name = groups.get(element.group)
                    if name is not None and element.weight >= _WEIGHT_CUTOFF:
                        members[name].append(vertex.index)
            radii = {}
            for name, verts in members.items():
                if verts:
                    i = index[name]
                    p = coords[verts]
                    axis = tails[i] - heads[i]
                    t = np.clip((p - heads[i]) @ axis / max(axis @ axis, 1e-12), 0.0, 1.0)
                    radii[name] = float(np.median(np.linalg.norm(
                        p - heads[i] - t[:, None] * axis, axis=1)))
            cache.skin_radii[key] = radii
        for name, radius in cache.skin_radii[key].items():
            found[name] = max(found.get(name, 0.0), radius)
    return found


def capsule_radii(obj, model, cache):
    """Per bone, in armature units: ``PoseBone.dqik.radius`` (world metres, as the Tolerance and
    the Margin: divided by the armature's ``world_unit``); when 0, automatic: the median distance
    of the skin vertices weighted to the bone (meshes the armature deforms), else 15 % of the bone
    length; never below 1 mm. Also the ``use_collision`` mask. A radius that is not finite or is
    negative on a bone with collision on is refused (``validation.check_bone_settings``)."""
    settings = [pose_bone.dqik for pose_bone in obj.pose.bones]
    enabled = np.array([s.use_collision for s in settings], dtype=bool)
    radii = np.array([s.radius for s in settings], dtype=np.float64)
    check_bone_settings(obj, [model.names[i] for i in np.flatnonzero(enabled).tolist()],
                        ("radius",), radii[enabled])
    unit = world_unit(obj) or 1.0
    radii = radii / unit
    automatic = np.flatnonzero(radii <= 0.0)
    if automatic.size:
        skin = skin_radii(obj, model, cache)
        radii[automatic] = [skin.get(model.names[i], _LENGTH_FRACTION * model.lengths[i])
                            for i in automatic.tolist()]
    return np.maximum(radii, 1e-3 / unit), enabled
