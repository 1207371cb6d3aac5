"""The armature's rest skeleton as the engine's ``ChainModel``, its world unit, and the
fingerprint of what was read (to see a rig edit without reading the rig again)."""

import bpy
import numpy as np

from ...engine import INHERIT_SCALE_MODES, BoneFlags, ChainModel
from .arrays import read_array
from .objects import check_editable


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
    return abs(world_determinant(obj)) ** (1.0 / 3.0)


def world_determinant(obj):
    """``det`` of ``obj.matrix_world``'s 3×3 by cofactors, in Python floats (float64): a few µs,
    where numpy's LAPACK ``det`` costs about 35 µs right after Blender's evaluation."""
    (a, b, c), (d, e, f), (g, h, i) = (row[:3] for row in obj.matrix_world[:3])
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


def rig_fingerprint(obj):
    """What ``read_model`` reads from the bones, as bytes, read with
    ``foreach_get`` into Blender's own storage types (about 60 µs on 159 bones, against about
    0.5 ms for ``read_model``).

    It changes with the armature data, the number and names of the bones, their rest frames
    (``matrix_local``), their frames and heads relative to their parents (``Bone.matrix``,
    ``Bone.head``: a re-parented bone changes them unless the new parent's tail and orientation
    equal the old one's), lengths, connections, inherited rotation and scale and local location,
    the pose bones' locked rotation and location axes, and with
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
    locks = np.empty(count * 6, dtype=bool)
    pose_bones.foreach_get("lock_rotation", locks[:3 * count])
    pose_bones.foreach_get("lock_location", locks[3 * count:])
    return (obj.data.as_pointer(), bones[0].as_pointer(), pose_bones[0].as_pointer(),
            tuple(pose_bones.keys()), values.tobytes(), flags.tobytes(), locks.tobytes(),
            read_array(bones, "inherit_scale", 1, dtype=np.int32, count=count).tobytes())


_FINGERPRINT_FLOATS = (("matrix_local", 0, 16), ("matrix", 16, 9), ("head", 25, 3),
                       ("length", 28, 1))  # (Bone property, first column, width) of 29 per bone


def rig_key(obj):
    """Which rig ``obj`` is, cheaply: its armature data, its bones' names (a bone renamed in
    Pose or Object Mode keeps its address) and the addresses of its first bone and pose bone
    (leaving Edit Mode re-allocates both, ``rig_fingerprint``); what else the overlay
    reads of the model (lengths, rest frames) changes only in Edit Mode. Read when the lines
    are made again (a renamed bone's lines are right until then): about 12 µs for 159 bones,
    nearly all ``pose.bones.keys()`` (``len`` of a bone collection counts it: avoided)."""
    bones, pose_bones = obj.data.bones, obj.pose.bones
    try:
        first = (bones[0].as_pointer(), pose_bones[0].as_pointer())
    except IndexError:      # no bones
        first = ()
    return (obj.data.as_pointer(), tuple(pose_bones.keys())) + first
