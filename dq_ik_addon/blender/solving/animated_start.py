"""The frame's animated pose: where a solve on a frame change and in a bake starts, and the pose
it prefers in the null space of its tasks (Baerlocher's "distance to the reference posture",
thesis §4.7, criterion 1, ``h = ‖q − q_ref‖²`` at the lowest priority, with the animation as the
reference: ``Steps``' rest pull towards the pose a solve starts from).

The components of the rotation channels (and of the location channels of the bones a solve
slides) that the armature's animation sets (F-curves of the action and NLA strips it plays,
drivers, each by its array index: ``keys.animated_paths``) are taken as Blender evaluated them
for the frame. A component of a moved bone's channel that nothing animates (the whole channel
of a bone without keys, or the Y and Z of an Euler rotation keyed on X alone) keeps the value a
solve wrote on the last frame, so it is taken at its *base* instead: the value it had before the
first solve of this kind, or the value the user (or a script) set since, seen as a component
that no longer holds what the last solve wrote (then every unanimated component of that bone's
channel is taken as it stands: a rotation's components do not stand apart). Every way of reaching a frame (playback,
stepping, scrubbing, a jump, a render of single frames, a bake) thus starts from one pose, and
the solve, which keeps no memory from one frame to the next (``Solver.reset``), ends in one pose
too."""

import bpy
import numpy as np

from ..keys.animated_paths import animated_components
from ..rig.rotation_modes import channel_of, to_quaternions

_ROTATION_CHANNELS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle")


class AnimatedStart:
    """The base of one armature's unanimated channel components that solves move, channel by
    channel: the rotation channels of the bones they turn and the location channels of the bones
    they slide (``Solver.slid_bones``)."""

    def __init__(self):
        self.channels = {channel: _ChannelBase() for channel in _ROTATION_CHANNELS + ("location",)}
        self._animated = (None, None)   # (shape of the animation and modes, {channel: (n,c)})
        self._held = None   # (frame, animated bones, animated pose) of the last animated start

    def start(self, obj, pose, rotations, moved, slid):
        """``(rotations, locations, animated)``: ``rotations`` (n,4) of ``pose`` (``PoseArrays``)
        with the moved bones (``moved`` mask) whose rotation channel is not animated on every
        component taken with those components at their base, the pose locations with the slid
        bones' (``slid`` mask) unanimated components at theirs, and the bones whose rotation
        channel (their mode's) the animation sets on every component (``Solver.solve``'s
        ``animated``; the start is their animated pose). A component's base is taken again from
        its channel when the channel no longer holds there what the last solve wrote (the user
        set it, or the bone was not one of these then). The animated bones and pose are kept
        with the frame for the other solves of that frame (``held``)."""
        animated = self.animated_masks(obj, pose)
        still = {channel: np.zeros(animated[channel].shape, dtype=bool)
                 for channel in _ROTATION_CHANNELS}
        bones = np.zeros(len(pose.mode_values), bool)
        for mode, rows in pose.modes.items():
            channel = channel_of(mode)
            still[channel] |= (moved & rows)[:, None] & ~animated[channel]
            bones |= rows & animated[channel].all(axis=1)
        values = {channel: self.channels[channel].start(pose.channels[channel], still[channel])
                  for channel in _ROTATION_CHANNELS}
        rotations = rotations.copy()
        for mode, rows in pose.modes.items():
            channel = channel_of(mode)
            based = rows & still[channel].any(axis=1)
            if based.any():
                rotations[based] = to_quaternions(mode, values[channel][based])
        locations = self.channels["location"].start(pose.location, slid[:, None]
                                                    & ~animated["location"])
        self._held = (bpy.context.scene.frame_float, bones, rotations)
        return rotations, locations, bones

    def held(self):
        """``(animated, reference)`` for a solve that starts from the pose on screen (live
        posing, Solve): the animated bones and pose of the frame shown as its frame change (or
        the bake's step) took them, so that Soft Reach eases as there (``TaskSet.anchor``),
        or ``(None, None)`` when no such solve has taken this frame."""
        if self._held is None or self._held[0] != bpy.context.scene.frame_float:
            return None, None
        return self._held[1:]

    def wrote(self, pose):
        """Note what the solve wrote (``pose`` after ``set_rotations``, ``set_locations``)."""
        for channel, base in self.channels.items():
            base.wrote(pose.channels[channel])

    def saved(self):
        """The state to put back (``restore``) when the pose is put back, as a bake does."""
        return {"held": self._held} | {channel: base.saved()
                                       for channel, base in self.channels.items()}

    def restore(self, state):
        self._held = state["held"]
        for channel, base in self.channels.items():
            base.restore(state[channel])

    def forget_held(self):
        """Forget the frame's animated pose (the rig was read again: its bones may differ)."""
        self._held = None

    def animated_masks(self, obj, pose):
        """``{channel: (n,c) mask}``: the components of each bone's rotation channel (its rotation
        mode's; the other rotation channels: none) and location channel that an F-curve or a
        driver sets."""
        shape, components = animated_components(obj)
        key = (shape, pose.mode_values.tobytes())
        if self._animated[0] != key:
            names = obj.pose.bones.keys()
            animated = {channel: np.zeros(pose.channels[channel].shape, dtype=bool)
                        for channel in self.channels}
            paths = {path for path, _ in components}
            for mode, rows in pose.modes.items():
                channel = channel_of(mode)
                for row in np.flatnonzero(rows).tolist():
                    bone = f'pose.bones["{bpy.utils.escape_identifier(names[row])}"]'
                    for target in (channel, "location"):
                        path = f"{bone}.{target}"
                        if path in paths:
                            animated[target][row] = [(path, index) in components for index in
                                                     range(animated[target].shape[1])]
            self._animated = (key, animated)
        return self._animated[1]


class _ChannelBase:
    """The base of one pose channel's components that solves write and nothing animates, and what
    the last animated solve wrote into that channel."""

    def __init__(self):
        self.values = None      # (n,c): the base of the unanimated components
        self.written = None     # ((n,c) components still then, (n,c) float32 written)
        self._still = None      # (n,c) the components at their base at the last start

    def start(self, values, still):
        """The channel's ``values`` (n,c) as read, with the components ``still`` ((n,c) mask)
        set to their base: a bone's are taken again, all of them, when one of them no longer
        holds what the last solve wrote there."""
        values = np.array(values, dtype=np.float64)
        if not still.any():
            self._still = None
            return values
        kept = np.zeros(values.shape, dtype=bool)
        if self.written is not None and self.written[0].shape == values.shape:
            was_still, written = self.written
            kept = was_still & (values.astype(np.float32) == written)
        if self.values is None or self.values.shape != values.shape:
            self.values = values.copy()
        # one unanimated component set anew (an Euler Z typed in, a quaternion's W) renews all
        # of the bone's: the rotation the user saw then, not a mix of it and the old base
        renewed = still & (still & ~kept).any(axis=1)[:, None]
        self.values[renewed] = values[renewed]
        values[still & kept] = self.values[still & kept]
        self._still = still
        return values

    def wrote(self, values):
        self.written = None if self._still is None else (self._still, values.astype(np.float32))

    def saved(self):
        return self.values, self.written, self._still

    def restore(self, state):
        self.values, self.written, self._still = state
