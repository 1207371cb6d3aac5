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

``run`` and ``time`` import only numpy and this repository's engine
(``dq_ik_addon``), so it measures the working tree without building the extension. Problems:
``basic-root``, ``basic-limb``, ``human-root`` (4 effectors, HUMANOID limits, targets moving
≤ 5 cm per step, as in ``solve.py``) and ``basic-collision``, ``human-collision`` (``collision.py``'s
path into the sphere, with the sphere as an exact analytic obstacle instead of the BVH query).
"""

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
    """What ``build_solver`` reads from ``obj``, as plain engine arguments."""
    bridge, scene_tasks = dqik.operators.armature_bridge, dqik.operators.scene_tasks
    model = bridge.read_model(obj)
    pose = bridge.PoseArrays(obj)
    tasks, names, _ = scene_tasks.read_tasks(obj, model)
    return dict(
        model=(model.names, model.parents, model.rest_matrices, model.lengths, model.connected),
        tasks=[dataclasses.astuple(t) for t in tasks], names=names,
        limits=tuple(scene_tasks.read_limits(obj, model)),
        stiffness=scene_tasks.read_stiffness(obj),
        settings=dataclasses.asdict(scene_tasks.read_settings(obj)),
        locations=pose.location, rotations=pose.rotations()), model


def dump(path):
    import common
    dqik = common.install()
    import collision
    import solve
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
        radii, enabled = dqik.operators.colliders.capsule_radii(obj, model)
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


def run(path, name, setup_only):
    from chains import ball
    from dq_ik_addon import ChainModel
    from dq_ik_addon.limits import SwingTwistLimits
    from dq_ik_addon.solver import Solver, SolverSettings
    from dq_ik_addon.tasks import Task
    with open(path, "rb") as handle:
        problem = pickle.load(handle)[name]
    model = ChainModel(*problem["model"])
    collides = "centre" in problem
    solver = Solver(model, [Task(*t) for t in problem["tasks"]],
                    SwingTwistLimits(*problem["limits"]), problem["stiffness"],
                    SolverSettings(**problem["settings"]), problem["locations"],
                    ball(problem["centre"], problem["radius"]) if collides else None,
                    problem.get("radii"), problem.get("collision"))
    if collides:    # the hand follows the goals from the scene's pose
        goals, rows, rotations = problem["goals"], problem["hand"], problem["rotations"]
    else:           # all four effectors follow the path, from the cold solve of its start
        goals, rows = problem["path"], slice(None)
        solver.tasks.positions[rows] = goals[0]
        rotations = solver.solve(np.tile([1.0, 0.0, 0.0, 0.0], (len(model), 1))).rotations
        goals = goals[1:]
    iterations, started = 0, time.perf_counter()
    if not setup_only:
        for goal in goals:
            solver.tasks.positions[rows] = goal
            result = solver.solve(rotations)
            rotations, iterations = result.rotations, iterations + result.iterations
    elapsed = time.perf_counter() - started
    print(f"{name}: setup only, {len(goals)} warm solves not replayed" if setup_only else
          f"{name}: {len(goals)} warm solves, {iterations} iterations, "
          f"{elapsed / len(goals) * 1e3:.3f} ms per warm solve")
    return elapsed / len(goals)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "dump":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        dump(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], "--setup" in sys.argv[4:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "time":
        best = min(run(sys.argv[2], sys.argv[3], False) for _ in range(TIMED_RUNS))
        print(f"{sys.argv[3]}: fastest of {TIMED_RUNS} replays {best * 1e3:.3f} ms per warm solve")
    else:
        sys.exit(__doc__)
