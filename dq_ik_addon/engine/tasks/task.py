"""One task of a solve (``Task``), and the joints each task may move (``joint_masks``)."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Task:
    """One goal of one bone: a task ``kind`` (a ``TaskKind`` class, e.g. ``Position``) with its
    ``target`` (the kind's ``target_width`` numbers) and ``options``.

    ``chain_count`` is the number of bones the task may move, counting the bone itself, as
    Blender's IK "Chain Length" (0 = all the way to the root). ``priority`` 1 is the most
    important; ``weight`` trades tasks of one priority level against each other. ``partner``
    (a bone, or -1): the bone a loop task holds this one on (``tasks.loop``); the task moves
    none of the partner's ancestors, which the two share (Baerlocher §4.4). ``body`` (a
    ``balance.Body``, or None): the masses a whole-body task (``Balance``) weighs; it moves the
    joints the other tasks move, whatever its chain (``joint_masks``).
    """

    kind: type
    bone: int
    target: np.ndarray
    priority: int = 1
    weight: float = 1.0
    chain_count: int = 0
    options: tuple = ()
    partner: int = -1
    body: object = None


def joint_masks(model, tasks):
    """(T, n): True where the task may move the joint (the bone and its ancestors in the chain,
    less a loop's partner and its ancestors; for a whole-body task, ``Task.body``, the joints
    the other tasks move: the balance poses the body through the limbs the animator posed, and
    carries the rest, fingers and face, as they stand). ``tasks`` need only ``bone`` and
    ``chain_count`` (and ``partner``, ``body``)."""
    masks = np.zeros((len(tasks), len(model)), dtype=bool)
    bodies = [i for i, t in enumerate(tasks) if getattr(t, "body", None) is not None]
    for i, t in enumerate(tasks):
        if i in bodies:
            continue
        bone, moved = t.bone, 0
        while bone >= 0 and (t.chain_count <= 0 or moved < t.chain_count):
            masks[i, bone] = True
            bone, moved = model.parents[bone], moved + 1
        bone = getattr(t, "partner", -1)
        while bone >= 0:
            masks[i, bone] = False
            bone = model.parents[bone]
    masks[bodies] = masks.any(axis=0)
    return masks
