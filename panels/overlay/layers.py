"""What the viewport overlay draws for one armature, as world-space line lists per style, read
from the rig, its DQ IK settings and its session's last result (``session.last_result_of``:
the overlay never solves). No ``gpu`` here: ``overlay_draw`` turns the lists into batches.

Layers (each switched by ``Object.dqik.show_overlay_<layer>``):

- ``swing``: for each selected bone with limits, the edge of its swing range as a cone from its
  head in its parent frame ``F``, the axes of ``PoseBone.matrix · matrix_basis⁻¹`` (the frame
  its rotation channels act in: its rest frame under the parent's pose) made orthonormal
  (``overlay_geometry.orthonormal_frames``), and its current swing;
- ``twist``: for the same bones, the twist range as an arc around the bone and its current twist;
- ``capsules``: the capsules the solver tests (bones with collision on and a radius of at least
  ``contacts.MIN_RADIUS``, when the armature has colliders or self-collision), those with a
  contact in the last result in their own colour;
- ``contacts``: the last result's contacts, a cross on each point and its normal, while the
  armature avoids collisions (as the capsules);
- ``tasks``: a line from each task's effector (the bone's tail; its head for an aim-only task)
  to its target, coloured by the task's status; a cross on the effector if its target is missing;
- ``balance``: with Balance on, the last result's support polygon, its centre of mass and that
  point's projection on the ground (``SolveSnapshot.balance``).

``ArmatureLines.update`` remakes the lists only when its change key differs from the last one:
the pose (``PoseBone.matrix`` of every bone), the selection, the armature's and targets'
``matrix_world`` (and a target bone's pose matrix), the shown layers, the last result (by
identity) and ``settings.edits.settings_edits``, which counts the settings set through their update
callbacks (and undo, redo, file loads, library reloads) and holds the values keys and drivers
set. Every bone's limits, collision
settings and which bones are tasks (``BoneSettings``) are read, one pass over the pose bones,
only when that count or the rig (``rig_key``) changed: a pose change (a live tick, a frame
change) remakes the lines from numpy arrays and the few task bones, with no loop over the rig's
bones.
"""

from typing import NamedTuple

import bpy
import numpy as np
from mathutils import Matrix

from ...dq_ik_addon.blender.colliders.capsules import capsule_radii
from ...dq_ik_addon.blender.colliders.geometry import ColliderCache
from ...dq_ik_addon.blender.rig.arrays import evaluated_matrices, read_array
from ...dq_ik_addon.blender.rig.model_reader import rig_key, world_unit
from ...dq_ik_addon.blender.rig.reader import last_model
from ...dq_ik_addon.blender.settings.edits import settings_edits
from ...dq_ik_addon.blender.settings.scene_tasks import (
    collision_settings,
    target_matrix,
)
from ...dq_ik_addon.blender.settings.task_kinds import enabled_entries
from ...dq_ik_addon.blender.solving.sessions import last_result_of, tested_capsules_of
from ...dq_ik_addon.engine import (
    MIN_RADIUS,
    chain_size,
    matrix_to_quat,
    quat_to_matrix,
    swing_twist_array,
)
from ..task_rows import reports_by_name, row_status
from . import geometry as geometry

LAYERS = ("swing", "twist", "capsules", "contacts", "tasks", "balance")
TWIST_CENTRE = 0.5      # of the bone's length from its head: where the twist arc is drawn
TWIST_RADIUS = 0.2      # of the bone's length
MARK_SIZE = 0.015       # of the rig's size (``problem.chain_size``): contact and missing crosses
# a task's status (``task_rows.row_status``) → its line's style
TASK_STYLES = {'MET': "task_met", 'CLOSEST': "task_closest", 'NONE': "task_unsolved",
               'MISSING': "task_failed", 'SKIPPED': "task_failed", 'ERROR': "task_failed"}
_LIMIT_FIELDS = ("use_limits", "swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max",
                 "twist_min", "twist_max")


def shown_layers(obj, space=None):
    """The layers to draw for ``obj`` in the 3D Viewport ``space`` (None: any): none unless
    ``obj`` is an armature in Pose Mode with its overlay on (``Object.dqik.show_overlay``) and
    the viewport's overlays are on; else those switched on."""
    if obj is None or obj.type != 'ARMATURE' or obj.mode != 'POSE':
        return ()
    if space is not None and not space.overlay.show_overlays:
        return ()
    settings = obj.dqik
    if not settings.show_overlay:
        return ()
    return tuple(layer for layer in LAYERS if getattr(settings, f"show_overlay_{layer}"))


_POSE_BONE_SELECT = "select" in bpy.types.PoseBone.bl_rna.properties   # Blender 5.0 on


