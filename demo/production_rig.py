"""The demo's production-rig scene: Blender's production rig, a Rigify rig generated from the human
metarig (706 bones, Rigify's MCH/ORG/DEF layers and their constraints), its limbs in FK mode.

- Targets (Empties) on the FK controls ``hand_fk.L/R`` and ``foot_fk.L/R``, chain length 4 (the
  FK limb and the locked MCH bone between the effector and the lower limb), at priority 1; each
  is the tail of its control in a random pose of the twelve FK limb controls (forward
  kinematics, so provably reachable) under the ``torso`` control turned by ``TORSO_TURN``;
  then the limbs go back to rest, the torso stays turned.
- A wall made as a user makes one: ``bpy.ops.mesh.primitive_cube_add()`` and an object scale of
  ``WALL_SCALE`` (not applied), the only object of the rig's collider collection. It stands on
  the floor behind the left arm, parallel to the way from the shoulder to the hand's target,
  on the side the hand moves to, ``WALL_GAP`` beyond the rest pose's arm capsules: the arm
  swings towards it and has to keep clear of it on its way to the target.
- Solved from that pose by ``bpy.ops.dqik.solve()``, once without the wall (to show how far
  into it the left arm would go) and once with it. Measured in the pose Blender evaluates after
  the solve: the tails of the DEF bones the mesh follows (``DEF-hand.L`` …, after Rigify's
  constraints; they coincide with the FK controls' tails) against the targets, and the deepest
  capsule clearance against the wall of the FK controls, of the DEF bones and of every bone
  shown or deforming (the finger controls and the bones the mesh follows, which the solve keeps
  clear with the limbs that carry them through Rigify's constraints,
  ``dq_ik_addon/blender/rig/constraint_followers.py``).
- Rendered (``rigify_fk.png``): the DEF bones' proxies, coloured as the metarig's bones they
  were generated from, the targets and the wall; saved as ``dq_ik_demo_rigify.blend``.
"""

import math
import os

import numpy as np
from console import captured_output, timed_operator
from workbench import (
    COLOURS,
    bone_roles,
    build_bone_proxy,
    build_target_spheres,
    frame_camera,
    material,
    render,
    setup_render,
)

SEED = 16
TORSO_TURN = math.radians(20.0)   # about the world Z axis
POSE_ANGLE = 0.6                  # radians: each FK control turns up to this much
CHAIN_COUNT = 4
WALL_SCALE = (0.6, 0.04, 1.2)     # a 2 m cube: a wall 1.2 m wide, 8 cm thick, 2.4 m high
WALL_GAP = 0.01                   # metres between the rest pose's arm capsules and the wall
WALL_INSET = 0.1                  # metres from the shoulder along the arm to the wall's edge
WALL_LIMB = "arm.L"
METARIG_FEET, METARIG_HANDS = ("foot.L", "foot.R"), ("hand.L", "hand.R")
CAMERA_VIEW = (0.9, -1.0, 0.6)     # from the rig towards the camera: front-right, above
IMAGE, BLEND = "rigify_fk.png", "dq_ik_demo_rigify.blend"


def deform_bone(control):
    """The DEF bone that follows an FK control: ``hand_fk.L`` → ``DEF-hand.L``."""
    return "DEF-" + control.replace("_fk", "")


def fk_controls():
    """The twelve FK limb controls the tasks' chains turn."""
    import rigs
    return [name for names in rigs.RIGIFY_FK_LIMBS.values() for name in names]


def effectors():
    """The FK controls that get a target: ``hand_fk.L``, ``foot_fk.L``, … ."""
    import rigs
    return [names[0] for names in rigs.RIGIFY_FK_LIMBS.values()]


def place_targets_by_fk(rig, empties, rng):
    """Turn the FK controls at random (≤ ``POSE_ANGLE`` each), move each target to its DEF
    bone's tail, then put the limbs back to rest; returns {effector: goal}."""
    import rigs
    import solve_problems as sp
    controls = fk_controls()
    sp.set_pose(rig, {name: rigs.random_quaternions(rng, 1, POSE_ANGLE)[0] for name in controls})
    goals = {name: sp.world_tail(rig, deform_bone(name)) for name in empties}
    for name, empty in empties.items():
        empty.location = goals[name]
    sp.set_pose(rig, {name: (1.0, 0.0, 0.0, 0.0) for name in controls})
    return goals


