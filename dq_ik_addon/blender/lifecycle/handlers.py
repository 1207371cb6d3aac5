"""Application handlers that keep the solving sessions (``solving/session.py``) true to the file.

- ``load_post``, ``undo_post``, ``redo_post``: a loaded file, undo or redo re-allocates the
  objects and their pose bones, so every session is dropped (and with them the frame each last
  solved on frame change) and live posing stops;
- ``frame_change_post``: Solve on Frame Change (``solving/frame_change.py``);
- ``depsgraph_update_post``: the sessions of deleted armatures are dropped, and a running live
  posing follows what moved (``LivePosing.follow``; not for a render's depsgraph, nor while a
  render job runs, nor from inside a tick: a tick that evaluates the depsgraph for its colliders
  must not start another). Rig edits are not
  read from it: posing a bone through RNA also reports its armature data as updated (measured
  with bpy 5.0.1), so it cannot tell an Edit Mode change from a pose, and ticks compare the
  bones by value instead (``rig.model_reader.rig_fingerprint``). What it does tell is an update
  that did not report the armature at all (a target or collider moved): the live posing's next
  tick then skips that comparison (``live_posing.note_updates``, before any of the conditions
  above, so no report is missed). It also keeps Render > Lock
  Interface where armatures that solve on frame change need it (``render_lock.py``), and, when
  objects were added (making a library override adds some), gives every library override and
  its reference their DQ IK settings groups (``liboverride.py``);
- ``save_pre``, ``load_post``, ``blend_import_post``: the same for library overrides, so that
  their settings are saved as one operation per changed setting (``liboverride.py``).

All are ``@persistent`` (they survive file loads) and ``unregister`` removes exactly the
functions ``register`` added (https://docs.blender.org/api/current/bpy.app.handlers.html); it
also stops live posing and cancels a bake under way (its frame and pose put back).
"""

import bpy
from bpy.app.handlers import persistent

from ..keys import baking
from ..rig import reader
from ..solving import frame_change, live_posing, session, sessions
from . import liboverride, render_lock


@persistent
def _drop_sessions(*_args):
    live_posing.stop_all()
    sessions.drop_sessions()
    reader.forget()
    frame_change.forget()


@persistent
def _depsgraph_updated(_scene, depsgraph=None):
    sessions.drop_deleted()
    if depsgraph is not None:
        live_posing.note_updates(depsgraph)
    if (depsgraph is None or depsgraph.mode != 'RENDER') and not session.ticking() \
            and not bpy.app.is_job_running('RENDER'):
        live_posing.follow_running()
        render_lock.follow_updates(depsgraph)
        liboverride.follow_updates()


_HANDLERS = (("load_post", _drop_sessions), ("undo_post", _drop_sessions),
             ("redo_post", _drop_sessions), ("depsgraph_update_post", _depsgraph_updated),
             ("frame_change_post", frame_change.frame_change_post),
             *((name, liboverride.pair_override_settings) for name in liboverride.HANDLERS))


def register():
    for name, function in _HANDLERS:
        getattr(bpy.app.handlers, name).append(function)


def unregister():
    for name, function in _HANDLERS:
        handlers = getattr(bpy.app.handlers, name)
        if function in handlers:
            handlers.remove(function)
    live_posing.stop_all()
    baking.cancel_running()
    sessions.drop_sessions()
    reader.forget()
    frame_change.forget()
