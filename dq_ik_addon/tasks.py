"""IK tasks: a bone's tail towards a target point, its orientation towards a target orientation.

Errors are taken in armature space. The orientation error is the short-way rotation vector
``2 log(q_target ⊗ q_bone*)`` with the product canonicalized to ``w ≥ 0`` (van den Bergen,
"shortest arc"; Baerlocher §4.5.2), so q and −q give the same, smallest error.
"""

from dataclasses import dataclass

import numpy as np

from .quaternion import matrix_to_quat, qcanonical, qconj, qmul, qnormalize, quat_to_rotvec


@dataclass(frozen=True)
class Task:
    """One bone's goal.

    ``chain_count`` is the number of bones the task may move, counting the bone itself, as
    Blender's IK "Chain Length" (0 = all the way to the root). ``priority`` 1 is the most important.
    """

    bone: int
    target_position: np.ndarray = None
    target_rotation: np.ndarray = None
    priority: int = 1
    weight: float = 1.0
    chain_count: int = 0


class TaskSet:
    """All tasks of a solve as arrays, with the joints each task may move."""

    def __init__(self, model, tasks):
        tasks = list(_targeted(tasks))
        self.tasks = tasks
        count = len(tasks)
        self.bones = np.array([t.bone for t in tasks], dtype=np.int64)
        self.has_position = np.array([t.target_position is not None for t in tasks], dtype=bool)
        self.has_rotation = np.array([t.target_rotation is not None for t in tasks], dtype=bool)
        self.every_position, self.any_rotation = bool(self.has_position.all()), \
            bool(self.has_rotation.any())
        self.lengths = model.lengths[self.bones][:, None]
        self._tails_of = (None, None)  # (pose matrices, their task tails) of the last ``tails``
        self.positions = np.zeros((count, 3))
        self.rotations = np.tile([1.0, 0.0, 0.0, 0.0], (count, 1))
        self.set_targets(tasks)
        self.priorities = np.array([t.priority for t in tasks], dtype=np.int64)
        self.weights = np.array([max(t.weight, 0.0) for t in tasks], dtype=np.float64)
        self.levels = sorted(set(self.priorities.tolist()))
        self.joint_masks = self._joint_masks(model, tasks)

    def set_targets(self, tasks):
        """Take the target positions and orientations of ``tasks``, the same tasks (bones, kinds,
        order) this set was made of, with targets that may have moved."""
        for i, t in enumerate(_targeted(tasks)):
            if t.target_position is not None:
                self.positions[i] = t.target_position
            if t.target_rotation is not None:
                self.rotations[i] = qnormalize(np.asarray(t.target_rotation, dtype=np.float64))

    @staticmethod
    def _joint_masks(model, tasks):
        """(T, n): True where the task may move the joint (the bone and its ancestors in the chain)."""
        masks = np.zeros((len(tasks), len(model)), dtype=bool)
        for i, t in enumerate(tasks):
            bone, moved = t.bone, 0
            while bone >= 0 and (t.chain_count <= 0 or moved < t.chain_count):
                masks[i, bone] = True
                bone, moved = model.parents[bone], moved + 1
        return masks

    def __len__(self):
        return len(self.tasks)

    def tails(self, world):
        """The task bones' tails (T,3) from the pose matrices ``world`` (``ChainModel.tails``);
        the last answer again for the same ``world`` array (a solve asks up to five times per
        pose: errors, Jacobian, correction, escape)."""
        if world is self._tails_of[0]:
            return self._tails_of[1]
        frames = world.take(self.bones, axis=0)
        tails = frames[:, :3, 3] + frames[:, :3, 1] * self.lengths
        tails.flags.writeable = False
        self._tails_of = (world, tails)
        return tails

    def errors(self, world):
        """Position errors (T,3) (target − tail) and orientation errors (T,3) (short-way rotvec)."""
        position = self.positions - self.tails(world)
        if not self.every_position:
            position = np.where(self.has_position[:, None], position, 0.0)
        rotation = np.zeros(position.shape)
        if self.any_rotation:
            rows = self.has_rotation
            bone_rotation = matrix_to_quat(world[self.bones[rows], :3, :3])
            rotation[rows] = quat_to_rotvec(qcanonical(qmul(self.rotations[rows], qconj(bone_rotation))))
        return position, rotation


def _targeted(tasks):
    """The tasks that have a target position or orientation (the others are no task)."""
    return (t for t in tasks if t.target_position is not None or t.target_rotation is not None)
