"""Sliding bones: bones whose pose location the solve moves beside their rotation.

Bartelink (§7.1) links the pelvis to a virtual root joint "to give freedom to the motion of the
complete skeleton": three translational degrees of freedom above the rotations. Here they are the
bone's own location channels ``l`` (``M = F · T(l) · R(q) · S(s)``, ``chain_model``), so a solve
can crouch a body whose feet are planted.

The solve's state is then one (b + k, 4) array: the b modelled bones' rotations (w first), then
one row ``(0, l)`` per sliding bone, its location as a pure quaternion. Everything that turns
joints reads the first b rows alone (the joints index them); the FK, the pose update and the rest
pull read the last k (``MovingJointsFK``, ``PoseUpdate``, ``Steps``).

A slide's Jacobian columns (``jacobian.JointFrames``) move every point the bone carries along the
bone's location axes and turn nothing. They are scaled by the chain size L (``column_scale``),
so that a slide of L weighs as a turn of one radian, whatever the rig's scale; a locked axis
(``PoseBone.lock_location``) has scale 0 and never moves.

The first ``FIRST_ITERATIONS`` iterations of a solve weigh a slide as a turn per L/4
(``FIRST_WEIGHT``, ``Problem.weigh_slides``): the limbs make the first moves, and the pelvis,
which carries the whole body, moves where they do not get there. Weighed as a turn per L from
the start, two hands reaching 30 cm in front of the chest, which the arms reach alone, slid the
hips 39 cm forward (1.4 cm now; the basic metarig, Humanoid preset, feet planted). Weighed as a
turn per L/4 throughout, 3 of 1,000 random reachable problems cycled to the iteration limit;
from the sixth iteration on, a solve that needs the pelvis gets it as before (1,000 of 1,000).
"""

import numpy as np

FIRST_ITERATIONS = 5    # a solve's first iterations weigh a slide as a turn per L/4
FIRST_WEIGHT = 0.25


class Slides:
    """The sliding bones of one solve: ``bones`` (indices into the solve's sub-model), their
    free location axes ``free`` (k,3), and which tasks they move ``moves_task`` (T,)."""

    def __init__(self, model, joint_masks, free_axes, size):
        """``free_axes`` (b,3) of the sub-model, 1 where a bone's location axis may slide (None:
        nothing slides): a bone slides when an axis is free, some task moves it, and it is not
        connected to its parent (whose tail holds its head, ``ChainModel.uses_location``)."""
        moved = joint_masks.any(axis=0) & model.uses_location
        free = np.zeros((len(model), 3)) if free_axes is None else np.asarray(free_axes, float)
        self.bones = np.flatnonzero(moved & free.any(axis=1))
        self.free = free[self.bones]
        self.size = size
        self.weight = 1.0     # the column scales' fraction of L (``column_scale``)
        self.moves_task = joint_masks[:, self.bones].any(axis=1)
        self.count = self.bones.size

    def allowance(self):
        """What a slide adds to each task's reach in one solve (T,): the chain size L for the
        tasks it moves. A slide could carry a chain anywhere, but the tasks above it (planted
        feet) usually hold it, so a target out of reach still pulls the same way wherever it
        lies along a direction (``reach_bound``, ``TaskSet.set_reach``); solving again from the
        new pose, as live posing does, follows it further."""
        return np.where(self.moves_task, self.size, 0.0)

    def column_scale(self):
        """The slides' column scales (3k,): ``weight`` × L on a free axis, 0 on a locked one."""
        return (self.weight * self.size * self.free).ravel()

    def state(self, rotations, locations):
        """The solve's state (module docstring) of the sub-model's ``rotations`` (b,4) and pose
        ``locations`` (b,3; None: all 0)."""
        if not self.count:
            return rotations
        return self.with_slides(rotations, None if locations is None else locations[self.bones])

    def with_slides(self, rotations, slides):
        """The solve's state of the sub-model's ``rotations`` (b,4) and the sliding bones'
        locations ``slides`` (k,3; None: all 0)."""
        rows = np.zeros((self.count, 4))
        if slides is not None:
            rows[:, 1:] = slides
        return np.concatenate([rotations, rows])

    def pull(self, state, preferred, weight):
        """The rest pull of the slides (3k,) in the scaled columns: ``w (l_pref − l) / L`` on
        the free axes (over ``weight`` × L), the translational part of ``steps``' pull
        ``w · 2 log(q_pref ⊗ q*)``."""
        rows = slice(len(state) - self.count, None)
        return (weight / (self.weight * self.size)) * (
            (preferred[rows, 1:] - state[rows, 1:]) * self.free).ravel()

    def everywhere(self, state, locations, bones, count):
        """``slid_locations`` of a whole model of ``count`` bones, whose sliding bones are
        ``bones``; None when nothing slides."""
        return slid_locations(state, locations, bones, count) if self.count else None


def slid_locations(state, locations, bones, count):
    """The pose locations (count,3) of ``count`` bones from their ``locations`` (None: all 0),
    with the slides of the solve's ``state`` (its last rows, one per bone of ``bones``) on the
    bones ``bones``."""
    located = np.zeros((count, 3)) if locations is None else locations.copy()
    located[bones] = state[len(state) - len(bones):, 1:]
    return located