def _stored_selection(obj):
    """Every bone's selection in the order Blender stores it: ``PoseBone.select`` from Blender
    5.0 (pose-bone order), ``Bone.select`` before (the armature's bone order)."""
    bones = obj.pose.bones if _POSE_BONE_SELECT else obj.data.bones
    return read_array(bones, "select", 1, dtype=bool)


def selection_key(obj):
    """Every bone's selection as bytes, in its stored order: what a change key needs, without
    ``selected_mask``'s reordering."""
    return _stored_selection(obj).tobytes()


def selected_mask(obj):
    """Every pose bone's selection, in pose-bone order (``PoseBone.select`` from Blender 5.0,
    ``Bone.select`` before, read in the armature's bone order and put in pose-bone order)."""
    selected = _stored_selection(obj)
    if _POSE_BONE_SELECT:
        return selected
    bones, names = obj.data.bones, obj.pose.bones.keys()
    if bones.keys() == names:
        return selected
    return selected[[bones.find(name) for name in names]]


def _to_world(matrix_world, points):
    return points @ matrix_world[:3, :3].T + matrix_world[:3, 3]


class BoneSettings(NamedTuple):
    """What the overlay draws of every bone's ``PoseBone.dqik``, in pose-bone order."""

    limited: np.ndarray     # (n,) bool: use_limits
    ranges: np.ndarray      # (n, 6): swing_x_min, swing_x_max, swing_z_min, swing_z_max,
    #                         twist_min, twist_max
    tasks: tuple            # indices of the bones with use_target on


def read_bone_settings(obj):
    """``obj``'s ``BoneSettings``: one pass over its pose bones."""
    rows = [[getattr(settings, field) for field in _LIMIT_FIELDS] + [settings.use_target]
            for settings in (pose_bone.dqik for pose_bone in obj.pose.bones)]
    table = np.array(rows, dtype=float).reshape(-1, len(_LIMIT_FIELDS) + 1)
    return BoneSettings(table[:, 0] != 0.0, table[:, 1:-1],
                        tuple(np.flatnonzero(table[:, -1]).tolist()))


def limit_lines(obj, pose, selected, layers, bone_settings):
    """``{style: lines}`` of the swing and twist layers (armature space) of the selected bones
    with limits on (``bone_settings``: ``read_bone_settings``)."""
    pose_bones = obj.pose.bones
    bones = np.flatnonzero(selected & bone_settings.limited)
    if not len(bones):
        return {}
    ranges = bone_settings.ranges[bones]
    basis = read_array(pose_bones, "matrix_basis", 16).reshape(-1, 4, 4).transpose(0, 2, 1)[bones]
    matrices = pose[bones]
    # the parent frame's axes, M B⁻¹ with B = R(q) S: (M S⁻¹) R(q)ᵀ
    rotations = matrix_to_quat(basis[:, :3, :3])
    unscaled = matrices[:, :3, :3] / np.linalg.norm(basis[:, :3, :3], axis=1)[:, None, :]
    parent = unscaled @ quat_to_matrix(rotations).transpose(0, 2, 1)
    frames = geometry.orthonormal_frames(parent[:, :, 0], parent[:, :, 1])
    heads = matrices[:, :3, 3]
    lengths = read_array(obj.data.bones, "length", 1)[_bone_order(obj)][bones] \
        * np.linalg.norm(matrices[:, :3, 1], axis=1)
    params = swing_twist_array(rotations)   # (s_x, s_z, τ)
    lines = {}
    if "swing" in layers:
        lines["swing"], lines["swing_current"] = geometry.swing_cones(
            frames, heads, lengths, ranges[:, :4], params[:, :2])
    if "twist" in layers:
        swung = geometry.twist_frames(frames, params[:, :2])
        centres = heads + TWIST_CENTRE * lengths[:, None] * swung[:, :, 1]
        lines["twist"], lines["twist_current"] = geometry.twist_arcs(
            swung, centres, TWIST_RADIUS * lengths, ranges[:, 4:], params[:, 2])
    return lines


def _bone_order(obj):
    """Indices that put ``Armature.bones`` values in pose-bone order."""
    bones, names = obj.data.bones, obj.pose.bones.keys()
    return slice(None) if bones.keys() == names else [bones.find(name) for name in names]


