"""When a solving session must read its rig and settings again, without reading them on every
tick (``session.py``).

- Setting a ``PoseBone.dqik`` or ``Object.dqik`` property (in the panels or from Python) calls
  its ``update`` callback (``properties.py``), which marks the armature's session for a rebuild
  (``invalidate``).
- Every tick compares ``rig.model_reader.rig_fingerprint`` (the bones by value, in a few
  ``foreach_get`` calls), the ``Object.dqik`` solver values, the armature's ``world_unit`` and
  the constraints that may switch which bone a bone follows
  (``constraint_followers.switches_key``: an IK/FK switch) with those of the last build: this
  catches rig edits (Edit Mode, bone options), raw writes of armature settings, a change of the
  armature's scale and IK/FK switches, in the UI and in scripts.
- Every tick also compares the values of the DQ IK settings that keys or drivers set
  (``animated_settings.values``: a task keyed on at frame 20, a driven weight).
- A live tick taken in a depsgraph update (``LivePosing.follow``) skips those comparisons (and the
  session reuses ``rig_checks.shown_as_solved``'s reading of the constraints and drivers) while no
  update has reported the armature since the last tick that made them (``armature_updated``, from
  ``live_posing.note_updates``): everything they read (bones, locks, constraints, drivers, keys)
  reports the armature, object or data, when it changes, and a dragged target does not (measured
  with bpy 5.0.1; about 0.5 ms of a tick on a 706-bone Rigify rig). Such a tick takes the pose
  channels as the last tick wrote them too, without reading them back (``stands``; about 0.1 ms on
  that rig): a channel set in the interface or from Python reports the armature; the channels
  drivers set are read (``rig_checks.driven_pose_channels``: Blender evaluates them again after the
  tick's write, and no update reports it). The pose a tick writes in that update is evaluated
  without calling the handlers again, so it does not count as a change; one written outside an
  update (the timer's tick) does, and the next tick checks again. What no such update reports counts
  as a change too: a frame change (``scene.frame_set`` calls no ``depsgraph_update_post``, and keys
  may set DQ IK settings: ``frame_change_post`` marks every session,
  ``sessions.armatures_changed``), whatever happened before a live posing started (it starts
  unchecked), and a read of the rig that failed (a tick that raises leaves no pose to take as held:
  ``Session._solve``).

What bypasses all of them, so a script must call ``Session.invalidate()`` after it: writing a
``PoseBone.dqik`` setting as a raw ID property (``pose_bone.dqik["stiffness"] = 0.5``, which calls
no ``update`` callback), and pose channels written with ``foreach_set`` and no ``update_tag`` during
live posing (Blender does not evaluate them either). Comparing every bone's settings by value on
each tick would cost about 0.45 ms on 159 bones, most of what the session saves (measured with bpy
5.0.1).
"""

import math

from ..rig.constraint_followers import switches_key
from ..rig.model_reader import rig_fingerprint
from ..settings import animated_settings

_SAME_UNIT = 1e-5     # a turning armature's world unit moves in float32's last digits


class SetUpWatch:
    """What one session's last read of the rig was compared by (module docstring).
    ``switches``: the bones whose constraints may switch what they follow; ``trusting``: the
    last ``changed`` took the set-up as last checked."""

    def __init__(self):
        self.dirty = True
        self.switches = []
        self.trusting = False
        self._fingerprint = None
        self._stands = False     # no update reported the armature since the last comparison
        self._compared = None    # the fingerprint the last comparison read

    def invalidate(self):
        self.dirty = True

    def armature_updated(self):
        self._stands = False

    def stands(self, trusted):
        """True when a tick in a depsgraph update (``trusted``) may take the armature as the
        last tick left it, its pose channels those that tick wrote: no update has reported
        the armature since the last comparison (module docstring) and nothing marked it."""
        return trusted and self._stands and not self.dirty

    def changed(self, obj, inputs, unit, trusted):
        """True when the rig of ``obj`` must be read again, by the ``TickInputs`` ``inputs`` and
        the session's ``unit``; with ``trusted`` (a tick in a depsgraph update), nothing but
        the solver settings and the unit is compared while no update reported the armature."""
        rescaled = not math.isclose(inputs.unit, unit, rel_tol=_SAME_UNIT)
        self.trusting = trusted and self._stands and not self.dirty and not rescaled \
            and self._fingerprint is not None and inputs.settings == self._fingerprint[1]
        if self.trusting:
            return False
        self._compared = (rig_fingerprint(obj), inputs.settings, animated_settings.values(obj),
                          switches_key(obj, self.switches))
        if self.dirty or rescaled or self._compared != self._fingerprint:
            return True
        self._stands = True    # until an update reports the armature, this tick's own included
        return False

    def read(self, obj, switches):
        """The rig of ``obj`` was read again (after ``changed``), with these ``switches``."""
        compared = self._compared
        self._fingerprint = compared if switches == self.switches else \
            compared[:3] + (switches_key(obj, switches),)
        self.switches = switches
        self.dirty = False
        self._stands = True
