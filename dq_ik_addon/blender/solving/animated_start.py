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

import bpy
import numpy as np

from ..keys.animated_paths import animated_paths
from ..rig.rotation_modes import channel_of


class AnimatedStart:
    """The base of one armature's unanimated rotation channels, and what the last animated
    solve wrote into them, bone by bone."""

    def __init__(self):
        self.base = None        # (n,4) quaternions: the base of the unanimated channels
        self.written = None     # ((n,) rows still then, {channel: (n,c) float32 written})
        self._animated = (None, None)   # (shape of the animation and modes, (n,) mask)
        self._still = None      # (n,) the moved bones nothing animates, at the last start

    def start(self, obj, pose, rotations, moved):
        """``rotations`` (n,4) of ``pose`` (``PoseArrays``) with the moved bones (``moved``
        mask) whose rotation nothing animates set to their base. A bone's base is taken again
        from its channel when the channel no longer holds what the last solve wrote there (the
        user set it, or the bone was not one of these then)."""
        still = moved & ~self.animated_bones(obj, pose)
        kept = np.zeros(len(still), dtype=bool)
        if self.written is not None and len(self.written[0]) == len(still):
            was_still, channels = self.written
            for mode, rows in pose.modes.items():
                channel = channel_of(mode)
                same = (pose.channels[channel].astype(np.float32) == channels[channel]).all(1)
                kept |= rows & was_still & same
        if self.base is None or len(self.base) != len(still):
            self.base = rotations.copy()
        renewed = still & ~kept
        self.base[renewed] = rotations[renewed]
        rotations[still & kept] = self.base[still & kept]
        self._still = still
        return rotations

    def wrote(self, pose):
        """Note what the solve wrote (``pose`` after ``set_rotations``)."""
        self.written = (self._still, {channel: pose.channels[channel].astype(np.float32)
                                      for channel in _ROTATION_CHANNELS})

    def saved(self):
        """The state to put back (``restore``) when the pose is put back, as a bake does."""
        return self.base, self.written

    def restore(self, state):
        self.base, self.written = state

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
                    path = f'pose.bones["{bpy.utils.escape_identifier(names[row])}"].{channel}'
                    mask[row] = path in paths
            self._animated = (key, mask)
        return self._animated[1]


_ROTATION_CHANNELS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle")
