"""The solving sessions of the open file, one per armature object (``Session``): made on first
use, found without making one (for drawing), marked for a rebuild, and dropped (file load, undo,
redo, a deleted armature, the extension disabled: ``lifecycle/handlers.py``)."""

from ..errors import check_armature_object
from .session import Session

_SESSIONS = {}  # Object.session_uid → Session


def session_for(obj):
    """The solving session of the armature object ``obj``, made on first use."""
    check_armature_object(obj)
    session = _SESSIONS.get(obj.session_uid)
    if session is None:
        session = _SESSIONS[obj.session_uid] = Session(obj)
    return session


def last_result_of(obj):
    """The last ``SolveSnapshot`` of ``obj``'s session, or None; never makes a session (for
    drawing)."""
    session = _SESSIONS.get(obj.session_uid)
    return None if session is None else session.last_result


def tested_capsules_of(obj):
    """Names of the bones whose capsules the solver of ``obj``'s session tests (against its
    colliders and, with Self Collision, each other), or None (no session, no solver yet, or no
    collisions); never makes a session (for drawing)."""
    session = _SESSIONS.get(obj.session_uid)
    solver = None if session is None else session.solver
    if solver is None or solver.capsule_bones is None:
        return None
    return {session.model.names[i] for i in solver.capsule_bones.tolist()}


def invalidate(obj):
    """Mark ``obj``'s session, if it has one, for a rebuild on its next tick."""
    session = _SESSIONS.get(obj.session_uid)
    if session is not None:
        session.invalidate()


def armatures_changed():
    """Every session's armature may have changed in a way no depsgraph update reported (a frame
    change: keyed settings): its next tick compares the rig again (``set_up_watch``)."""
    for session in _SESSIONS.values():
        session.armature_updated()


def drop_deleted():
    """Forget the sessions whose armature object was deleted."""
    for key, session in list(_SESSIONS.items()):
        try:
            session.obj.name
        except ReferenceError:
            del _SESSIONS[key]


def drop_sessions():
    """Forget every session (file load, undo, redo, disabling the extension)."""
    _SESSIONS.clear()


def session_count():
    """How many sessions are kept (for tests)."""
    return len(_SESSIONS)
