"""Balance (``Object.dqik.use_balance``): the body a balance task weighs, read from the rig, the
task itself, built on each tick, and what a snapshot shows of it.

The body (``engine.Body``) gives each bone its ``PoseBone.dqik.mass``, or, at 0, an automatic
mass: the volume of the skin it carries, ``π r² ℓ`` with r the median distance of its skin
vertices from the bone (the capsule radius of ``colliders.capsules``) and ℓ its length, for the
bones a skinned mesh follows and 0 for the others; on a rig without a skinned mesh, its length
for the deforming bones. The supporting bones are those marked ``PoseBone.dqik.use_support`` and
the bones they carry by Blender's parenting (a foot and its toe; the solve's model re-parents
bones that follow others, ``rig.constraint_followers``, which would leave a Rigify toe out).
The ground plane is the world's: its normal, the world's Z in armature space, is the task's
target.
"""

from functools import partial

import numpy as np

from ...engine import AxesPosition, Balance, Body, Position, Task, center_of_mass, support_polygon
from ..colliders.capsules import skin_radii
from ..rig.model_reader import world_determinant
from ..settings.validation import check_armature_settings, check_bone_settings

NAME = "Balance"        # the task's name in reports
_BAND = 1e-3            # metres: within this of the polygon's edge the balance holds it


class BalanceSetup:
    """One armature's body, read once per reading of the rig (``forget``), and the body a
    tick's balance stands on: its supports held by the tick's tasks (``tasks``)."""

    def __init__(self):
        self.body = None
        self.standing = None    # the last tick's body, its supports those the tasks hold
        self._carried = ()      # (marked support, the model bones it carries) of ``body``

    def forget(self):
        self.body = self.standing = None

    def tasks(self, obj, model, cache, unit, tasks, names, warnings):
        """``tasks, names`` with the balance task added when ``Object.dqik.use_balance`` is
        on (``cache``: the colliders' ``ColliderCache``, for the skin; ``unit``: the
        armature's world unit); no bone marked Support is named in ``warnings``."""
        if not obj.dqik.use_balance:
            return tasks, names
        check_armature_settings(obj, ("balance_priority",))
        if not tasks:
            warnings.append("Balance moves the bones the other tasks move, and there is no "
                            "other task; balance skipped")
            return tasks, names
        body = self.body_of(obj, model, cache, unit)
        if not body.supports.any():
            warnings.append("Balance is on but no bone carries the weight: turn on Support for "
                            "the feet (Bone > DQ IK); balance skipped")
            return tasks, names
        up = armature_up(obj)
        self.standing = self._held(model, tasks, up, warnings)
        if not self.standing.supports.any():
            warnings.append("Balance is on but no task holds a bone marked Support; balance "
                            "skipped")
            return tasks, names
        task = Task(Balance, int(body.massive()[0]), up,
                    priority=obj.dqik.balance_priority, body=self.standing)
        return tasks + [task], names + [NAME]

    def _held(self, model, tasks, up, warnings):
        """The body with only the supports a position task of ``tasks`` holds, the height along
        ``up`` included (Position Axes holding Z on a floor do, X and Y alone do not): on the
        bone itself, or on the bone it rides on through constraints (a Rigify ``DEF-foot`` on
        its ``foot_fk``: ``ChainModel.riders``); a marked bone no such task holds is named in
        ``warnings`` and left out with what it carries but the bones a task holds themselves
        (a toe planted alone), since the solve moves it freely (it swung 250 mm and lifted
        58-83 mm and still bore weight)."""
        holding = {task.bone for task in tasks if task.kind is Position or (
            task.kind is AxesPosition and np.linalg.norm(task.target[3:].reshape(3, 3) @ up)
            > 0.5)}
        supports, loose = np.zeros(len(model), bool), []
        for marked, carried in self._carried:
            if _held_bone(model, marked, holding):
                supports[carried] = True
                continue
            loose.append(model.names[marked])
            held = [bone for bone in carried.tolist() if _held_bone(model, bone, holding)]
            supports[held] = True       # a toe planted on its own bears weight
        if loose:
            warnings.append(f"{', '.join(loose)}: marked Support but no position task holds "
                            "it (its target is off, missing or skipped, or it has no Position "
                            "holding its height); left out of the support polygon")
        body = self.body
        return body if np.array_equal(supports, body.supports) else \
            Body(body.masses, supports, body.band)

    def body_of(self, obj, model, cache, unit):
        """The armature's ``Body``, read when the rig was read again (``read_body``); until a
        tick finds which supports its tasks hold (``tasks``), ``standing`` is all of them."""
        if self.body is None:
            self.body, self._carried = read_body(obj, model, cache, _BAND / unit)
            self.standing = self.body
        return self.body

    def of_result(self, obj, model, solver, result):
        """What gives ``shown`` for the pose of the engine ``result`` of ``solver`` (the pose
        matrices its FK computed, slides included) when called (``SolveSnapshot.balance_of``:
        the armature's place and the body are taken now), or None with Balance off or without
        supports. With both, a solve had its balance task (``tasks``), so it modelled the bones
        the body weighs and stands on (``engine.involved_bones``): rows of its sorted
        ``bones``."""
        if not obj.dqik.use_balance or not self._standing():
            return None
        rows = np.searchsorted(solver.bones, self._weighed_bones())
        return partial(_shown, np.array(obj.matrix_world), model, self.standing,
                       result.matrices[rows])

    def shown(self, obj, model, matrices):
        """``(centre of mass, support polygon)`` in world space for the armature-space pose
        ``matrices`` (n,4,4) of every bone, or None without a body or supports."""
        if not self._standing():
            return None
        return _shown(np.array(obj.matrix_world), model, self.standing,
                      matrices[self._weighed_bones()])

    def _standing(self):
        return self.standing is not None and bool(self.standing.supports.any())

    def _weighed_bones(self):
        """The bones with mass, then the supporting bones (indices)."""
        return np.concatenate([self.standing.massive(), np.flatnonzero(self.standing.supports)])


