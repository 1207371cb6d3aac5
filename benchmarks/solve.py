"""IK solve: DQ IK vs Blender's Standard IK and iTaSC on the same reachable problems, in one run.

Rigs: Rigify basic human metarig (29 bones) and human metarig (159 bones). Effectors: the tails of
hand.L/R and foot.L/R, each pulled to its own Empty (one DQ IK task and one Blender IK constraint
per effector, with the same targets). Two chain settings, for every solver alike:

- ``root``: chain length 0 (to the root bone ``spine``; arms 8 bones, legs 4, 18 bones in all);
- ``limb``: chain length 3 (hand/forearm/upper_arm, foot/shin/thigh).

Problems are provably reachable: every target is the tail of the effector in Blender's FK of a
random pose of the chain bones inside DQ IK's limits (``solve_problems.random_pose_in_limits``;
HUMANOID preset limits when ``dqik.apply_preset`` exists, else random rotations ≤ 0.6 rad).

- cold: solve from the rest pose, one random problem at a time;
- warm: the targets follow a smooth random path (≤ 5 cm per step per target; the path is FK of
  smoothly interpolated in-limit poses) and each step starts from the previous result.

Solvers and what is timed:

- ``DQ IK Solver``: the warm engine ``Solver`` of the armature's solving session (``api.session_for``,
  after one tick), built once; targets are
  written into its task set, and only ``Solver.solve`` is timed (warm: from the previous result).
  Also run with limits switched off (``no limits``) on the same problems.
- ``DQ IK operator``: ``view_layer.update()`` + ``bpy.ops.dqik.solve()`` + ``view_layer.update()``
  after moving the Empties (the operator reads the armature and the targets, solves from the
  current pose channels and writes them); the first update evaluates the moved Empties, as when
  a user moves them (``timed_update``).
- ``Blender Standard`` / ``Blender iTaSC``: IK constraints (default settings; ``pose.ik_solver``
  ``'LEGACY'`` / ``'ITASC'``), pose channels at rest; the ``view_layer.update()`` after moving the
  Empties is timed (each repeat tags the Empties again, nothing else: the pose channels never
  change, so this is the update a user's move of the targets costs). Blender's IK only changes
  the evaluated pose and always starts from the pose channels, so it has no warm start: "warm"
  is the same solve from rest with nearby targets.

Every timing is the fastest of ``common.REPEATS`` (3) runs of the same solve from the same state
(``common.fastest_ms``): the machine's other load only adds time. DQ IK's solver is given back
the result it remembered before each run (``common.same_warm_start``), so every run of a warm
solve goes on from the previous step's result as the first one does.

Reach error = distance from the effector's evaluated tail (``PoseBone.matrix`` via ``foreach_get``,
after writing DQ IK's result) to its target, over all effectors and problems. Limit violation
(radians, max over the chain bones): ``solve_problems.limit_violation`` on DQ IK's written pose
channels, and for every solver the engine's ``limit_violation`` of the local rotations recovered
from the evaluated ``PoseBone.matrix`` (Blender's IK is not given these limits; this shows how far
its answer strays from them).

Run: ``cd /work/main && .venv/bin/python benchmarks/solve.py [--quick]`` (also with
``.venv-lts/bin/python``). Seeds are fixed; timings vary with machine load.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import np  # noqa: E402

CHAINS = (("root", 0), ("limb", 3))
MAX_STEP = 0.05  # metres per warm step, per target
COLD = {False: 12, True: 4}  # cold problems per rig and chain setting (--quick: True)
SEGMENTS = {False: 2, True: 1}  # random key poses the warm path runs through, minus one
GOALS = "warm 4-effector basic human ≤ 2 ms and ≤ 5× Blender Standard at equal or better reach; 159 bones warm ≤ 6 ms"


# -- problems -----------------------------------------------------------------------------------
def chain_of(obj, name, count):
    pb, names = obj.pose.bones[name], []
    while pb is not None and (count <= 0 or len(names) < count):
        names.append(pb.name)
        pb = pb.parent
    return names


def targets_of(obj, rotations, effectors):
    """Blender's FK of ``rotations`` (dict) from rest: the effector tails, (T,3)."""
    import solve_problems as sp
    sp.clear_pose(obj)
    sp.set_pose(obj, rotations)
    return np.array([sp.world_tail(obj, name) for name in effectors])


