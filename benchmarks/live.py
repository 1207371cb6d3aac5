"""Live posing ticks: what ``dqik.live``'s timer costs per tick on the 159-bone metarig.

Four tasks (feet priority 1 where they stand, hands priority 2) on the human metarig with the
HUMANOID preset. Every hand target moves 5 cm per tick (``collision.hand_goals``' path of the
left hand, forwards into a 20k-triangle UV sphere and back, the right hand mirrored), and each
moved tick is one ``LivePosing.tick()`` (``dq_ik_addon/blender/solving/live_posing.py``, what the modal operator's
timer calls: ``Session.live_tick`` within ``Object.dqik.time_budget_ms``), timed whole: reading
what moved, the warm solve, writing the pose. Then ticks with nothing moved (idle). Without and
with the sphere as collider (``Object.dqik.colliders``). The targets are placed by their
``matrix_world``, which the tick reads at once, and Blender's depsgraph update after each tick
is run untimed, as the viewport would (it finds nothing moved: ``LivePosing.follow``).

Timings: every tick is timed once (ticks depend on the previous one); median and p90 over the
path. Run: ``.venv/bin/python benchmarks/live.py``.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collision  # noqa: E402
import common  # noqa: E402
from common import np  # noqa: E402

GOALS = "median tick ≤ 3 ms without the collider, ≤ 6 ms with it; idle tick ≤ 0.1 ms"
IDLE_TICKS = 50


def run(dqik, with_collider):
    import bpy
    from mathutils import Matrix
    obj, hand, tail, collection, triangles = collision.scene("human", dqik)
    obj.dqik.colliders = collection if with_collider else None
    other = bpy.data.objects["target_hand.R"]
    mirror = np.array(other.location) - np.array(hand.location)
    live = dqik.dq_ik_addon.blender.solving.live_posing.LivePosing(obj)
    update = bpy.context.view_layer.update
    with common.quiet():
        live.tick()
        update()
        moved, idle = [], []
        for goal in collision.hand_goals(obj, tail):
            world = np.array(obj.matrix_world) @ np.append(goal, 1.0)
            hand.matrix_world = Matrix.Translation(world[:3])     # current without an update
            other.matrix_world = Matrix.Translation(world[:3] + mirror)
            start = time.perf_counter()
            live.tick()
            moved.append((time.perf_counter() - start) * 1e3)
            update()
        while live.tick() is not None:   # finish what a budget left
            update()
        for _ in range(IDLE_TICKS):
            start = time.perf_counter()
            assert live.tick() is None
            idle.append((time.perf_counter() - start) * 1e3)
    live.stop()
    return moved, idle, triangles, obj.dqik.time_budget_ms


def main():
    dqik = common.install()
    started = time.perf_counter()
    rows, results = [], {}
    for with_collider in (False, True):
        moved, idle, triangles, budget = run(dqik, with_collider)
        median, p90 = common.median_p90(moved)
        idle_median, idle_p90 = common.median_p90(idle)
        label = f"with collider ({triangles} triangles)" if with_collider else "no collider"
        rows.append(["human metarig (159)", label, f"{median:.2f} / {p90:.2f}",
                     f"{idle_median:.3f} / {idle_p90:.3f}"])
        results[with_collider] = (median, idle_median)
    print(f"\n## Live ticks, 4 targets moving 5 cm per tick (time budget {budget:g} ms)\n")
    print(common.versions() + f"; load average {os.getloadavg()[0]:.2f}\n")
    print(common.markdown(["rig", "scene", "moved tick ms median / p90",
                           "idle tick ms median / p90"], rows))
    free, hit = results[False], results[True]
    met = free[0] <= 3.0 and hit[0] <= 6.0 and max(free[1], hit[1]) <= 0.1
    print(f"\nRun time {time.perf_counter() - started:.0f} s. Goals: {GOALS} → "
          f"{'met' if met else 'NOT met'} (no collider {free[0]:.2f} ms, with {hit[0]:.2f} ms, "
          f"idle {max(free[1], hit[1]):.3f} ms)")


if __name__ == "__main__":
    main()
