"""One solving session per armature: the seam that ``dqik.solve`` and scripts share (and that live
posing, solving on frame change, baking and the overlay are to share).

A session owns what is read once from the rig: the ``ChainModel``, each task's settings, the warm
engine ``Solver`` (with the limits and stiffness of the bones it moves) and the obstacle query
with its collider cache (``ObstacleQuery``).
The solve works in the armature's space, whose unit is ``unit`` world metres (``world_unit``:
0.01 for a Mixamo FBX import): the Tolerance and Margin, set in metres, are divided by it when
the solver is built, and every distance reported (task errors, contact clearances) is
multiplied by it, so users see and set world metres; angular errors stay in radians.

``tick()`` reads only what moves between two solves, once (``TickInputs``: the solver settings,
the colliders, the pose channels; then the target matrices, and the colliders' placement and
shape, making the obstacle query again only when they changed), solves warm from the current
pose (on a frame change or in a bake, cold from the frame's animated pose, ``animated_start``),
writes the pose and keeps a ``SolveSnapshot`` of the result in ``last_result``.

A session reads its rig and settings again only when they changed (``set_up_watch.py``: update
callbacks, the bones compared by value, what a depsgraph update reports).

Sessions are dropped on file load, undo and redo (``handlers.py``), when the extension is
disabled, and when their armature is deleted.
"""

import time
from contextlib import contextmanager
from dataclasses import replace

import bpy
import numpy as np

from ..colliders.scene_query import ObstacleQuery
from ..errors import ArmatureError, no_task
from ..rig.arrays import evaluated_matrices
from ..rig.constraint_followers import switch_bones
from ..rig.objects import check_editable
from ..rig.reader import read_rig
from ..rig.rig_checks import driven_pose_channels, riding_to_tasks, shown_as_solved
from ..settings.balance import BalanceSetup
from ..settings.target_dependencies import armatures_followed
from ..settings.task_kinds import is_angular, report_of
from ..settings.validation import check_armature_settings
from .animated_start import AnimatedStart
from .set_up_watch import SetUpWatch
from .snapshot import SceneContacts, SolveSnapshot, TaskReport, closer, farther
from .solver_build import build_solver
from .tick_clock import TickClock
from .tick_inputs import TickInputs, matrix_bytes
from .tick_tasks import checked_drag, tick_tasks


