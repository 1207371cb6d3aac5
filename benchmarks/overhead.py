"""The ``dqik.solve`` operator's own cost on a warm re-solve, apart from the engine's solve.

Rigs: Rigify basic human (29 bones) and human metarig (159 bones), HUMANOID preset, four tasks
(hand.L/R, foot.L/R, chains to the root) whose targets sit where the effectors are, so every
timed solve is a warm re-solve that ends at once (the engine's share is its stop test). Timed,
each the median of ``RUNS`` calls (the fastest is printed too):

- ``operator``: ``bpy.ops.dqik.solve()`` (with its undo push and report);
- ``tick``: ``api.session_for(obj).tick()``, the session's read-solve-write without the operator;
- ``engine``: ``session.solver.solve(rotations)`` alone on the same pose;
- ``reads``: reading the pose channels (``PoseArrays``) and the targets, and writing the pose,
  which any solve through Blender needs.

The operator's overhead is ``operator − engine``. Run from the repository root:
``.venv/bin/python benchmarks/overhead.py`` (also with ``.venv-lts/bin/python``).
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

RUNS = 300


def timings(call):
    """``(median ms, fastest ms)`` of ``RUNS`` calls."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def measure(dqik, kind):
    import bpy
    import solve_problems as sp
    obj = common.new_rig(kind)
    with common.quiet():
        bpy.ops.dqik.apply_preset(preset='HUMANOID')
    empties = sp.add_targets(obj, sp.EFFECTORS, chain_count=0)
    for name, empty in empties.items():
        empty.location = sp.world_tail(obj, name)
    bpy.context.view_layer.update()
    session = dqik.api.session_for(obj)
    blender = dqik.dq_ik_addon.blender
    with common.quiet():          # the operator reports to stdout in background mode
        bpy.ops.dqik.solve()
        operator = timings(bpy.ops.dqik.solve)
    tick = timings(session.tick)
    rotations = blender.rig.pose.PoseArrays(obj).rotations()
    engine = timings(lambda: session.solver.solve(rotations))
    sources, _ = blender.settings.scene_tasks.task_sources(session.model,
                                                 blender.settings.scene_tasks.bone_settings(obj))

    def reads():
        pose = blender.rig.pose.PoseArrays(obj)
        blender.settings.scene_tasks.aimed_tasks(obj, sources)
        pose.set_rotations(pose.rotations(), rows=session.solver.moved_mask)
        pose.write(obj)
    return operator, tick, engine, timings(reads)


def main():
    dqik = common.install()
    rows = []
    for kind, label in (("basic", "basic human (29)"), ("human", "human metarig (159)")):
        operator, tick, engine, reads = measure(dqik, kind)
        rows.append([label, *(f"{median:.3f} / {fastest:.3f}"
                              for median, fastest in (operator, tick, engine, reads)),
                     f"{operator[0] - engine[0]:.3f}"])
    print(f"\n## dqik.solve overhead on a warm re-solve\n\n{common.versions()}; "
          f"load average {os.getloadavg()[0]:.2f}\n")
    print(common.markdown(["rig", "operator ms median / fastest", "tick ms", "engine solve ms",
                           "reads + write ms", "operator overhead ms (median − engine)"],
                          rows))


if __name__ == "__main__":
    main()
