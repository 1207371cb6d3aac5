"""The bones a solve models: those its tasks depend on, with their ancestors."""

import numpy as np

from .contacts import MIN_RADIUS
from .tasks import TaskSet


def involved_bones(model, tasks, obstacles=None, radii=None, collision=None, self_collision=False):
    """Sorted bones the solve must model: the task bones, loop partners and the bones a balance
    task weighs or stands on (``Task.body``); with contacts every
    capsule bone (radius ≥ ``contacts.MIN_RADIUS``) the tasks move, with self-collision every
    one; and all their ancestors."""
    ends = [t.bone for t in tasks] + [t.partner for t in tasks if t.partner >= 0] + [
        bone for t in tasks if t.body is not None
        for bone in np.flatnonzero((t.body.masses > 0) | t.body.supports).tolist()]
    if obstacles is None and not self_collision:
        return model.with_ancestors(ends)
    bones = np.zeros(len(model), dtype=bool)
    bones[ends] = True
    capsule = np.asarray(radii, dtype=np.float64) >= MIN_RADIUS
    if collision is not None:
        capsule &= np.asarray(collision, dtype=bool)
    moved = model.descendants_mask()[TaskSet(model, tasks).joint_masks.any(axis=0)].any(axis=0)
    bones |= capsule & (moved | self_collision)
    return model.with_ancestors(np.nonzero(bones)[0])
