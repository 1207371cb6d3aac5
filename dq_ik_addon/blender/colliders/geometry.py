"""The colliders as the depsgraph evaluates them: which objects, where, and their triangles.

A collider is every object of the armature's collider collection (and its child collections)
whose evaluated geometry is a mesh: meshes with their modifiers, shape keys and armature
deformation, and curves, surfaces, text and metaballs (``Object.to_mesh`` of the evaluated
object). An Empty instancing a collection contributes that collection's objects, placed as
Blender draws them: ``instancer.matrix_world @ translation(−collection.instance_offset) @
object.matrix_world``, instances within instances included (Blender's ``make_duplis_collection``,
``source/blender/blenkernel/intern/object_dupli.cc``).

Each piece's triangles are put in a ``mathutils.bvhtree.BVHTree``: in the object's own space when
its world matrix is a similarity (rotation and one scale, mirrored or not), so that an object
that only moves keeps its tree; in world space otherwise (non-uniform scale, shear), where a
mirroring matrix (determinant < 0) reverses the triangles' winding so that their normals still
face out. Trees are kept in a ``ColliderCache`` and built again only when the geometry (or, in
world space, the matrix) changes.
"""

from typing import NamedTuple

import numpy as np
from mathutils.bvhtree import BVHTree

GEOMETRY_TYPES = frozenset({'MESH', 'CURVE', 'SURFACE', 'FONT', 'META'})
_MAX_NESTING = 8   # Blender's own limit of instances within instances (MAX_DUPLI_RECUR)
_SIMILAR = 1e-6    # relative tolerance of AᵀA = s² I


class ColliderCache:
    """What is worth keeping between solves of one armature: the colliders' trees, the automatic
    capsule radii measured on its skinned meshes, and the open colliders already warned about.
    ``tree_builds`` counts the trees built (for tests and benchmarks)."""

    def __init__(self):
        self.trees = {}         # piece key → (geometry key, ColliderTree)
        self.skin_radii = {}    # (mesh name, vertex count) → {bone name: radius}
        self.warned_open = set()
        self.tree_builds = 0


class Piece(NamedTuple):
    """One object whose geometry is an obstacle: ``key`` the names from the collider collection's
    object down through the instancers, ``name`` those joined for messages, the evaluated object
    and its world matrix (4×4, the instance transform included)."""

    key: tuple
    name: str
    evaluated: object
    matrix: np.ndarray


class ColliderTree(NamedTuple):
    """A piece's BVH tree and triangles in tree space (world space when ``in_world``, else the
    object's own space, which the piece's current matrix maps to world space): corners (T,3,3),
    unit face normals (T,3), the pseudo-normals of each triangle's edges (edge k from corner k
    to k + 1) and corners (T,3,3 each; ``pseudo_normals``), whether the mesh is open, its
    bounding box (``low``, ``high``) and bounding sphere (``centre``, ``radius``)."""

    tree: object
    in_world: bool
    corners: np.ndarray
    normals: np.ndarray
    edge_normals: np.ndarray
    corner_normals: np.ndarray
    is_open: bool
    low: list
    high: list
    centre: np.ndarray
    radius: float


def collider_pieces(obj, depsgraph):
    """The ``Piece`` of every object of ``obj``'s collider collection whose geometry counts, and
    of every object the collection's Empties instance."""
    collection = obj.dqik.colliders
    pieces = []
    if collection is not None:
        _gather(collection.all_objects, np.eye(4), (), depsgraph, pieces)
    return pieces


def _gather(objects, placed, path, depsgraph, pieces):
    for source in objects:
        evaluated = source.evaluated_get(depsgraph)
        matrix = placed @ np.array(evaluated.matrix_world)
        key = path + (source.name,)
        if source.type in GEOMETRY_TYPES:
            pieces.append(Piece(key, " > ".join(key), evaluated, matrix))
        instanced = source.instance_collection
        if source.instance_type == 'COLLECTION' and instanced is not None \
                and len(path) < _MAX_NESTING:
            offset = np.eye(4)
            offset[:3, 3] = -np.array(instanced.instance_offset)
            _gather(instanced.all_objects, matrix @ offset, key, depsgraph, pieces)


class _Surface(NamedTuple):
    """A piece's evaluated mesh read into arrays: vertex positions (n,3) float32 in object
    space, triangles (T,3) vertex indices, and whether an edge is not shared by two faces."""

    positions: np.ndarray
    triangles: np.ndarray
    is_open: bool


def vertices(mesh):
    """(n,3) float32 vertex positions, read from the ``position`` attribute, Blender's own
    contiguous storage: a plain copy (3.5 µs for 10k vertices, against about 300 µs through
    ``mesh.vertices.foreach_get("co")``; bpy 4.5.15 and 5.0.1)."""
    coords = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    if coords.size == 0:      # a mesh without vertices has no position attribute
        return coords.reshape(0, 3)
    mesh.attributes["position"].data.foreach_get("vector", coords)
    return coords.reshape(-1, 3)


def _read(mesh, whole):
    positions = vertices(mesh)
    if not whole:
        return _Surface(positions, None, False)
    triangles = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", triangles)
    return _Surface(positions, triangles.reshape(-1, 3), _is_open(mesh))


