"""Scene obstacles for the solver: BVH trees of the meshes of ``Object.dqik.colliders``.

Each collider mesh is taken as the depsgraph evaluates it (modifiers, shape keys, armature
deformation) and put in a ``mathutils.bvhtree.BVHTree`` in the object's local space. Trees are
kept in a ``ColliderCache``, which the armature's solving session owns (``session.py``), and
rebuilt only when the evaluated geometry changes (vertex and face counts and a checksum of the
coordinates); an object that only moves keeps its tree, the query points are moved into its
space instead. Signed distance: the nearest surface point ``c`` with normal ``n``
gives ``d = ±|p − c|`` with the sign of ``(p − c)·n`` — right inside closed meshes; open or
non-manifold meshes are one-sided by their normals (a warning names them once).
"""

import math
from typing import NamedTuple

import bpy
import numpy as np
from mathutils.bvhtree import BVHTree

from .armature import ArmatureError
from .validation import check_bone_settings



class ColliderCache:
    """What is worth keeping between solves of one armature: the colliders' BVH trees, the
    automatic capsule radii measured on its skinned meshes, and the open colliders already
    warned about. ``tree_builds`` counts the trees built (for tests and benchmarks)."""

    def __init__(self):
        self.trees = {}         # object name → (geometry key, tree, open, bounding sphere)
        self.skin_radii = {}    # (mesh name, vertex count) → {bone name: radius}
        self.warned_open = set()
        self.tree_builds = 0


def collider_objects(obj):
    """Mesh objects of the armature's collider collection (and its child collections)."""
    collection = obj.dqik.colliders
    if collection is None:
        return []
    return [o for o in collection.all_objects if o.type == 'MESH']


def _vertices(mesh):
    """(n,3) float32 vertex positions, read from the ``position`` attribute, Blender's own
    contiguous storage: a plain copy (3.5 µs for 10k vertices, against about 300 µs through
    ``mesh.vertices.foreach_get("co")``; bpy 4.5.15 and 5.0.1)."""
    coords = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.attributes["position"].data.foreach_get("vector", coords)
    return coords.reshape(-1, 3)


def _geometry_key(mesh, coords):
    return len(coords), len(mesh.polygons), float(coords.sum(dtype=np.float64)), \
        float(np.abs(coords).sum(dtype=np.float64))


def placement(obj, depsgraph):
    """Where the armature and each of its colliders are and what shape each has, by value:
    equal from one solve to the next while no obstacle moved or changed shape (one read of each
    collider's vertex positions, without building anything)."""
    key = [np.array(obj.matrix_world).tobytes()]
    for collider in collider_objects(obj):
        mesh = collider.evaluated_get(depsgraph).data
        key.append((collider.name, np.array(collider.matrix_world).tobytes(),
                    _geometry_key(mesh, _vertices(mesh))))
    return tuple(key)


def _bounding_sphere(coords):
    """``(centre, radius)`` in local space of a sphere holding every vertex (centred on the
    bounding box): a point farther than ``d`` from it is farther than ``d`` from the mesh."""
    coords = coords.astype(np.float64)
    centre = (coords.min(axis=0) + coords.max(axis=0)) / 2.0
    return centre, float(np.sqrt(((coords - centre) ** 2).sum(axis=1).max()))


def _is_open(mesh):
    """True when some edge is not shared by exactly two faces (open or non-manifold)."""
    if len(mesh.edges) == 0:
        return True
    edge_of_loop = np.empty(len(mesh.loops), dtype=np.int64)
    mesh.loops.foreach_get("edge_index", edge_of_loop)
    uses = np.bincount(edge_of_loop, minlength=len(mesh.edges))
    return bool(np.any(uses != 2))


def _check_scale(collider):
    scale = np.array(collider.matrix_world.to_scale())
    if np.any(scale <= 0.0) or np.ptp(np.abs(scale)) > 1e-6 * np.abs(scale).max():
        raise ArmatureError(f"Collider '{collider.name}' has a non-uniform or negative scale "
                            f"{tuple(round(v, 4) for v in scale)}; apply the scale (Ctrl A)")


