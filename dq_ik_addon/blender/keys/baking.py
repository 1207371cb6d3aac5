"""Baking DQ IK to keyframes: the frame loop behind ``dqik.bake``.

A ``FrameBake`` walks the frames in order. Each ``step()`` sets the scene to the next frame
(``scene.frame_set``: animated targets, deforming colliders and the evaluated parents of the
chains move with it, as in Blender's own bake, ``bpy_extras/anim_utils.py``
``bake_action_objects_iter``), solves it through the armature's solving session exactly as
``dqik.solve`` does (limits, priorities, collisions), each from that frame's animated pose
(``Session.tick(animated=True)``, ``solving/animated_start.py``), and records the rotations
(and the locations of the bones it slides, ``PoseBone.dqik.use_translation``).
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

import time

import bpy
import numpy as np

from ..errors import ArmatureError, check_armature_object
from ..rig.arrays import read_array
from ..rig.objects import check_editable, is_selected
from ..rig.pose import POSE_CHANNELS, PoseArrays, PoseSnapshot
from ..rig.rotation_modes import channel_of, channel_values, to_quaternions
from ..settings.balance import NAME as BALANCE
from ..solving.sessions import session_for
from .action_slots import played_slots, slot_fcurves
from .bake_options import BakeReport, bake_frames, check_options
from .curve_cleanup import TaskTolerance, kept_keys
from .key_writer import curve_warnings, prepare_action, refuse_unkeyable, write_curves

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
        check_armature_object(obj, "A bake")
        if not isinstance(scene, bpy.types.Scene):
            raise ArmatureError(f"A bake needs the scene whose frames it sets, not {scene!r}")
        check_options(options)
        check_editable(obj)
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
        self.recorded, self.others, self.slid = [], [], []
        self.states = []    # with Clean Up, what each frame's solve saw (its colliders included)
        self.worst_error, self.warnings, self.cut_short = 0.0, set(), 0
        self.balanced = False   # a frame solved the balance task (``switch_off_tasks``)
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
                    and np.array_equal(solver.moved_mask, self.solver.moved_mask)
                    and np.array_equal(solver.slid_mask, self.solver.slid_mask)):
                raise ArmatureError("the bones the tasks move changed (a rig edit, or keyed or "
                                    "driven DQ IK settings); bake the frames before and after "
                                    "the change separately")
            self.solver, self.resolved = solver, True
        self.recorded.append(self.session.last_rotations[solver.bones].copy())
        if solver.slid_bones.size:
            self.slid.append(self.session.last_locations[solver.slid_bones].copy())
        if self.options.cleanup_tolerance > 0.0:    # Clean Up measures each frame again
            self.states.append(solver.state())
        if self.other_rows.size:
            bones = self.obj.pose.bones
            self.others.append({channel: read_array(bones, channel, width)[self.other_rows]
                                for channel, width in POSE_CHANNELS})
        self.worst_error = max(self.worst_error, snapshot.largest_distance() or 0.0)
        self.balanced |= any(task.name == BALANCE for task in snapshot.tasks)
        self.cut_short += snapshot.cut_short
        self.warnings.update(snapshot.warnings)

    def _choose_bones(self):
        """The baked bones: those the solve moves (keyed from its rotations) and, for
        ``'SELECTED'`` and ``'ALL'``, others (keyed from their channels)."""
        bones = self.obj.pose.bones
        moved, slid = self.solver.moved_mask, self.solver.slid_mask
        if self.options.bones == 'TASK_CHAINS':
            chosen = moved | slid
        elif self.options.bones == 'ALL':
            chosen = np.ones(len(moved), dtype=bool)
        else:
            chosen = np.array([is_selected(pb) for pb in bones], dtype=bool)
            if not chosen.any():
                raise ArmatureError("no bones are selected; select some in Pose Mode or bake "
                                    "the Task Chains")
        self.solved_rows = np.flatnonzero(chosen & moved)
        self.slid_rows = np.flatnonzero(chosen & slid)     # their locations keyed as solved
        self.slid_in_record = np.searchsorted(self.solver.slid_bones, self.slid_rows)
        self.other_rows = np.flatnonzero(chosen & ~moved)   # (a slid one: its location as solved)
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
            channelbag, old_animation = prepare_action(obj, options.action,
                                                       [path for path, *_ in curves])
            write_curves(channelbag, curves, (int(self.frames[0]), int(self.frames[-1])))
            action = obj.animation_data.action.name
            if options.switch_off_tasks:
                _switch_off_tasks(obj, self.unsolved, self.balanced)
        finally:
            self._return_to_start()
        return BakeReport(len(self.frames), tuple(names), sum(len(c[3]) for c in curves), action,
                          old_animation, self.worst_error, time.perf_counter() - self.started,
                          tuple(sorted(self.warnings)), self.cut_short)

    def _curves(self):
        """Every curve to write, ``(data_path, index, group, frames, values)``, and the baked
        bones' names."""
        bones = self.obj.pose.bones
        frames = self.frames.astype(np.float64)
        solved = self.solved()[1]       # (F, k, 4)
        per_bone = {}   # row → [(channel, (F, c) values)]
        layout = []     # (mode, its columns in the cleaned values, channel width, recorded rows)
        values = []

        def solved_keys(mode, channel, keys, recorded_rows, rows):
            """The keys (F, k, c) of ``channel`` of the bones ``rows`` as solved."""
            first = sum(v.shape[1] for v in values)
            layout.append((mode, slice(first, first + keys[0].size), keys.shape[2],
                           recorded_rows))
            values.append(keys.reshape(len(frames), -1))
            for k, row in enumerate(rows.tolist()):
                per_bone.setdefault(row, []).append((channel, keys[:, k], None))

        for mode, rows_of_mode in self.modes.items():
            picked = np.flatnonzero(rows_of_mode[self.solved_rows])
            if picked.size:
                rows, channel = self.solved_rows[picked], channel_of(mode)
                solved_keys(mode, channel, channel_values(solved[:, picked], mode,
                                                          self.reference[channel][rows]),
                            self.solved_in_sub[picked], rows)
        if self.slid_rows.size:      # the slid bones' locations, as solved
            solved_keys('LOCATION', "location", np.stack(self.slid)[:, self.slid_in_record],
                        self.slid_in_record, self.slid_rows)
        kept = np.arange(len(frames))
        if self.options.cleanup_tolerance > 0.0 and self.resolved:
            self.warnings.add("Clean Up was not applied: the solve was set up again within the "
                              "range (keyed or driven DQ IK settings, or the armature's scale, "
                              "changed), and it measures every frame with one set of tasks")
        elif self.options.cleanup_tolerance > 0.0 and values and len(frames) > 2:
            tolerance = TaskTolerance(self.solver, self.recorded, self.slid, self.states, layout,
                                      to_quaternions,
                                      self.options.cleanup_tolerance / self.session.unit,
                                      self.solver.settings.tolerance)
            kept = kept_keys(frames, np.concatenate(values, axis=1), tolerance)
        for row in per_bone:
            per_bone[row] = [(channel, keys, kept) for channel, keys, _ in per_bone[row]]
        slid = set(self.slid_rows.tolist())
        for k, row in enumerate(self.other_rows.tolist()):
            mode = next(m for m, rows in self.modes.items() if rows[row])
            channels = (channel_of(mode), "scale") + (() if row in slid else ("location",))
            per_bone.setdefault(row, []).extend(
                (channel, np.stack([o[channel][k] for o in self.others]), None)
                for channel in channels)
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


def _switch_off_tasks(obj, unsolved, balanced):
    """Every enabled task of ``obj`` the bake solved off (those it left out, ``unsolved``
    names, stay as they are), the balance too when it was ``balanced``, and Solve on Frame
    Change."""
    for pose_bone in obj.pose.bones:
        if pose_bone.dqik.use_target and pose_bone.name not in unsolved:
            pose_bone.dqik.use_target = False
    if balanced:
        obj.dqik.use_balance = False
    obj.dqik.use_solve_on_frame_change = False
