"""Render > Lock Interface for Solve on Frame Change: taken where it is needed, given back when
nothing needs it any more, and never taken from the user.

A render that runs as a job (F12 in the interface) evaluates its frames in another thread, and
changing data from a ``frame_change_post`` handler then needs the interface locked (the note on
altering data in https://docs.blender.org/api/current/bpy.app.handlers.html; ``frame_solving``
skips such renders otherwise). So switching ``Object.dqik.use_solve_on_frame_change`` on locks
the interface of the armature's scenes where it was unlocked, and notes on each such scene that
DQ IK took the lock (a hidden scene ID property). DQ IK gives back only a lock it took:

- switching the option off on the last armature of a scene that has it on unlocks the scene;
- so does a depsgraph update that finds no armature in the scene with the option on (the
  armature was deleted or unlinked): checked when the file's number of objects changed;
- a depsgraph update that finds the scene unlocked drops the note: the user unlocked it, and a
  lock set again after that is the user's own.
"""

import bpy

LOCKED_BY_DQIK = "_dqik_locked_interface"
_objects_seen = [None]     # len(bpy.data.objects) at the last update that looked for armatures


def lock_for(armature):
    """The option was switched on for ``armature``: lock its scenes' interface where unlocked."""
    for scene in armature.users_scene:
        if not scene.render.use_lock_interface:
            scene.render.use_lock_interface = True
            scene[LOCKED_BY_DQIK] = True


def give_back(scenes):
    """Unlock each of ``scenes`` whose lock DQ IK took and that has no armature with the option
    on; forget the note where the user unlocked the scene."""
    for scene in scenes:
        if not scene.get(LOCKED_BY_DQIK):
            continue
        if scene.render.use_lock_interface and _solves_on_frame_change(scene):
            continue
        scene.render.use_lock_interface = False
        del scene[LOCKED_BY_DQIK]


def follow_updates():
    """After a depsgraph update: ``give_back`` the scenes DQ IK locked, looking for their
    armatures only when objects were added or removed since the last look (else only the notes
    of scenes the user unlocked are dropped)."""
    count = len(bpy.data.objects)
    looked, _objects_seen[0] = _objects_seen[0] != count, count
    give_back([scene for scene in bpy.data.scenes
               if scene.library is None and scene.get(LOCKED_BY_DQIK)
               and (looked or not scene.render.use_lock_interface)])


def _solves_on_frame_change(scene):
    return any(obj.type == 'ARMATURE' and obj.dqik.use_solve_on_frame_change
               for obj in scene.objects)