def make_problems(obj, dqik, names, effectors, rng, cold, segments):
    """``(cold targets, warm path targets)``: lists of (T,3) arrays, all FK of in-limit poses."""
    import solve_problems as sp
    st = common.engine(dqik, "swing_twist")
    cold_targets = [targets_of(obj, sp.random_pose_in_limits(obj, names, rng, dqik), effectors)
                    for _ in range(cold)]
    # the path: smoothstep between random in-limit poses, interpolating each bone's (s_x, s_z, τ),
    # which stays inside the (convex) swing/twist set; refined until every step is ≤ MAX_STEP
    keys = [sp.random_pose_in_limits(obj, names, rng, dqik) for _ in range(segments + 1)]
    params = [{n: np.array(st.swing_twist_params(k[n])) for n in names} for k in keys]
    path = [targets_of(obj, keys[0], effectors)]
    for a, b in zip(params, params[1:]):
        steps = 4
        while True:
            segment = []
            for s in np.linspace(0, 1, steps + 1)[1:]:
                w = s * s * (3 - 2 * s)
                pose = {n: st.quat_from_swing_twist(*((1 - w) * a[n] + w * b[n])) for n in names}
                segment.append(targets_of(obj, pose, effectors))
            jumps = np.linalg.norm(np.diff([path[-1]] + segment, axis=0), axis=2).max()
            if jumps <= MAX_STEP:
                break
            steps = int(np.ceil(steps * jumps / (0.9 * MAX_STEP)))
        path += segment
    sp.clear_pose(obj)
    return cold_targets, path


# -- measuring ----------------------------------------------------------------------------------
class Bench:
    """One rig with targets; measures reach error and limit violation of the evaluated pose."""

    def __init__(self, dqik, kind, count, limits, quick, seed, obj=None, effectors=None,
                 posed=None):
        """A metarig (``kind``) or the rig ``obj`` with tasks on ``effectors`` (default: both
        hands and feet) and chain length ``count``; the problems pose ``posed`` (default: the
        chains' bones)."""
        import bpy
        import solve_problems as sp
        self.dqik, self.bpy, self.sp = dqik, bpy, sp
        self.obj = obj = common.new_rig(kind) if obj is None else obj
        common.use_quaternions(obj)
        self.limits = apply_preset(obj) if limits else False
        self.effectors = sp.EFFECTORS if effectors is None else effectors
        self.empties = sp.add_targets(obj, self.effectors, chain_count=count)
        self.model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
        self.names = sorted({n for e in self.effectors for n in chain_of(obj, e, count)}) \
            if posed is None else posed
        self.joints = np.array([self.model.index[n] for n in self.names])
        self.effector_idx = np.array([self.model.index[e] for e in self.effectors])
        self.limit_set = dqik.dq_ik_addon.blender.settings.scene_tasks.read_joints(obj, self.model)[0]
        rng = np.random.default_rng(seed)
        self.cold, self.path = make_problems(obj, dqik, self.names, self.effectors, rng,
                                             COLD[quick], SEGMENTS[quick])

    def rest(self):
        n = len(self.model)      # rotations and locations: the engine rows write the slides
        common.set_rotations(self.obj, np.tile([1.0, 0, 0, 0], (n, 1)), np.zeros((n, 3)))

    def move_targets(self, targets):
        for empty, target in zip(self.empties.values(), targets):
            empty.location = target

    def reach(self, targets):
        """Effector tail → target distances of the evaluated pose (call after an update)."""
        m = common.evaluated_matrices(self.obj)[self.effector_idx]
        tails = m[:, :3, 3] + m[:, :3, 1] * self.model.lengths[self.effector_idx, None]
        return np.linalg.norm(tails - targets, axis=1)

    def evaluated_violation(self):
        """Largest limit violation of the local rotations in the evaluated pose (Blender's IK)."""
        if not self.limits:
            return None
        m = common.evaluated_matrices(self.obj)
        parents = self.model.parents
        parent_m = np.where((parents >= 0)[:, None, None], m[np.maximum(parents, 0)], np.eye(4))
        local = np.linalg.inv(self.model.rest_offsets) @ np.linalg.inv(parent_m) @ m
        q = common.engine(self.dqik, "quaternion").matrix_to_quat(local[self.joints, :3, :3])
        subset = type(self.limit_set)(*(np.asarray(f)[self.joints] for f in self.limit_set))
        return float(common.engine(self.dqik, "limits").limit_violation(q, subset).max())

    def channel_violation(self):
        return self.sp.limit_violation(self.obj, self.names, self.dqik) if self.limits else None


def apply_preset(obj):
    """Apply DQ IK's HUMANOID limits if the operator exists; True if any bone got limits."""
    import bpy
    if not hasattr(bpy.types, "DQIK_OT_apply_preset"):
        return False
    bpy.context.view_layer.objects.active = obj
    with common.quiet():
        bpy.ops.dqik.apply_preset(preset='HUMANOID')
    return any(pb.dqik.use_limits for pb in obj.pose.bones)


