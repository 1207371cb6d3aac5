"""The demo's picture of DQ IK's viewport overlay: the scene rendered by Workbench (the bone
proxies of ``workbench.py``), with the overlay drawn over it by the extension's own drawing
(``panels/overlay/draw.draw_overlay``, what its draw handler does in the viewport) into an
offscreen buffer through the scene camera (``tests/offscreen.py``), laid over the render:
``out = overlay + render · (1 − overlay alpha)`` (the overlay is blended onto transparent black,
so its colours come premultiplied).
"""

import os

import numpy as np
from workbench import RESOLUTION, frame_camera, render

SELECTED = ("upper_arm.L", "forearm.L", "hand.L")   # their limits are drawn


def render_with_overlay(scene, obj, dqik, path, caption, selected=SELECTED, framed=None,
                        margin=2.2, view=(1.0, -0.4, 0.35)):
    """Render ``scene`` to ``path`` with ``obj``'s overlay over it (the ``selected`` bones
    selected, every layer on), the camera framed on them and their targets (or on the world
    points ``framed``) from ``view`` (by default from the left, beside the wall); returns the
    file name and ``{style: vertices drawn}``."""
    import bpy
    import offscreen
    import rigs
    rigs.select_bones(obj, selected)
    if framed is None:
        pose_bones = [obj.pose.bones[name] for name in selected]
        targets = [pb.dqik.target for pb in pose_bones if pb.dqik.target is not None]
        framed = [tuple(obj.matrix_world @ point) for pb in pose_bones
                  for point in (pb.head, pb.tail)] \
            + [tuple(target.matrix_world.translation) for target in targets]
    frame_camera(scene.camera, framed, margin=margin, view=view)
    name = render(scene, path, caption)     # also makes the GPU context offscreen drawing needs
    if not offscreen.initialise_gpu():
        raise SystemExit("gpu cannot draw on this machine: no picture of the overlay")
    draw, layers = dqik.panels.overlay.draw, dqik.panels.overlay.layers
    shown = layers.ArmatureLines()
    shown.update(obj, layers.LAYERS)
    system = bpy.context.preferences.system
    overlay = offscreen.draw_offscreen(lambda: draw.draw_overlay(obj, None, system),
                                       *offscreen.camera_matrices(scene.camera, RESOLUTION),
                                       RESOLUTION)
    image = bpy.data.images.load(path)
    base = np.empty(len(image.pixels), dtype=np.float32)
    image.pixels.foreach_get(base)
    base = base.reshape(overlay.shape)
    out = overlay + base * (1.0 - overlay[..., 3:])
    out[..., 3] = 1.0
    image.pixels.foreach_set(np.clip(out, 0.0, 1.0).ravel())
    image.filepath_raw, image.file_format = path, 'PNG'
    image.save()
    bpy.data.images.remove(image)
    return os.path.basename(name), {style: len(points) for style, points in shown.lines.items()}
