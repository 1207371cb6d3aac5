"""Baking DQ IK to keyframes: the frame loop behind ``dqik.bake``.

A ``FrameBake`` walks the frames in order. Each ``step()`` sets the scene to the next frame
(``scene.frame_set``: animated targets, deforming colliders and the evaluated parents of the
chains move with it, as in Blender's own bake, ``bpy_extras/anim_utils.py``
``bake_action_objects_iter``), solves it through the armature's solving session exactly as
``dqik.solve`` does (limits, priorities, collisions), each from that frame's animated pose
(``Session.tick(animated=True)``, ``solving/animated_start.py``), and records the rotations.
That is the pose Solve on Frame Change shows on that frame however it is reached
(``solving/frame_change.py``); while a bake runs the session's ``baking`` flag makes that
handler leave the armature alone, so no frame is solved twice.

``finish()`` puts every pose channel back as it was, turns the recorded rotations into keys in
each bone's rotation mode, continuous (``rig/rotation_modes.py``), optionally drops keys that the
targets do not need (``curve_cleanup.py``), writes them (``key_writer.py``) and returns to the
frame the bake started on. ``cancel()`` (Esc in the operator) puts everything back; an error in
a frame (a target deleted, the rig changed) cancels and raises ``ArmatureError``. Nothing is
written to an action before ``finish``.
"""

import math
import time
from dataclasses import dataclass

import bpy
import numpy as np

from ..errors import ArmatureError
from ..rig.arrays import read_array
from ..rig.objects import check_editable, is_selected
from ..rig.pose import POSE_CHANNELS, PoseArrays, PoseSnapshot
from ..rig.rotation_modes import channel_of, channel_values, to_quaternions
from ..solving.sessions import session_for
from .action_slots import played_slots, slot_fcurves
from .curve_cleanup import TaskTolerance, kept_keys
from .key_writer import curve_warnings, prepare_action, refuse_unkeyable, write_curves
from .keyed_frames import driving_objects, keyed_frames

BONE_SETS = ('TASK_CHAINS', 'SELECTED', 'ALL')
MAX_FRAME = 1048574     # MAXFRAME, source/blender/makesdna/DNA_scene_types.h (MINAFRAME is −MAXFRAME)
ACTIONS = ('NEW', 'ACTIVE')
FRAME_CHOICES = ('STEP', 'KEYED')


@dataclass(frozen=True)
class BakeOptions:
    """What ``dqik.bake`` bakes (its operator properties):

    - ``frame_start``, ``frame_end`` (inclusive, within ±``MAX_FRAME``), ``step`` (the end
      frame is baked too when the steps miss it);
    - ``bones``: ``'TASK_CHAINS'`` (the bones the enabled tasks move), ``'SELECTED'`` or
      ``'ALL'``; bones the solve does not move are keyed with their animated channels
      (rotation, location, scale) at each baked frame;
    - ``action``: ``'NEW'`` (a DQ IK action; the active one goes to the NLA) or ``'ACTIVE'``;
    - ``frames``: ``'STEP'`` (every ``step`` frames) or ``'KEYED'`` (the frames where the
      armature, a target, a collider or a parent of one has a key, and the range's ends);
    - ``cleanup_tolerance``: 0 keys every baked frame; above 0, keys of the solved bones are
      dropped where every task stays within it (world metres) on every frame, and
      no capsule sinks deeper into a collider than in the solve by more than it;
    - ``switch_off_tasks``: afterwards, every task it baked and Solve on Frame Change are off,
      so the keys play on their own (tasks it left out, a missing target, stay on)."""

    frame_start: int
    frame_end: int
    step: int = 1
    bones: str = 'TASK_CHAINS'
    action: str = 'NEW'
    frames: str = 'STEP'
    cleanup_tolerance: float = 0.0
    switch_off_tasks: bool = True


@dataclass(frozen=True)
class BakeReport:
    """What a finished bake did: frames solved, bones and keys written, where the keys and the
    animation that was there before went, the largest task error of any frame (metres;
    NaN without position tasks), seconds spent and the solve's warnings."""

    frames: int
    bones: tuple
    keys: int
    action: str
    old_animation: str
    worst_error: float
    seconds: float
    warnings: tuple

    def describe(self):
        rate = self.frames / self.seconds if self.seconds > 0 else float("inf")
        return (f"DQ IK: baked {self.frames} frames of {len(self.bones)} bones "
                f"({self.keys} keys) into '{self.action}' at {rate:.0f} frames/s; largest task "
                f"error {self.worst_error * 1e3:.3g} mm; {self.old_animation}")