def add_wall(rig, dqik, goal):
    """The scaled-cube wall behind the arm ``WALL_LIMB`` (module docstring), in a new collection
    ``Colliders`` made the rig's colliders. ``goal``: the hand's target; the rig at rest."""
    import bpy
    import rigs
    import solve_problems as sp
    arm = rigs.RIGIFY_FK_LIMBS[WALL_LIMB]
    bones = rig.pose.bones
    shoulder = np.array(rig.matrix_world @ bones[arm[-1]].head)
    way = np.array([goal[0] - shoulder[0], goal[1] - shoulder[1], 0.0])
    way /= np.linalg.norm(way)
    behind = np.cross((0.0, 0.0, 1.0), way)
    if (goal - sp.world_tail(rig, arm[0])) @ behind < 0.0:      # the side the hand moves to
        behind = -behind
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(rig)
    radii, _ = sp.capsule_radii(rig, dqik, model)
    # a capsule's farthest point along ``behind`` is at its head or its tail
    rest_reach = max((np.array(rig.matrix_world @ end) - shoulder) @ behind
                     + radii[model.index[name]] for name in arm
                     for end in (bones[name].head, bones[name].tail))
    face = rest_reach + rig.dqik.margin + WALL_GAP
    centre = shoulder + way * (WALL_INSET + WALL_SCALE[0]) + behind * (face + WALL_SCALE[1])
    centre[2] = WALL_SCALE[2]                                   # standing on the floor
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.mesh.primitive_cube_add(location=centre,             # its X along the way
                                    rotation=(0.0, 0.0, math.atan2(way[1], way[0])))
    wall = bpy.context.active_object
    wall.name = "wall"
    wall.scale = WALL_SCALE
    wall.data.materials.append(material("wall", COLOURS["wall"]))   # see-through in renders
    collection = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(collection)
    rigs.move_to_collection(wall, collection)
    rig.dqik.colliders = collection
    return wall


def solve_from_rest(rig, dqik):
    """The FK limbs back to rest, then ``bpy.ops.dqik.solve()``; its report, wall time (ms) and
    the session's ``last_result``; the solved pose evaluated."""
    import bpy
    import solve_problems as sp
    sp.set_pose(rig, {name: (1.0, 0.0, 0.0, 0.0) for name in fk_controls()})
    bpy.context.view_layer.objects.active = rig
    result, reports, elapsed_ms = timed_operator(bpy.ops.dqik.solve)
    if result != {'FINISHED'}:
        raise SystemExit(f"production rig: dqik.solve returned {result}: {reports}")
    bpy.context.view_layer.update()
    return reports, elapsed_ms, dqik.api.session_for(rig).last_result


def clearance_mm(rig, dqik, names):
    """The deepest capsule clearance (mm) of the bones ``names`` against the wall."""
    import solve_problems as sp
    return round(sp.deepest_clearance(rig, dqik, names) * 1e3, 3)


def deform_roles(rig, metarig):
    """{DEF bone: the role (``workbench.bone_roles``) of the metarig bone it was generated from}
    (a limb's segments too: ``DEF-upper_arm.L.001`` is ``upper_arm.L``'s), so that the bones
    are coloured as in the metarig's images."""
    roles = bone_roles(metarig, METARIG_FEET, METARIG_HANDS)
    out = {}
    for pb in rig.pose.bones:
        if pb.name.startswith("DEF-"):
            name = pb.name[len("DEF-"):]
            out[pb.name] = roles.get(name) or roles.get(name.rsplit(".", 1)[0], "other")
    return out


def render_scene(rig, metarig, empties, path, caption):
    """The DEF bones' proxies coloured by limb, the target spheres and the wall, seen from the
    front-right and above (the gap between the left arm and the wall shows)."""
    import bpy
    scene = bpy.context.scene
    camera, _ = setup_render(scene)
    roles = deform_roles(rig, metarig)
    build_bone_proxy(rig, roles)
    build_target_spheres(rig, empties, radius=0.035)
    world = rig.matrix_world
    points = [tuple(world @ p) for name in roles
              for p in (rig.pose.bones[name].head, rig.pose.bones[name].tail)]
    points += [tuple(empty.location) for empty in empties.values()]
    frame_camera(camera, points, view=CAMERA_VIEW)
    return render(scene, path, caption)


