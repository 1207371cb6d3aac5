"""Solve on frame change: the ``frame_change_post`` handler that solves every armature whose
``Object.dqik.use_solve_on_frame_change`` is on, through its solving session (``session.py``).

Blender calls ``frame_change_post`` on playback, scrubbing, ``scene.frame_set`` (scripts, and
Blender's own bake, ``bpy_extras/anim_utils.py``) and for every frame a render evaluates, also in
background mode (https://docs.blender.org/api/current/bpy.app.handlers.html). The pose it
writes shows in the same frame: after the handlers, ``BKE_scene_graph_update_for_newframe_ex``
(``source/blender/blenkernel/intern/scene.cc``) evaluates the tagged armature once more without
calling the handlers again; a render goes through the same function with its own depsgraph
(``engine_depsgraph_init``, ``source/blender/render/intern/engine.cc``).

A render evaluates its frames in a depsgraph of its own, which does not write the animated
values back to the original data the session reads (targets, keyed channels, evaluated pose):
there the handler first updates the view layer's own depsgraph, which sees that the scene's
frame moved and evaluates it (``DEG_evaluate_on_refresh``,
``source/blender/depsgraph/intern/depsgraph_eval.cc``) and writes back to the originals;
then it solves, and the render's second pass evaluates the written pose. ``scene.frame_set``
calls the handler once for each view layer's depsgraph (``BKE_scene_graph_update_for_newframe``
of every depsgraph of the scene); only the active one writes back, so a rig that only another
view layer evaluates (its collection excluded from the window's layer, a render-layer split) is
handled like a render's: that layer is updated first (which makes its depsgraph the active one,
``rna_ViewLayer_update_tagged``, until the context's depsgraph is next asked for:
``CTX_data_depsgraph_pointer`` makes that one active again), and its targets are looked up in it.

Every frame's solve starts from that frame's animated pose and prefers it
(``animated_start``): the keyed and driven channels as Blender evaluated them, the other
channels of the moved bones at their base. So a frame's pose depends on that frame alone, not
on how it was reached (playback, stepping, scrubbing, a jump, a render of single frames in any
order, a bake give one pose), and the animation under the IK is kept where the targets do not
ask otherwise.

An armature whose targets follow another one that solves on frame change (a bone of it, its
object, or an object parented or constrained to either) is solved after it
(``_dependency_order``), so it aims at the pose the other shows: the same pose a bake of either
gives. (A target bone of a third armature that is constrained to the other is not followed
through.)

The pose is written, never keyed (``dqik.bake`` keys it). The handler never re-enters itself
(a flag; it never calls ``frame_set``) and never raises: an error (``ArmatureError`` with its
message, or any exception) is printed once to stderr, kept in the session's ``last_result``
(the sidebar's Last Solve box shows it) and switches the option off on that armature.

Skipped without a word: armatures in Edit Mode and linked ones without a library override
(neither can be posed), and an armature being baked (``Session.baking``: ``dqik.bake`` sets
its frames and solves each itself, ``keys/baking.py``). While a render runs as a job in another
thread (F12 in the interface) with Render > Lock Interface off, the interface may evaluate the
same data at the same time and Blender warns that changing it can crash (the note on altering
data in the page above): no armature is solved then, and that is printed once per render. Turning the option on locks the
interface of the armature's scenes for that reason (``render_lock.py``); renders from a script
(``bpy.ops.render.render()`` without invoke) and in background mode block and are solved.
"""

import sys
import traceback

import bpy
from bpy.app.handlers import persistent

from ..errors import ArmatureError
from .sessions import armatures_changed, session_for
from .snapshot import SolveSnapshot

_running = False       # set while the handler runs: it never re-enters itself
_noted_unlocked = False  # the unlocked-render notice was printed during this render


def forget():
    """Forget the unlocked-render notice (file load, undo, redo, disabling the extension)."""
    global _noted_unlocked
    _noted_unlocked = False


@persistent
def frame_change_post(scene, depsgraph=None):
    """Solve every armature of the evaluated view layer that has Solve on Frame Change on."""
    global _running, _noted_unlocked
    armatures_changed()     # keys may set DQ IK settings, and no depsgraph update says so
    if _running:
        return
    _running = True
    try:
        view_layer = depsgraph.view_layer if depsgraph is not None else bpy.context.view_layer
        armatures = [obj for obj in view_layer.objects
                     if obj.type == 'ARMATURE' and obj.dqik.use_solve_on_frame_change]
        if not armatures:
            return
        if bpy.app.is_job_running('RENDER') and not scene.render.use_lock_interface:
            if not _noted_unlocked:
                _noted_unlocked = True
                print("DQ IK: Solve on Frame Change skipped in this render: turn on Render > "
                      "Lock Interface (RenderSettings.use_lock_interface) to solve while "
                      "rendering", file=sys.stderr)
            return
        _noted_unlocked = False
        if depsgraph is not None and (depsgraph.mode == 'RENDER'
                                      or view_layer != bpy.context.view_layer):
            view_layer.update()     # the originals at this depsgraph's frame (see above)
        frame = scene.frame_current + scene.frame_subframe
        for obj in _dependency_order(armatures):
            _solve(obj, frame, view_layer)
    except Exception:   # noqa: BLE001  (never raise on every frame: a bug here is shown once)
        traceback.print_exc()
    finally:
        _running = False


def _dependency_order(armatures):
    """``armatures`` with each after the ones its targets follow (``Session.followed_armatures``),
    so that it aims at their solved pose, which each tick evaluates first; otherwise (and within
    a cycle, which the sessions warn about) in the view layer's order."""
    if len(armatures) < 2:
        return armatures
    keys = [obj.as_pointer() for obj in armatures]
    follows = {}
    for key, obj in zip(keys, armatures):
        try:
            others = session_for(obj).followed_armatures() \
                if obj.mode != 'EDIT' and obj.library is None else []
        except Exception:   # noqa: BLE001  (the tick reports what is wrong with the rig)
            others = []
        follows[key] = {other.as_pointer() for other in others} & set(keys) - {key}
    order, done = [], set()
    pending = list(zip(keys, armatures))
    while pending:
        ready = next((item for item in pending if follows[item[0]] <= done), pending[0])
        pending.remove(ready)
        done.add(ready[0])
        order.append(ready[1])
    return order


def _solve(obj, frame, view_layer):
    if obj.mode == 'EDIT' or obj.library is not None:
        return
    session = None
    try:
        session = session_for(obj)
        if session.baking:      # ``dqik.bake`` sets the frames and solves them (``keys/baking.py``)
            return
        session.tick(animated=True, view_layer=view_layer)
    except Exception as err:   # noqa: BLE001  (reported once, then the option is off)
        _switch_off(obj, session, err, frame)


def _switch_off(obj, session, err, frame):
    """Report ``err`` once and switch the option off on ``obj``."""
    expected = isinstance(err, ArmatureError)
    message = str(err) if expected else f"{type(err).__name__}: {err}"
    if session is not None and not expected:   # an ArmatureError's snapshot is kept by ``tick``
        session.last_result = SolveSnapshot(error=message)
    print(f"DQ IK: Solve on Frame Change is now off for '{obj.name}' (frame {frame:g}): "
          f"{message}", file=sys.stderr)
    if not expected:
        traceback.print_exception(err, file=sys.stderr)
    obj.dqik.use_solve_on_frame_change = False
