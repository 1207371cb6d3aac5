"""The viewport overlay's cost per redraw, on the Rigify human metarig (159 bones).

Scene: HUMANOID preset, targets on both hands and feet (the left hand's behind a wall, the
armature's collider), self-collision on, solved once; ten limited bones of the left arm and
leg selected; every layer of the overlay on. Drawing runs for real, headless: ``gpu`` works in
background mode once a render has made its context (``tests/offscreen.py``), into an offscreen
buffer. Timed, each the median of ``RUNS`` calls (the fastest is printed too):

Drawn through a camera that frames the whole rig (``framing_camera``, 800 × 600), as a viewport
showing the character does. The capsules drawn are those of the selected bones and those
touching the wall (the default); ``redraw, all capsules`` draws every capsule the solve tests
(``Object.dqik.show_overlay_all_capsules``: with self-collision, every bone's).

- ``redraw``: ``overlay.draw.draw_overlay`` for an unchanged rig, the draw handler's whole work
  on the CPU (its change key: a few ``foreach_get`` reads; then the draw calls of the kept
  batches), one redraw per frame as a viewport draws: the buffer cleared before it and the frame
  finished after it (one pixel read back, waiting for the rasterizer as a buffer swap does),
  both untimed, after ``WARM_UP`` frames;
- ``queued``: the same redraws one after another into one buffer that is never finished, the
  first ``RUNS`` after the scene is made: the software rasterizer queues them and stalls on
  some to rasterize its queue, so their median depends on where the stalls fall (0.46, 0.72 or
  2.0 ms a redraw in runs of 20 to 200, measured on 5.0.1);
- ``check``: ``overlay.draw.armature_batches`` for an unchanged rig, the Python part of a redraw
  (the change key and the kept batches), without the draw calls;
- ``rebuild``: ``redraw`` after a pose change (one bone turned, the depsgraph updated outside the
  timing): the line lists and their batches made again;
- ``lines``: ``ArmatureLines.update`` alone after a pose change (the lists without the batches).

Each figure is measured in ``common.PROCESSES`` fresh processes; the process with the fastest median is
printed, with every process's median (``main``). The goal is a redraw within 0.5 ms. Headless, ``gpu`` draws with a software rasterizer (Mesa's
llvmpipe through EGL), whose draw calls shade, clip, set up and bin every segment on the CPU
(the rasterizing itself runs on its threads): ``redraw − check`` is that, per segment, not per
draw call (binding the shaders, setting the uniforms and the state take about 4 µs of it), and
not what a GPU's driver costs. Run from the repository root:
``.venv/bin/python benchmarks/overlay.py`` (also with ``.venv-lts/bin/python``).
"""

import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

RUNS = 300
WARM_UP = 50
SIZE = (800, 600)
SELECTED = ("upper_arm.L", "forearm.L", "hand.L", "thigh.L", "shin.L", "foot.L", "shoulder.L",
            "spine.001", "spine.002", "spine.003")


def timings(call, before=None):
    """``(median ms, fastest ms)`` of ``RUNS`` calls of ``call`` (``before()`` untimed first)."""
    times = []
    for _ in range(RUNS):
        if before is not None:
            before()
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def frame_timings(call):
    """``timings`` of ``call`` drawing one frame each in the bound framebuffer (cleared before,
    finished after: untimed), after ``WARM_UP`` untimed frames."""
    import gpu
    framebuffer = gpu.state.active_framebuffer_get()

    def clear():
        framebuffer.read_color(0, 0, 1, 1, 4, 0, 'FLOAT')
        framebuffer.clear(color=(0.0, 0.0, 0.0, 0.0))

    for _ in range(WARM_UP):
        clear()
        call()
    return timings(call, clear)


def scene():
    """The 159-bone metarig as the module says; returns it."""
    import bpy
    import rigs
    import solve_problems as sp
    obj = common.new_rig("human")
    with common.quiet():
        bpy.ops.dqik.apply_preset(preset='HUMANOID')
    empties = sp.add_targets(obj, ["hand.L", "hand.R", "foot.L", "foot.R"])
    for name, empty in empties.items():
        empty.location = sp.world_tail(obj, name)
    tail = sp.world_tail(obj, "hand.L")
    empties["hand.L"].location = tail + np.array([0.0, -0.4, 0.0])
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=tail + np.array([0.0, -0.65, 0.0]))
    wall = bpy.context.active_object
    colliders = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(colliders)
    rigs.move_to_collection(wall, colliders)
    obj.dqik.colliders = colliders
    obj.dqik.use_self_collision = True
    bpy.context.view_layer.objects.active = obj
    with common.quiet():
        bpy.ops.dqik.solve()
    rigs.select_bones(obj, SELECTED)
    return obj


