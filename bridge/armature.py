"""Armature ⇄ engine: read an armature into a ChainModel and pose arrays, write rotations back.

Everything is read and written with ``foreach_get``/``foreach_set`` over all bones at once.
Rotations travel as w-first quaternions relative to the rest pose, whatever each bone's
``rotation_mode`` is; writing converts back to the bone's own mode (quaternion, any Euler order
kept continuous with the current value, or axis-angle).
"""

import bpy
import numpy as np

from ..ik_engine import ChainModel
from ..ik_engine.bone_parent_transform import INHERIT_SCALE_MODES
from ..ik_engine.chain_model import BoneFlags
from ..ik_engine.euler import euler_to_quat, quat_to_euler
from ..ik_engine.quaternion import (
    qcanonical,
    qnormalize,
    quat_from_axis_angle,
    quat_to_rotvec,
    row_dots,
)


class ArmatureError(Exception):
    """An armature the solver cannot work on; the message is meant for the user."""


def not_an_armature(obj):
    """Why ``obj`` is not an armature to work on (nothing, or another kind of object), or None."""
    if obj is None or obj.type != 'ARMATURE':
        return ("Select an armature: the active object is "
                + ("nothing" if obj is None else f"'{obj.name}', a {obj.type.lower()}"))
    return None


def not_editable(obj):
    """Why the armature ``obj`` cannot be posed (Edit Mode, linked, no bones), with what to do,
    or None."""
    if obj.mode == 'EDIT':
        return f"'{obj.name}' is in Edit Mode; switch to Pose or Object Mode first"
    if obj.library is not None:
        return (f"'{obj.name}' is linked from '{obj.library.filepath}' and cannot be posed; "
                "make a library override first (Object > Library Override)")
    if obj.pose is None:
        return f"'{obj.name}' has no pose yet; link it into a scene first"
    if len(obj.pose.bones) == 0:
        return f"'{obj.name}' has no bones"
    return None


def active_armature(context):
    """The armature to work on: the active object."""
    obj = context.active_object
    problem = not_an_armature(obj)
    if problem:
        raise ArmatureError(problem)
    return obj


def check_editable(obj):
    """Refuse edit mode, linked armatures and armatures without bones with a message that says
    what to do."""
    problem = not_editable(obj)
    if problem:
        raise ArmatureError(problem)


def is_selected(pose_bone):
    """Pose-mode selection (``PoseBone.select`` from Blender 5.0, ``Bone.select`` before)."""
    selected = getattr(pose_bone, "select", None)
    return pose_bone.bone.select if selected is None else selected


def select_only(obj, pose_bone):
    """Make ``pose_bone`` the active bone of ``obj`` and its only selected one, as a click on it
    in the viewport does (``PoseBone.select`` from Blender 5.0, ``Bone.select`` before)."""
    bones = obj.pose.bones if "select" in bpy.types.PoseBone.bl_rna.properties else obj.data.bones
    flags = [False] * len(bones)
    flags[bones.find(pose_bone.name)] = True
    bones.foreach_set("select", flags)
    obj.data.bones.active = pose_bone.bone


def target_pose_bones(obj, only_selected):
    """The pose bones an operator works on: all, or the selected ones (at least one)."""
    bones = [pb for pb in obj.pose.bones if not only_selected or is_selected(pb)]
    if not bones:
        raise ArmatureError(f"No bones of '{obj.name}' are selected; select some in Pose Mode "
                            "or turn off 'Only Selected'")
    return bones


def read_array(collection, attr, width, dtype=np.float64, count=None):
    """``attr`` of every item, (n, width). Float properties go through a float32 buffer, Blender's
    own storage, which ``foreach_get`` fills by a plain copy (4–10× faster than converting each
    value to float64), and are widened after. ``count``: ``len(collection)`` if known (each
    ``len`` of a bpy collection costs about 8 µs on a 706-bone rig)."""
    count = len(collection) if count is None else count
    out = np.empty(count * width, dtype=np.float32 if dtype == np.float64 else dtype)
    collection.foreach_get(attr, out)
    out = out.astype(dtype, copy=False)
    return out.reshape(count, width) if width > 1 else out


