"""Replay the warm solves of ``solve.py`` and ``collision.py`` on the engine alone, for comparing
engine changes by instruction count (not a benchmark table; timings on a busy machine vary by
±50 %, instruction counts by 0.1 %).

    .venv/bin/python benchmarks/replay.py dump problems.pkl     # once, with bpy: the problems
    perf stat -e instructions .venv/bin/python benchmarks/replay.py run problems.pkl basic-root
    perf stat -e instructions .venv/bin/python benchmarks/replay.py run problems.pkl basic-root --setup

The second ``perf`` line builds the solver and solves the first target cold but replays nothing:
subtract its count and divide by the printed number of warm solves. Set
``OPENBLAS_NUM_THREADS=1`` for both. Instruction counts miss what LAPACK's small decompositions
cost (a batched 3×3 SVD runs few instructions slowly), so time a change too, on a quiet machine:

    .venv/bin/python benchmarks/replay.py time problems.pkl basic-root   # fastest of 7 replays

The benchmark's path is one path: a change that alters the redundant chains' poses along it can
gain or lose a few iterations by chance (a pose that runs into a limit later on). ``paths``
solves the same rig, tasks and limits along other reachable paths (FK of poses inside the limits,
interpolated in ≤ 4 cm steps, from a cold solve of a random start), one per seed:

    .venv/bin/python benchmarks/replay.py paths problems.pkl basic-root 12   # 12 seeds

Targets out of reach settle differently (escapes, compromises, long slides along limits), and
one drag is not a measure either: ``unreachable`` drags the first task (hand.L) out of reach in
5 cm steps along several random directions, with every task on one level and with the hands one
level below the feet:

    .venv/bin/python benchmarks/replay.py unreachable problems.pkl basic-root 16   # 16 directions

``run`` and ``time`` import only numpy and this repository's engine
(``dq_ik_addon.engine``), so it measures the working tree without building the extension. Problems:
``basic-root``, ``basic-limb``, ``human-root`` (4 effectors, HUMANOID limits, targets moving
≤ 5 cm per step, as in ``solve.py``) and ``basic-collision``, ``human-collision`` (``collision.py``'s
path into the sphere, with the sphere as an exact analytic obstacle instead of the BVH query).
"""

import contextlib
import dataclasses
import os
import pickle
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMED_RUNS = 7
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]


def _inputs(dqik, obj):
    """What a solving session reads from ``obj`` to build its solver, as plain engine arguments."""
    rig, scene_tasks = dqik.dq_ik_addon.blender.rig, dqik.dq_ik_addon.blender.settings.scene_tasks
    model = rig.model_reader.read_model(obj)
    pose = rig.pose.PoseArrays(obj)
    tasks, names, _ = scene_tasks.read_tasks(obj, model)
    limits, stiffness = scene_tasks.read_joints(obj, model)
    return dict(
        model=(model.names, model.parents, model.rest_matrices, model.lengths, model.connected),
        tasks=[(t.bone, t.target, t.priority, t.weight, t.chain_count) for t in tasks],
        names=names,
        limits=tuple(limits), stiffness=stiffness,
        settings=dataclasses.asdict(scene_tasks.read_settings(obj)),
        locations=pose.location, rotations=pose.rotations()), model


def dump(path):
    import common
    dqik = common.install()
    import collision
    import solve
    import solve_problems as sp
    problems = {}
    for kind, chain in (("basic", 0), ("basic", 3), ("human", 0)):
        bench = solve.Bench(dqik, kind, chain, True, False, 10 + chain)
        bench.rest()
        problem, _ = _inputs(dqik, bench.obj)
        order = [bench.effectors.index(name) for name in problem["names"]]
        problem["path"] = [targets[order] for targets in bench.path]
        problems[f"{kind}-{'root' if chain == 0 else 'limb'}"] = problem
    for kind in ("basic", "human"):
        obj, _, tail, collection, _ = collision.scene(kind, dqik)
        obj.dqik.colliders = collection
        problem, model = _inputs(dqik, obj)
        radii, enabled = sp.capsule_radii(obj, dqik, model)
        sphere = next(iter(collection.all_objects))
        to_armature = np.linalg.inv(np.array(obj.matrix_world))
        problem.update(
            radii=radii, collision=enabled, hand=problem["names"].index("hand.L"),
            centre=(to_armature @ np.append(np.array(sphere.matrix_world.translation), 1.0))[:3],
            radius=collision.SPHERE_RADIUS, goals=collision.hand_goals(obj, tail))
        problems[f"{kind}-collision"] = problem
    with open(path, "wb") as handle:
        pickle.dump(problems, handle)
    print(f"wrote {len(problems)} problems to {path}: {', '.join(problems)}")


