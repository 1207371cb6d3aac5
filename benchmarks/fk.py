"""Forward kinematics: DQ IK's engine vs Blender's own pose evaluation, on the Rigify metarigs.

For each rig (basic human, 29 bones; human, 159 bones) and each of N random poses (rotations up to
90° on every bone, locations up to 0.2 m, as in tests/blender/test_fk_parity.py), in one run:

- engine: ``model.matrices(rotations, locations)`` (numpy, depth-batched), timed alone;
- Blender: ``foreach_set`` of rotations and locations + ``view_layer.update()`` + ``foreach_get``
  of ``PoseBone.matrix``, timed together (what one FK costs when Blender does it).

Each timing is the fastest of 3 runs (``common.fastest_ms``).

Prints median and p90 ms per pose and the largest difference between the two results, which must
stay at float32 precision (≤ 1e-5) or the timing compares different work. Goal: engine FK ≤ 0.3 ms
for 159 bones.

Run: ``cd /work/main && .venv/bin/python benchmarks/fk.py [--poses N]`` (default 300; also runs
with ``.venv-lts/bin/python``).
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

GOAL_MS = 0.3


def measure(dqik, kind, poses, seed):
    import bpy
    import rigs
    obj = common.new_rig(kind)
    common.use_quaternions(obj)
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
    rng = common.np.random.default_rng(seed)
    n = len(model)
    engine_ms, blender_ms, worst = [], [], 0.0
    for _ in range(poses):
        rotations = rigs.random_quaternions(rng, n, math.pi / 2)
        locations = rng.uniform(-0.2, 0.2, size=(n, 3))
        ms, ours = common.fastest_ms(lambda: model.matrices(rotations, locations))
        engine_ms.append(ms)

        def blender_fk():
            common.set_rotations(obj, rotations, locations)
            bpy.context.view_layer.update()
            return common.evaluated_matrices(obj)
        ms, theirs = common.fastest_ms(blender_fk)
        blender_ms.append(ms)
        worst = max(worst, float(abs(ours - theirs).max()))
    return n, common.median_p90(engine_ms), common.median_p90(blender_ms), worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--poses", type=int, default=300, help="random poses per rig (≥ 200)")
    args = parser.parse_args()
    dqik = common.install()
    rows, verdicts = [], []
    for kind, seed in (("basic", 1), ("human", 2)):
        n, (e_med, e_p90), (b_med, b_p90), worst = measure(dqik, kind, args.poses, seed)
        rows.append([f"{kind} metarig", n, f"{e_med:.3f}", f"{e_p90:.3f}", f"{b_med:.3f}",
                     f"{b_p90:.3f}", f"{b_med / e_med:.1f}×", f"{worst:.1e}"])
        if n == 159:
            verdicts.append(f"Goal: engine FK ≤ {GOAL_MS} ms for 159 bones: median {e_med:.3f} ms, "
                            f"p90 {e_p90:.3f} ms → {'met' if e_med <= GOAL_MS else 'NOT met'} "
                            "(judged on the median)")
    print(f"\n## FK: DQ IK engine vs Blender pose evaluation ({args.poses} random poses per rig)\n")
    print(common.versions() + "\n")
    print(common.markdown(
        ["rig", "bones", "engine ms median", "engine ms p90", "Blender ms median",
         "Blender ms p90", "Blender / engine", "max abs diff"], rows))
    print("\nBlender = foreach_set rotations+locations, view_layer.update(), foreach_get matrix.")
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