def bake_frames(obj, options):
    """The frames a bake solves, in order (ints), or ``ArmatureError`` for an empty or reversed
    range or a step below 1."""
    start, end, step = options.frame_start, options.frame_end, options.step
    numbers = {"frame_start": start, "frame_end": end, "step": step}
    odd = [f"{name} {value!r}" for name, value in numbers.items()
           if isinstance(value, bool) or not isinstance(value, (int, np.integer))]
    if odd:
        raise ArmatureError(f"Bake frames are whole numbers, not {', '.join(odd)}")
    tolerance = options.cleanup_tolerance
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance >= 0):
        raise ArmatureError(f"The Clean Up tolerance must be a finite distance ≥ 0, not "
                            f"{tolerance!r}")
    if end < start:
        raise ArmatureError(f"The frame range {start}–{end} is empty or reversed; the end must "
                            "not come before the start")
    if step < 1:
        raise ArmatureError(f"The step must be at least 1 frame, not {step}")
    if start < -MAX_FRAME or end > MAX_FRAME:
        raise ArmatureError(f"The frame range {start}–{end} goes past the frames Blender "
                            f"plays (±{MAX_FRAME})")
    if options.frames == 'STEP':      # the end frame too, so the keys span the whole range
        return np.unique(np.append(np.arange(start, end + 1, step), end))
    keyed = keyed_frames(driving_objects(obj))
    inside = np.round(keyed[(keyed >= start) & (keyed <= end)]).astype(np.int64)
    return np.unique(np.concatenate([[start, end], inside]))


_RUNNING = []      # the FrameBakes between their first step and their end


def cancel_running():
    """Cancel every bake under way, putting back its frame and pose (the extension is
    disabled: nothing would finish it)."""
    for bake in list(_RUNNING):
        bake.cancel()


def _refuse_animated_modes(obj, rows):
    """``ArmatureError`` when a baked bone (``rows``) has its rotation mode keyed or driven:
    each bone's keys are written in the mode it has on the first frame."""
    bones = obj.pose.bones
    paths = {bones[row].path_from_id("rotation_mode"): bones[row].name for row in rows.tolist()}
    data = obj.animation_data
    animated = [] if data is None else [
        fcurve for action, slot in played_slots(data)
        for fcurve in slot_fcurves(action, slot)] + list(data.drivers)
    names = sorted({paths[fcurve.data_path] for fcurve in animated if fcurve.data_path in paths})
    if names:
        raise ArmatureError(f"the rotation mode of {', '.join(names[:3])} is keyed or driven; a "
                            "bake keys each bone in one rotation mode: remove those keys")


def _check_tasks(obj):
    if not any(pb.dqik.use_target and pb.dqik.target is not None for pb in obj.pose.bones):
        raise ArmatureError(f"'{obj.name}' has no bone with an enabled DQ IK target to bake")