def read_model(obj):
    """The armature's ChainModel, from ``Bone.matrix_local`` in pose-bone order, with every
    bone's inherit rotation, local location and inherit scale flags (``BoneFlags``)."""
    pose_bones = obj.pose.bones
    bones = obj.data.bones
    check_editable(obj)
    names = pose_bones.keys()
    pose_index = {name: i for i, name in enumerate(names)}
    bone_names = bones.keys()
    if bone_names == names:
        order = slice(None)
    else:
        bone_index = {name: i for i, name in enumerate(bone_names)}
        order = np.array([bone_index[name] for name in names])
    parents = np.array([pose_index[parent.name] if (parent := pb.parent) else -1
                        for pb in pose_bones])
    # foreach_get yields Blender's column-major storage: transpose to row-major matrices.
    rest = read_array(bones, "matrix_local", 16).reshape(-1, 4, 4).transpose(0, 2, 1)[order]
    lengths = read_array(bones, "length", 1)[order]
    connected = read_array(bones, "use_connect", 1, dtype=bool)[order]
    flags = BoneFlags(read_array(bones, "use_inherit_rotation", 1, dtype=bool)[order],
                      read_array(bones, "use_local_location", 1, dtype=bool)[order],
                      _inherit_scale_modes(bones)[order])
    return ChainModel.from_bones(names, parents, rest, lengths=lengths, connected=connected,
                                 flags=flags)


def _inherit_scale_modes(bones):
    """Every bone's ``Bone.inherit_scale`` as ``bone_parent_transform`` mode numbers, read with
    one ``foreach_get`` of the enum values (RNA's values are DNA's ``eBone_InheritScaleMode``)."""
    items = bpy.types.Bone.bl_rna.properties["inherit_scale"].enum_items
    modes = np.zeros(max(item.value for item in items) + 1, dtype=np.int64)
    for item in items:
        modes[item.value] = INHERIT_SCALE_MODES[item.identifier]
    return modes[read_array(bones, "inherit_scale", 1, dtype=np.int32)]


def world_unit(obj):
    """How long one armature unit is in world metres: the cube root of ``|det|`` of
    ``obj.matrix_world``'s 3×3 (its own scale and its parents'), which is exactly that scale
    when it is uniform (0.01 for a Mixamo FBX import) and otherwise the geometric mean of the
    axes' scales (for axes at right angles; the volume's scale in general). 0 (or NaN) for a degenerate (or not finite) transform, which the solve refuses
    (``validation.check_armature_transform``)."""
    return float(np.cbrt(abs(np.linalg.det(np.array(obj.matrix_world)[:3, :3]))))


def rig_fingerprint(obj):
    """What ``read_model`` reads from the bones, as bytes, read with
    ``foreach_get`` into Blender's own storage types (about 60 µs on 159 bones, against about
    0.5 ms for ``read_model``).

    It changes with the armature data, the number and names of the bones, their rest frames
    (``matrix_local``), their frames and heads relative to their parents (``Bone.matrix``,
    ``Bone.head``: a re-parented bone changes them unless the new parent's tail and orientation
    equal the old one's), lengths, connections, inherited rotation and scale and local location,
    and with
    the address of the first bone and pose bone (leaving Edit Mode re-allocates both)."""
    bones, pose_bones = obj.data.bones, obj.pose.bones
    count = len(bones)
    if count == 0 or len(pose_bones) != count:
        return (obj.data.as_pointer(), count, len(pose_bones))
    values = np.empty(count * 29, dtype=np.float32)
    flags = np.empty(count * 3, dtype=bool)
    for attr, offset, width in _FINGERPRINT_FLOATS:
        bones.foreach_get(attr, values[offset * count:(offset + width) * count])
    for k, attr in enumerate(("use_connect", "use_inherit_rotation", "use_local_location")):
        bones.foreach_get(attr, flags[k * count:(k + 1) * count])
    return (obj.data.as_pointer(), bones[0].as_pointer(), pose_bones[0].as_pointer(),
            tuple(pose_bones.keys()), values.tobytes(), flags.tobytes(),
            read_array(bones, "inherit_scale", 1, dtype=np.int32, count=count).tobytes())


_FINGERPRINT_FLOATS = (("matrix_local", 0, 16), ("matrix", 16, 9), ("head", 25, 3),
                       ("length", 28, 1))  # (Bone property, first column, width) of 29 per bone