def run_dq_solver(b, use_limits):
    saved = [pb.dqik.use_limits for pb in b.obj.pose.bones]
    if not use_limits:
        for pb in b.obj.pose.bones:
            pb.dqik.use_limits = False
    session = b.dqik.api.session_for(b.obj)
    session.tick()
    solver, task_names = session.solver, [task.name for task in session.last_result.tasks]
    b.rest()
    order = [b.effectors.index(n) for n in task_names]
    rest = np.tile([1.0, 0, 0, 0], (len(b.model), 1))
    out = {"cold": [], "warm": [], "cold_err": [], "warm_err": [], "violation": [], "iterations": []}

    def solve(targets, start, phase):
        """Solve from ``start`` ((rotations, locations); None locations: the given ones) and
        write the result, the pelvis's slide too (the HUMANOID preset turns on Translation)."""
        solver.retarget(targets[order])  # new targets for the same tasks
        ms, result = common.fastest_ms(lambda: solver.solve(start[0], locations=start[1]),
                                       common.same_warm_start(solver))
        out[phase].append(ms)
        out["iterations"].append(result.iterations)
        common.set_rotations(b.obj, result.rotations, result.locations)
        b.bpy.context.view_layer.update()
        out[phase + "_err"].extend(b.reach(targets))
        if use_limits:
            out["violation"].append((b.channel_violation(), b.evaluated_violation()))
        return result.rotations, result.locations

    for targets in b.cold:
        solve(targets, (rest, None), "cold")
    q = solve(b.path[0], (rest, None), "cold")
    out["cold"].pop()  # the path's first solve only seeds the warm start
    out["cold_err"][-len(b.effectors):] = []
    for targets in b.path[1:]:
        q = solve(targets, q, "warm")
    for pb, value in zip(b.obj.pose.bones, saved):
        pb.dqik.use_limits = value
    return out


def timed_update(b, targets, call=None):
    """Move the Empties, then time update (+ ``call`` + update) as when a user moves them, the
    same solve each repeat (``common.fastest_ms``): before each repeat the Empties are tagged
    again, so that the timed update evaluates them and what depends on them.

    Blender's IK is evaluated with the armature, whose pose channels it never changes: its timed
    update is the solve. With ``call`` (DQ IK's operator) the pose channels the solve started
    from are also restored before each repeat and evaluated untimed (the previous solve's update
    evaluated that pose), so the timed update evaluates only the Empties."""
    update = b.bpy.context.view_layer.update
    b.move_targets(targets)
    channels = common.rotations_of(b.obj)

    def restore():
        if call is not None:
            common.set_rotations(b.obj, channels)
            update()
        for empty in b.empties.values():
            empty.update_tag(refresh={'OBJECT'})

    solver = b.dqik.api.session_for(b.obj).solver
    if solver is not None:    # dqik.solve's solver: every repeat goes on from the last result
        restore = common.same_warm_start(solver, restore)

    def solve():
        update()
        if call is not None:
            if call() != {'FINISHED'}:
                raise RuntimeError("dqik.solve did not finish")
            update()
    return common.fastest_ms(solve, restore)[0]


def run_updates(b, call=None, violation=None):
    """Cold (rest, then target) and warm (path) runs timed by ``timed_update``."""
    out = {"cold": [], "warm": [], "cold_err": [], "warm_err": [], "violation": []}
    for phase, problems in (("cold", b.cold), ("warm", b.path)):
        for i, targets in enumerate(problems):
            if phase == "cold" or i == 0:
                b.rest()
            ms = timed_update(b, targets, call)
            if phase == "warm" and i == 0:
                continue  # seeds the warm run
            out[phase].append(ms)
            out[phase + "_err"].extend(b.reach(targets))
            if b.limits:
                out["violation"].append(violation())
    return out


def run_dq_operator(b):
    b.bpy.context.view_layer.objects.active = b.obj
    with common.quiet():  # the operator reports to stdout in background mode
        return run_updates(b, b.bpy.ops.dqik.solve,
                           lambda: (b.channel_violation(), b.evaluated_violation()))


def run_blender(b, solver, count, **ik_param):
    obj = b.obj
    constraints = []
    for name, empty in b.empties.items():
        c = obj.pose.bones[name].constraints.new('IK')
        c.target, c.chain_count = empty, count
        constraints.append((obj.pose.bones[name], c))
    obj.pose.ik_solver = solver
    for key, value in ik_param.items():
        setattr(obj.pose.ik_param, key, value)
    try:
        return run_updates(b, None, lambda: (None, b.evaluated_violation()))
    finally:
        for pb, c in constraints:
            pb.constraints.remove(c)
        obj.pose.ik_solver = 'LEGACY'
        b.bpy.context.view_layer.update()


