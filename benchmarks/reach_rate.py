"""Reach rate: how many provably reachable problems one press of Solve finishes, and whether a
second press with nothing changed ever improves on the first.

Problems (``solve_problems.random_pose_in_limits``): every chain bone of hand.L/R and foot.L/R is
posed uniformly over the area of its HUMANOID swing ellipse, up to the boundary, with its twist
uniform in its range (unlimited bones: a random rotation ≤ 0.6 rad); the targets are the tails
of the four effectors in Blender's FK of that pose. Feet are priority 1, hands priority 2, every
chain runs to the root; each problem is solved from the rest pose by one ``bpy.ops.dqik.solve()``.
A third row poses only each effector's own two bones and gives every task (and every Blender IK
constraint) Chain Length 2: two limited joints per limb, where limited IK has the most local
minima.

- solved: every effector's evaluated tail within 0.1 mm of its target after the first press;
- re-solve gains: problems where a second press with nothing changed brings any effector closer
  by more than the tolerance (a first solve that stopped before it was done);
- Blender Standard IK: the same targets through IK constraints (chain length 0, default
  settings), the same 0.1 mm test on the evaluated pose. Blender's IK has no priorities or
  DQ IK's limits; it is shown for the reach alone.

Run: ``.venv/bin/python benchmarks/reach_rate.py [--basic 1000] [--human 400] [--limbs 300]``.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

REACHED = 1e-4


def run_dq(obj, targets, length=0):
    """(solved count, re-solve gains, worst first-press error) over ``targets``, every task's
    Chain Length ``length``."""
    import bpy
    import solve_problems as sp
    first, second = sp.press_twice(obj, targets, chain_count=length)
    for name in sp.EFFECTORS:
        bpy.data.objects.remove(bpy.data.objects[f"target_{name}"])
    gains = ((first - second).max(axis=1) > obj.dqik.tolerance).sum()
    return (first.max(axis=1) <= REACHED).sum(), gains, first.max()


def run_blender(obj, targets, length=0):
    import bpy
    import solve_problems as sp
    empties = {}
    for name in sp.EFFECTORS:
        empty = bpy.data.objects.new(f"ik_{name}", None)
        bpy.context.scene.collection.objects.link(empty)
        constraint = obj.pose.bones[name].constraints.new('IK')
        constraint.target, constraint.chain_count = empty, length
        empties[name] = empty
    sp.clear_pose(obj)
    solved = 0
    for goal in targets:
        sp.place_targets(empties, goal)
        solved += bool(sp.effector_errors(obj, empties).max() <= REACHED)
    return solved


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--basic", type=int, default=1000)
    parser.add_argument("--human", type=int, default=400)
    parser.add_argument("--limbs", type=int, default=300)
    args = parser.parse_args()
    dqik = common.install()
    import bpy
    import solve_problems as sp
    rows = []
    for kind, count, length in (("basic", args.basic, 0), ("human", args.human, 0),
                                ("basic", args.limbs, 2)):
        if count <= 0:      # (a row left out: ``--basic 0``)
            continue
        obj = common.new_rig(kind)
        bpy.ops.dqik.apply_preset(preset='HUMANOID')
        targets = sp.fk_targets(obj, dqik, count, seed=20, length=length)
        with common.quiet():
            solved, gains, worst = run_dq(obj, targets, length)
        blender = run_blender(obj, targets, length)
        chains = "" if not length else f", Chain Length {length}"
        rows.append([f"{kind} metarig ({len(obj.pose.bones)} bones){chains}", count,
                     f"{solved} ({100 * solved / count:.1f} %)", gains, f"{worst * 1e3:.3f}",
                     f"{blender} ({100 * blender / count:.1f} %)"])
    print(common.versions())
    print(common.markdown(["rig", "problems", "DQ IK solved ≤ 0.1 mm, one press", "re-solve gains",
                           "DQ IK worst error (mm)", "Blender Standard IK ≤ 0.1 mm"], rows))


if __name__ == "__main__":
    main()
