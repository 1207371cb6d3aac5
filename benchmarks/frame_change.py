"""Solve on frame change: milliseconds per ``scene.frame_set`` with DQ IK solving on every frame
(``Object.dqik.use_solve_on_frame_change``), against Blender's IK constraints on the same animated
targets and against the bare frame change, in one run.

Rig: the Rigify human metarig (159 bones) with DQ IK's HUMANOID limits; an Empty per effector
(hand.L/R, foot.L/R), one DQ IK task (priority 1) or one Blender IK constraint (Standard solver,
default settings) per effector, with chain length 0 (``root``: to the root bone ``spine``) or 3
(``limb``), for both alike. The Empties are keyed on every frame along ``solve.make_problems``'
warm path: Blender's FK of smoothly interpolated in-limit poses of the chain bones, ≤ 5 cm per
frame per target, so every frame is reachable.

- ``bare``: no IK at all (option off, no constraints): the frame change by itself (the Empties'
  animation and the rig's evaluation);
- ``Blender Standard``: the IK constraints, pose channels at rest (Blender's IK solves from them
  on every evaluation);
- ``DQ IK``: the option on: the handler solves every frame (each a step of one frame, warm from
  the previous frame's result), writes the pose, and Blender evaluates it in the same frame;
- ``pose write alone``: a ``frame_change_post`` handler that writes the rotation channels back
  unchanged as DQ IK writes them (``foreach_set``, the object tagged) and solves nothing: the
  least any solver that writes pose channels from Python adds to a frame change. Blender then
  evaluates the whole pose again, where an IK constraint re-evaluates only the bones that
  depend on its target.

Then the cause of that least cost: ``copy for evaluation`` times ``Object.update_tag()`` and
``view_layer.update()`` on the rig, with nothing changed, and again with three muted Copy
Location constraints added to every bone. A tag from Python makes Blender copy the whole
armature object, every pose channel with its constraints, into its evaluated copy before it
evaluates (the Transform and Pose components tag copy-on-evaluation,
``source/blender/depsgraph/intern/node/deg_node_component.hh``); muted constraints are copied
but never evaluated, so what they add is the copy alone. Animation and IK constraints write into
the evaluated copy and never make it.

A playback: the pose at rest, ``frame_set(1)`` untimed (for DQ IK, a jump solved from rest), then
each of frames 2..N timed. Each configuration plays ``PLAYBACKS`` times; a frame's time is the
fastest of its playbacks (the machine's other load only adds time; ``common.fastest_ms``). Reach:
each effector's evaluated tail (``PoseBone.matrix``, as the frame change left it) to its target,
on every frame. Turn: the largest rotation of a chain bone's evaluated matrix from one frame to
the next (its median over the frames, its largest, and how many frames turn one by more than
10°): the source poses move ≤ 5 cm a frame, so a large turn is the solver jumping to another
of the limbs' redundant poses. Blender's IK constraints know nothing of DQ IK's limits.
``DQ IK tick ms``: the session's own time for the solve (read, solve, write) on
each frame (fastest of the playbacks), part of the frame change; the handler around it adds
about 0.02 ms, and Blender's evaluation of the written pose the rest.

Run: ``cd /work/main && .venv/bin/python benchmarks/frame_change.py [--quick]`` (also with
``.venv-lts/bin/python``). Seeds are fixed; timings vary with machine load.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import solve  # noqa: E402
from common import np  # noqa: E402

FRAMES = {False: 120, True: 40}
PLAYBACKS = {False: 3, True: 2}
GOAL_RATIO = 3.0
GOAL = f"a frame change with solving on ≤ {GOAL_RATIO:g}× one with Blender's IK constraints"


class Animated:
    """The human metarig with keyed targets over ``frames`` frames, chain length ``count``."""

    def __init__(self, dqik, count, frames, seed):
        import bpy
        import solve_problems as sp
        self.bpy, self.dqik = bpy, dqik
        self.obj = obj = common.new_rig("human")
        common.use_quaternions(obj)
        solve.apply_preset(obj)
        self.effectors = sp.EFFECTORS
        self.empties = sp.add_targets(obj, self.effectors, chain_count=count)
        self.model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
        self.index = np.array([self.model.index[e] for e in self.effectors])
        names = sorted({n for e in self.effectors for n in solve.chain_of(obj, e, count)})
        self.chain = np.array([self.model.index[n] for n in names])
        path, segments = [], 2
        while len(path) < frames:
            rng = np.random.default_rng(seed)
            path = solve.make_problems(obj, dqik, names, self.effectors, rng, 0, segments)[1]
            segments += 1
        self.path = path[:frames]
        for frame, targets in enumerate(self.path, start=1):
            for empty, target in zip(self.empties.values(), targets):
                empty.location = target
                empty.keyframe_insert("location", frame=frame)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end = 1, frames
        self.step = max(float(np.linalg.norm(np.diff(self.path, axis=0), axis=2).max()), 0.0)

    def rest(self):
        common.set_rotations(self.obj, np.tile([1.0, 0, 0, 0], (len(self.model), 1)))
        self.bpy.context.view_layer.update()

    def shown(self, targets):
        """``(reach, turns)`` of the pose shown: each effector's evaluated tail's distance to its
        target, and the chain bones' evaluated rotations (k,3,3: their axes, scale taken out)."""
        m = common.evaluated_matrices(self.obj)
        tails = m[self.index, :3, 3] + m[self.index, :3, 1] * self.model.lengths[self.index, None]
        axes = m[self.chain, :3, :3]
        return np.linalg.norm(tails - targets, axis=1), \
            axes / np.linalg.norm(axes, axis=1, keepdims=True)

    def play(self, playbacks, session=None):
        """Per-frame ms (fastest over playbacks, frames 2..N), reach errors (m, every frame and
        effector of the last playback), the largest turn of a chain bone from one frame to the
        next (degrees, the last playback) and, with a ``session``, its tick ms per frame."""
        scene, frames = self.bpy.context.scene, len(self.path)
        times, ticks = np.full(frames - 1, np.inf), np.full(frames - 1, np.inf)
        for _ in range(playbacks):
            self.rest()
            scene.frame_set(1)
            errors, turned = self.shown(self.path[0])
            errors, turns = [errors], []
            for frame in range(2, frames + 1):
                begun = time.perf_counter()
                scene.frame_set(frame)
                times[frame - 2] = min(times[frame - 2], (time.perf_counter() - begun) * 1e3)
                reach, rotations = self.shown(self.path[frame - 1])
                errors.append(reach)
                turns.append(_largest_turn(turned, rotations))
                turned = rotations
                if session is not None:
                    ticks[frame - 2] = min(ticks[frame - 2], session.last_result.ms)
        return times, np.concatenate(errors), np.array(turns), \
            ticks if session is not None else None