# -- report -------------------------------------------------------------------------------------
def row(kind, chain, label, out):
    cold, warm = np.median(out["cold"]), np.median(out["warm"])
    ce, we = np.array(out["cold_err"]) * 1e3, np.array(out["warm_err"]) * 1e3
    helper = [h for h, _ in out["violation"] if h is not None]
    evaluated = [e for _, e in out["violation"] if e is not None]
    viol = (f"{max(helper):.2g}" if helper else "–") + " / " + (f"{max(evaluated):.2g}" if evaluated else "–")
    return {"cells": [kind, chain, label, f"{cold:.2f}", f"{warm:.2f}",
                      f"{np.median(ce):.3g} / {ce.max():.3g}", f"{np.median(we):.3g} / {we.max():.3g}",
                      viol,
                      f"{np.median(it):.0f} / {max(it)}" if (it := out.get("iterations")) else "–"],
            "warm": warm, "warm_err": we}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer problems: 4 cold, a 1-segment warm path")
    args = parser.parse_args()
    dqik = common.install()
    rows, notes, started = [], [], time.perf_counter()
    for kind, bones, seed in (("basic", 29, 10), ("human", 159, 20)):
        for chain, count in CHAINS:
            b = Bench(dqik, kind, count, True, args.quick, seed + count)
            name = f"{kind} ({bones})"
            runs = [("DQ IK Solver", run_dq_solver(b, True)),
                    ("DQ IK Solver, no limits", run_dq_solver(b, False)),
                    ("DQ IK operator", run_dq_operator(b)),
                    ("Blender Standard", run_blender(b, 'LEGACY', count)),
                    ("Blender iTaSC", run_blender(b, 'ITASC', count))]
            if not b.limits:
                runs.pop(1)
            table = {label: row(name, chain, label, out) for label, out in runs}
            rows += [r["cells"] for r in table.values()]
            notes.append((kind, bones, chain, len(b.cold), len(b.path) - 1, b.limits, table))
    print(f"\n## IK solve: DQ IK vs Blender IK, 4 effectors (hand.L/R, foot.L/R)"
          f"{' (--quick)' if args.quick else ''}\n")
    print(common.versions() + f"; load average {os.getloadavg()[0]:.2f}\n")
    print(common.markdown(["rig", "chain", "solver", "cold ms median", "warm ms median",
                           "reach mm cold median / max", "reach mm warm median / max",
                           "max limit violation rad: helper / evaluated", "DQ iterations median / max"], rows))
    kind, bones, chain, cold, warm, limits, _ = notes[0]
    print(f"\nchain: root = chain length 0 (to spine, 18 bones); limb = chain length 3. "
          f"{cold} cold problems and {warm} warm steps (≤ {MAX_STEP * 100:.0f} cm each) per rig "
          "and chain setting.")
    print("Limits: " + ("HUMANOID preset (dqik.apply_preset); Blender's IK was given no limits, its "
                        "violation is measured against the same preset. Violation 'helper' = "
                        "solve_problems.limit_violation on the pose channels (DQ IK only); 'evaluated' "
                        "= the engine's limit_violation of the local rotations of the evaluated "
                        "PoseBone.matrix (float32)." if limits else
                        "dqik.apply_preset is not available: no limits anywhere; problems are random "
                        "rotations ≤ 0.6 rad of the chain bones."))
    print(f"Run time {time.perf_counter() - started:.0f} s.\n\nGoals: {GOALS}.")
    for kind, bones, chain, _, _, _, table in notes:
        std = table["Blender Standard"]
        for label in ("DQ IK Solver", "DQ IK operator"):
            dq = table[label]
            if kind == "basic":
                ok = dq["warm"] <= 2.0 and dq["warm"] <= 5 * std["warm"] and \
                    np.median(dq["warm_err"]) <= max(np.median(std["warm_err"]), 1e-3)
                print(f"- {kind} {chain}, {label}: warm {dq['warm']:.2f} ms (≤ 2), "
                      f"{dq['warm'] / std['warm']:.1f}× Standard (≤ 5), reach median "
                      f"{np.median(dq['warm_err']):.3g} vs {np.median(std['warm_err']):.3g} mm → "
                      f"{'met' if ok else 'NOT met'}")
            else:
                print(f"- {kind} {chain}, {label}: warm {dq['warm']:.2f} ms (≤ 6) → "
                      f"{'met' if dq['warm'] <= 6.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