class FrameBake:
    """One bake of ``obj`` in ``scene`` with ``BakeOptions``; checks everything it can before
    changing anything (``ArmatureError``)."""

    def __init__(self, obj, scene, options):
        try:
            obj.name
        except ReferenceError:
            raise ArmatureError("The armature to bake was deleted") from None
        check_editable(obj)
        if options.bones not in BONE_SETS or options.action not in ACTIONS \
                or options.frames not in FRAME_CHOICES:
            raise ArmatureError(f"Unknown bake options {options}")
        _check_tasks(obj)
        refuse_unkeyable(obj, options.action)
        self.obj, self.scene, self.options = obj, scene, options
        self.frames = bake_frames(obj, options)
        self.session = session_for(obj)
        self.saved = PoseSnapshot(obj)
        self.saved_start = self.session.animated.saved()   # put back with the pose
        self.saved_frame = (scene.frame_current, scene.frame_subframe)
        self.index = 0
        self.solver = None
        self.started = time.perf_counter()
        self.recorded, self.others = [], []
        self.states = []    # with Clean Up, what each frame's solve saw (its colliders included)
        self.worst_error, self.warnings = 0.0, set()
        self.reference, self.unsolved = None, None
        self.on_end = None      # called once when it ends (the operator's timer and progress)
        self.resolved = False   # keyed or driven DQ IK settings rebuilt the solver on the way
        self.cancelled = False  # ``cancel`` is final: nothing steps or writes afterwards

    @property
    def done(self):
        return self.cancelled or self.index >= len(self.frames)

    def _refuse_cancelled(self):
        if self.cancelled:
            raise ArmatureError(f"The bake of '{self.obj.name}' was cancelled; start a new one")

    def step(self):
        """Solve the next frame and record it; an error cancels the bake and raises
        ``ArmatureError``."""
        self._refuse_cancelled()
        frame = int(self.frames[self.index])
        try:
            self.session.baking = True     # before the first frame_set: the handler skips it
            if self not in _RUNNING:
                _RUNNING.append(self)
            self.scene.frame_set(frame)
            if self.index == 0:
                self.reference = {channel: read_array(self.obj.pose.bones, channel, width)
                                  for channel, width in POSE_CHANNELS}
            snapshot = self.session.tick(animated=True)
            self._record(frame, snapshot)
        except ArmatureError as err:
            self.cancel()
            raise ArmatureError(f"Bake stopped at frame {frame}, nothing was keyed: {err}") \
                from None
        except BaseException:
            self.cancel()
            raise
        self.index += 1

    def _record(self, frame, snapshot):
        unsolved = {task.name for task in snapshot.tasks if task.status in ('MISSING', 'SKIPPED')}
        if self.unsolved is None:
            self.unsolved = unsolved    # left out from the start: a warning, as in a solve
        elif unsolved != self.unsolved:
            gone = tuple(sorted(unsolved ^ self.unsolved))
            why = [warning.removesuffix("; skipped") for warning in snapshot.warnings
                   if warning.startswith(gone)]
            raise ArmatureError("; ".join(why) or f"the target of {', '.join(gone)} went "
                                "missing, came back or moves with the rig now")
        solver = self.session.solver
        if self.solver is None:
            self.solver = solver
            self._choose_bones()
        elif solver is not self.solver:     # rebuilt: the rig, or its settings, changed
            if not (np.array_equal(solver.bones, self.solver.bones)
                    and np.array_equal(solver.moved_mask, self.solver.moved_mask)):
                raise ArmatureError("the bones the tasks move changed (a rig edit, or keyed or "
                                    "driven DQ IK settings); bake the frames before and after "
                                    "the change separately")
            self.solver, self.resolved = solver, True
        self.recorded.append(self.session.last_rotations[solver.bones].copy())
        if self.options.cleanup_tolerance > 0.0:    # Clean Up measures each frame again
            self.states.append(solver.state())
        if self.other_rows.size:
            bones = self.obj.pose.bones
            self.others.append({channel: read_array(bones, channel, width)[self.other_rows]
                                for channel, width in POSE_CHANNELS})
        self.worst_error = max(self.worst_error, snapshot.largest_distance() or 0.0)
        self.warnings.update(snapshot.warnings)

    def _choose_bones(self):
        """The baked bones: those the solve moves (keyed from its rotations) and, for
        ``'SELECTED'`` and ``'ALL'``, others (keyed from their channels)."""
        bones = self.obj.pose.bones
        moved = self.solver.moved_mask
        if self.options.bones == 'TASK_CHAINS':
            chosen = moved.copy()
        elif self.options.bones == 'ALL':
            chosen = np.ones(len(moved), dtype=bool)
        else:
            chosen = np.array([is_selected(pb) for pb in bones], dtype=bool)
            if not chosen.any():
                raise ArmatureError("no bones are selected; select some in Pose Mode or bake "
                                    "the Task Chains")
        self.solved_rows = np.flatnonzero(chosen & moved)
        self.other_rows = np.flatnonzero(chosen & ~moved)
        _refuse_animated_modes(self.obj, np.flatnonzero(chosen))
        position = {bone: row for row, bone in enumerate(self.solver.bones.tolist())}
        self.solved_in_sub = np.array([position[row] for row in self.solved_rows.tolist()],
                                      dtype=np.int64)
        pose = PoseArrays(self.obj)
        self.modes = pose.modes

    def solved(self):
        """The names of the baked bones the solve moves and their solved rotations, (F, k, 4)
        quaternions over the frames solved so far."""
        names = [self.obj.pose.bones[row].name for row in self.solved_rows.tolist()]
        return names, np.stack(self.recorded)[:, self.solved_in_sub]

    def cancel(self):
        """Put back the frame and every pose channel as they were, and end for good: a later
        ``step`` or ``finish`` refuses to go on."""
        if self.cancelled:
            return
        self.cancelled = True
        try:
            self._return_to_start()
            self._put_back()
        finally:
            self._end()
        bpy.context.view_layer.update()

    def _put_back(self):
        """Every pose channel as it was, and with them the session's animated start."""
        self.saved.restore(self.obj)
        self.session.animated.restore(self.saved_start)

    def _end(self):
        self.session.baking = False
        self.session.invalidate()
        if self in _RUNNING:
            _RUNNING.remove(self)
        on_end, self.on_end = self.on_end, None
        if on_end is not None:
            on_end()

    def _return_to_start(self):
        frame, subframe = self.saved_frame
        self.scene.frame_set(frame, subframe=subframe)

    def finish(self):
        """Write the keys (see the module docstring) and return the ``BakeReport``."""
        self._refuse_cancelled()
        while not self.done:
            self.step()
        try:
            report = self._write()
        finally:
            self._end()
        return report

    def _write(self):
        obj, options = self.obj, self.options
        self._put_back()
        try:
            curves, names = self._curves()
            self.warnings.update(curve_warnings(obj, options.action,
                                                [(path, index) for path, index, *_ in curves]))
            channelbag, old_animation = prepare_action(obj, options.action)
            write_curves(channelbag, curves, (int(self.frames[0]), int(self.frames[-1])))
            action = obj.animation_data.action.name
            if options.switch_off_tasks:
                _switch_off_tasks(obj, self.unsolved)
        finally:
            self._return_to_start()
        return BakeReport(len(self.frames), tuple(names), sum(len(c[3]) for c in curves), action,
                          old_animation, self.worst_error, time.perf_counter() - self.started,
                          tuple(sorted(self.warnings)))

    def _curves(self):
        """Every curve to write, ``(data_path, index, group, frames, values)``, and the baked
        bones' names."""
        bones = self.obj.pose.bones
        frames = self.frames.astype(np.float64)
        solved = self.solved()[1]       # (F, k, 4)
        per_bone = {}   # row → [(channel, (F, c) values)]
        layout = []     # (mode, its columns in the cleaned values, channel width, sub-model rows)
        values = []
        for mode, rows_of_mode in self.modes.items():
            picked = np.flatnonzero(rows_of_mode[self.solved_rows])
            if not picked.size:
                continue
            rows = self.solved_rows[picked]
            channel = channel_of(mode)
            keys = channel_values(solved[:, picked], mode, self.reference[channel][rows])
            first = sum(v.shape[1] for v in values)
            layout.append((mode, slice(first, first + keys[0].size), keys.shape[2],
                           self.solved_in_sub[picked]))
            values.append(keys.reshape(len(frames), -1))
            for k, row in enumerate(rows.tolist()):
                per_bone.setdefault(row, []).append((channel, keys[:, k], None))
        kept = np.arange(len(frames))
        if self.options.cleanup_tolerance > 0.0 and self.resolved:
            self.warnings.add("Clean Up was not applied: the solve was set up again within the "
                              "range (keyed or driven DQ IK settings, or the armature's scale, "
                              "changed), and it measures every frame with one set of tasks")
        elif self.options.cleanup_tolerance > 0.0 and values and len(frames) > 2:
            tolerance = TaskTolerance(self.solver, self.recorded, self.states, layout,
                                      to_quaternions,
                                      self.options.cleanup_tolerance / self.session.unit,
                                      self.solver.settings.tolerance)
            kept = kept_keys(frames, np.concatenate(values, axis=1), tolerance)
        for row in per_bone:
            per_bone[row] = [(channel, keys, kept) for channel, keys, _ in per_bone[row]]
        for k, row in enumerate(self.other_rows.tolist()):
            mode = next(m for m, rows in self.modes.items() if rows[row])
            per_bone[row] = [(channel, np.stack([o[channel][k] for o in self.others]), None)
                             for channel in (channel_of(mode), "location", "scale")]
        curves = []
        for row, channels in per_bone.items():
            pose_bone = bones[row]
            for channel, keys, rows in channels:
                path = pose_bone.path_from_id(channel)
                picked = slice(None) if rows is None else rows
                for index in range(keys.shape[1]):
                    curves.append((path, index, pose_bone.name, frames[picked],
                                   keys[picked, index]))
        return curves, [bones[row].name for row in per_bone]


def _switch_off_tasks(obj, unsolved):
    """Every enabled task of ``obj`` the bake solved off (those it left out, ``unsolved``
    names, stay as they are), and Solve on Frame Change."""
    for pose_bone in obj.pose.bones:
        if pose_bone.dqik.use_target and pose_bone.name not in unsolved:
            pose_bone.dqik.use_target = False
    obj.dqik.use_solve_on_frame_change = False
