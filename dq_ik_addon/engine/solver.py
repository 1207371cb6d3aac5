"""The IK solve: iterate prioritized, joint-limited steps from a warm start until the tasks settle.

Each iteration (Baerlocher Fig. 5.12, §5.4.2; a fresh start first folds hinges, ``folded_start``):

1. FK of the current rotations and the task errors (``problem.Problem``).
2. A step (``steps``): a chord step when a correction is small enough, else a full step: the
   prioritized damped-least-squares step of every level under the joint limits and contacts of
   the active set (``active_set``), with the rest pull in the null space, and on the first step
   of a solve its second-order (Chebyshev) correction.
3. Acceptance (``acceptance``): a line search (part by part where the tasks fall into parts that
   share no moved joint, ``independent_parts``) keeps a step that does not make the levels worse
   in priority order, else it is solved again from its active set's feasible point
   (``Steps.from_the_feasible_point``); joints update, held ones on their limits (``pose_update``).
4. Stop tests (``acceptance``), per group of tasks sharing no moved joint: all met; no level can
   progress (``blocked``); a contact holds them (``holds``); no progress (``stalled``). A stall
   counts restored (``Steps.settled``), escapes when short of a reachable target (``escapes``),
   last from a restored best (``Stalls``); the best state in priority order is returned."""

from dataclasses import replace

import numpy as np

from .acceptance import TimeBudget, better, blocked, holds, hopeless, stalled
from .escapes import ATTEMPTS, Stalls, escape, folded_start, futile_here, kept_start
from .independent_parts import search_step
from .measure import SolveResult, measure, put_back, state_of
from .moving_joints_fk import GivenPose
from .pose_update import PoseUpdate
from .problem import Problem, involved_bones
from .quaternion import all_true, qcanonical, qnormalize
from .solve_memory import ResultCache, same_pose
from .solver_settings import SolverSettings
from .steps import Steps

__all__ = ["Solver", "SolverSettings", "involved_bones", "solve"]


