"""Full-body posing: what a floating pelvis and balance cost, per warm solve and per live tick, on
the 159-bone human metarig and a Rigify rig generated from it (706 bones), next to Blender's
Standard IK on the same feet and hands, in one run.

The problem: the HUMANOID preset (limits, Translation on the pelvis, the feet Support), both feet
planted where they stand (position and rotation, priority 1), both hands (priority 3) reaching
forward and down along a path of 2 cm steps, every chain to the root. On the generated rig the
tasks are on the FK controls (``rigs.RIGIFY_FK_LIMBS``: ``foot_fk``, ``hand_fk``) with the limbs
in FK mode, the pelvis is ``torso`` and the supports the deforming feet. Three set-ups, each on
the same path from the standing pose, the hands' targets back at its start (``configure``):

- ``plain``: Translation and Balance off (what DQ IK did before full-body posing);
- ``translation``: the pelvis slides;
- ``translation + balance``: and Balance at priority 2.

Timed:

- ``solve``: the warm engine ``Solver.solve`` of the rig's session after each step's targets
  were written into it (``Solver.retarget``), fastest of 3 runs from the same warm state
  (``common.fastest_ms``, ``common.same_warm_start``): median and p90 over the path;
- ``live tick``: the tick after each move of the targets (reading what moved, the warm solve
  within ``Object.dqik.time_budget_ms``, writing the pose), timed once where it runs while a
  target is dragged: ``LivePosing.follow()`` in the depsgraph update that evaluates the moved
  targets (the evaluation itself is Blender's, before the handler): median and p90;
- ``hands off``: after the last step, how far the hands are from their targets (the largest,
  mm) after the live ticks, and after an untimed solve (``Session.tick``) from there: the
  closest reachable pose. The two differ where the live ticks did not keep up;
- ``Blender Standard``: IK constraints on the same effectors (chain to the root, default
  settings), the ``view_layer.update()`` after moving the targets, which is its solve (it cannot
  move the pelvis or balance: the reference for what an update of IK costs).

Run: ``.venv/bin/python benchmarks/fullbody.py [--quick]``.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import np  # noqa: E402

GOALS = "live tick ≤ 3 ms and warm Rigify solve ≤ 4 ms with translation and balance on"
SETUPS = (("plain", False, False), ("translation", True, False),
          ("translation + balance", True, True))
STEP = np.array([0.0, -0.02, -0.006])      # forward (−Y) and a little down, per step


def scene(dqik, kind):
    """``(rig, feet, hands, pelvis)``: the rig with the preset applied, feet and hands as in the
    module docstring (bone names), and its pelvis bone's name."""
    import bpy
    import rigs
    if kind == "human":
        obj = common.new_rig("human")
        feet, hands = ["foot.L", "foot.R"], ["hand.L", "hand.R"]
    else:
        bpy.ops.wm.read_homefile(use_empty=True)
        with common.quiet():
            obj = rigs.generate_rigify_rig()
        rigs.fk_mode(obj)
        feet, hands = ["foot_fk.L", "foot_fk.R"], ["hand_fk.L", "hand_fk.R"]
    with common.quiet():
        bpy.ops.dqik.apply_preset()
    pelvis = next(pb.name for pb in obj.pose.bones if pb.dqik.use_translation)
    for names, priority in ((feet, 1), (hands, 3)):
        for name in names:
            empty = bpy.data.objects.new(f"target_{name}", None)
            bpy.context.scene.collection.objects.link(empty)
            empty.matrix_world = obj.matrix_world @ obj.pose.bones[name].matrix
            empty.location = obj.matrix_world @ obj.pose.bones[name].tail
            settings = obj.pose.bones[name].dqik
            settings.use_target, settings.target = True, empty
            settings.priority, settings.chain_count = priority, 0
            settings.use_rotation = priority == 1
    bpy.context.view_layer.update()
    return obj, feet, hands, pelvis


def hand_path(obj, hands, steps):
    """Each step's hand target locations (steps, 2, 3)."""
    start = np.array([np.array(obj.matrix_world @ obj.pose.bones[name].tail) for name in hands])
    return start[None] + np.arange(1, steps + 1)[:, None, None] * STEP


def configure(obj, pelvis, translation, balance, hands, path):
    """The set-up's settings, the rig back in its rest pose and the hands' targets back where
    the path starts (the hands' tails at rest): each set-up's first tick then meets its targets
    where the rig stands, so that no set-up starts from the compromise the one before ended in
    at the path's far end (a solve from rest to targets out of reach, whose end pose, and with
    it every step after it, varied with the last bits of the steps before)."""
    import bpy
    obj.pose.bones[pelvis].dqik.use_translation = translation
    obj.dqik.use_balance = balance
    for pb in obj.pose.bones:
        pb.location = (0.0, 0.0, 0.0)
        pb.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        pb.rotation_euler = (0.0, 0.0, 0.0)
    place(bpy, hands, path[0] - STEP)
    bpy.context.view_layer.update()


