"""Contacts on synthetic chains against analytic obstacles (numpy only)."""

import numpy as np
import pytest
from chains import ball, identity_pose, straight_chain, uniform_limits

from dq_ik_addon.engine.contacts import Capsules, nearest_between, nearest_between_one
from dq_ik_addon.engine.solver import Solver, SolverSettings
from dq_ik_addon.engine.tasks import Position, Task

RADIUS, MARGIN = 0.05, 0.01


def wall(x0):
    """The solid half-space x ≥ x0: signed distance x0 − x, outward normal −X."""
    def query(points, max_distance):
        distance = x0 - points[:, 0]
        distance = np.where(distance <= max_distance, distance, np.inf)
        return distance, np.tile([-1.0, 0.0, 0.0], (len(points), 1))
    return query


def slab(x0, thickness):
    """A thin plate x0 ≤ x ≤ x0 + thickness: distance to the nearer face, negative inside."""
    def query(points, max_distance):
        front, back = x0 - points[:, 0], points[:, 0] - (x0 + thickness)
        use_front = front >= back
        distance = np.where(use_front, front, back)
        normal = np.zeros((len(points), 3))
        normal[:, 0] = np.where(use_front, -1.0, 1.0)
        return np.where(distance <= max_distance, distance, np.inf), normal
    return query


def deepest(model, rotations, query):
    caps = Capsules(model, np.full(len(model), RADIUS), np.ones(len(model), bool))
    distance, _ = query(caps.points(model.matrices(rotations)), np.full(len(caps), np.inf))
    return float(np.min(distance - RADIUS - MARGIN))


def solver(model, tasks, query, **kw):
    return Solver(model, tasks, obstacles=query, radii=np.full(len(model), RADIUS),
                  settings=SolverSettings(margin=MARGIN, max_iterations=200), **kw)


def test_hand_behind_a_wall_stops_at_the_wall():
    model = straight_chain(4, 0.5)
    goal = np.array([1.2, 1.4, 0.0])
    query = wall(0.6)
    result = solver(model, [Task(Position, 3, goal)], query).solve(identity_pose(4))
    assert deepest(model, result.rotations, query) >= -1e-3
    tip = model.tails(model.matrices(result.rotations))[3]
    optimum = goal[0] - (0.6 - RADIUS - MARGIN)  # the tip can stand on the wall right in front
    assert np.linalg.norm(tip - goal) <= optimum + 0.01


def test_held_by_the_wall_the_solve_ends_without_a_blocked_step(monkeypatch):
    """Held by the wall, the solve ends once a step along it did what it predicted and that was
    under ``_SETTLE`` of the error (``acceptance.holds``), instead of computing one more step only to
    find it blocked; solving on until blocked gains no more than that."""
    import dq_ik_addon.engine.acceptance as solver_module
    model = straight_chain(4, 0.5)
    goal, query = np.array([1.2, 1.4, 0.0]), wall(0.6)
    settle = solver_module._SETTLE
    held = solver(model, [Task(Position, 3, goal)], query).solve(identity_pose(4))
    monkeypatch.setattr(solver_module, "_SETTLE", 0.0)
    onward = solver(model, [Task(Position, 3, goal)], query).solve(identity_pose(4))
    assert held.iterations < onward.iterations
    assert abs(held.errors[0] - onward.errors[0]) <= settle * onward.errors[0]
    assert deepest(model, held.rotations, query) >= -1e-3


def test_reachable_goal_in_front_of_the_wall_is_reached_without_touching():
    model = straight_chain(4, 0.5)
    goal = np.array([0.3, 1.5, 0.2])
    result = solver(model, [Task(Position, 3, goal)], wall(0.6)).solve(identity_pose(4))
    assert result.errors[0] < 1e-5
    assert deepest(model, result.rotations, wall(0.6)) >= -1e-6


def test_a_pose_in_penetration_is_pushed_out_smoothly():
    model = straight_chain(3, 0.5)
    start = identity_pose(3)
    start[0] = [np.cos(0.35), 0.0, 0.0, -np.sin(0.35)]  # leans into the wall x ≥ 0.3
    query = wall(0.3)
    assert deepest(model, start, query) < -0.05
    goal = model.tails(model.matrices(identity_pose(3)))[2]
    s = solver(model, [Task(Position, 2, goal)], query)
    result = s.solve(start)
    assert deepest(model, result.rotations, query) >= -1e-3


def test_chain_bends_around_a_ball_between_it_and_the_goal():
    model = straight_chain(5, 0.4)
    query = ball(np.array([0.35, 1.0, 0.0]), 0.2)
    goal = np.array([0.9, 1.2, 0.0])
    result = solver(model, [Task(Position, 4, goal)], query, limits=uniform_limits(5, 1.2, 0.5)).solve(
        identity_pose(5))
    assert deepest(model, result.rotations, query) >= -1e-3
    assert np.isfinite(result.rotations).all()