def framing_camera(obj):
    """A camera in front of the rig, turned 30° to its side, that frames every bone (as a
    viewport showing the whole character)."""
    import bpy
    from mathutils import Vector
    camera = bpy.data.objects.new("overlay_camera", bpy.data.cameras.new("overlay_camera"))
    bpy.context.scene.collection.objects.link(camera)
    world = np.array(obj.matrix_world)
    points = [world[:3, :3] @ np.array(p) + world[:3, 3] for pb in obj.pose.bones
              for p in (pb.head, pb.tail)]
    centre = Vector(np.mean(points, axis=0))
    view = Vector((0.5, -1.0, 0.2)).normalized()
    camera.location = centre + view * 10.0
    camera.rotation_euler = (-view).to_track_quat('-Z', 'Y').to_euler()
    bpy.context.view_layer.update()
    location, _ = camera.camera_fit_coords(bpy.context.evaluated_depsgraph_get(),
                                           np.ravel(points).tolist())
    camera.location = location
    bpy.context.view_layer.update()
    return camera


def measure():
    """One process's figures: ``(header, vertex line, {row: (median ms, fastest ms)})``."""
    dqik = common.install()
    import bpy
    import gpu
    import offscreen
    obj = scene()
    if not offscreen.initialise_gpu():
        raise SystemExit("gpu cannot draw on this machine")
    draw = dqik.panels.overlay.draw
    layers_module = dqik.panels.overlay.layers
    system = bpy.context.preferences.system
    shown = layers_module.ArmatureLines()
    shown.update(obj, layers_module.LAYERS)
    sizes = {style: len(points) for style, points in shown.lines.items()}
    turn = [0.0]

    def pose_change():
        turn[0] += 0.01
        obj.pose.bones["forearm.L"].rotation_quaternion = (np.cos(turn[0]), np.sin(turn[0]), 0, 0)
        bpy.context.view_layer.update()

    results = {}
    view, projection = offscreen.camera_matrices(framing_camera(obj), SIZE)
    target = gpu.types.GPUOffScreen(*SIZE)
    with target.bind(), gpu.matrix.push_pop():
        gpu.matrix.load_matrix(view)
        gpu.matrix.load_projection_matrix(projection)
        results["queued"] = timings(lambda: draw.draw_overlay(obj, None, system))
        results["redraw"] = frame_timings(lambda: draw.draw_overlay(obj, None, system))
        results["check"] = timings(lambda: draw.armature_batches(obj, layers_module.LAYERS))
        results["rebuild"] = timings(lambda: draw.draw_overlay(obj, None, system), pose_change)
        obj.dqik.show_overlay_all_capsules = True
        results["redraw, all capsules"] = frame_timings(
            lambda: draw.draw_overlay(obj, None, system))
        obj.dqik.show_overlay_all_capsules = False
    target.free()
    results["lines"] = timings(lambda: shown.update(obj, layers_module.LAYERS), pose_change)
    every = layers_module.ArmatureLines()
    obj.dqik.show_overlay_all_capsules = True
    every.update(obj, layers_module.LAYERS)
    obj.dqik.show_overlay_all_capsules = False

    header = (f"DQ IK overlay, Blender {bpy.app.version_string}, Rigify human metarig "
              f"({len(obj.pose.bones)} bones), every layer on, {len(SELECTED)} bones selected")
    vertices = ("  vertices drawn: " + ", ".join(f"{style} {count}" for style, count in sizes.items())
                + f" ({sum(sizes.values())} in all; with All Capsules "
                f"{sum(len(points) for points in every.lines.values())})")
    return header, vertices, results


def main():
    """``common.PROCESSES`` fresh processes measure (``measure``, ``common.in_processes``); each
    row gives the process with the fastest median: llvmpipe runs its rasterizer threads on the
    same cores as Blender, and in about one process in three every redraw takes about twice as
    long (measured on 2 cores)."""
    runs = common.in_processes(__file__)
    header, vertices, _ = runs[0]
    print(header)
    print(vertices)
    for name in runs[0][2]:
        medians = [run[2][name][0] for run in runs]
        best = min(range(common.PROCESSES), key=lambda k: medians[k])
        print(f"  {name:<20} median {medians[best]:.3f} ms   fastest "
              f"{runs[best][2][name][1]:.3f} ms   (the {common.PROCESSES} processes' medians: "
              + ", ".join(f"{m:.3f}" for m in medians) + ")")
    redraw = min(run[2]["redraw"][0] for run in runs)
    print(f"  goal: a redraw (the default layers, through the camera) ≤ 0.5 ms → "
          f"{'met' if redraw <= 0.5 else 'NOT met'}")


if __name__ == "__main__":
    if "--one" in sys.argv:
        with common.quiet():
            figures = measure()
        print(json.dumps(figures))
    else:
        main()