def _rotation_modes(pose_bones, count):
    """Every pose bone's ``rotation_mode`` as its enum value, read with one ``foreach_get`` (a
    Python loop over the bones' ``rotation_mode`` costs ~0.6 µs a bone), and the identifier of
    each value (``QUATERNION``, ``XYZ`` …, ``AXIS_ANGLE``), read from RNA once."""
    if not _MODE_IDENTIFIERS:
        _MODE_IDENTIFIERS.update(
            (item.value, item.identifier)
            for item in bpy.types.PoseBone.bl_rna.properties["rotation_mode"].enum_items)
    return read_array(pose_bones, "rotation_mode", 1, dtype=np.int32, count=count), _MODE_IDENTIFIERS


_MODE_IDENTIFIERS = {}  # rotation_mode enum value → identifier
_NO_MODE = np.iinfo(np.int32).min  # no bone has it


def evaluated_matrices(pose_bones, count=None):
    """Every bone's ``PoseBone.matrix`` as Blender last evaluated it (constraints and drivers
    included), (n,4,4) row-major, armature space (``foreach_get`` yields column-major)."""
    return read_array(pose_bones, "matrix", 16, count=count).reshape(-1, 4, 4).transpose(0, 2, 1)


# every pose channel but the rotation mode: (channel, width)
POSE_CHANNELS = (("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4),
                 ("location", 3), ("scale", 3))


class PoseSnapshot:
    """Every pose channel of an armature and its rotation mode, exactly as Blender stores them
    (float32, the mode as its enum value): what live posing and a bake put back bit for bit,
    and what a live tick compares to see whether the pose moved."""

    def __init__(self, obj):
        bones = obj.pose.bones
        count = len(bones)
        self.channels = {attr: read_array(bones, attr, width, np.float32, count)
                         for attr, width in POSE_CHANNELS}
        self.channels["rotation_mode"] = read_array(bones, "rotation_mode", 1, np.int32, count)

    def key(self):
        """The snapshot as bytes (to compare by value)."""
        return tuple(values.tobytes() for values in self.channels.values())

    def restore(self, obj):
        """Write every channel back (the rotation mode first) and tag the armature."""
        bones = obj.pose.bones
        for attr in reversed(self.channels):
            bones.foreach_set(attr, self.channels[attr].ravel())
        obj.update_tag(refresh={'OBJECT'})

    def changed_bones(self, obj):
        """Names of the bones whose channels differ from the snapshot's."""
        now = PoseSnapshot(obj)
        differ = np.zeros(len(obj.pose.bones), dtype=bool)
        for attr, values in self.channels.items():
            change = now.channels[attr] != values
            differ |= change.any(axis=1) if change.ndim > 1 else change
        return [name for name, moved in zip(obj.pose.bones.keys(), differ.tolist()) if moved]


class PoseArrays:
    """A snapshot of every pose channel's rotation, location and scale, exactly as Blender
    stores them, and of the pose matrices Blender last evaluated (``evaluated``, (n,4,4)
    armature space: constraints and drivers included)."""

    def __init__(self, obj):
        pose_bones = obj.pose.bones
        n = len(pose_bones)
        self.quaternion = read_array(pose_bones, "rotation_quaternion", 4, count=n)
        self.euler = read_array(pose_bones, "rotation_euler", 3, count=n)
        self.axis_angle = read_array(pose_bones, "rotation_axis_angle", 4, count=n)
        self.location = read_array(pose_bones, "location", 3, count=n)
        self.scale = read_array(pose_bones, "scale", 3, count=n)
        self.evaluated = evaluated_matrices(pose_bones, n)
        modes, identifiers = _rotation_modes(pose_bones, n)
        # the quaternion bones, and the other rotation modes in use, each with its bones
        in_use = {identifiers[value]: value for value in set(modes.tolist())}
        self.quaternion_rows = modes == in_use.get('QUATERNION', _NO_MODE)
        self.other_modes = {mode: modes == in_use[mode]
                            for mode in sorted(set(in_use) - {'QUATERNION'})}
        self.changed = set()  # the channels set_rotations changed, the only ones write() writes
        if not np.isfinite(np.concatenate([self.quaternion.ravel(), self.euler.ravel(),
                                           self.axis_angle.ravel(), self.location.ravel(),
                                           self.scale.ravel()])).all():
            raise ArmatureError(f"'{obj.name}' has NaN or infinite pose values; "
                                "clear the pose of the affected bones (Alt+R, Alt+G)")

    def rotations(self, rows=None):
        """(n,4) unit quaternions relative to rest, converted from each bone's rotation mode;
        with ``rows`` (a mask) only those bones are converted, the others are left as stored
        quaternions (a solve reads only the bones it models)."""
        q = qnormalize(self.quaternion)
        for mode, rows_of_mode in self.other_modes.items():
            rows_of_mode = rows_of_mode if rows is None else rows_of_mode & rows
            if not rows_of_mode.any():
                continue
            if mode == 'AXIS_ANGLE':
                aa = self.axis_angle[rows_of_mode]
                q[rows_of_mode] = quat_from_axis_angle(aa[:, 1:], aa[:, 0])
            else:
                q[rows_of_mode] = euler_to_quat(self.euler[rows_of_mode], mode)
        return q

    def set_rotations(self, rotations, rows=None):
        """Store new rotations in each bone's own mode (only ``rows``, default all)."""
        rows_mask = np.ones(len(self.quaternion_rows), dtype=bool) if rows is None else rows
        q = np.asarray(rotations, dtype=np.float64)
        for mode, sel in self.other_modes.items():
            sel = rows_mask & sel
            if not sel.any():
                continue
            if mode == 'AXIS_ANGLE':
                self.changed.add("rotation_axis_angle")
                rotvec = quat_to_rotvec(qcanonical(q[sel]))
                angle = np.linalg.norm(rotvec, axis=1)
                axis = np.where(angle[:, None] > 1e-12,
                                rotvec / np.maximum(angle, 1e-300)[:, None], self.axis_angle[sel, 1:])
                self.axis_angle[sel] = np.column_stack([angle, axis])
            else:
                self.euler[sel] = quat_to_euler(q[sel], mode, compat=self.euler[sel])
                self.changed.add("rotation_euler")
        quat_rows = rows_mask & self.quaternion_rows
        if quat_rows.any():     # the sign of the current value kept, so keyed curves do not flip
            keep_sign = row_dots(q[quat_rows], self.quaternion[quat_rows])
            self.quaternion[quat_rows] = q[quat_rows] * np.where(keep_sign < 0, -1.0, 1.0)[:, None]
            self.changed.add("rotation_quaternion")

    def write(self, obj):
        """Write the rotation channels ``set_rotations`` changed with ``foreach_set`` (locations
        are only read) and tag the armature object for re-evaluation. The values go as float32,
        what Blender stores (the same rounding, without its per-value conversion).

        The pose channels belong to the object, not to its armature data, so the object alone is
        tagged (``refresh={'OBJECT'}``): the pose, the meshes it deforms and the objects
        parented to its bones are evaluated again as with a tag of everything, without copying
        the armature's bones for evaluation (a third less of Blender's update on the basic
        metarig; ``tests/blender/test_solve.py`` checks the evaluated result)."""
        channels = {"rotation_quaternion": self.quaternion, "rotation_euler": self.euler,
                    "rotation_axis_angle": self.axis_angle}
        for name in sorted(self.changed):
            obj.pose.bones.foreach_set(name, channels[name].astype(np.float32).ravel())
        obj.update_tag(refresh={'OBJECT'})


def bone_channel(path):
    """``('hand.L', 'rotation_euler')`` for ``pose.bones["hand.L"].rotation_euler`` (the part
    after the bone is '' for the bone itself, or starts with ``[`` for a custom property), or
    ``(None, None)`` for a path that is not a pose bone's. The name is read as Blender writes
    it into paths (``bpy.utils.escape_identifier``: ``\\`` and ``\"`` escaped)."""
    prefix = 'pose.bones["'
    if not path.startswith(prefix):
        return None, None
    name, found, rest = path[len(prefix):].partition('"]')
    if "\\" in name:        # escaped: read it character by character (rare, and slower)
        name, k = [], len(prefix)
        while k < len(path) and path[k] != '"':
            k += 1 if path[k] != "\\" else 2
            name.append(path[k - 1])
        found, rest = path[k:k + 2], path[k + 2:]
        name = "".join(name)
    if found != '"]':
        return None, None
    return name, rest[1:] if rest.startswith(".") else rest