def test_small_target_moves_never_tunnel_through_a_thin_plate():
    """100 small moves of the goal across a 1 cm plate, each solve warm from the last. The tip
    bone keeps the clearance its target leaves it (``ContactSet.seat``) while the target is in
    front of the plate, and its full clearance once the target is beyond."""
    model = straight_chain(4, 0.5)
    query = slab(0.5, 0.01)
    s = solver(model, [Task(Position, 3, np.array([0.3, 1.5, 0.0]))], query)
    rotations = identity_pose(4)
    for x in np.linspace(0.3, 1.3, 100):
        s.retarget([[x, 1.5, 0.0]])
        rotations = s.solve(rotations).rotations
        target_distance = abs(query(np.array([[x, 1.5, 0.0]]), np.inf)[0][0])
        seated = x <= 0.51     # in front of the plate or in it, nearer its front face
        allowed = min(target_distance - RADIUS - MARGIN, 0.0) if seated else 0.0
        assert deepest(model, rotations, query) >= allowed - 1e-3
        tails = model.tails(model.matrices(rotations))
        assert np.all(tails[:, 0] < 0.5)  # still on the near side of the plate


def test_segment_closest_points_match_a_dense_search():
    from dq_ik_addon.engine.contacts import closest_points_of_segments
    rng = np.random.default_rng(2)
    p0, p1, q0, q1 = (rng.normal(size=(50, 3)) for _ in range(4))
    q1[:5] = q0[:5]  # degenerate segments
    s, t = closest_points_of_segments(p0, p1, q0, q1)
    got = np.linalg.norm(p0 + s[:, None] * (p1 - p0) - q0 - t[:, None] * (q1 - q0), axis=1)
    grid = np.linspace(0, 1, 201)
    pa = p0[:, None, :] + grid[None, :, None] * (p1 - p0)[:, None, :]
    qb = q0[:, None, :] + grid[None, :, None] * (q1 - q0)[:, None, :]
    dense = np.linalg.norm(pa[:, :, None, :] - qb[:, None, :, :], axis=-1).min(axis=(1, 2))
    assert np.all(got <= dense + 1e-9)
    assert np.all(got >= dense - 0.02)


def _two_arms():
    """A root with two 3-bone arms side by side along +Y, 0.6 apart in X."""
    from dq_ik_addon.engine import ChainModel
    rest = np.tile(np.eye(4), (7, 1, 1))
    parents = [-1, 0, 1, 2, 0, 4, 5]
    for i, (x, y) in enumerate([(0, 0), (-0.3, 0.2), (-0.3, 0.7), (-0.3, 1.2),
                                (0.3, 0.2), (0.3, 0.7), (0.3, 1.2)]):
        rest[i, :3, 3] = (x, y, 0.0)
    lengths = np.array([0.2, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5])
    return ChainModel.from_bones(list("rabcdef"), parents, rest, lengths=lengths,
                                 connected=[False, False, True, True, False, True, True])


def test_self_collision_keeps_one_arm_out_of_the_other():
    model = _two_arms()
    goal = np.array([0.3, 1.0, 0.0])  # right on the other arm
    radii = np.full(7, 0.06)
    s = Solver(model, [Task(Position, 3, goal, chain_count=3)], radii=radii, self_collision=True,
               settings=SolverSettings(margin=MARGIN, max_iterations=200))
    result = s.solve(identity_pose(7))
    world = model.matrices(result.rotations)
    heads, tails = world[:, :3, 3], model.tails(world)
    from dq_ik_addon.engine.contacts import closest_points_of_segments
    a, b = np.repeat([1, 2, 3], 3), np.tile([4, 5, 6], 3)
    u, v = closest_points_of_segments(heads[a], tails[a], heads[b], tails[b])
    gap = np.linalg.norm(heads[a] + u[:, None] * (tails[a] - heads[a])
                         - heads[b] - v[:, None] * (tails[b] - heads[b]), axis=1)
    assert gap.min() - 2 * 0.06 >= -1e-3
    free = Solver(model, [Task(Position, 3, goal, chain_count=3)]).solve(identity_pose(7))
    assert free.errors[0] < 1e-5  # without self-collision it goes right through


def test_resting_on_a_wall_does_not_shiver():
    """Solving again from the result, with the target still behind the wall, changes nothing."""
    model = straight_chain(4, 0.5)
    query = wall(0.6)
    s = solver(model, [Task(Position, 3, np.array([1.2, 1.4, 0.0]))], query)
    first = s.solve(identity_pose(4)).rotations
    again = s.solve(first).rotations
    assert np.abs(again - first).max() < 1e-6
    history = np.array([h[1] for h in s.solve(first).level_errors])
    assert np.all(np.diff(history) <= 1e-9)