def _shown(world, model, body, matrices):
    """``BalanceSetup.shown`` from the armature's ``world`` matrix and the pose matrices of the
    ``body``'s weighed bones alone (``_weighed_bones``)."""
    massive, supports = body.massive(), np.flatnonzero(body.supports)
    posed = world @ matrices     # a bone's Y: its length's scale
    centre = center_of_mass(posed[:massive.size], model.lengths[massive], body.masses[massive])
    feet = posed[massive.size:]
    heads = feet[:, :3, 3]
    tails = heads + model.lengths[supports, None] * feet[:, :3, 1]
    polygon, _ = support_polygon(np.concatenate([heads, tails]), np.array([0.0, 0.0, 1.0]))
    return centre, polygon


def armature_up(obj):
    """The world's up, +Z, in the armature's space, unit: ``M⁻¹ ẑ`` for the 3×3 ``M`` of its
    ``matrix_world``, the third column of ``adj(M) / det M``, whose rows are ``b × c``, ``c × a``
    and ``a × b`` for the columns a, b, c of M; in Python floats, as LAPACK's inverse costs
    more than the whole of it (``world_determinant``)."""
    (a0, b0, c0), (a1, b1, c1) = (row[:3] for row in obj.matrix_world[:2])
    up = np.array([b0 * c1 - b1 * c0, c0 * a1 - c1 * a0, a0 * b1 - a1 * b0]) \
        / world_determinant(obj)
    return up / np.linalg.norm(up)


def _held_bone(model, bone, holding):
    """True when a task on a bone of ``holding`` holds ``bone``: it is one, or it rides on one
    through constraints (``ChainModel.riders``)."""
    while bone not in holding and model.riders[bone] and model.parents[bone] >= 0:
        bone = int(model.parents[bone])
    return bone in holding


def read_body(obj, model, cache, band):
    """The armature's ``Body`` (module docstring), its ``band`` in armature units, and per bone
    marked Support the model bones it carries (itself included)."""
    settings = [pose_bone.dqik for pose_bone in obj.pose.bones]
    masses = np.array([s.mass for s in settings], dtype=np.float64)
    check_bone_settings(obj, list(model.names), ("mass",), masses[:, None])
    automatic = masses <= 0.0
    skin = skin_radii(obj, model, cache)
    if skin:
        radii = np.array([skin.get(name, 0.0) for name in model.names])
        masses[automatic] = (np.pi * radii ** 2 * model.lengths)[automatic]
    else:
        deforming = np.array([bone.use_deform for bone in obj.data.bones], dtype=bool)
        masses[automatic] = np.where(deforming if deforming.any() else True,
                                     model.lengths, 0.0)[automatic]
    groups = []     # (``Bone.children_recursive`` scans every bone per bone: 3 ms on Rigify)
    for marked in [pb.bone for pb, s in zip(obj.pose.bones, settings) if s.use_support]:
        carried, below = [], [marked]
        while below:
            bone = below.pop()
            carried.append(model.index[bone.name])
            below.extend(bone.children)
        groups.append((model.index[marked.name], np.array(carried, np.int64)))
    supports = np.zeros(len(model), bool)
    for _, carried in groups:
        supports[carried] = True
    return Body(masses, supports, band), groups

