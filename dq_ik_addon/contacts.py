"""Contacts: bone capsules against obstacles, as one-sided constraint rows above every task.

Every collision bone is a capsule: the segment head→tail with a radius. It is sampled at
``SAMPLES`` points p = head + t (tail − head). An obstacle query returns, for each point, the signed
distance d to the nearest obstacle surface (negative inside) and the outward normal n there. A
point closer than the margin plus a detection band gives the row (Bartelink §6.2, the velocity
damper of the digests)

    nᵀ J_p Δθ ≥ −(d − radius − margin),   i.e.   −nᵀ J_p Δθ ≤ d − radius − margin,

with J_p the positional Jacobian of the point (``jacobian.task_jacobian``). Rows are re-detected
every iteration, so depths are never stale and a contact leaves as soon as the step moves away.
A point already inside (negative right-hand side) is pushed out by ``PUSH_OUT`` of its depth per
iteration, so a pose that starts in penetration leaves it in a few iterations without a jump.
"""

import numpy as np

from .jacobian import task_jacobian

SAMPLES = np.linspace(0.0, 1.0, 5)
PUSH_OUT = 0.5


class Capsules:
    """Collision capsules of a (sub-)model: which bones, their radii, and the sample points."""

    def __init__(self, model, radii, enabled):
        radii = np.asarray(radii, dtype=np.float64)
        self.bones = np.nonzero(np.asarray(enabled, dtype=bool) & (radii > 0.0))[0]
        self.radii = np.repeat(radii[self.bones], SAMPLES.size)
        self.owner = np.repeat(self.bones, SAMPLES.size)
        self.t = np.tile(SAMPLES, self.bones.size)
        self.model = model

    def __len__(self):
        return self.owner.size

    def points(self, world):
        """(P,3) sample points in armature space."""
        heads = world[self.owner, :3, 3]
        tails = self.model.tails(world)[self.owner]
        return heads + self.t[:, None] * (tails - heads)


def contact_rows(capsules, world, axes, joints, moves, query, margin, band):
    """``(gradient (rows, 3·len(joints)), slack (rows,))`` of the points within ``margin + band``.

    ``moves`` is the model's (n,n) mask ``[j, i]`` = joint j moves bone i; ``query(points,
    max_distance)`` returns the signed distances and outward normals (``inf`` where nothing is
    within ``max_distance``).
    """
    size = 3 * len(joints)
    if len(capsules) == 0:
        return np.zeros((0, size)), np.zeros(0)
    points = capsules.points(world)
    distance, normal = query(points, margin + band + capsules.radii)
    clearance = distance - capsules.radii - margin
    near = np.isfinite(distance) & (clearance <= band)
    if not near.any():
        return np.zeros((0, size)), np.zeros(0)
    masks = moves[:, capsules.owner[near]].T
    j_pos, _ = task_jacobian(axes, world[:, :3, 3], points[near], masks, joints)
    gradient = -np.einsum('pi,pij->pj', normal[near], j_pos)
    slack = np.where(clearance[near] < 0.0, PUSH_OUT * clearance[near], clearance[near])
    return gradient, slack