def tree_of(collider, depsgraph, cache):
    """The BVH tree of ``collider`` (local space, kept in ``cache``), whether its mesh is open,
    and its bounding sphere ``(centre, radius)``."""
    evaluated = collider.evaluated_get(depsgraph)
    mesh = evaluated.data
    if len(mesh.polygons) == 0:
        raise ArmatureError(f"Collider '{collider.name}' has no faces; give it geometry or take "
                            "it out of the collider collection")
    coords = _vertices(mesh)
    key = _geometry_key(mesh, coords)
    cached = cache.trees.get(collider.name)
    if cached is None or cached[0] != key:
        tree = BVHTree.FromObject(evaluated, depsgraph)
        cache.tree_builds += 1
        cached = (key, tree, _is_open(mesh), _bounding_sphere(coords))
        cache.trees[collider.name] = cached
    return cached[1:]


class SceneObstacles:
    """The obstacle query of the solver, in armature space, over every collider of the armature.

    Points farther than their distance bound from a collider's bounding box or from its bounding
    sphere skip its tree."""

    def __init__(self, obj, depsgraph, report_warning, cache):
        colliders = collider_objects(obj)
        if obj.dqik.colliders is not None and not colliders:
            raise ArmatureError(f"Collider collection '{obj.dqik.colliders.name}' holds no mesh")
        self.entries = []
        arm = np.array(obj.matrix_world)
        for collider in colliders:
            _check_scale(collider)
            tree, is_open, (centre, radius) = tree_of(collider, depsgraph, cache)
            if is_open and collider.name not in cache.warned_open:
                cache.warned_open.add(collider.name)
                report_warning(f"Collider '{collider.name}' is not a closed mesh: it only blocks "
                               "from the side its normals face")
            to_local = np.linalg.inv(np.array(collider.matrix_world)) @ arm
            back = np.linalg.inv(to_local)
            scale = float(np.cbrt(abs(np.linalg.det(back[:3, :3]))))
            corners = np.array(collider.evaluated_get(depsgraph).bound_box)
            self.entries.append(_Entry(
                collider.name, tree, to_local[:3, :3].T.copy(), to_local[:3, 3].copy(),
                (back[:3, :3] / scale).T.tolist(), scale, corners.min(axis=0).tolist(),
                corners.max(axis=0).tolist(), back[:3, :3] @ centre + back[:3, 3], scale * radius,
                is_open))
        self.count = len(colliders)
        self._evaluated = [c.evaluated_get(depsgraph) for c in colliders]

    def leave_out_facing_away(self, points, bound):
        """Take out of the query every collider that most of ``points`` (the armature's bone
        heads and tails, armature space) within ``bound`` of it lie behind: its normals face
        away from the armature (a floor whose normals point down blocks every bone above it
        from below and drives them through it). Returns the names taken out."""
        away = []
        for entry in self.entries:
            near = np.linalg.norm(points - entry.centre, axis=1) <= entry.radius + bound
            local = points[near].dot(entry.rotation_t) + entry.translation
            limit = bound / entry.scale
            sides = [found[0] < 0.0 for found in (_nearest(entry, co, limit)
                                                  for co in local.tolist()) if found is not None]
            if 2 * sum(sides) > len(sides):
                away.append(entry.name)
        self.entries = [entry for entry in self.entries if entry.name not in away]
        return away

    def triangles(self):
        """Triangles of all colliders as evaluated (for reports; solving never needs the count)."""
        return sum(len(evaluated.data.loop_triangles) for evaluated in self._evaluated)

    def __call__(self, points, max_distance):
        """Signed distance (armature units) and outward normal of the nearest collider surface,
        for points inside a collider or within ``max_distance`` outside it (``inf`` elsewhere).

        Only points within ``max_distance`` of both a collider's bounding sphere and its bounding
        box are looked at (a point inside is inside both). A point inside the box is searched up
        to the nearest box face too: if it is inside a closed mesh, the way out to that face
        crosses the surface, so its true depth is found by that bounded search (an open mesh,
        which encloses nothing, is searched without bound instead when nothing lies within
        ``max_distance``). The few points near a collider are handled one by one in Python
        floats: cheaper than array operations on a handful of rows.
        """
        count = len(points)
        distance = np.full(count, np.inf)
        normal = np.zeros((count, 3))
        bound = np.asarray(max_distance, dtype=float)
        if bound.ndim == 0:
            bound = np.full(count, float(bound))
        for entry in self.entries:
            from_centre = points - entry.centre
            reach = entry.radius + bound
            candidates = (np.einsum('ij,ij->i', from_centre, from_centre)
                          <= reach * reach).nonzero()[0]
            if candidates.size == 0:
                continue
            local = points.take(candidates, axis=0).dot(entry.rotation_t) + entry.translation
            limits = (bound.take(candidates) / entry.scale).tolist()
            for i, co, limit in zip(candidates.tolist(), local.tolist(), limits):
                found = _nearest(entry, co, limit)
                if found is not None and found[0] < distance[i]:
                    distance[i], normal[i] = found
        return distance, normal


