"""The frame's animated pose: where a solve on a frame change and in a bake starts, and the pose
it prefers in the null space of its tasks (Baerlocher's "distance to the reference posture",
thesis §4.7, criterion 1, ``h = ‖q − q_ref‖²`` at the lowest priority, with the animation as the
reference: ``Steps``' rest pull towards the pose a solve starts from).

The rotation channels that the armature's animation sets (F-curves of the action and NLA strips
it plays, drivers: ``keys.animated_paths``) are taken as Blender evaluated them for the frame.
A rotation channel of a moved bone that nothing animates keeps the value a solve wrote on the
last frame, so it is taken at its *base* instead: the value it had before the first solve of
this kind, or the value the user (or a script) set since, seen as a channel that no longer holds
what the last solve wrote. Every way of reaching a frame (playback, stepping, scrubbing, a jump,
a render of single frames, a bake) thus starts from one pose, and the solve, which keeps no
memory from one frame to the next (``Solver.reset``), ends in one pose too."""

import numpy as np

from ..keys.animated_paths import animated_paths
from ..rig.rotation_modes import channel_of

_ROTATION_CHANNELS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle")


class AnimatedStart:
    """The base of one armature's unanimated rotation channels, and what the last animated
    solve wrote into them."""

    def __init__(self):
        self.base = None        # (n,4) quaternions: the base of the unanimated channels
        self.written = None     # (rows, bytes) the unanimated channels held after the last solve
        self._animated = (None, None)   # (shape of the animation and modes, (n,) mask)
        self._still = None      # (n,) the moved bones nothing animates, at the last start

    def start(self, obj, pose, rotations, moved):
        """``rotations`` (n,4) of ``pose`` (``PoseArrays``) with the moved bones (``moved``
        mask) whose rotation nothing animates set to their base; kept as the base where the
        user changed them."""
        still = moved & ~self.animated_bones(obj, pose)
        if self.written is not None and np.array_equal(self.written[0], still) \
                and self.written[1] == _rotation_bytes(pose, still):
            rotations[still] = self.base[still]
        else:
            self.base = rotations.copy()
        self._still = still
        return rotations

    def wrote(self, pose):
        """Note what the solve wrote into the unanimated channels (``pose`` after
        ``set_rotations``)."""
        self.written = (self._still, _rotation_bytes(pose, self._still))

    def animated_bones(self, obj, pose):
        """(n,) mask: the bones whose rotation channel, in their rotation mode, an F-curve or a
        driver sets (any of its components)."""
        shape, paths = animated_paths(obj)
        key = (shape, pose.mode_values.tobytes())
        if self._animated[0] != key:
            names = obj.pose.bones.keys()
            mask = np.zeros(len(names), dtype=bool)
            for mode, rows in pose.modes.items():
                channel = channel_of(mode)
                for row in np.flatnonzero(rows).tolist():
                    path = f'pose.bones["{_escaped(names[row])}"].{channel}'
                    mask[row] = path in paths
            self._animated = (key, mask)
        return self._animated[1]


def _escaped(name):
    """A bone name as Blender writes it into data paths (``bpy.utils.escape_identifier``)."""
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _rotation_bytes(pose, rows):
    """The rotation channels of the bones ``rows`` as Blender stores them (float32), as bytes."""
    return b"".join(pose.channels[channel][rows].astype(np.float32).tobytes()
                    for channel in _ROTATION_CHANNELS)