def _largest_turn(before, after):
    """The largest angle (degrees) between two stacks of rotation matrices (k,3,3), row by row:
    ``arccos((tr(Aᵀ B) − 1) / 2)``."""
    cosine = (np.einsum('kij,kij->k', before, after) - 1.0) / 2.0
    return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))).max())


def run(dqik, chain, count, frames, playbacks, seed):
    a = Animated(dqik, count, frames, seed)
    rows = {}
    with common.quiet():
        rows["bare"] = a.play(playbacks)
        constraints = []
        for name, empty in a.empties.items():
            c = a.obj.pose.bones[name].constraints.new('IK')
            c.target, c.chain_count = empty, count
            constraints.append((a.obj.pose.bones[name], c))
        rows["Blender Standard"] = a.play(playbacks)
        for pb, c in constraints:
            pb.constraints.remove(c)
        a.obj.dqik.use_solve_on_frame_change = True
        session = dqik.api.session_for(a.obj)
        session.invalidate()        # a new solver: nothing remembered
        rows["DQ IK, first playback"] = a.play(1, session)
        rows["DQ IK, played again"] = a.play(playbacks, session)
        a.obj.dqik.use_solve_on_frame_change = False
        rows["pose write alone"] = play_writing(a, playbacks)
    return a, rows


