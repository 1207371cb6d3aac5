"""The viewport overlay: ``overlay_layers``' line lists drawn with ``gpu`` for the active
armature in Pose Mode.

A ``SpaceView3D`` draw handler (``'WINDOW'``, ``'POST_VIEW'``: in the view's 3D space, after the
scene) draws one batch per colour with Blender's builtin ``POLYLINE_UNIFORM_COLOR`` shader, whose
``lineWidth`` gives wide lines without ``bgl`` (gone in Blender 5.0): the pattern of Blender's
``templates_py/operator_modal_draw.py`` and https://docs.blender.org/api/current/gpu.html.
Batches are kept per armature (viewports may show different ones) and made again only when
``ArmatureLines.update`` remade the lists (the pose, the selection, the settings, the targets
or the last result changed): a redraw of an unchanged rig reads a few arrays and issues the
draw calls, each shader bound once.
Segments of zero length (a twist arc whose range is zero) are left out of the batches: they
cover no pixel, and on a software rasterizer every segment costs its setup.

Lines are ``LINE_WIDTH`` times ``Preferences.system.ui_line_width`` pixels wide (Blender's line
thickness for the resolution scale and the Line Width preference; the capsules' wires one
``ui_line_width``), blended, drawn over the scene (no depth test) as Blender draws its IK
lines. Nothing is drawn outside Pose Mode, with the
viewport's overlays off, or with the armature's overlay off (``Object.dqik.show_overlay``);
an armature without limits on its selected bones, colliders, contacts or tasks has nothing to
show. ``gpu`` raises in background mode, where no viewport draws: the callback returns at once
there, and tests draw into a ``gpu.types.GPUOffScreen`` with ``draw_overlay``.

``register`` adds the draw handler and the ``undo_post``, ``redo_post``, ``load_post`` and
``blend_import_pre``/``_post`` (library reload) handlers that count a possible settings change
(``settings.edits.note_settings_edit``: settings set through their update callbacks count
themselves); ``unregister`` removes them.
"""

import traceback

import bpy
import gpu
import numpy as np
from gpu_extras.batch import batch_for_shader

from ...dq_ik_addon.blender.errors import ArmatureError
from ...dq_ik_addon.blender.settings.edits import note_settings_edit
from .layers import ArmatureLines, shown_layers

LINE_WIDTH = 2.0        # pixels at a UI line width of 1
STYLE_COLOURS = {       # RGBA, drawn in this order
    "capsule": (0.55, 0.62, 0.72, 0.55),
    "capsule_touching": (1.0, 0.35, 0.65, 0.9),
    "contact": (1.0, 0.2, 0.6, 1.0),
    "swing": (0.3, 0.75, 1.0, 0.9),
    "twist": (0.8, 0.45, 1.0, 0.9),
    "swing_current": (1.0, 0.9, 0.2, 1.0),
    "twist_current": (1.0, 0.9, 0.2, 1.0),
    "task_unsolved": (0.6, 0.6, 0.6, 1.0),
    "task_met": (0.2, 0.85, 0.3, 1.0),
    "task_closest": (1.0, 0.55, 0.0, 1.0),
    "task_failed": (0.95, 0.12, 0.12, 1.0),
    "balance": (0.25, 0.9, 0.95, 1.0),
}
# Drawn one UI line wide with ``UNIFORM_COLOR``: the wires of every capsule, most of the
# overlay's vertices, whose wide lines cost a software rasterizer about 80 ns a vertex
# (``benchmarks/overlay.py``); the rest are ``LINE_WIDTH`` wide.
THIN_STYLES = frozenset({"capsule"})
_SHADERS = {True: 'UNIFORM_COLOR', False: 'POLYLINE_UNIFORM_COLOR'}    # by thinness


def line_width(system):
    """Pixels per UI line for ``Preferences.system`` (at least 1)."""
    return max(system.ui_line_width, 1.0)


def drawn_segments(points):
    """The segments of the line list ``points`` ``(2k, 3)`` whose ends differ."""
    pairs = points.reshape(-1, 2, 3)
    return pairs[np.any(pairs[:, 0] != pairs[:, 1], axis=1)].reshape(-1, 3)


def make_batches(lines):
    """``[(colour, thin, batch)]`` of the line lists ``{style: (2k, 3) float32}``: one batch per
    colour and thinness, those styles' segments in drawing order (``STYLE_COLOURS``); the thin
    batches first (drawn under the wide ones, as the thin capsules come first)."""
    groups = {}
    for style, colour in STYLE_COLOURS.items():
        if style in lines:
            segments = drawn_segments(lines[style])
            if len(segments):
                groups.setdefault((colour, style in THIN_STYLES), []).append(segments)
    out = []
    for (colour, thin), parts in sorted(groups.items(), key=lambda item: not item[0][1]):
        shader = gpu.shader.from_builtin(_SHADERS[thin])
        out.append((colour, thin, batch_for_shader(shader, 'LINES',
                                                   {"pos": np.concatenate(parts)})))
    return out