def _load(path, name):
    """``(problem, model, solver)`` of the problem ``name`` saved by ``dump``."""
    from dq_ik_addon.engine import ChainModel
    with open(path, "rb") as handle:
        problem = pickle.load(handle)[name]
    model = ChainModel(*problem["model"])
    return problem, model, _solver(problem, model)


def _tasks(problem):
    """The position tasks of ``problem`` (saved as ``(bone, target, priority, weight, chain)``;
    problems saved before task kinds as ``(bone, position, rotation, priority, weight, chain)``)."""
    from dq_ik_addon.engine.tasks import Position, Task
    return [Task(Position, t[0], t[1], *t[-3:]) for t in problem["tasks"]]


def _solver(problem, model, priorities=None):
    """A new Solver of ``problem`` on ``model``, its tasks at ``priorities`` if given."""
    from chains import ball

    from dq_ik_addon.engine.limits import SwingTwistLimits
    from dq_ik_addon.engine.solver import Solver, SolverSettings
    tasks = _tasks(problem)
    if priorities is not None:
        tasks = [dataclasses.replace(task, priority=level) for task, level in zip(tasks, priorities)]
    collides = "centre" in problem
    return Solver(model, tasks, SwingTwistLimits(*problem["limits"]), problem["stiffness"],
                  SolverSettings(**problem["settings"]), problem["locations"],
                  ball(problem["centre"], problem["radius"]) if collides else None,
                  problem.get("radii"), problem.get("collision"))


def run(path, name, setup_only, form=contextlib.nullcontext):
    """The warm solves of problem ``name`` (its solver built inside the context ``form()``, which
    may swap the engine's forms, ``fk_forms.py``); prints their iterations and returns the
    seconds per warm solve."""
    with form():
        problem, model, solver = _load(path, name)
    collides = "centre" in problem
    targets = np.array([t[1] for t in problem["tasks"]], dtype=np.float64)
    if collides:    # the hand follows the goals from the scene's pose
        goals, rotations = [], problem["rotations"]
        for goal in problem["goals"]:
            goals.append(targets.copy())
            goals[-1][problem["hand"]] = goal
    else:           # all four effectors follow the path, from the cold solve of its start
        goals = problem["path"]
        solver.retarget(goals[0])
        rotations = solver.solve(np.tile([1.0, 0.0, 0.0, 0.0], (len(model), 1))).rotations
        goals = goals[1:]
    iterations, started = 0, time.perf_counter()
    if not setup_only:
        for goal in goals:
            solver.retarget(goal)
            result = solver.solve(rotations)
            rotations, iterations = result.rotations, iterations + result.iterations
    elapsed = time.perf_counter() - started
    print(f"{name}: setup only, {len(goals)} warm solves not replayed" if setup_only else
          f"{name}: {len(goals)} warm solves, {iterations} iterations, "
          f"{elapsed / len(goals) * 1e3:.3f} ms per warm solve")
    return elapsed / len(goals)


