"""Drawing with ``gpu`` headless: the overlay's batches drawn into a ``GPUOffScreen`` through a
camera, for the overlay's tests, its benchmark and the demo's picture of it.

In background mode every ``gpu`` call raises ``SystemError`` until Blender has made a GPU
context; a render makes one (Workbench, 4×4 pixels, of a scene made for it), after which offscreen drawing works
(measured with bpy 4.5.15 and 5.0.1, software EGL).
"""

import bpy
import numpy as np


def initialise_gpu():
    """True once ``gpu`` can draw in this process (after a tiny render if need be)."""
    import gpu
    try:
        gpu.types.GPUOffScreen(4, 4)
        return True
    except SystemError:
        pass
    scene = bpy.data.scenes.new("gpu_initialisation")
    camera = bpy.data.objects.new("gpu_initialisation", bpy.data.cameras.new("gpu_initialisation"))
    scene.collection.objects.link(camera)
    scene.camera = camera
    scene.render.engine = 'BLENDER_WORKBENCH'
    scene.render.resolution_x = scene.render.resolution_y = 4
    try:
        bpy.ops.render.render(scene=scene.name)
    finally:
        data = camera.data
        bpy.data.objects.remove(camera)
        bpy.data.cameras.remove(data)
        bpy.data.scenes.remove(scene)
    try:
        gpu.types.GPUOffScreen(4, 4)
        return True
    except SystemError:
        return False


def camera_matrices(camera, size):
    """``(view, projection)`` mathutils matrices of ``camera`` for an image of ``size`` pixels."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    projection = camera.calc_matrix_camera(depsgraph, x=size[0], y=size[1])
    return camera.matrix_world.inverted(), projection


def draw_offscreen(draw, view, projection, size):
    """Call ``draw()`` in a cleared (transparent) ``size`` offscreen buffer seen through
    ``view`` and ``projection``; the pixels, ``(height, width, 4)`` floats, bottom row first
    (as ``Image.pixels``), colours premultiplied by their alpha (``'ALPHA'`` blending onto
    transparent black)."""
    import gpu
    width, height = size
    offscreen = gpu.types.GPUOffScreen(width, height)
    try:
        with offscreen.bind():
            framebuffer = gpu.state.active_framebuffer_get()
            framebuffer.clear(color=(0.0, 0.0, 0.0, 0.0), depth=1.0)
            with gpu.matrix.push_pop():
                gpu.matrix.load_matrix(view)
                gpu.matrix.load_projection_matrix(projection)
                draw()
            buffer = framebuffer.read_color(0, 0, width, height, 4, 0, 'FLOAT')
        buffer.dimensions = width * height * 4
        return np.array(buffer, dtype=np.float32).reshape(height, width, 4)
    finally:
        offscreen.free()
