"""The demo's live-posing scene: what ``dqik.live`` does while the user drags a bone, driven
through its tick (``dq_ik_addon/blender/solving/live_posing.LivePosing``), as the operator's timer would.

The basic human metarig with the HUMANOID preset, feet (priority 1) and hands (priority 2) held
by targets where they stand. The chest (``DRAGGED``, a bone without a target) is dragged
``DRAG`` metres forwards and down in ``STEPS`` steps of the mouse, one live tick each (and more
ticks until nothing moves): the spine bends, the arms and legs give way under their limits, the
targets hold. Rendered (``live_drag.png``): the bones, the targets and the drag point (blue);
the result's errors and the ticks' times go into results.json.
"""

import os
import time

import numpy as np
from console import captured_output
from workbench import (
    bone_roles,
    build_bone_proxy,
    build_target_spheres,
    frame_camera,
    material,
    render,
    setup_render,
)

DRAGGED = "spine.003"
DRAG = np.array([0.0, -0.15, -0.1])   # world metres: forwards (−Y) and down
STEPS = 20
FEET, HANDS = ("foot.L", "foot.R"), ("hand.L", "hand.R")
IMAGE = "live_drag.png"


def _drag_marker(point):
    """A blue sphere at the drag point."""
    import bmesh
    import bpy
    mesh = bpy.data.meshes.new("drag_point")
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=24, v_segments=12, radius=0.03)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(material("drag", (0.1, 0.3, 1.0, 1.0)))
    marker = bpy.data.objects.new("drag_point", mesh)
    bpy.context.scene.collection.objects.link(marker)
    marker.location = point
    marker.show_in_front = True
    return marker


def run(dqik, output_dir):
    """Build, drag, measure and render the scene in a new empty file; returns the
    ``"live_drag"`` entry of results.json."""
    import bpy
    import rigs
    import solve_problems as sp

    bpy.ops.wm.read_homefile(use_empty=True)
    with captured_output():
        obj = rigs.metarig("basic")
        bpy.ops.dqik.apply_preset(preset='HUMANOID')
    empties = sp.add_targets(obj, FEET, priority=1)
    empties.update(sp.add_targets(obj, HANDS, priority=2))
    for name, empty in empties.items():
        empty.location = sp.world_tail(obj, name)
    bpy.context.view_layer.update()
    live = dqik.dq_ik_addon.blender.solving.live_posing.LivePosing(obj)
    start = sp.world_tail(obj, DRAGGED)
    ticks = []
    with captured_output():
        for step in range(1, STEPS + 1):
            live.drag(DRAGGED, start + DRAG * step / STEPS)
            began = time.perf_counter()
            live.tick()
            ticks.append((time.perf_counter() - began) * 1e3)
            bpy.context.view_layer.update()
        while live.tick() is not None:
            bpy.context.view_layer.update()
    point = start + DRAG
    live.drag(None, None)
    live.confirm(bpy.context)
    bpy.context.view_layer.update()
    errors = {name: round(float(np.linalg.norm(sp.world_tail(obj, name)
                                               - np.array(empty.location))) * 1e3, 6)
              for name, empty in empties.items()}
    dragged_mm = round(float(np.linalg.norm(sp.world_tail(obj, DRAGGED) - point)) * 1e3, 6)
    scene = bpy.context.scene
    camera, _ = setup_render(scene)
    build_bone_proxy(obj, bone_roles(obj, FEET, HANDS))
    build_target_spheres(obj, empties, radius=0.03)
    _drag_marker(point)
    points = [tuple(obj.matrix_world @ p) for pb in obj.pose.bones for p in (pb.head, pb.tail)]
    frame_camera(camera, points + [tuple(point)], view=(1.0, -0.35, 0.2))
    image = render(scene, os.path.join(output_dir, IMAGE),
                   f"Live: the chest dragged {np.linalg.norm(DRAG) * 100:.0f} cm towards the blue "
                   f"point in {STEPS} ticks (it ends {dragged_mm:.2g} mm from it); feet and hands "
                   f"hold their targets (within {max(errors.values()):.2g} mm)")
    return {"dragged_bone": DRAGGED, "drag_m": DRAG.tolist(), "steps": STEPS,
            "dragged_bone_error_mm": dragged_mm, "target_errors_mm": errors,
            "tick_ms_median": round(float(np.median(ticks)), 3),
            "tick_ms_max": round(float(np.max(ticks)), 3), "files": {"image": image}}


def summary_lines(entry):
    """The demo summary's lines for this scene."""
    errors = entry["target_errors_mm"]
    return [f"live drag: {entry['dragged_bone']} pulled {np.linalg.norm(entry['drag_m']) * 100:.0f}"
            f" cm in {entry['steps']} live ticks (median {entry['tick_ms_median']:.2f} ms, max "
            f"{entry['tick_ms_max']:.2f} ms); it ends {entry['dragged_bone_error_mm']:.3g} mm from "
            "the drag point, targets " + ", ".join(f"{n} {e:.3g} mm" for n, e in errors.items())]
