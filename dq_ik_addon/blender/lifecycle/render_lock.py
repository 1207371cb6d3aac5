"""Render > Lock Interface for Solve on Frame Change: taken where it is needed, given back when
nothing needs it any more, and never taken back from the user.

A render that runs as a job (F12 in the interface) evaluates its frames in another thread, and
changing data from a ``frame_change_post`` handler then needs the interface locked (the note on
altering data in https://docs.blender.org/api/current/bpy.app.handlers.html; ``solving.frame_change``
skips such renders otherwise). So a scene with an armature that has
``Object.dqik.use_solve_on_frame_change`` on gets its interface locked, and a note (a hidden
scene ID property) says whose lock it is: ``True`` DQ IK took it; ``False`` the user's (the
lock was on already, or the user unlocked it afterwards), which DQ IK then leaves alone.

- Switching the option on locks the armature's unlocked scenes (also one the user unlocked
  before: switching it on asks for it).
- After a depsgraph update that added, removed or re-linked objects (an armature appended or
  linked with the option on, or deleted): a scene that needs the lock and was never noted gets
  it; a scene that no longer needs it gets a lock DQ IK took given back, and its note dropped.
- After any depsgraph update, a scene DQ IK locked that is found unlocked is noted as the
  user's choice.
- Switching the option off on the last armature of a scene gives the lock back if DQ IK took it.
"""

import bpy

LOCKED_BY_DQIK = "_dqik_locked_interface"
_objects_seen = [None]     # len(bpy.data.objects) at the last update that looked for armatures


def lock_for(armature):
    """The option was switched on for ``armature``: lock its scenes' interface where unlocked."""
    for scene in armature.users_scene:
        _lock(scene)


def give_back(scenes):
    """Each of ``scenes`` with no armature with the option on: the lock back off if DQ IK
    took it, the note dropped."""
    for scene in scenes:
        note = scene.get(LOCKED_BY_DQIK)
        if note is None or _needs_lock(scene):
            continue
        if note and scene.render.use_lock_interface:
            scene.render.use_lock_interface = False
        del scene[LOCKED_BY_DQIK]


def follow_updates(depsgraph):
    """After a depsgraph update (see the module docstring): which scenes need the lock is
    looked at again only when objects were added or removed, or collections changed."""
    count = len(bpy.data.objects)
    looked = _objects_seen[0] != count or depsgraph is None \
        or depsgraph.id_type_updated('COLLECTION')
    _objects_seen[0] = count
    for scene in bpy.data.scenes:
        if scene.library is not None:
            continue
        note = scene.get(LOCKED_BY_DQIK)
        if note and not scene.render.use_lock_interface:
            scene[LOCKED_BY_DQIK] = False       # the user unlocked it
        elif looked and note is None and _needs_lock(scene):
            _lock(scene)
        elif looked and note is not None:
            give_back([scene])


def _lock(scene):
    """Lock ``scene``'s interface, noting that DQ IK took the lock; a lock already on is noted
    as the user's own."""
    if not scene.render.use_lock_interface:
        scene.render.use_lock_interface = True
        scene[LOCKED_BY_DQIK] = True
    elif LOCKED_BY_DQIK not in scene:
        scene[LOCKED_BY_DQIK] = False


def _needs_lock(scene):
    return any(obj.type == 'ARMATURE' and obj.dqik.use_solve_on_frame_change
               for obj in scene.objects)