@pytest.mark.parametrize("height", [0.0, 0.002, 0.03])
def test_a_tail_whose_target_is_on_a_floor_stands_on_it(height):
    """A target on a floor or just above it (closer than radius + margin) is met exactly: the
    effector's capsule keeps only the clearance its target has (``ContactSet.seat``), and the
    result's contacts agree with the task. The other bones keep their full clearance."""
    model = straight_chain(4, 0.5)
    floor = wall(0.9)     # the solid half-space x ≥ 0.9, a floor facing −X
    goal = np.array([0.9 - height, 1.2, 0.0])
    result = solver(model, [Task(Position, 3, goal)], floor).solve(identity_pose(4))
    assert result.converged and result.errors[0] <= SolverSettings().tolerance
    tails = model.tails(model.matrices(result.rotations))
    assert 0.9 - tails[3, 0] >= min(height, RADIUS + MARGIN) - 1e-9
    caps = Capsules(model, np.full(len(model), RADIUS), np.arange(4) < 3)
    distance, _ = floor(caps.points(model.matrices(result.rotations)), np.full(len(caps), np.inf))
    assert np.min(distance - RADIUS - MARGIN) >= -1e-3
    assert np.all(result.contacts.clearances >= -SolverSettings().tolerance)


class Pole:
    """A solid cylinder of ``radius`` about the line through ``centre`` along the unit ``axis``:
    the point query, and the segment query that gives each capsule's point nearest to it (the
    closest points of the segment and a long stretch of the axis). It has nothing to hand back
    from its point query to its segment query (``triangles``: −1)."""

    def __init__(self, centre, axis, radius):
        self.centre, self.axis, self.radius = np.asarray(centre), np.asarray(axis), radius

    def __call__(self, points, max_distance, triangles=False):
        offset = points - self.centre
        radial = offset - (offset @ self.axis)[:, None] * self.axis
        length = np.linalg.norm(radial, axis=1)
        distance = length - self.radius
        found = (np.where(distance <= max_distance, distance, np.inf),
                 radial / np.maximum(length, 1e-12)[:, None])
        return (*found, np.full(len(points), -1)) if triangles else found

    def segments(self, heads, tails, radii, max_distance, samples=None):
        from dq_ik_addon.engine.contacts import closest_points_of_segments
        ends = np.tile(self.centre - 100.0 * self.axis, (len(heads), 1)), \
            np.tile(self.centre + 100.0 * self.axis, (len(heads), 1))
        s, _ = closest_points_of_segments(heads, tails, *ends)
        distance, normal = self(heads + s[:, None] * (tails - heads), max_distance)
        return s, distance, normal


def _dense_clearance(model, rotations, pole):
    world = model.matrices(rotations)
    heads, tails = world[:, :3, 3], model.tails(world)
    grid = np.linspace(0.0, 1.0, 200)[:, None, None]
    points = (heads + grid * (tails - heads)).reshape(-1, 3)
    return float(np.min(pole(points, np.inf)[0]) - RADIUS - MARGIN)


def test_a_thin_pole_between_two_samples_pushes_the_bone_out():
    """A 2 cm pole 3 cm beside the second bone, a quarter of the way along it (12.5 cm from its
    head and middle samples, which it is farther than radius + margin from): the segment query
    finds it and the solve pushes the bone out; the samples alone do not see it."""
    model = straight_chain(3, 0.5)
    pole = Pole([0.03, 0.625, 0.0], [0.0, 0.0, 1.0], 0.01)
    goal = model.tails(model.matrices(identity_pose(3)))[2]
    assert _dense_clearance(model, identity_pose(3), pole) < -0.03
    held = solver(model, [Task(Position, 2, goal)], pole).solve(identity_pose(3))
    assert _dense_clearance(model, held.rotations, pole) >= -1e-3
    points_only = solver(model, [Task(Position, 2, goal)], pole.__call__).solve(identity_pose(3))
    assert _dense_clearance(model, points_only.rotations, pole) < -0.03


def test_nearest_between_bounds_every_point_outside_both_balls():
    """No point outside the two samples' balls is nearer to the segment between them than the
    bound, which is at least the 1-Lipschitz one; the float form agrees with the arrays."""
    rng = np.random.default_rng(3)
    gap = rng.uniform(0.01, 1.0, 400)
    d1, d2 = rng.uniform(-0.2, 1.2, (2, 400))
    bound = nearest_between(d1, d2, gap)
    assert np.all(bound >= np.minimum(np.minimum(d1, d2), (d1 + d2 - gap) / 2) - 1e-12)
    for i in range(400):
        assert abs(nearest_between_one(d1[i], d2[i], gap[i]) - bound[i]) <= 1e-12
        points = rng.normal(size=(3000, 3)) * rng.uniform(0.1, 2.0) + [gap[i] / 2, 0.0, 0.0]
        outside = (np.linalg.norm(points, axis=1) >= max(d1[i], 0.0)) & (
            np.linalg.norm(points - [gap[i], 0.0, 0.0], axis=1) >= max(d2[i], 0.0))
        along = np.clip(points[outside, 0], 0.0, gap[i])
        nearest = np.sqrt((points[outside, 0] - along) ** 2
                          + np.sum(points[outside, 1:] ** 2, axis=1))
        assert np.all(nearest >= bound[i] - 1e-12)