def paths(path, name, seeds, step=0.04):
    """Warm solves of problem ``name`` (not a collision one) along one random reachable path per
    seed: FK of two poses inside the limits (the tasks' joints only), interpolated in steps of at
    most ``step`` metres per effector, from a cold solve of a third. Prints the iterations per
    solve, the time per solve (each path's fastest of 3 replays) and the solves that ended short
    of the tolerance."""
    from chains import random_pose_in_limits

    from dq_ik_addon.engine.limits import SwingTwistLimits
    from dq_ik_addon.engine.quaternion import qnormalize
    from dq_ik_addon.engine.tasks import TaskSet
    problem, model, solver = _load(path, name)
    limits = SwingTwistLimits(*problem["limits"])
    tasks = _tasks(problem)
    bones = [task.bone for task in tasks]
    moved = TaskSet(model, tasks).joint_masks.any(axis=0)[:, None]
    rest = np.tile([1.0, 0.0, 0.0, 0.0], (len(model), 1))
    solves = iterations = unmet = 0
    elapsed = 0.0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)

        def pose(scale):
            return np.where(moved, random_pose_in_limits(rng, limits, scale), rest)

        def tails(q):
            return model.tails(model.matrices(q, problem["locations"]))[bones]
        a, b = pose(0.5), pose(0.5)
        b = np.where(np.sum(a * b, axis=1, keepdims=True) < 0.0, -b, b)
        count = int(np.ceil(np.linalg.norm(tails(a) - tails(b), axis=1).max() / step)) + 1
        goals = [tails(qnormalize((1 - t) * a + t * b)) for t in np.linspace(0, 1, max(count, 2))]
        solver.reset()
        solver.retarget(goals[0])
        start = solver.solve(pose(0.3)).rotations
        best = np.inf
        for replay in range(3):
            solver.reset()
            rotations, started = start, time.perf_counter()
            for goal in goals[1:]:
                solver.retarget(goal)
                result = solver.solve(rotations)
                rotations = result.rotations
                if replay == 0:
                    iterations += result.iterations
                    unmet += not result.converged
            best = min(best, time.perf_counter() - started)
        solves += len(goals) - 1
        elapsed += best
    print(f"{name}: {seeds} paths, {solves} warm solves, {iterations / solves:.3f} iterations "
          f"and {elapsed / solves * 1e3:.3f} ms per solve (fastest of 3), {unmet} unconverged")


def unreachable(path, name, directions, steps=10):
    """Warm solves of problem ``name`` while its first task's target is dragged from 0.9 m to
    0.9 + 0.05·(steps − 1) m away from where the path starts it, along ``directions`` random
    directions, with the problem's priorities and with its hands one level below the rest;
    prints the total and the median and p90 per step of the iterations and milliseconds."""
    problem, model, solver = _load(path, name)
    rng = np.random.default_rng(3)
    ways = rng.normal(size=(directions, 3))
    ways /= np.linalg.norm(ways, axis=1)[:, None]
    start, goals = problem["path"][0], problem["path"][0].copy()
    hands = np.array([label.startswith("hand") for label in problem["names"]])
    for label, priorities in (("tasks as given", [t[-3] for t in problem["tasks"]]),
                              ("hands below", np.where(hands, 2, 1).tolist())):
        per_step = []
        for way in ways:
            solver = _solver(problem, model, priorities)
            solver.retarget(start)
            rotations = solver.solve(np.tile([1.0, 0.0, 0.0, 0.0], (len(model), 1))).rotations
            for k in range(steps):
                goals[0] = start[0] + way * (0.9 + 0.05 * k)
                solver.retarget(goals)
                started = time.perf_counter()
                result = solver.solve(rotations)
                per_step.append((result.iterations, (time.perf_counter() - started) * 1e3))
                rotations = result.rotations
        table = np.array(per_step)
        print(f"{name}, {label}: {len(table)} warm steps, {int(table[:, 0].sum())} iterations, "
              f"{table[:, 1].sum():.0f} ms; per step: iterations median {np.median(table[:, 0]):.0f}"
              f" p90 {np.percentile(table[:, 0], 90):.0f}, ms median {np.median(table[:, 1]):.0f}"
              f" p90 {np.percentile(table[:, 1], 90):.0f}")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "dump":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        dump(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], "--setup" in sys.argv[4:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "time":
        best = min(run(sys.argv[2], sys.argv[3], False) for _ in range(TIMED_RUNS))
        print(f"{sys.argv[3]}: fastest of {TIMED_RUNS} replays {best * 1e3:.3f} ms per warm solve")
    elif len(sys.argv) >= 4 and sys.argv[1] == "paths":
        paths(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 12)
    elif len(sys.argv) >= 4 and sys.argv[1] == "unreachable":
        unreachable(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 16)
    else:
        sys.exit(__doc__)