def surface(evaluated, whole=True):
    """The ``_Surface`` of an evaluated object (only its positions unless ``whole``): its mesh,
    or for curves, text, surfaces and metaballs the mesh they evaluate to (``to_mesh``, freed
    again with ``to_mesh_clear``)."""
    if evaluated.type == 'MESH':
        return _read(evaluated.data, whole)
    mesh = evaluated.to_mesh()
    try:
        return _read(mesh, whole) if mesh is not None else _Surface(
            np.zeros((0, 3), np.float32), np.zeros((0, 3), np.int32), True)
    finally:
        evaluated.to_mesh_clear()


def _is_open(mesh):
    """True when some edge is not shared by exactly two faces (open or non-manifold)."""
    if len(mesh.edges) == 0:
        return True
    edge_of_loop = np.empty(len(mesh.loops), dtype=np.int64)
    mesh.loops.foreach_get("edge_index", edge_of_loop)
    uses = np.bincount(edge_of_loop, minlength=len(mesh.edges))
    return bool(np.any(uses != 2))


def geometry_key(piece, positions):
    """What changes when a piece's tree must be built again: its vertex count and a checksum of
    its positions, and its matrix too when its tree is in world space."""
    key = (len(positions), float(positions.sum(dtype=np.float64)),
           float(np.abs(positions).sum(dtype=np.float64)))
    return key if is_similarity(piece.matrix) else key + (piece.matrix.tobytes(),)


def is_similarity(matrix):
    """True when the linear part A of ``matrix`` is a rotation (possibly mirrored) times one
    scale: AᵀA = s² I."""
    linear = matrix[:3, :3]
    gram = linear.T @ linear
    scale2 = np.trace(gram) / 3.0
    return scale2 > 0.0 and bool(np.abs(gram - scale2 * np.eye(3)).max() <= _SIMILAR * scale2)


def tree_of(piece, cache):
    """The ``ColliderTree`` of ``piece`` (kept in ``cache``) and its evaluated ``_Surface``'s
    triangle count; None when it has no faces."""
    found = surface(piece.evaluated)
    if len(found.triangles) == 0:
        return None
    key = geometry_key(piece, found.positions)
    cached = cache.trees.get(piece.key)
    if cached is None or cached[0] != key:
        cached = (key, _build(piece.matrix, found))
        cache.tree_builds += 1
        cache.trees[piece.key] = cached
    return cached[1]


def _build(matrix, found):
    """The ``ColliderTree`` of a surface placed by ``matrix``: in object space for a similarity,
    else in world space with the winding reversed under a mirroring matrix."""
    coords = found.positions.astype(np.float64)
    triangles = found.triangles
    in_world = not is_similarity(matrix)
    if in_world:
        coords = coords @ matrix[:3, :3].T + matrix[:3, 3]
        if np.linalg.det(matrix[:3, :3]) < 0.0:
            triangles = triangles[:, ::-1]
    tree = BVHTree.FromPolygons(coords.tolist(), triangles.tolist(), all_triangles=True)
    corners = coords[triangles]
    normals = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    normals /= np.maximum(np.linalg.norm(normals, axis=1), 1e-300)[:, None]
    low, high = coords.min(axis=0), coords.max(axis=0)
    centre = (low + high) / 2.0
    radius = float(np.sqrt(((coords - centre) ** 2).sum(axis=1).max()))
    return ColliderTree(tree, in_world, corners, normals,
                        *pseudo_normals(len(coords), triangles, corners, normals),
                        found.is_open, low.tolist(), high.tolist(), centre, radius)


def pseudo_normals(count, triangles, corners, normals):
    """``(edge normals, corner normals)`` (T,3,3) of the ``triangles`` over ``count`` vertices:
    the angle-weighted pseudo-normals (Bærentzen and Aanæs, "Signed distance computation using
    the angle weighted pseudonormal", IEEE TVCG 11(3), 2005): an edge's the sum of the normals
    of the faces that share it, a vertex's the sum of its faces' normals each weighted by the
    face's angle there, normalized. With them the sign of ``(p − c)·N`` at the nearest point
    ``c`` tells inside from outside wherever ``c`` lies on a closed mesh; a face's own normal
    does not where ``c`` is on an edge (a floor beside a box standing on it read 0.5 m
    inside the box). An edge of one face (an open mesh) takes that face's normal."""
    ahead, behind = corners[:, [1, 2, 0]] - corners, corners[:, [2, 0, 1]] - corners
    cosine = (ahead * behind).sum(axis=2) / np.maximum(
        np.linalg.norm(ahead, axis=2) * np.linalg.norm(behind, axis=2), 1e-300)
    weighted = np.arccos(np.clip(cosine, -1.0, 1.0))[:, :, None] * normals[:, None, :]
    at_vertex = np.zeros((count, 3))
    np.add.at(at_vertex, triangles.ravel(), weighted.reshape(-1, 3))
    edges = np.sort(np.stack([triangles, triangles[:, [1, 2, 0]]], axis=2).reshape(-1, 2), axis=1)
    _, edge = np.unique(edges, axis=0, return_inverse=True)
    at_edge = np.zeros((edge.max() + 1, 3))
    np.add.at(at_edge, edge.ravel(), np.repeat(normals, 3, axis=0))
    return tuple(n / np.maximum(np.linalg.norm(n, axis=2), 1e-300)[:, :, None]
                 for n in (at_edge[edge.ravel()].reshape(-1, 3, 3), at_vertex[triangles]))