class _Entry(NamedTuple):
    """One collider as ``SceneObstacles`` queries it: its name and tree; armature → local space as
    ``local = p · rotation_t + translation``; local → armature directions (``back_t``, rows, scale
    divided out) and the uniform ``scale``; the local bounding box (``low``, ``high``); the
    bounding sphere's centre (armature space) and radius (armature units); open or closed."""

    name: str
    tree: object
    rotation_t: np.ndarray
    translation: np.ndarray
    back_t: list
    scale: float
    low: list
    high: list
    centre: np.ndarray
    radius: float
    is_open: bool


def _nearest(entry, co, limit):
    """``(signed distance in armature units, outward normal in armature space)`` of the local
    point ``co`` (a list) from ``entry``'s surface when inside a closed mesh or within ``limit``
    (local units) of it, else None; see ``SceneObstacles.__call__``."""
    (x, y, z), (lx, ly, lz), (hx, hy, hz) = co, entry.low, entry.high
    gx, gy, gz = max(lx - x, x - hx, 0.0), max(ly - y, y - hy, 0.0), max(lz - z, z - hz, 0.0)
    if gx * gx + gy * gy + gz * gz > limit * limit:
        return None
    face = min(x - lx, hx - x, y - ly, hy - y, z - lz, hz - z)     # ≥ 0: inside the box
    # (a little beyond the face: a box collider's surface is its bounding box)
    search = limit if entry.is_open else max(limit, face * (1.0 + 1e-6) + 1e-9)
    location, face_normal, _, gap = entry.tree.find_nearest(co, search)
    if location is None and face >= 0.0 and entry.is_open:
        location, face_normal, _, gap = entry.tree.find_nearest(co)
    if location is None:
        return None
    ox, oy, oz = x - location[0], y - location[1], z - location[2]
    inside = ox * face_normal[0] + oy * face_normal[1] + oz * face_normal[2] < 0.0
    if not inside and gap > limit:
        return None
    if gap <= 1e-12:
        ox, oy, oz = face_normal
    elif inside:
        ox, oy, oz = -ox, -oy, -oz
    (a, b, c), (d, e, f), (g, h, k) = entry.back_t
    nx, ny, nz = ox * a + oy * d + oz * g, ox * b + oy * e + oz * h, ox * c + oy * f + oz * k
    norm = max(math.sqrt(nx * nx + ny * ny + nz * nz), 1e-12)
    return (-gap if inside else gap) * entry.scale, (nx / norm, ny / norm, nz / norm)


_WEIGHT_CUTOFF = 0.5
_LENGTH_FRACTION = 0.15


def _skinned_meshes(obj):
    """Mesh objects deformed by ``obj`` through an Armature modifier."""
    return [o for o in bpy.data.objects if o.type == 'MESH' and any(
        m.type == 'ARMATURE' and m.object == obj for m in o.modifiers)]


def _skin_radii(obj, model, cache):
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
            coords = _vertices(mesh).astype(np.float64)
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
    """Per bone: ``PoseBone.dqik.radius``; when 0, automatic: the median distance of the skin
    vertices weighted to the bone (meshes the armature deforms), else 15 % of the bone length;
    never below 1 mm. Also the ``use_collision`` mask. A radius that is not finite or is negative
    on a bone with collision on is refused (``validation.check_bone_settings``)."""
    settings = [pose_bone.dqik for pose_bone in obj.pose.bones]
    enabled = np.array([s.use_collision for s in settings], dtype=bool)
    radii = np.array([s.radius for s in settings], dtype=np.float64)
    check_bone_settings(obj, [model.names[i] for i in np.flatnonzero(enabled).tolist()],
                        ("radius",), radii[enabled])
    automatic = np.flatnonzero(radii <= 0.0)
    if automatic.size:
        skin = _skin_radii(obj, model, cache)
        radii[automatic] = [skin.get(model.names[i], _LENGTH_FRACTION * model.lengths[i])
                            for i in automatic.tolist()]
    return np.maximum(radii, 1e-3), enabled
