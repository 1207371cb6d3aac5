"""Every pose channel of an armature, read and written with ``foreach_get``/``foreach_set`` over
all bones at once.

Rotations travel as w-first quaternions relative to the rest pose, whatever each bone's
``rotation_mode`` is (``rotation_modes``); writing converts back to the bone's own mode
(quaternion with its sign kept, any Euler order kept continuous with the current value, or
axis-angle)."""

import numpy as np

from ...engine import qnormalize
from ..errors import ArmatureError
from .arrays import evaluated_matrices, read_array
from .rotation_modes import bones_by_mode, channel_of, from_quaternions, to_quaternions

# every pose channel but the rotation mode: (channel, width)
POSE_CHANNELS = (("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4),
                 ("location", 3), ("scale", 3))
TRANSFORM_CHANNELS = frozenset(channel for channel, _ in POSE_CHANNELS)   # their names


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

    @classmethod
    def of(cls, channels):
        """A snapshot of the ``channels`` Blender is known to hold, without reading them
        (``PoseArrays.stored``)."""
        snapshot = cls.__new__(cls)
        snapshot.channels = channels
        return snapshot

    def key(self):
        """The snapshot as bytes (to compare by value)."""
        return tuple(values.tobytes() for values in self.channels.values())

    def restore(self, obj):
        """Write every channel back (the rotation mode first) and tag the armature."""
        bones = obj.pose.bones
        for attr in reversed(self.channels):
            bones.foreach_set(attr, self.channels[attr].ravel())
        obj.update_tag(refresh={'OBJECT'})

    def changed_bones(self, obj, channels=None):
        """Names of the bones whose channels (``channels``: those only) differ from the
        snapshot's."""
        now = PoseSnapshot(obj)
        differ = np.zeros(len(obj.pose.bones), dtype=bool)
        for attr, values in self.channels.items():
            if channels is not None and attr not in channels:
                continue
            change = now.channels[attr] != values
            differ |= change.any(axis=1) if change.ndim > 1 else change
        return [name for name, moved in zip(obj.pose.bones.keys(), differ.tolist()) if moved]


class PoseArrays:
    """A snapshot of every pose channel's rotation, location and scale, exactly as Blender
    stores them, and of the pose matrices Blender last evaluated (``evaluated``, (n,4,4)
    armature space: constraints and drivers included)."""

    def __init__(self, obj, snapshot=None):
        """Read from ``obj``, its channels taken from ``snapshot`` (its ``PoseSnapshot`` now,
        when one was just read: a tick reads the channels once) or read here."""
        pose_bones = obj.pose.bones
        snapshot = PoseSnapshot(obj) if snapshot is None else snapshot
        self.channels = {attr: snapshot.channels[attr].astype(np.float64)
                         for attr, _ in POSE_CHANNELS}
        self.mode_values = snapshot.channels["rotation_mode"]
        self.quaternion = self.channels["rotation_quaternion"]
        self.location, self.scale = self.channels["location"], self.channels["scale"]
        self.evaluated = evaluated_matrices(pose_bones, len(self.quaternion))
        self.modes = bones_by_mode(self.mode_values)   # each rotation mode in use, its bones
        self.changed = set()  # the channels set_rotations changed, the only ones write() writes
        if not all(np.isfinite(values).all() for values in self.channels.values()):
            raise ArmatureError(f"'{obj.name}' has NaN or infinite pose values; "
                                "clear the pose of the affected bones (Alt+R, Alt+G)")

    def key(self):
        """``PoseSnapshot.key`` of the pose as ``write`` leaves it (the values as float32, as
        Blender stores them)."""
        return self.stored().key()

    def stored(self, obj=None, fresh=()):
        """The ``PoseSnapshot`` of the pose as ``write`` leaves it, without reading it back: every
        channel as float32 (what Blender stores, rounded as ``foreach_set`` rounds) and the
        rotation modes read; but the channels named in ``fresh``, read from ``obj`` (those that
        drivers set: Blender evaluates them again after the write)."""
        bones = None if obj is None else obj.pose.bones
        channels = {attr: read_array(bones, attr, width, np.float32, len(self.quaternion))
                    if attr in fresh else self.channels[attr].astype(np.float32)
                    for attr, width in POSE_CHANNELS}
        channels["rotation_mode"] = self.mode_values
        return PoseSnapshot.of(channels)

    def rotations(self, rows=None):
        """(n,4) unit quaternions relative to rest, converted from each bone's rotation mode;
        with ``rows`` (a mask) only those bones are converted, the others are left as stored
        quaternions (a solve reads only the bones it models)."""
        q = qnormalize(self.quaternion)
        for mode, rows_of_mode in self.modes.items():
            rows_of_mode = rows_of_mode if rows is None else rows_of_mode & rows
            if mode != 'QUATERNION' and rows_of_mode.any():
                q[rows_of_mode] = to_quaternions(mode, self.channels[channel_of(mode)][rows_of_mode])
        return q

    def set_rotations(self, rotations, rows=None):
        """Store new rotations in each bone's own mode (only ``rows``, default all), continuous
        with the values stored (``rotation_modes.from_quaternions``: a quaternion keeps its
        sign, so keyed curves do not flip)."""
        q = np.asarray(rotations, dtype=np.float64)
        for mode, rows_of_mode in self.modes.items():
            selected = rows_of_mode if rows is None else rows_of_mode & rows
            if selected.any():
                channel = self.channels[channel_of(mode)]
                channel[selected] = from_quaternions(mode, q[selected], channel[selected])
                self.changed.add(channel_of(mode))

    def set_locations(self, locations, rows):
        """Store new pose locations (n,3) of the bones ``rows`` (a mask): the bones a solve
        slides."""
        self.location[rows] = np.asarray(locations, dtype=np.float64)[rows]
        self.changed.add("location")

    def write(self, obj):
        """Write the channels ``set_rotations`` and ``set_locations`` changed with
        ``foreach_set`` and tag the armature object for re-evaluation. The values go as float32,
        what Blender stores (the same rounding, without its per-value conversion).

        The pose channels belong to the object, not to its armature data, so the object alone is
        tagged (``refresh={'OBJECT'}``): the pose, the meshes it deforms and the objects
        parented to its bones are evaluated again as with a tag of everything, without copying
        the armature's bones for evaluation (a third less of Blender's update on the basic
        metarig; ``tests/blender/test_solve.py`` checks the evaluated result)."""
        for name in sorted(self.changed):
            obj.pose.bones.foreach_set(name, self.channels[name].astype(np.float32).ravel())
        obj.update_tag(refresh={'OBJECT'})
