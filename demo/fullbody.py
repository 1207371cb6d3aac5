"""The demo's full-body scenes on the basic human metarig with the HUMANOID preset (its pelvis
slides, its feet carry the weight), the feet planted where they stand (position and rotation,
priority 1):

- **crouch**: the pelvis's target 0.3 m below it, on its height alone (Position Axes Y: the
  target turned as the pelvis, whose Y points up) and its rotation (kept level), priority 3,
  with Balance (priority 2) and the feet given the 40° of dorsiflexion a foot has under weight
  (the preset's 20° is measured without): the pelvis comes down and back, the knees forward
  over the toes, the feet stay. Rendered ``crouch.png``.
- **reach**: the left hand's target a metre forward (priority 3), without and with Balance
  (priority 2). Without, the body leans out after the hand, its centre of mass ahead of its toes;
  with it, the centre of mass stays over the feet and the hand stops short. Rendered
  ``reach_balance_off.png`` and ``reach_balance_on.png`` from the side, with the overlay's
  Balance layer: the support polygon, the centre of mass and its drop to the ground.

The results (task errors, how far the centre of mass is outside the polygon, the pelvis's
motion, iterations and times) go into results.json under ``"fullbody"``.
"""

import os
import time
from dataclasses import replace

import numpy as np
from console import captured_output
from overlay_picture import render_with_overlay
from workbench import (
    bone_roles,
    build_bone_proxy,
    build_target_spheres,
    frame_camera,
    render,
    setup_render,
)

FEET, HANDS = ("foot.L", "foot.R"), ("hand.L", "hand.R")
DROP = 0.3
REACH = np.array([0.0, -1.0, 0.2])     # world metres: forward (−Y) and a little up
SIDE = (1.0, -0.05, 0.12)              # the camera's view: from the character's left


def _scene(dqik):
    import bpy
    import rigs
    import solve_problems as sp
    bpy.ops.wm.read_homefile(use_empty=True)
    with captured_output():
        obj = rigs.metarig("basic")
        bpy.ops.dqik.apply_preset(preset='HUMANOID')
    feet = sp.plant_feet(obj, FEET)
    camera, _ = setup_render(bpy.context.scene)
    return obj, feet, camera


def _solve(dqik, obj):
    """A tick of the armature's session, timed; the snapshot and ms."""
    import bpy
    began = time.perf_counter()
    with captured_output():
        snapshot = dqik.api.session_for(obj).tick()
    ms = (time.perf_counter() - began) * 1e3
    bpy.context.view_layer.update()
    return snapshot, ms


def _errors_mm(snapshot):
    return {task.name: round(max(task.errors.values()) * 1e3, 4) for task in snapshot.tasks}


def crouch(dqik, output_dir):
    import solve_problems as sp
    obj, feet, camera = _scene(dqik)
    pelvis = sp.add_targets(obj, ["spine"], priority=3, use_rotation=True)["spine"]
    pelvis.matrix_world = obj.matrix_world @ obj.pose.bones["spine"].matrix     # kept level
    pelvis.location = sp.world_tail(obj, "spine") - np.array([0.0, 0.0, DROP])
    obj.pose.bones["spine"].dqik.position_axes = {'Y'}     # the target's Y, as the pelvis's: up
    obj.dqik.use_balance = True
    for name in FEET:
        obj.pose.bones[name].dqik.swing_x_min = -np.radians(40.0)
    snapshot, ms = _solve(dqik, obj)
    moved = np.array(obj.pose.bones["spine"].location)
    build_bone_proxy(obj, bone_roles(obj, FEET, HANDS))
    build_target_spheres(obj, {**feet, "spine": pelvis}, radius=0.03)
    points = [tuple(obj.matrix_world @ p) for pb in obj.pose.bones for p in (pb.head, pb.tail)]
    frame_camera(camera, points + [tuple(pelvis.location)], view=SIDE)
    errors = _errors_mm(snapshot)
    image = render(camera.users_scene[0], os.path.join(output_dir, "crouch.png"),
                   f"Crouch, balanced: the pelvis's target {DROP * 100:.0f} cm down (height and "
                   f"level), the feet planted: pelvis {errors['spine']:.2g} mm, feet within "
                   f"{max(errors[f] for f in FEET):.2g} mm; {snapshot.iterations} iterations")
    return {"drop_m": DROP, "status": snapshot.status, "iterations": snapshot.iterations,
            "ms": round(ms, 2), "errors_mm": errors,
            "pelvis_location_m": [round(float(v), 4) for v in moved], "image": image}