class Session:
    """The solving session of one armature object; get it with ``session_for``. ``unit``: the
    armature's ``world_unit`` when its solver was built."""

    def __init__(self, obj):
        self.obj = obj
        self.last_result = None
        self.last_rotations = None   # (n,4) of the last result, every bone
        self.last_locations = None   # (n,3) of the last result when it slid a bone, else None
        self.dragged = None          # (bone name, world point) while a bone is dragged
        self.baking = False          # dqik.bake solves the frames itself: frame changes and live skip it
        self.unmeasured = False      # the last live tick's errors wait for Blender's evaluation
        self.animated = AnimatedStart()   # the frame's animated pose (frame change, bake)
        self._seen = None            # ``_moves()`` after the last live tick
        self._stuck = 0              # live ticks in a row cut short without progress
        self._solved = None          # the last snapshot as solved, before ``measure_shown``
        self.model = None
        self.solver = None
        self.watch = SetUpWatch()    # when the rig and its settings must be read again
        self._sources, self._warnings, self._solved_names, self._kinds = [], [], [], []
        self._built_warnings = []    # what the solver's build found about the rig
        self._reports_of = []        # each task's (``TaskReport.errors`` key, angular)
        self._mutual = set()         # bones whose targets follow another rig that follows this
        self._tolerances = (0.0, 0.0)    # metres, and radians for angular errors
        self.unit = 1.0
        self._start = None           # the evaluated matrices of the pose the last solve started from
        self._read_for_drag = None   # the dragged bone when the rig was last read, if any
        self.obstacles = ObstacleQuery()
        self.balance = BalanceSetup()  # the body Balance weighs (``settings.balance``)
        self._written = None         # the ``PoseArrays`` the last tick wrote (live ticks key it)
        self._driven = frozenset()   # the pose channels drivers set (``driven_pose_channels``)
        self._shown_set_up = None    # (solver, task bones, rig_checks.shown_as_solved)
        self.clock = TickClock()     # the time budget as the whole tick's

    def invalidate(self):
        """Read the rig and every setting again on the next tick."""
        self.watch.invalidate()

    def armature_updated(self):
        """A depsgraph update reported the armature (object or data): the next tick compares
        the rig and its settings again (``set_up_watch``)."""
        self.watch.armature_updated()

    def tick(self, time_budget_ms=None, animated=False, view_layer=None):
        """Solve the armature to its targets, write the pose and return the ``SolveSnapshot``
        (also kept in ``last_result``). The solve starts from the current pose, or, with
        ``animated`` (a frame change, a bake), from the frame's animated pose
        (``animated_start``), which it prefers too, with no memory of other frames; within
        ``time_budget_ms`` (None: to the end) it may stop early, ``cut_short``, and the next
        tick goes on from there; the budget is the whole tick's (``tick_clock``). A rig the
        solver cannot work on raises ``ArmatureError`` with a message for the user, after
        storing a snapshot whose status is ``'ERROR'``. The targets are looked up in
        ``view_layer`` (the one a frame change evaluates; None: the context's)."""
        return self._tick(time_budget_ms, animated, view_layer=view_layer)

    def _tick(self, time_budget_ms, animated, inputs=None, trusted=False, view_layer=None,
              begun=None):
        """``tick``, on the ``TickInputs`` ``inputs`` when a live tick has read them (``begun``:
        when it started, ``time.perf_counter``); ``trusted``: the rig's set-up may be taken as
        last checked if no update reported the armature since (module docstring)."""
        begun = time.perf_counter() if begun is None else begun
        try:
            with _in_a_tick():
                result, names, unsolved, warnings = self._solve(time_budget_ms, animated, inputs,
                                                                trusted, view_layer, begun)
        except ArmatureError as err:
            self.last_result = SolveSnapshot(error=str(err),
                                             ms=(time.perf_counter() - begun) * 1e3)
            raise
        reports = self._reports(names, result.errors.tolist())
        reports += [TaskReport(name, status) for name, status in unsolved]
        contacts = None if result.contacts is None else \
            SceneContacts.from_engine(result.contacts, self.model, self.obj.matrix_world,
                                      self.unit)
        self.last_rotations = result.rotations
        self.last_result = self._solved = SolveSnapshot(
            tuple(reports), result.iterations, result.converged,
            (time.perf_counter() - begun) * 1e3, tuple(warnings), contacts=contacts,
            cut_short=result.cut_short,
            balance_of=self.balance.of_result(self.obj, self.model, self.solver, result))
        self.clock.finished()
        return self.last_result

    def measure_shown(self):
        """The last snapshot with every solved task's errors measured again on the pose Blender
        evaluated after it (constraints and drivers included, ``PoseBone.matrix``): what the
        user sees. Call after the depsgraph has evaluated the written pose
        (``view_layer.update()``); kept in ``last_result``."""
        snapshot = self.last_result
        if snapshot is None or snapshot.error or self.solver is None:
            return snapshot
        evaluated = evaluated_matrices(self.obj.pose.bones)
        errors = self.solver.measure(matrices=evaluated[self.solver.bones]).errors
        shown = self._reports(self._solved_names, errors.tolist())
        met = all(task.status == 'MET' for task in shown)
        solved = {task.name: task for task in snapshot.tasks}
        moved = [task.name for task in shown if task.name in solved
                 and farther(task, solved[task.name], self._tolerances[0])]
        warnings = snapshot.warnings + (() if not moved else (
            f"Blender moves {', '.join(moved)} after the solve (a constraint or driver on a "
            "bone of the chain or above it follows the solved bones): the errors given are "
            "those of the pose shown",))
        unsolved = tuple(task for task in snapshot.tasks if task.status in ('MISSING', 'SKIPPED'))
        self.last_result = replace(snapshot, converged=snapshot.converged and met,
                                   tasks=tuple(shown) + unsolved, warnings=warnings)
        return self.last_result

    def measure_unmeasured(self):
        """When the last live tick's errors wait for Blender's evaluation (``unmeasured``), the
        pose evaluated (no live tick follows that update: ``ticking``) and the snapshot measured
        on it (``measure_shown``); else None."""
        if not self.unmeasured:
            return None
        self.unmeasured = False
        with _in_a_tick():
            bpy.context.evaluated_depsgraph_get()
        return self.measure_shown()

    def shown_result(self, evaluate):
        """The last snapshot with the errors of the pose Blender shows after it. When nothing
        Blender evaluates after the solve moves the bones with tasks (``shown_as_solved``),
        that is the snapshot itself: the solve's FK is Blender's (``bone_parent_transform``, to
        1e-5), and measuring again would cost an evaluation of the whole rig (about 2–5 ms on a
        706-bone Rigify rig; Blender makes it anyway before it draws). Otherwise ``evaluate()``
        (``view_layer.update``) and ``measure_shown``."""
        if self.shown_as_solved():
            return self.last_result
        evaluate()
        return self.measure_shown()

    def shown_as_solved(self):
        """True when the solve's FK of the pose it started from was what Blender had evaluated
        for it (so no constraint or driver acted then on the bones the solve evaluates from
        their channels; the start pose must have been evaluated, e.g. by
        ``evaluated_depsgraph_get``), and the rig's set-up lets nothing move the bones with
        tasks after it (``rig_checks.shown_as_solved``)."""
        snapshot, solver = self.last_result, self.solver
        if snapshot is None or snapshot.error or solver is None or self._start is None:
            return False
        shown = self._start[solver.bones]
        scale = max(1.0, float(np.abs(shown[:, :3, 3]).max(initial=0.0)))
        if np.abs(solver.start_matrices - shown).max(initial=0.0) > _SAME_MATRIX * scale:
            return False
        bones = self._task_bones()
        known = self._shown_set_up
        if self.watch.trusting and known is not None and known[0] is solver and known[1] == bones:
            return known[2]
        shown = shown_as_solved(self.obj, self.model, bones, solver.moved_mask, riding_to_tasks(
            self.model, bones, solver.moved_mask, solver.computed_mask))
        self._shown_set_up = (solver, bones, shown)
        return shown

    def _task_bones(self):
        """The names of the bones the last solve's tasks move (the balance moves none)."""
        return {name for name in self._solved_names if name in self.model.index}

    def _reports(self, names, errors):
        """One ``TaskReport`` per bone with tasks (in task order): the largest error of each
        report (``task_kinds.report_of``) of its tasks, lengths in metres (``errors`` are in
        armature units), angles in radians."""
        found = {}
        for name, (report, angular), error in zip(names, self._reports_of, errors):
            error = error if angular else error * self.unit
            parts = found.setdefault(name, {})
            parts[report] = max(error, parts.get(report, 0.0))
        tolerances, mutual = self._tolerances, self._mutual
        return [TaskReport(name, 'MET' if all(error <= tolerances[is_angular(report)]
                                              for report, error in parts.items())
                           and name not in mutual else 'CLOSEST', parts)
                for name, parts in found.items()]

    def followed_armatures(self):
        """The other armatures that the targets of this armature's tasks are or follow (a bone
        of theirs, their object, through objects' parents and constraints), as the rig's
        settings were read (read now when they were not, or changed since)."""
        obj = self._armature()
        if self.model is None or self.watch.dirty:
            self._read_rig(obj)
        return armatures_followed(obj, [source.target for source in self._sources])

    def _armature(self):
        try:
            obj, kind = self.obj, self.obj.type
        except ReferenceError:
            raise ArmatureError("The armature of this DQ IK session was deleted") from None
        if kind != 'ARMATURE':
            raise ArmatureError(f"'{obj.name}' is no longer an armature")
        return obj

    def live_tick(self, time_budget_ms, after_update=False):
        """One tick of live posing: None, without solving or writing anything, when no target,
        collider, setting or pose channel moved since the last tick (``_moves``) and that
        tick's solve ended; else ``tick(time_budget_ms)``, which goes on warm from the last
        result. A solve cut short by the budget ends too once ``_STUCK_TICKS`` ticks in a row
        have brought no task closer, as solved, by more than the tolerance (a target out of
        reach, held by an obstacle: each tick is too short to settle, and would go on forever;
        against the errors shown, which Blender moves after the solve, it did); the last of
        those ticks solves to the end, with no budget, so a solve whose first steps take longer
        than a tick (straight knees bent to lower a floating pelvis, a step solved again from
        its feasible point) still gets there and live posing never idles with it unfinished
        (with ten times a 1 ms budget, a balanced body with both hands moved 43 cm stayed where
        it was in 3 of 11 runs).
        ``after_update`` (the tick ``LivePosing.follow`` takes in a depsgraph update): None as
        well when only a solve cut short is left to go on with (those ticks leave that to the
        timer, ``live_posing``), and the rig's set-up is taken as last checked unless an update
        reported the armature since (``set_up_watch``). None
        while ``dqik.bake`` solves the armature's frames (``baking``). A tick that raised
        ``ArmatureError`` (no target yet: the user is about to drag a bone) is not tried again
        until something moves. When something Blender evaluates after the solve may move the
        bones with tasks (``shown_as_solved``), ``unmeasured`` is set: the caller measures the
        errors the user sees (``measure_shown``) once Blender has evaluated the written pose."""
        if self.baking:
            return None
        begun = time.perf_counter()
        inputs = TickInputs.read(self._armature(), written=self._written if self.watch.stands(
            after_update) else None, driven=self._driven)
        last, solved, moved = self.last_result, self._solved, self._moves(inputs)
        finished = last is not None and (last.error or after_update or not last.cut_short
                                         or self._stuck >= _STUCK_TICKS)
        if not self.watch.dirty and finished and moved == self._seen:
            return None
        try:
            check_armature_settings(inputs.obj, ("time_budget_ms",))
            budget = time_budget_ms if self._stuck < _STUCK_TICKS - 1 else None
            snapshot = self._tick(budget, False, inputs, after_update, begun=begun)
        except ArmatureError:   # the same error is not solved again until something moves
            self._seen = moved
            raise
        gained = last is None or moved != self._seen or closer(solved or last, snapshot,
                                                                self._tolerances[0])
        self._stuck = 0 if gained or not snapshot.cut_short else self._stuck + 1
        self._seen = self._moves(inputs, self._written.key())
        self.unmeasured = not self.shown_as_solved()
        return snapshot

    def _moves(self, inputs, pose_key=None):
        """What a live tick compares with the last one, as bytes, from the tick's ``inputs``:
        the armature's and every target's and collider's ``matrix_world``, the solver settings,
        the dragged point and every pose channel (``pose_key``: the key of the pose the tick
        wrote, else the one read; a collider's shape is not read: a mesh edited while live runs
        is taken when something else moves)."""
        dragged = None if self.dragged is None else (self.dragged[0], self.dragged[1].tobytes())
        return (inputs.settings, inputs.snapshot.key() if pose_key is None else pose_key,
                dragged, tuple(matrix_bytes(thing) for thing in inputs.placed(self._sources)))

    def _solve(self, time_budget_ms, animated, inputs, trusted, view_layer, begun):
        self._written = None    # a tick that raises leaves no pose for the next to take as held
        obj = self._armature()
        check_editable(obj)
        inputs = TickInputs.read(obj, view_layer) if inputs is None else inputs
        if self.watch.changed(obj, inputs, self.unit, trusted):
            self._read_rig(obj)
            self.watch.read(obj, switch_bones(obj))
        pose = inputs.pose()
        tasks, names, kept, warnings, self._mutual = tick_tasks(
            obj, self.model, self._sources, self.dragged, self.balance, self.obstacles.cache,
            inputs.unit, inputs.view_layer)
        warnings = self._warnings + warnings
        if not tasks:
            raise no_task(obj, warnings)
        obstacles = None if inputs.colliders is None else \
            self.obstacles.query(obj, self.model, pose.evaluated, warnings)
        kinds = [task.kind for task in tasks]
        if self.solver is None or names != self._solved_names or kinds != self._kinds:
            self._built_warnings = []
            self.solver, self._tolerances = build_solver(inputs, self.model, tasks, names, pose,
                                                        obstacles, self.obstacles.cache,
                                                        self.watch.switches, self._built_warnings)
            self.unit = inputs.unit
            self._solved_names, self._kinds = names, kinds
            self._reports_of = [(report_of(kind), kind.angular) for kind in kinds]
        else:
            self.solver.retarget([task.target for task in tasks], pose.location, obstacles,
                                 pose.scale, pose.evaluated)
        warnings += self._built_warnings    # every tick reports what the build found
        solver = self.solver
        solver.settings.time_budget_ms = self.clock.solve_budget(time_budget_ms, begun)
        rotations, locations = pose.rotations(solver.modelled_mask), None
        if animated:    # the start is the animated pose: no other reference
            rotations, locations, bones = self.animated.start(
                obj, pose, rotations, solver.moved_mask, solver.slid_mask)
            reference = None
        else:
            bones, reference = self.animated.held()
        self._start = pose.evaluated
        result = solver.solve(rotations, remember=animated, locations=locations, animated=bones,
                              reference=reference)
        self.clock.solved()
        pose.set_rotations(result.rotations, rows=solver.moved_mask)
        if result.locations is not None:
            pose.set_locations(result.locations, solver.slid_mask)
        self.last_locations = result.locations
        pose.write(obj)
        if animated:
            self.animated.wrote(pose)
        self._written = pose
        solved = set(names)
        return result, names, [(s.name, 'MISSING' if s in kept else 'SKIPPED')
                               for s in self._sources if s.name not in solved], warnings

    def drag(self, bone, point):
        """Pull the tail of ``bone`` (a pose bone name) to ``point`` (world space) on the next
        ticks, as a temporary position task above every other, its chain running to the root;
        the bone's own tasks step aside meanwhile. ``drag(None, None)`` releases it: the pose is
        kept, and the other tasks go on from it (``tick_tasks.checked_drag`` refuses an unknown
        bone or a point that is not three finite numbers)."""
        self.dragged = None if bone is None else checked_drag(self._armature(), bone, point)
        model = self.model
        if bone is None:
            self.watch.dirty |= self._read_for_drag is not None   # the followers go back to riding
        elif model is not None and model.riders[model.index.get(bone, 0)]:
            self.watch.dirty = True   # the followers above it keep their parents for this drag

    def _read_rig(self, obj):
        """The model (with the bones that follow others through constraints re-parented,
        ``constraint_followers``) and every task's settings, read again; the solver is built
        on next use."""
        self.model, self.solver = None, None
        self.obstacles.forget()
        self.balance.forget()
        self.animated.forget_held()
        self._read_for_drag = None if self.dragged is None else self.dragged[0]
        dragged = [] if self.dragged is None else [obj.pose.bones.find(self.dragged[0])]
        self.model, self._sources, self._warnings = read_rig(
            obj, [bone for bone in dragged if bone >= 0])
        self._driven = driven_pose_channels(obj)


_STUCK_TICKS = 3
_SAME_MATRIX = 1e-5   # Blender's float32 pose against the model's FK (relative to the rig's size)


_TICKING = [0]  # ticks under way: a depsgraph update inside one (``ObstacleQuery.query``) must
                # not start another (``lifecycle/handlers.py``)


def ticking():
    """True while some session's tick runs."""
    return _TICKING[0] > 0


@contextmanager
def _in_a_tick():
    """Count as a tick under way (``ticking``) while the block runs."""
    _TICKING[0] += 1
    try:
        yield
    finally:
        _TICKING[0] -= 1