def place(bpy, hands, goals):
    """The hands' targets to ``goals`` by their ``matrix_world``, which a tick reads at once."""
    from mathutils import Matrix
    for name, goal in zip(hands, goals):
        bpy.data.objects[f"target_{name}"].matrix_world = Matrix.Translation(goal)


def time_solves(dqik, obj, hands, path):
    """Warm ``Solver.solve`` ms per step (from the previous step's result, with the step's
    targets: the session's tick sets them, untimed), and the balance report's largest error."""
    import bpy
    session = dqik.api.session_for(obj)
    with common.quiet():
        session.tick()
    times, worst = [], 0.0
    for goals in path:
        place(bpy, hands, goals)
        bpy.context.view_layer.update()
        solver, start = session.solver, session.last_rotations.copy()
        memory = solver.warm_start()
        with common.quiet():
            snapshot = session.tick()
        assert session.solver is solver
        ms, _ = common.fastest_ms(lambda: solver.solve(start), lambda: solver.resume(memory))
        times.append(ms)
        worst = max([worst] + [task.errors.get("balance", 0.0) for task in snapshot.tasks])
    return times, worst


def time_ticks(dqik, obj, hands, path):
    """``(ms, behind)``: ms of each live tick that follows a move of the targets:
    ``LivePosing.follow`` in the depsgraph update after the move, as while a target is dragged
    (Blender has evaluated the moved targets before it calls the handler); and how far the
    hands are from their targets after the last step's tick and after an untimed solve from
    there (mm, ``hands_off``)."""
    import bpy
    live = dqik.dq_ik_addon.blender.solving.live_posing.LivePosing(obj)
    with common.quiet():
        live.tick()
    bpy.context.view_layer.update()
    times, follow = [], live.follow

    def timed_follow():
        begun = time.perf_counter()
        follow()
        times[-1] += (time.perf_counter() - begun) * 1e3
    live.follow = timed_follow
    for goals in path:
        place(bpy, hands, goals)
        times.append(0.0)
        bpy.context.view_layer.update()
    session = live.session
    live_off = hands_off(session.last_result, hands)
    with common.quiet():
        untimed_off = hands_off(session.tick(), hands)
    live.cancel()
    assert live.failure is None and all(times), live.failure
    return times, (live_off, untimed_off)


def hands_off(snapshot, hands):
    """The largest distance (mm) of the ``hands`` from their targets in ``snapshot``."""
    return 1e3 * max(task.errors["position"] for task in snapshot.tasks if task.name in hands)


def time_blender(obj, feet, hands, path):
    """Blender's Standard IK: constraints on the same bones, the update after each move."""
    import bpy
    for pb in obj.pose.bones:
        pb.dqik.use_target = False
    constraints = []
    for name in feet + hands:
        constraint = obj.pose.bones[name].constraints.new('IK')
        constraint.target, constraint.chain_count = bpy.data.objects[f"target_{name}"], 0
        constraints.append((obj.pose.bones[name], constraint))
    bpy.context.view_layer.update()
    times = []
    for goals in path:
        place(bpy, hands, goals)
        begun = time.perf_counter()
        bpy.context.view_layer.update()
        times.append((time.perf_counter() - begun) * 1e3)
    for pose_bone, constraint in constraints:
        pose_bone.constraints.remove(constraint)
    return times


def _ms(samples):
    return [f"{value:.2f}" for value in common.median_p90(samples)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    steps = 12 if parser.parse_args().quick else 40
    dqik = common.install()
    rows = []
    for kind, label in (("human", "human metarig (159 bones)"),
                        ("rigify", "generated Rigify (706 bones)")):
        obj, feet, hands, pelvis = scene(dqik, kind)
        path = hand_path(obj, hands, steps)
        for name, translation, balance in SETUPS:
            configure(obj, pelvis, translation, balance, hands, path)
            solves, worst = time_solves(dqik, obj, hands, path)
            configure(obj, pelvis, translation, balance, hands, path)
            ticks, (behind, untimed) = time_ticks(dqik, obj, hands, path)
            rows.append([label, name, *_ms(solves), *_ms(ticks), f"{behind:.0f} / {untimed:.0f}",
                         f"{worst * 1e3:.2f}" if balance else "–"])
        configure(obj, pelvis, False, False, hands, path)
        blender = time_blender(obj, feet, hands, path)
        rows.append([label, "Blender Standard IK (update)", *_ms(blender), "–", "–", "–", "–"])
    print(f"# Full-body posing ({common.versions()}); goals: {GOALS}\n")
    print(common.markdown(["rig", "set-up", "solve ms median", "p90", "live tick ms median",
                           "p90", "hands off, live / untimed (mm)", "balance outside (mm)"],
                          rows))


if __name__ == "__main__":
    main()
