"""The frame's animated pose: where a solve on a frame change and in a bake starts, and the pose
it prefers in the null space of its tasks (Baerlocher's "distance to the reference posture",
thesis §4.7, criterion 1, ``h = ‖q − q_ref‖²`` at the lowest priority, with the animation as the
reference: ``Steps``' rest pull towards the pose a solve starts from).

The rotation channels (and the location channels of the bones a solve slides) that the
armature's animation sets (F-curves of the action and NLA strips
it plays, drivers: ``keys.animated_paths``) are taken as Blender evaluated them for the frame.
A channel of a moved bone that nothing animates keeps the value a solve wrote on the
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
    """The base of one armature's unanimated channels that solves move, bone by bone: the
    rotation channels of the bones they turn and the location channels of the bones they slide
    (``Solver.slid_bones``)."""

    def __init__(self):
        self.rotations = _ChannelBase()
        self.locations = _ChannelBase()
        self._animated = (None, None, None)   # (shape of the animation and modes, two (n,) masks)

    def start(self, obj, pose, rotations, moved, slid):
        """``(rotations, locations)``: ``rotations`` (n,4) of ``pose`` (``PoseArrays``) with the
        moved bones (``moved`` mask) whose rotation nothing animates set to their base, and the
        pose locations with the slid bones (``slid`` mask) whose location nothing animates set to
        theirs. A bone's base is taken again from its channel when the channel no longer holds
        what the last solve wrote there (the user set it, or the bone was not one of these
        then)."""
        turned, located = self.animated_bones(obj, pose)
        rotations = self.rotations.start(rotations, moved & ~turned, pose,
                                         [(rows, channel_of(mode))
                                          for mode, rows in pose.modes.items()])
        locations = self.locations.start(pose.location.copy(), slid & ~located, pose,
                                         [(slid, "location")])
        return rotations, locations

    def wrote(self, pose):
        """Note what the solve wrote (``pose`` after ``set_rotations``, ``set_locations``)."""
        self.rotations.wrote(pose, _ROTATION_CHANNELS)
        self.locations.wrote(pose, ("location",))

    def saved(self):
        """The state to put back (``restore``) when the pose is put back, as a bake does."""
        return self.rotations.saved(), self.locations.saved()

    def restore(self, state):
        self.rotations.restore(state[0])
        self.locations.restore(state[1])

    def animated_bones(self, obj, pose):
        """Two (n,) masks: the bones whose rotation channel, in their rotation mode, and whose
        location channel an F-curve or a driver sets (any of its components)."""
        shape, paths = animated_paths(obj)
        key = (shape, pose.mode_values.tobytes())
        if self._animated[0] != key:
            names = obj.pose.bones.keys()
            turned, located = np.zeros(len(names), dtype=bool), np.zeros(len(names), dtype=bool)
            for mode, rows in pose.modes.items():
                channel = channel_of(mode)
                for row in np.flatnonzero(rows).tolist():
                    path = f'pose.bones["{bpy.utils.escape_identifier(names[row])}"]'
                    turned[row] = f"{path}.{channel}" in paths
                    located[row] = f"{path}.location" in paths
            self._animated = (key, turned, located)
        return self._animated[1:]


class _ChannelBase:
    """The base of one kind of channel (rotation, location) of the bones whose channel solves
    write and nothing animates, and what the last animated solve wrote into those channels."""

    def __init__(self):
        self.values = None      # (n,c): the base of the unanimated channels
        self.written = None     # ((n,) rows still then, {channel: (n,c) float32 written})
        self._still = None      # (n,) the bones at their base at the last start

    def start(self, values, still, pose, channels):
        """``values`` (n,c) with the bones ``still`` set to their base; ``channels``: the
        ``(rows, channel)`` of ``pose`` that hold these values."""
        kept = np.zeros(len(still), dtype=bool)
        if self.written is not None and len(self.written[0]) == len(still):
            was_still, written = self.written
            for rows, channel in channels:
                same = (pose.channels[channel].astype(np.float32) == written[channel]).all(1)
                kept |= rows & was_still & same
        if self.values is None or len(self.values) != len(still):
            self.values = values.copy()
        renewed = still & ~kept
        self.values[renewed] = values[renewed]
        values[still & kept] = self.values[still & kept]
        self._still = still
        return values

    def wrote(self, pose, channels):
        self.written = (self._still, {channel: pose.channels[channel].astype(np.float32)
                                      for channel in channels})

    def saved(self):
        return self.values, self.written, self._still

    def restore(self, state):
        self.values, self.written, self._still = state


_ROTATION_CHANNELS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle")