class RigCache:
    """What the overlay reads once per rig change: the ``ChainModel`` (the one the session
    solves with, ``rig.reader.last_model``) and its size
    (``problem.chain_size``), for the ``rig_key`` ``fingerprint``; and once per rig change or
    settings edit (``settings.edits.settings_edits``): the ``BoneSettings`` and the capsule radii
    (``colliders.capsules.capsule_radii``). ``refresh`` checks the rig; the readers below assume it
    was called for the object they are given."""

    def __init__(self):
        self.fingerprint, self.model, self.size = None, None, 0.0
        self.settings_key, self.settings = None, None
        self.radii_key, self.radii, self.enabled = None, None, None
        self.colliders = ColliderCache()

    def refresh(self, obj, fingerprint):
        """Read ``obj``'s model again if its ``rig_key`` ``fingerprint`` changed."""
        if fingerprint != self.fingerprint:
            self.model, self.fingerprint = last_model(obj, fingerprint), fingerprint
            self.settings_key = self.radii_key = None
            self.size = chain_size(self.model)

    def settings_of(self, obj):
        """``obj``'s ``BoneSettings``, read again after a settings edit or a rig change."""
        if self.settings_key != settings_edits(obj):
            self.settings, self.settings_key = read_bone_settings(obj), settings_edits(obj)
        return self.settings

    def radii_of(self, obj):
        """``(radii, enabled)`` of every bone, armature units."""
        key = (settings_edits(obj), world_unit(obj))     # a radius is set in world units
        if self.radii_key != key:
            self.radii, self.enabled = capsule_radii(obj, self.model, self.colliders)
            self.radii_key = key
        return self.radii, self.enabled


def capsule_lines(obj, pose, snapshot, rig, selected):
    """``{style: lines}`` of the capsules layer (armature space): ``capsule`` and, for bones
    with a contact in ``snapshot``, ``capsule_touching``. The capsules are those the session's
    solver tests (``session.tested_capsules_of``: the ones its tasks can move, and with Self
    Collision the pairs it keeps apart); before its first solve, every bone with collision on
    and a radius of at least ``MIN_RADIUS``. Of those, the ``selected`` bones' ((n,) mask) and
    the touching ones, or every one with ``Object.dqik.show_overlay_all_capsules``."""
    settings = obj.dqik
    if collision_settings(obj) == (None, False):
        return {}
    radii, enabled = rig.radii_of(obj)
    names = np.array(rig.model.names)
    tested = tested_capsules_of(obj)
    if tested is not None:
        enabled = enabled & np.isin(names, list(tested))
    touching = np.zeros(len(names), dtype=bool)
    if snapshot is not None and snapshot.contacts is not None:
        touching = np.isin(names, list(snapshot.contacts.bones))
    if not settings.show_overlay_all_capsules:
        enabled &= selected | touching
    bones = np.flatnonzero(enabled & (radii >= MIN_RADIUS))
    heads = pose[bones, :3, 3]
    tails = heads + rig.model.lengths[bones, None] * pose[bones, :3, 1]
    touching = touching[bones]
    lines = {}
    for style, chosen in (("capsule", ~touching), ("capsule_touching", touching)):
        if chosen.any():
            lines[style] = geometry.capsule_wires(heads[chosen], tails[chosen],
                                                  pose[bones[chosen], :3, 0], radii[bones[chosen]])
    return lines


def contact_lines(obj, snapshot, size):
    """``{"contact": lines}`` (world space) of the last result's contacts, unless ``obj``
    avoids no collisions now (``collision_settings``: its Collisions toggle off, or no
    colliders and no Self Collision), as the capsules layer."""
    contacts = None if snapshot is None else snapshot.contacts
    if contacts is None or not len(contacts.points) or collision_settings(obj) == (None, False):
        return {}
    return {"contact": geometry.contact_marks(contacts.points, contacts.normals, size)}


class TaskLine(NamedTuple):
    """One task of the tasks layer: its bone, its line's style, whether it starts at the head,
    and its target's ``placement`` (None if its goal is missing)."""

    bone: int
    style: str
    from_head: bool
    target: tuple


def placement(settings):
    """``(object name, bone name or "")``: what the goal of a task with a valid target follows,
    the target object and, on an armature, its bone ``subtarget`` (``target_matrix``)."""
    target = settings.target
    return target.name, settings.subtarget if target.type == 'ARMATURE' else ""


def task_lines(obj, pose, snapshot, size, tasks):
    """``({style: lines}, targets)``: the tasks layer in world space, and the ``placement`` of
    each target it read (part of the change key); ``tasks``: the indices of the bones with
    use_target on (``BoneSettings.tasks``)."""
    reports = reports_by_name(snapshot)
    found = []
    pose_bones = obj.pose.bones
    for i in tasks:
        pose_bone = pose_bones[i]
        settings = pose_bone.dqik
        status = row_status(pose_bone.name, settings, snapshot, reports)[0]
        matrix, _problem = target_matrix(Matrix.Identity(4), settings)
        enabled = enabled_entries(settings)
        aim_only = bool(enabled) and all(entry.from_head for entry in enabled)
        goal, target = (None, None) if matrix is None else (np.array(matrix.translation),
                                                            placement(settings))
        found.append((TaskLine(i, TASK_STYLES[status], aim_only, target), goal))
    if not found:
        return {}, ()
    world = np.array(obj.matrix_world)
    lengths = read_array(obj.data.bones, "length", 1)[_bone_order(obj)]
    lines = {}
    for task, goal in found:
        frame = pose[task.bone]
        start = frame[:3, 3] + (0.0 if task.from_head else lengths[task.bone]) * frame[:3, 1]
        start = _to_world(world, start[None])
        if goal is None:
            part = geometry.crosses(start, size)
            style = "task_failed"
        else:
            part, style = geometry.segments(start, goal[None]), task.style
        lines.setdefault(style, []).append(part)
    targets = tuple(task.target for task, goal in found if goal is not None)
    return {style: np.concatenate(parts) for style, parts in lines.items()}, targets


