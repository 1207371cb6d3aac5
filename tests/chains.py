"""Small synthetic chains and obstacles for engine tests and benchmarks (numpy only)."""

import numpy as np

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine.jacobian import task_jacobian
from dq_ik_addon.engine.limits import SwingTwistLimits
from dq_ik_addon.engine.quaternion import qexp, qmul, quat_to_matrix
from dq_ik_addon.engine.swing_twist import quat_from_swing_twist
from dq_ik_addon.engine.tasks import TaskKind


def straight_chain(n, length=1.0):
    """n bones along +Y, each ``length`` long, connected."""
    rest = np.tile(np.eye(4), (n, 1, 1))
    rest[:, 1, 3] = np.arange(n) * length
    return ChainModel.from_bones([f"b{i}" for i in range(n)], np.arange(n) - 1, rest,
                                 lengths=np.full(n, length), connected=np.arange(n) > 0)


def random_tree(rng, n):
    """A random tree with random rest orientations (rolled bones), offsets and lengths."""
    parents = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])
    lengths = rng.uniform(0.2, 1.0, n)
    rest = np.zeros((n, 4, 4))
    rest[:, 3, 3] = 1.0
    axis = rng.normal(size=(n, 4))
    rest[:, :3, :3] = quat_to_matrix(axis / np.linalg.norm(axis, axis=1, keepdims=True))
    for i in range(n):
        if parents[i] < 0:
            rest[i, :3, 3] = rng.normal(size=3)
        else:
            p = parents[i]
            tail = rest[p, :3, 3] + rest[p, :3, 1] * lengths[p]
            rest[i, :3, 3] = tail + (rng.normal(size=3) * 0.2 if rng.random() < 0.3 else 0.0)
    return ChainModel.from_bones([f"r{i}" for i in range(n)], parents, rest, lengths=lengths)


def uniform_limits(n, swing=0.5, twist=0.3):
    values = [-swing, swing, -swing, swing, -twist, twist]
    return SwingTwistLimits(*(np.full(n, v) for v in values), np.ones(n, dtype=bool))


def random_limits(rng, n):
    bounds = rng.uniform(0.0, 1.5, size=(6, n)) * (rng.random((6, n)) > 0.15)
    return SwingTwistLimits(-bounds[0], bounds[1], -bounds[2], bounds[3], -bounds[4], bounds[5],
                            rng.random(n) > 0.2)


def random_pose_in_limits(rng, limits, scale=1.0):
    """Rotations strictly inside ``limits`` (free joints: up to 0.8 rad of swing)."""
    n = len(limits.enabled)
    angle = rng.uniform(0, 2 * np.pi, n)
    radius = np.sqrt(rng.uniform(0, 1, n)) * scale
    a = np.where(np.cos(angle) >= 0, limits.swing_x_max, -limits.swing_x_min)
    b = np.where(np.sin(angle) >= 0, limits.swing_z_max, -limits.swing_z_min)
    a = np.where(limits.enabled, a, 0.8)
    b = np.where(limits.enabled, b, 0.8)
    twist = np.where(limits.enabled, rng.uniform(0, 1, n) * (limits.twist_max - limits.twist_min)
                     + limits.twist_min, rng.uniform(-0.8, 0.8, n))
    return quat_from_swing_twist(radius * a * np.cos(angle), radius * b * np.sin(angle), twist * scale)


def turned_both_ways(q, joint, axis, angle):
    """Rotations ``q`` with ``joint`` turned by ``±angle`` about its local ``axis`` (0, 1, 2) by
    the solver's update ``exp(½Δθ) ⊗ q``: the pair for a central difference over 2 · angle."""
    delta = np.zeros(3)
    delta[axis] = angle / 2
    plus, minus = q.copy(), q.copy()
    plus[joint] = qmul(qexp(delta), q[joint])
    minus[joint] = qmul(qexp(-delta), q[joint])
    return plus, minus


def identity_pose(n):
    return np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))


def ball(centre, radius):
    """The ``Solver`` obstacle query of a solid ball: signed distance and outward normal."""
    def query(points, max_distance):
        offset = points - centre
        length = np.linalg.norm(offset, axis=1)
        distance = length - radius
        normal = offset / np.maximum(length, 1e-12)[:, None]
        return np.where(distance <= max_distance, distance, np.inf), normal
    return query


class PointOnPlane(TaskKind):
    """A task kind of the tests alone: a bone's tail anywhere on a plane ``n · p = d`` (targets
    (k,4): unit normal n and offset d), ``e = n (d − n · p)`` and ``J = n nᵀ J_p``, ``J_p`` the
    tail's positional Jacobian."""

    target_width = 4

    def errors(self, effectors):
        normals, offsets = self.targets[:, :3], self.targets[:, 3]
        return normals * (offsets - np.einsum('ki,ki->k', normals, effectors.tails))[:, None]

    def jacobian(self, frame, effectors, mask):
        normals = self.targets[:, :3]
        along = task_jacobian(frame, effectors.tails, mask, False)[0]
        return normals[:, :, None] * np.einsum('ki,kic->kc', normals, along)[:, None, :]