def run(dqik, output_dir):
    """Build, solve, measure and render the scene in a new empty file; save it as ``BLEND``.
    Returns the results (the ``"production_rig"`` entry of results.json)."""
    import bpy
    import rigs
    import solve_problems as sp
    from mathutils import Quaternion

    bpy.ops.wm.read_homefile(use_empty=True)
    with captured_output():
        rig = rigs.generate_rigify_rig()
    rigs.fk_mode(rig)
    empties = sp.add_targets(rig, effectors(), chain_count=CHAIN_COUNT)
    for empty in empties.values():
        empty.empty_display_type = 'SPHERE'
        empty.empty_display_size = 0.05
    torso = rig.pose.bones["torso"]
    torso.rotation_mode = 'QUATERNION'
    torso.rotation_quaternion = Quaternion((0.0, 0.0, 1.0), TORSO_TURN)
    goals = place_targets_by_fk(rig, empties, np.random.default_rng(SEED))
    wall = add_wall(rig, dqik, goals[rigs.RIGIFY_FK_LIMBS[WALL_LIMB][0]])

    rig.dqik.colliders = None
    solve_from_rest(rig, dqik)
    rig.dqik.colliders = wall.users_collection[0]
    without_wall_mm = clearance_mm(rig, dqik, fk_controls())
    reports, elapsed_ms, snapshot = solve_from_rest(rig, dqik)
    tasks = {name: {"deform_bone": deform_bone(name), "chain_count": CHAIN_COUNT,
                    "error_mm": round(float(np.linalg.norm(
                        sp.world_tail(rig, deform_bone(name)) - goals[name])) * 1e3, 6)}
             for name in empties}
    entry = {
        "rig": "Rigify rig generated from the human metarig, limbs in FK (IK_FK = 1)",
        "bones": len(rig.pose.bones),
        "constraints": sum(len(pb.constraints) for pb in rig.pose.bones),
        "seed": SEED,
        "torso_turn_deg": round(math.degrees(TORSO_TURN), 3),
        "tasks": tasks,
        "iterations": snapshot.iterations,
        "converged": snapshot.converged,
        "solve_wall_time_ms": round(elapsed_ms, 2),
        "operator_report": reports,
        "wall": {"object": wall.name, "scale": list(WALL_SCALE),
                 "collection": rig.dqik.colliders.name},
        "deepest_clearance_mm": {
            "fk_controls": clearance_mm(rig, dqik, fk_controls()),
            "def_bones": clearance_mm(rig, dqik, [pb.name for pb in rig.pose.bones
                                                  if pb.name.startswith("DEF-")]),
            "shown_and_deforming_bones": clearance_mm(rig, dqik, [
                name for name, seen in zip(rig.pose.bones.keys(),
                                           dqik.dq_ik_addon.blender.rig.constraint_followers.seen_bones(rig))
                if seen]),
            "fk_controls_solved_without_the_wall": without_wall_mm},
    }
    worst = max(task["error_mm"] for task in tasks.values())
    clearance = entry["deepest_clearance_mm"]
    entry["files"] = {"image": render_scene(
        rig, bpy.data.objects["metarig"], empties, os.path.join(output_dir, IMAGE),
        f"Rigify rig ({entry['bones']} bones), FK controls solved: DEF hands, feet within "
        f"{worst:.2g} mm of the targets, limbs {clearance['fk_controls']:.2g} mm clear of the wall")}
    blend = os.path.join(output_dir, BLEND)
    with captured_output():
        bpy.ops.wm.save_as_mainfile(filepath=blend, check_existing=False)
    entry["files"]["blend"] = BLEND
    return entry


def summary_lines(entry):
    """The demo summary's lines for this scene."""
    tasks, clearance = entry["tasks"], entry["deepest_clearance_mm"]
    return [
        f"production rig: {entry['rig']}: {entry['bones']} bones, {entry['constraints']} "
        f"constraints, torso turned {entry['torso_turn_deg']:g}°",
        "  DEF tails to targets (chain length "
        f"{CHAIN_COUNT}): " + ", ".join(f"{t['deform_bone']} {t['error_mm']:.3g} mm"
                                         for t in tasks.values())
        + f"; {entry['iterations']} iterations, converged {entry['converged']}, "
          f"{entry['solve_wall_time_ms']:.1f} ms",
        f"  wall (a cube scaled {tuple(entry['wall']['scale'])}): deepest clearance "
        f"{clearance['fk_controls']:.3g} mm (FK controls), {clearance['def_bones']:.3g} mm (DEF "
        f"bones), {clearance['shown_and_deforming_bones']:.3g} mm (every bone shown or "
        f"deforming, fingers included); solved without the wall, the FK controls "
        f"{clearance['fk_controls_solved_without_the_wall']:.3g} mm",
    ]