def reach(dqik, output_dir, balance):
    import solve_problems as sp
    obj, feet, camera = _scene(dqik)
    hand = sp.add_targets(obj, ["hand.L"], priority=3)["hand.L"]
    hand.location = sp.world_tail(obj, "hand.L") + REACH
    obj.dqik.use_balance = balance
    snapshot, ms = _solve(dqik, obj)
    session = dqik.api.session_for(obj)
    if not balance:     # the centre of mass and polygon of this pose, drawn as with balance
        session.balance.body_of(obj, session.model, session.obstacles.cache, session.unit)
        pose = dqik.dq_ik_addon.blender.rig.arrays.evaluated_matrices(obj.pose.bones)
        shown = session.balance.shown(obj, session.model, pose)
        session.last_result = replace(snapshot, balance_of=lambda: shown)
    centre, polygon = session.last_result.center_of_mass, session.last_result.support_polygon
    ground = dqik.dq_ik_addon.engine.tasks.ground_polygon
    outside, _ = ground.polygon_distance(centre[:2], polygon[:, :2])
    build_bone_proxy(obj, bone_roles(obj, FEET, HANDS))
    build_target_spheres(obj, {**feet, "hand.L": hand}, radius=0.03)
    framed = [tuple(obj.matrix_world @ p) for pb in obj.pose.bones for p in (pb.head, pb.tail)] \
        + [tuple(hand.location)]
    name = f"reach_balance_{'on' if balance else 'off'}.png"
    errors = _errors_mm(snapshot)
    caption = (f"Reaching 1 m forward, Balance {'on' if balance else 'off'}: the centre of mass "
               + (f"{outside * 1e3:.0f} mm beyond the toes" if outside > 1e-3 else
                  "over the feet") + f"; hand {errors['hand.L']:.0f} mm from its target")
    image, _ = render_with_overlay(camera.users_scene[0], obj, dqik,
                                   os.path.join(output_dir, name), caption, selected=("spine",),
                                   framed=framed, margin=1.15, view=SIDE)
    return {"balance": balance, "status": snapshot.status, "iterations": snapshot.iterations,
            "ms": round(ms, 2), "errors_mm": errors,
            "centre_of_mass_outside_mm": round(outside * 1e3, 3),
            "hips_moved_m": [round(float(v), 4) for v in
                             np.array(obj.matrix_world @ obj.pose.bones["spine"].head)
                             - np.array(obj.matrix_world @ obj.data.bones["spine"].head_local)],
            "image": image}


def run(dqik, output_dir):
    """The ``"fullbody"`` entry of results.json (module docstring)."""
    return {"crouch": crouch(dqik, output_dir),
            "reach": [reach(dqik, output_dir, balance) for balance in (False, True)]}


def summary_lines(entry):
    crouched = entry["crouch"]
    lines = [f"crouch: pelvis {crouched['drop_m'] * 100:.0f} cm down ({crouched['status']}, "
             f"{crouched['iterations']} iterations, {crouched['ms']:.1f} ms), errors "
             + ", ".join(f"{n} {e:.3g} mm" for n, e in crouched["errors_mm"].items())]
    for result in entry["reach"]:
        lines.append(f"reach 1 m, balance {'on ' if result['balance'] else 'off'}: centre of "
                     f"mass {result['centre_of_mass_outside_mm']:.0f} mm outside the support, "
                     f"hand.L {result['errors_mm']['hand.L']:.0f} mm from its target, feet "
                     f"within {max(result['errors_mm'][f] for f in FEET):.2g} mm")
    return lines