def draw_batches(batches, ui_line, viewport_size):
    """Draw ``make_batches``' batches for a UI line of ``ui_line`` pixels (``line_width``) in a
    viewport of ``viewport_size`` (width, height) pixels, blended, over the scene: each shader
    bound once, its batches' colours set in turn."""
    gpu.state.blend_set('ALPHA')
    gpu.state.depth_test_set('NONE')
    gpu.state.line_width_set(ui_line)
    bound = None
    for colour, thin, batch in batches:
        shader = gpu.shader.from_builtin(_SHADERS[thin])
        if thin is not bound:
            shader.bind()
            if not thin:
                shader.uniform_float("viewportSize", viewport_size)
                shader.uniform_float("lineWidth", LINE_WIDTH * ui_line)
            bound = thin
        shader.uniform_float("color", colour)
        batch.draw(shader)
    gpu.state.line_width_set(1.0)
    gpu.state.blend_set('NONE')


class _Drawn:
    """Each armature's lists and batches, by ``Object.session_uid`` (kept across undo), so that
    viewports showing different armatures each keep theirs; an entry whose object is gone is
    dropped when an armature without one is drawn or the number of objects changed."""

    by_armature = {}        # session_uid → [ArmatureLines, batches]
    objects = -1            # len(bpy.data.objects) at the last pruning


def _prune(drawn):
    """Drop the entries of ``drawn`` (``_Drawn.by_armature``) whose object no longer exists."""
    objects = bpy.data.objects
    alive = np.empty(len(objects), dtype=np.int32)       # RNA int: one foreach_get copy
    objects.foreach_get("session_uid", alive)
    for uid in drawn.keys() - set(alive.tolist()):
        del drawn[uid]
    _Drawn.objects = len(objects)


def _entry(obj):
    """``obj``'s ``[ArmatureLines, batches]``, made if it has none."""
    drawn = _Drawn.by_armature
    entry = drawn.get(obj.session_uid)
    if entry is None or _Drawn.objects != len(bpy.data.objects):
        _prune(drawn)
        entry = drawn.setdefault(obj.session_uid, [ArmatureLines(), []])
    return entry


def armature_batches(obj, layers):
    """The batches of ``obj``'s ``layers``, made again only when its lists were."""
    entry = _entry(obj)
    if entry[0].update(obj, layers):
        entry[1] = make_batches(entry[0].lines)
    return entry[1]


def drawn_lines(obj):
    """The ``ArmatureLines`` kept for ``obj``, or None (for tests)."""
    entry = _Drawn.by_armature.get(obj.session_uid)
    return None if entry is None else entry[0]


def draw_overlay(obj, space, system):
    """Draw the overlay of ``obj`` (the active object, or None) in the bound framebuffer, for
    the 3D Viewport ``space`` (None: any) and ``Preferences.system``: the draw handler's work."""
    layers = shown_layers(obj, space)
    if not layers:
        return
    try:
        batches = armature_batches(obj, layers)
    except (ArmatureError, ReferenceError):
        return          # a rig the solver refuses (its message is the solve's to give)
    draw_batches(batches, line_width(system), gpu.state.viewport_get()[2:])


def _draw_callback():
    """The draw handler (``gpu`` raises in background mode, where no viewport draws)."""
    if not bpy.app.background:
        draw_unless_stopped(bpy.context)


def draw_unless_stopped(context):
    """``draw_overlay`` for ``context``, unless an unexpected error stopped the overlay: such an
    error is printed once and the overlay drawn no more until the extension is enabled again
    (``register`` clears it), instead of a traceback on every redraw."""
    if _FAILED:
        return
    try:
        draw_overlay(context.active_object, context.space_data, context.preferences.system)
    except Exception:  # a bug must not fill the console on every redraw
        _FAILED.append(True)
        traceback.print_exc()
        print("DQ IK: the viewport overlay stopped after the error above; please report it")


_FAILED = []            # an unexpected error stopped the overlay

_HANDLE = []            # the draw handler's handle while registered
# A library reload replaces linked and overridden rigs' settings: Blender 5.0.1 calls
# blend_import_pre and blend_import_post around it, 4.5.15 blend_import_pre only (measured, for
# ``Library.reload()`` and ``wm.lib_reload``); linking and appending call both.
_SETTINGS_HANDLERS = ("undo_post", "redo_post", "load_post", "blend_import_pre",
                      "blend_import_post")


def register():
    _FAILED.clear()     # disabling and enabling keeps this module: a new start
    _HANDLE.append(bpy.types.SpaceView3D.draw_handler_add(_draw_callback, (), 'WINDOW',
                                                          'POST_VIEW'))
    for name in _SETTINGS_HANDLERS:
        getattr(bpy.app.handlers, name).append(note_settings_edit)


def unregister():
    while _HANDLE:
        bpy.types.SpaceView3D.draw_handler_remove(_HANDLE.pop(), 'WINDOW')
    for name in _SETTINGS_HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        if note_settings_edit in handlers:
            handlers.remove(note_settings_edit)
    _Drawn.by_armature.clear()
    _Drawn.objects = -1


def draw_handle():
    """The draw handler's handle while registered, else None (for tests)."""
    return _HANDLE[0] if _HANDLE else None