def overlay_lines(obj, layers, rig):
    """``({style: (k, 3) float32 world-space lines}, targets)`` of the ``layers`` of ``obj``
    (``rig`` refreshed for it). A bone scaled to zero has no frame: its shapes come out
    non-finite and are left out (``finite_segments``), without numpy's warnings."""
    with np.errstate(divide='ignore', invalid='ignore'):
        lines, targets = _overlay_lines(obj, layers, rig)
    return {style: finite_segments(points) for style, points in lines.items()}, targets


def finite_segments(points):
    """The segments of the line list ``points`` ``(2k, 3)`` whose ends are finite, float32."""
    pairs = np.asarray(points, dtype=np.float32).reshape(-1, 2, 3)
    return np.ascontiguousarray(pairs[np.isfinite(pairs).all(axis=(1, 2))].reshape(-1, 3))


def _overlay_lines(obj, layers, rig):
    pose = evaluated_matrices(obj.pose.bones)
    world = np.array(obj.matrix_world)
    snapshot = last_result_of(obj)
    bone_settings = rig.settings_of(obj)
    armature_space, selected = {}, selected_mask(obj)
    if "swing" in layers or "twist" in layers:
        armature_space.update(limit_lines(obj, pose, selected, layers, bone_settings))
    if "capsules" in layers:
        armature_space.update(capsule_lines(obj, pose, snapshot, rig, selected))
    lines = {style: _to_world(world, points) for style, points in armature_space.items()}
    size = MARK_SIZE * rig.size * np.cbrt(abs(np.linalg.det(world[:3, :3])))
    if "contacts" in layers:
        lines.update(contact_lines(obj, snapshot, size))
    targets = ()
    if "tasks" in layers:
        found, targets = task_lines(obj, pose, snapshot, size, bone_settings.tasks)
        lines.update(found)
    if "balance" in layers and snapshot is not None and snapshot.balance is not None:
        lines["balance"] = geometry.balance_marks(*snapshot.balance, size)
    return lines, targets


def _placements_bytes(placements):
    """Where each ``placement`` is, as bytes: the object's ``matrix_world`` and, for a bone,
    its pose matrix (``PoseBone.matrix``, evaluated); None for an object or bone that is gone."""
    objects = bpy.data.objects
    out = []
    for name, bone in placements:
        thing = objects.get(name)
        if thing is None:
            out.append(None)
            continue
        out.append(np.array(thing.matrix_world, np.float32).tobytes())
        if bone:
            pose_bone = thing.pose.bones.get(bone)
            out.append(None if pose_bone is None
                       else np.array(pose_bone.matrix, np.float32).tobytes())
    return tuple(out)


class ArmatureLines:
    """The overlay's line lists of one armature object, kept until their change key changes.
    Holds no Blender data (undo and file loads re-allocate it): the armature is passed on every
    call, its targets are kept by name (``placement``)."""

    def __init__(self):
        self.key, self.snapshot, self.targets = None, None, ()
        self.lines = {}
        self.rig = RigCache()
        self.builds = 0

    def change_key(self, obj, layers):
        """What the lists depend on, read cheaply (a few ``foreach_get``): see the module."""
        pose_bones = obj.pose.bones
        pose = np.empty(16 * len(pose_bones), dtype=np.float32)
        pose_bones.foreach_get("matrix", pose)
        return (obj.as_pointer(), layers, obj.dqik.show_overlay_all_capsules,
                settings_edits(obj), pose.tobytes(), selection_key(obj),
                _placements_bytes(((obj.name, ""),) + self.targets))

    def update(self, obj, layers):
        """Make the lists again if anything they show changed; True if they were made."""
        key = self.change_key(obj, layers)
        snapshot = last_result_of(obj)
        if key == self.key and snapshot is self.snapshot:
            return False
        self.rig.refresh(obj, rig_key(obj))
        self.lines, self.targets = overlay_lines(obj, layers, self.rig)
        self.key, self.snapshot = self.change_key(obj, layers), snapshot
        self.builds += 1
        return True