class Solver:
    """Solves one set of tasks on one model, warm from its last result, across solves with new
    targets (``retarget``); ``reset`` forgets that memory, ``warm_start``, ``resume`` keep it."""

    def __init__(self, model, tasks, limits=None, stiffness=None, settings=None, locations=None,
                 obstacles=None, radii=None, collision=None, self_collision=False, scales=None,
                 evaluated=None, translation=None, local_sources=None):
        """Solver of ``tasks`` (``tasks.Task``) on the part of ``model`` they depend on.

        ``limits``: per-bone settings of a limit kind (a module of ``limits``);
        ``stiffness`` (n,) in [0, 1]; ``locations`` and ``scales`` (n,3) the pose locations and
        scales, ``evaluated`` (n,4,4) Blender's evaluated pose matrices, which the bones the
        solve does not move keep and its chains hang from (``GivenPose``). ``obstacles(points,
        max_distance) -> (signed distance, outward normal)`` in armature space (for points inside
        an obstacle or within ``max_distance`` outside it, else ``inf``) turns on contacts for
        the bones with ``collision`` and ``radii`` > 0 (see ``contacts``); ``self_collision``
        keeps those capsules apart from each other too. ``translation`` (n,3): 1 on each location
        axis a bone may slide along from its given location (``slides``; ``slid_bones``);
        ``local_sources`` (n,) int: the bone whose local transform a bone's constraints copy in
        local space, or -1 (``MovingJointsFK``: its evaluated local transform is taken)."""
        self.settings = settings or SolverSettings()
        self.problem = Problem(model, tasks, limits, stiffness, self.settings, obstacles, radii,
                               collision, self_collision, translation, local_sources)
        self.bones, self.moved_mask = self.problem.bones, self.problem.moved_mask
        # the bones the solve reads, those it poses by its own FK, those it slides (``slid_bones``)
        self.modelled_mask, self.computed_mask, self.slid_mask = np.zeros((3, len(model)), bool)
        self.modelled_mask[self.bones] = True
        self.computed_mask[self.bones[self.problem.fk.moving]] = True
        contacts = self.problem.contacts    # whose capsules are tested (None: no contacts)
        self.capsule_bones = None if contacts is None else self.bones[contacts.capsule_bones()]
        self.slid_bones = self.bones[self.problem.slides.bones]
        self.slid_mask[self.slid_bones] = True
        self.fixed_tasks = ~self.problem.tasks.joint_masks[:, self.problem.column_joints].any(1)
        self.sliding_tasks = self.problem.slides.moves_task     # (Soft Reach eases the others)
        self.error_scale = np.where(self.problem.tasks.angular, self.problem.size, 1.0)
        self._take_given(locations, scales, evaluated)
        self.update = PoseUpdate(self.problem.joints, self.problem.limits, self.slid_bones.size)
        self.steps = Steps(self.problem, self.update)
        self.results = ResultCache()   # results by their exact inputs (``solve(remember=True)``)
        self._measured = None   # the ``SolveState`` ``measure`` put back last
        self.start_matrices = None  # FK of the pose the last solve started from (its bones)
        self.clock = TimeBudget()
        self.reset()

    def reset(self):
        """Forget the last result: the next solve starts from the rotations it is given."""
        self._memo = None  # (targets, given pose, obstacles; the result's rotations; the result)
        self._last = None  # (the last result's rotations, its FK, the given pose it had)
        self._futile = None  # each task's error at a stall whose escapes found nothing better
        self.update.terms = None

    def warm_start(self):
        """The warm-start memory (opaque), to ``resume`` later (a benchmark's repeated solve)."""
        return self._memo, self._last, self._futile, self.update.terms

    def resume(self, memory):
        """Go back to the warm-start memory ``memory`` (``warm_start``)."""
        self._memo, self._last, self._futile, self.update.terms = memory

    def retarget(self, targets=None, locations=None, obstacles=None, scales=None, evaluated=None):
        """New ``targets`` (one per task, in the order the tasks were given), given pose
        (``locations``, ``scales``, ``evaluated``: ``__init__``) and ``obstacles`` query for the
        same tasks, keeping everything built from the rig (``_take_given``)."""
        if targets is not None:
            self.problem.tasks.set_targets(targets)
        self._take_given(locations, scales, evaluated)
        if obstacles is not None and obstacles is not self.problem.contacts.obstacles:
            self.results = ResultCache()    # its results hold the old query: none hits now
            self.problem.contacts.obstacles = obstacles
        if targets is not None or obstacles is not None:
            self.problem.seat_targets()
        self._measured = None

    def _take_given(self, locations, scales, evaluated):
        """The given pose (``__init__``), its ``given_key`` and the chains' reach (``hang``)."""
        self.given = GivenPose.of(self.bones, locations, scales, evaluated)
        self._given_key = self.problem.given_key(self.given)
        self._locations = None if locations is None else np.array(locations, np.float64)
        self.problem.hang(self.given)

    def state(self):
        """What the next solve sees (targets, given pose, obstacles): a ``SolveState``."""
        return state_of(self.problem, self.given)

    def measure(self, rotations=None, matrices=None, state=None, slides=None):
        """The ``Measure`` (task errors, contact penetration) of the modelled bones (``bones``)
        posed by ``rotations`` (b,4) (and ``slides``, the locations (k,3) of ``slid_bones``),
        hung from the given pose, or by their pose ``matrices`` (b,4,4); with ``state`` (a
        ``SolveState``), as that solve saw it: its targets and obstacles stay until ``retarget``."""
        if state is not None and state is not self._measured:
            put_back(self.problem, state)
            self._measured = state
        if slides is not None:
            rotations = self.problem.slides.with_slides(rotations, slides)
        return measure(self.problem, self.given if state is None else state.given, rotations,
                       matrices)

    def pose_matrices(self, rotations):
        """Armature-space pose matrices (m,4,4) of the modelled bones (``bones``) for the (n,4)
        ``rotations``, hung from the given pose of the last solve (``GivenPose``, its locations
        those of the sliding bones too), as the solve computes them (``MovingJointsFK``)."""
        return self.problem.fk(self.problem.slides.state(
            np.asarray(rotations, dtype=np.float64)[self.bones], self.given.locations))

    def solve(self, rotations, preferred=None, remember=False, locations=None, animated=None,
              reference=None):
        """Iterate from ``rotations`` (n,4) and, for the bones it slides, ``locations`` (n,3; None:
        the given ones), preferring them; on a stall short of a reachable target, escape and go on,
        the rest pull then aiming at the escaped pose (``Stalls`` ends them). The best state seen,
        in priority order, is returned, so escapes never make it worse. ``max_iterations`` bounds
        each descent (since an escape). A solve that settled short of its targets (not cut short) is
        remembered: solving again from its result (within ``solve_memory.SAME_POSE``, a round trip
        through float32) with the same targets, given pose and obstacles returns it at once, in 0
        iterations. A start within ``SAME_POSE`` of the last result, with the same given pose,
        continues from it exactly; such a warm solve does not escape again while the last escapes
        found nothing better and its targets stay as far (``escapes.futile_here``). With
        ``remember``, the solve starts with no warm memory (``reset``), its result is kept by its
        exact inputs (``ResultCache``) and its escapes leave the tasks within ``escapes.NEAR`` of
        their targets alone. ``animated``, ``reference``: ``TaskSet.anchor``."""
        if remember:
            self.reset()
        problem, settings, steps = self.problem, self.settings, self.steps
        self.clock.start(settings.time_budget_ms)
        full, tol = np.array(rotations, dtype=np.float64), settings.tolerance
        slides, located = problem.slides, self.given.locations if locations is None else \
            np.asarray(locations, dtype=np.float64)[self.bones]
        last = self._continued(slides.state(full[self.bones], located))
        if last is not None:
            q, world = last
        else:
            q = slides.state(qcanonical(qnormalize(full[self.bones])), located)
            if problem.limits is not None:
                q[problem.joints] = problem.limits.project(q[problem.joints])
            world = problem.fk.start(q, self.given)
        kept = None if animated is None else (animated | ~self.moved_mask)[self.bones]
        problem.tasks.anchor(slides.moves_task, world, kept, None if reference is None else
                             lambda: self.pose_matrices(reference))
        self.start_matrices = world     # the FK of the start (``Session.shown_as_solved``)
        memo_key = (problem.tasks.target_key(), self._given_key, problem.tasks.eased_key(),
                    None if problem.contacts is None else problem.contacts.obstacles)
        remembered = (q.tobytes(), memo_key) if remember and preferred is None else None
        known = self.results.get(remembered) if remembered else None
        if known is None and preferred is None and self._memo is not None \
                and self._memo[0] == memo_key and same_pose(q, self._memo[1]):
            known = self._memo[2]
        if known is not None:
            full[self.bones] = known.rotations[self.bones]
            return replace(known, rotations=full, iterations=0, locations=None
                           if known.locations is None else known.locations.copy(),
                           steps=dict.fromkeys(known.steps, 0))
        unremembered, settled, finite = preferred is None, False, True
        preferred = q if preferred is None else slides.state(
            qnormalize(np.asarray(preferred, float)[self.bones]), located)
        q, world, unfolded = (q, world, None) if last is not None else \
            folded_start(problem, q, world, self._measure)
        state = best = self._measure(q, world)
        history, groups = [state[3]], [problem.state_groups(state)]  # levels, groups (stop tests)
        iterations, descent, escapes, stalls = 0, 0, 0, Stalls(problem, tol)
        steps.begin()
        while descent < settings.max_iterations and len(problem.column_joints):
            steps.weigh(iterations)
            q, world, errors, current = state
            if problem.converged(errors, current):
                best = state    # (the priority comparison's "met" is half the tolerance)
                break
            if self.clock.out(iterations):
                break
            polish = steps.is_correction(current)
            chorded = steps.chord(state, self._measure) if polish else None
            if chorded is not None:
                iterations, descent, state = iterations + 1, descent + 1, chorded
                history.append(state[3])
                groups.append(problem.state_groups(state))
                best = state if better(state[3], best[3], tol) else best
                continue
            step_list, predicted, corrected = steps.full(world, q, errors, preferred, polish)
            if not all_true(np.isfinite(step_list[-1])):
                finite = False
                break
            iterations, descent = iterations + 1, descent + 1
            predicted_groups = steps.predicted_groups if steps.predicted_groups is not None \
                else predicted
            stop = blocked(groups[-1], predicted_groups, tol)
            trial = None if stop else search_step(
                problem, lambda step, scale: steps.restored(
                    self._measure(self.update(q, step, scale)), current, self._measure),
                step_list, current, predicted, corrected, groups[-1], predicted_groups)
            passes = 0 if trial is None else self.clock.settling(iterations - 1)
            if passes and not better(trial[3], best[3], tol):
                trial = steps.restored(trial, current, self._measure, passes)
            if trial is not None:
                state = trial
                history.append(state[3])
                groups.append(problem.state_groups(state))
                stop = holds(groups, groups[-2], groups[-1], predicted_groups, steps.touched, tol)
                best = state if better(state[3], best[3], tol) else best
            if trial is None and not stop and steps.from_the_feasible_point():
                continue    # no scale of the step was kept: solved again, priorities kept
            if stop or trial is None or stalled(groups, tol) or (
                    escapes and hopeless(history, best[3], tol)):
                best = stalls.settled(steps.settled(state, best, self._measure), state, best)
                ended = stalls.final or problem.converged(best[2], best[3]) or stalls.enough(
                    state, groups[-1], best[3]) or escapes >= ATTEMPTS or (
                    last is not None and futile_here(self._futile, stalls.first[1], tol))
                escaped = None if ended else escape(problem, *state[:3], escapes, remember)
                if escaped is None and stalls.unexplored(best):
                    escaped, escapes = best[0], escapes - 1     # a last descent, no escape
                if escaped is None:
                    settled = True  # nothing left to try: the closest reachable pose
                    break
                escapes, descent, preferred, stalls.left = escapes + 1, 0, escaped, best[3]
                steps.restart()
                state = self._measure(escaped)
                history, groups = [state[3]], [problem.state_groups(state)]
        best = kept_start(problem, stalls.result(best, self._measure), unfolded, tol)
        self.clock.end(iterations)
        result = self._result(full, best, iterations, escapes, stalls.first, history, memo_key,
                              unremembered and settled,
                              finite and not settled and len(problem.column_joints) > 0)
        if remembered and not result.cut_short:
            self.results.put(remembered, replace(result, rotations=result.rotations.copy()))
        return result

    def _measure(self, q, world=None):
        """``(q, world, errors, level errors)`` of the rotations ``q``."""
        world, errors = self.problem.errors(q, world)
        return q, world, errors, self.problem.level_errors(world, errors)

    def _result(self, full, best, iterations, escapes, stall, history, memo_key, remember,
                cut_short):
        """The ``SolveResult`` of ``best``, with the warm-start memory updated."""
        problem, tol = self.problem, self.settings.tolerance
        q, world, errors, current = best
        true_errors = problem.tasks.norms(problem.tasks.true_errors(world))
        solved = problem.converged(errors, current)   # targets beyond reach at the reach
        converged = solved and problem.met(true_errors)
        if converged:
            self._futile = None
        elif escapes:   # futile when they found nothing better than the first stall (by 0.1 tol)
            self._futile = None if better(current, stall[0], tol, 0.1 * tol) else stall[1]
        self._last = (q, world, self._given_key)
        full[self.bones] = q[:self.bones.size]
        result = SolveResult(full, iterations, true_errors, converged, history,
                             None if problem.contacts is None else
                             problem.contacts.contacts(world, self.bones),
                             dict(self.steps.counts, escapes=escapes), cut_short and not solved,
                             problem.slides.everywhere(q, self._locations, self.slid_bones,
                                                       self.moved_mask.size), world)
        self._memo = (memo_key, q, result) if remember else None
        return result

    def _continued(self, start):
        """``(rotations, FK)`` of the last result when ``start`` is it (within ``SAME_POSE``, under
        the same given pose): a warm solve goes on from it exactly, with its FK. Else None."""
        last = self._last
        same = last is not None and last[2] == self._given_key and same_pose(start, last[0])
        return last[:2] if same else None


def solve(model, rotations, tasks, limits=None, stiffness=None, settings=None, locations=None,
          preferred=None):
    """Solve ``tasks`` from ``rotations`` (n,4) and return a ``SolveResult``."""
    return Solver(model, tasks, limits, stiffness, settings, locations).solve(rotations, preferred)