def play_writing(a, playbacks):
    """``Animated.play`` with the pose's rotation channels written back unchanged on every frame
    change (``common.writing_back``)."""
    with common.writing_back(a.obj, "rotation_quaternion"):
        return a.play(playbacks)


def copy_cost():
    """(ms, ms): ``update_tag`` + ``view_layer.update`` on the human metarig, as it is and with
    three muted constraints on every bone (fastest of ``common.REPEATS``)."""
    import bpy
    obj = common.new_rig("human")
    update = bpy.context.view_layer.update

    def tagged():
        obj.update_tag(refresh={'OBJECT'})
        update()
    update()
    plain = common.fastest_ms(tagged)[0]
    for bone in obj.pose.bones:
        for _ in range(3):
            bone.constraints.new('COPY_LOCATION').mute = True
    update()
    return plain, common.fastest_ms(tagged)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{FRAMES[True]} frames, "
                        f"{PLAYBACKS[True]} playbacks")
    args = parser.parse_args()
    dqik = common.install()
    frames, playbacks = FRAMES[args.quick], PLAYBACKS[args.quick]
    started, table, ratios = time.perf_counter(), [], []
    for chain, count in solve.CHAINS:
        a, rows = run(dqik, chain, count, frames, playbacks, 40 + count)
        for label, (times, errors, turns, ticks) in rows.items():
            median, p90 = common.median_p90(times)
            mm = errors * 1e3
            tick = "–" if ticks is None else "{:.2f} / {:.2f}".format(*common.median_p90(ticks))
            table.append(["human (159)", chain, label, f"{median:.2f}", f"{p90:.2f}", tick,
                          *(["–", "–"] if label in ("bare", "pose write alone") else
                            [f"{np.median(mm):.3g} / {mm.max():.3g}",
                             f"{np.median(turns):.1f} / {turns.max():.0f} ({(turns > 10).sum()})"])])
        blender = np.median(rows["Blender Standard"][0])
        ratios.append((chain, np.median(rows["DQ IK, first playback"][0]) / blender,
                       np.median(rows["pose write alone"][0]) / blender))
    print(f"\n## Solve on frame change: ms per scene.frame_set, 4 animated targets"
          f"{' (--quick)' if args.quick else ''}\n")
    print(common.versions() + f"; load average {os.getloadavg()[0]:.2f}\n")
    print(common.markdown(["rig", "chain", "frame change", "ms median", "ms p90",
                           "DQ IK tick ms median / p90", "reach mm median / max",
                           "turn ° median / max (frames > 10°)"], table))
    print(f"\n{frames} frames (the targets move ≤ {solve.MAX_STEP * 100:g} cm a frame), frames "
          f"2–{frames} timed, fastest of {playbacks} playbacks per frame (DQ IK's first "
          "playback: its one playback, every frame solved; played again: each frame's solve "
          "remembered by its exact inputs). Run time "
          f"{time.perf_counter() - started:.0f} s.\n")
    print(f"Goal: {GOAL} (medians): " + "; ".join(
        f"chain {chain} {ratio:.2f}× → {'met' if ratio <= GOAL_RATIO else 'NOT met'} (a pose "
        f"write alone: {floor:.2f}×)" for chain, ratio, floor in ratios))
    plain, muted = copy_cost()
    print(f"\nCopy for evaluation (update_tag + view_layer.update, nothing changed): {plain:.3f} "
          f"ms on the rig; {muted:.3f} ms with three muted constraints on each of its bones.")


if __name__ == "__main__":
    main()
