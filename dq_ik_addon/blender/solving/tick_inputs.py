"""The record of one tick's inputs, read once at its start: the armature's solver settings, its
colliders, its world unit and its pose channels (``PoseSnapshot``). The tick's steps (what moved
since the last live tick, whether the solver must be rebuilt, the obstacle query, the solver's
build, the pose the solve starts from) all read this record, never the rig again; the pose's key
after the tick comes from the pose it wrote (``PoseArrays.key``)."""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..rig.model_reader import world_unit
from ..rig.pose import PoseArrays, PoseSnapshot
from ..settings.scene_tasks import armature_settings, collision_settings


@dataclass
class TickInputs:
    """``settings``: the ``Object.dqik`` values a solver is built from (``armature_settings``);
    ``colliders`` (a collection or None) and ``self_collision`` (``collision_settings``);
    ``snapshot``: every pose channel; ``view_layer``: the view layer whose depsgraph evaluates
    the frame (a frame change's; None: the context's), in which the targets are looked up;
    ``unit``: the armature's ``world_unit``, read when first asked (a live tick that finds
    nothing moved never asks)."""

    obj: object
    settings: tuple
    colliders: object
    self_collision: bool
    snapshot: PoseSnapshot
    view_layer: object = None

    @classmethod
    def read(cls, obj, view_layer=None, written=None, driven=()):
        """The inputs of a tick of the armature ``obj``, read now (``view_layer``: above); the
        pose channels those of ``written`` (a ``PoseArrays`` a tick wrote) when it is known
        that nothing changed them since (``SetUpWatch.stands``), but the ``driven`` ones
        (``rig_checks.driven_pose_channels``), read."""
        snapshot = PoseSnapshot(obj) if written is None else written.stored(obj, driven)
        return cls(obj, armature_settings(obj), *collision_settings(obj), snapshot, view_layer)

    @cached_property
    def unit(self):
        return world_unit(self.obj)

    def pose(self):
        """The ``PoseArrays`` the solve starts from: the channels read, with the matrices
        Blender evaluated."""
        return PoseArrays(self.obj, self.snapshot)

    def placed(self, sources):
        """The armature, the targets of ``sources`` and every collider object: the objects
        whose ``matrix_world`` a live tick compares with the last."""
        colliders = [] if self.colliders is None else list(self.colliders.all_objects)
        return [self.obj] + [s.target for s in sources if s.target is not None] + colliders


def matrix_bytes(obj):
    """``obj.matrix_world`` as bytes, or None for a deleted object."""
    try:
        return np.array(obj.matrix_world, dtype=np.float32).tobytes()
    except ReferenceError:
        return None
