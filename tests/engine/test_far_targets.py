"""Targets far out of reach: the solve is the same wherever a far target lies along a direction,
a far target weighs in its level as one just out of reach does, and it does not hold back a
reachable task of its level on another chain."""

import numpy as np
import pytest
from chains import identity_pose, straight_chain, uniform_limits

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine.quaternion import qexp
from dq_ik_addon.engine.solver import Solver, SolverSettings
from dq_ik_addon.engine.tasks import Position, Task


def little_body():
    """A spine of two 0.3 m bones up +Z and two arms of three 0.25 m bones out along ±X."""
    names, parents, heads, axes = [], [], [], []

    def bone(name, parent, head, axis):
        names.append(name)
        parents.append(names.index(parent) if parent else -1)
        heads.append(head)
        axes.append(axis)
    bone("hips", None, (0, 0, 1.0), (0, 0, 1))
    bone("chest", "hips", (0, 0, 1.3), (0, 0, 1))
    for side, sign in (("L", 1.0), ("R", -1.0)):
        for k, part in enumerate(("upper", "fore", "hand")):
            bone(f"{part}.{side}", f"{('chest', f'upper.{side}', f'fore.{side}')[k]}",
                 (sign * 0.25 * k, 0, 1.6), (sign, 0, 0))
    rest = np.tile(np.eye(4), (len(names), 1, 1))
    for i, (head, axis) in enumerate(zip(heads, axes)):
        y = np.array(axis, float)
        x = np.cross(y, (0.0, 1.0, 0.0)) if abs(y[1]) < 0.9 else np.array([1.0, 0, 0])
        x /= np.linalg.norm(x)
        rest[i, :3, :3] = np.stack([x, y, np.cross(x, y)], axis=1)
        rest[i, :3, 3] = head
    lengths = np.array([0.3, 0.3] + [0.25] * 6)
    return ChainModel.from_bones(names, parents, rest, lengths=lengths,
                                 connected=np.array([False] + [True] * 7))


def solve_with_far_hand(model, distance, direction, tasks_before):
    hand_r = model.index["hand.R"]
    origin = model.rest_matrices[0, :3, 3]
    far = Task(Position, hand_r, origin + distance * direction, priority=2)
    result = Solver(model, tasks_before + [far], settings=SolverSettings(max_iterations=200)) \
        .solve(identity_pose(len(model)))
    return result, model.tails(model.matrices(result.rotations))


def test_far_targets_along_one_direction_give_the_same_pose():
    model = little_body()
    direction = np.array([-0.6, -0.5, 0.3]) / np.linalg.norm([-0.6, -0.5, 0.3])
    hand_l = model.index["hand.L"]
    planted = Task(Position, hand_l, np.array([0.45, -0.3, 1.45]), priority=1)
    poses, results = [], []
    for distance in (10.0, 1e3, 1e7):
        result, tails = solve_with_far_hand(model, distance, direction, [planted])
        assert np.isfinite(result.rotations).all()
        assert result.errors[0] < 1e-5                      # the priority-1 hand holds
        assert result.errors[1] == pytest.approx(
            np.linalg.norm(model.rest_matrices[0, :3, 3] + distance * direction
                           - tails[model.index["hand.R"]]), rel=1e-9)   # the true distance
        poses.append(tails)
        results.append(result)
    for tails in poses[1:]:
        assert np.abs(tails - poses[0]).max() < 0.01
    reach = np.dot(poses[0][model.index["hand.R"]] - model.rest_matrices[0, :3, 3], direction)
    assert reach > 1.1                                      # stretched towards it


def test_a_far_target_drags_its_level_no_more_than_one_at_two_metres():
    """The right hand far away and the chest on the same level: the chest is pulled off its
    target no farther than by the same hand target 2 m away."""
    model = little_body()
    direction = np.array([-1.0, -0.2, 0.1]) / np.linalg.norm([-1.0, -0.2, 0.1])
    chest = model.index["chest"]
    chest_goal = model.tails(model.rest_matrices)[chest] + np.array([0.05, 0.02, -0.03])
    keep_chest = Task(Position, chest, chest_goal, priority=2)
    off = {}
    for distance in (2.0, 30.0, 300.0, 1e4):
        result, tails = solve_with_far_hand(model, distance, direction, [keep_chest])
        off[distance] = np.linalg.norm(tails[chest] - chest_goal)
    assert max(off[30.0], off[300.0], off[1e4]) <= off[2.0] + 1e-6


@pytest.mark.parametrize("limited", [False, True])
def test_a_reachable_hand_beside_a_far_one_on_its_level_is_met(limited):
    """Two arms (chain length 3: no joint shared) on one priority level, the right hand's target
    reachable (FK of a bent arm), the left one's 2.3 m beyond its shoulder: the right hand meets
    the tolerance. Its last millimetre was under 0.1 % of the level's error, dominated by the
    stretched left arm's, and the stop tests ended the solve 1 mm short."""
    model = little_body()
    n = len(model)
    bent = identity_pose(n)
    bent[model.index["upper.R"]] = qexp(np.array([0.2, 0.0, 0.0]))
    bent[model.index["fore.R"]] = qexp(np.array([0.25, 0.1, 0.0]))
    reachable = model.tails(model.matrices(bent))[model.index["hand.R"]]
    far = model.tails(model.rest_matrices)[model.index["hand.L"]] + np.array([2.0, -1.0, 0.5])
    tasks = [Task(Position, model.index["hand.L"], far, chain_count=3),
             Task(Position, model.index["hand.R"], reachable, chain_count=3)]
    settings = SolverSettings()
    result = Solver(model, tasks, limits=uniform_limits(n, 0.8, 0.4) if limited else None,
                    settings=settings).solve(identity_pose(n))
    assert result.errors[1] < settings.tolerance
    assert not result.converged
    tails = model.tails(model.matrices(result.rotations))
    shoulder = model.rest_matrices[model.index["upper.L"], :3, 3]
    arm, aim = tails[model.index["hand.L"]] - shoulder, far - shoulder
    assert arm @ aim / np.linalg.norm(arm) / np.linalg.norm(aim) > 0.999   # stretched towards it


def test_a_folded_arm_beside_a_far_one_on_its_level_escapes():
    """Two arms on one level, chains of their own (no shared joint): the right hand's target
    is far out of reach, the left hand's asks the straight left arm to fold (a local minimum
    the Jacobian cannot see, Baerlocher §4.5.6). The far target compromises only its own arm:
    the left arm still escapes and meets its target."""
    model = little_body()
    hand_l, hand_r = model.index["hand.L"], model.index["hand.R"]
    shoulder = model.rest_matrices[model.index["upper.L"], :3, 3]
    folded = shoulder + np.array([0.3, 0.0, 0.0])     # along the straight arm: it must fold
    tasks = [Task(Position, hand_l, folded, priority=1, chain_count=3),
             Task(Position, hand_r, np.array([-50.0, 0.0, 1.6]), priority=1, chain_count=3)]
    result = Solver(model, tasks, settings=SolverSettings(max_iterations=200)) \
        .solve(identity_pose(len(model)))
    assert result.steps["escapes"] > 0
    assert result.errors[0] < 1e-5


@pytest.mark.parametrize("fraction", [1.0, 0.99993, 0.999])
def test_a_reachable_target_near_full_extension_is_met(fraction):
    """On a chain that turns freely, only a target beyond the reach is solved for short of it:
    one at the straight chain's tail, or just inside the reach, is met (converged)."""
    model = straight_chain(3, 0.5)
    bent = qexp(np.array([[0.0, 0.0, 0.3], [0.0, 0.0, -0.5], [0.0, 0.0, 0.2]]))
    goal = np.array([0.0, 1.5 * fraction, 0.0])
    result = Solver(model, [Task(Position, 2, goal)]).solve(
        bent if fraction < 1.0 else np.tile([1.0, 0.0, 0.0, 0.0], (3, 1)))
    assert result.converged and result.errors[0] < 1e-5


def _around_one_bone(angle, distance=1.0):
    """A bone of length 1 along +Y from the origin, and a target ``distance`` from its head
    turned ``angle`` degrees from it about Z."""
    model = straight_chain(1, 1.0)
    a = np.radians(angle)
    return model, np.array([-np.sin(a), np.cos(a), 0.0]) * distance


@pytest.mark.parametrize("angle", [90.0, 170.0, 175.0, 178.0, 180.0])
def test_a_chain_of_one_bone_meets_a_target_on_its_sphere_right_behind_it_too(angle):
    """Its tail stays on the sphere about its head, which its targets are taken on; the error
    is the arc along it, so a target behind the bone pulls it round (the chord's lies along
    the bone, out of the Jacobian's range: it stalled from 175° on)."""
    model, goal = _around_one_bone(angle)
    result = Solver(model, [Task(Position, 0, goal, chain_count=1)]).solve(identity_pose(1))
    assert result.converged and result.steps["escapes"] == 0
    tail = model.tails(model.matrices(result.rotations))[0]
    assert np.linalg.norm(tail - goal) <= SolverSettings().tolerance


def test_a_target_nearer_than_a_chain_of_one_bone_ends_at_once_pointing_at_it():
    """Out of reach inside its sphere: the closest point is the one in its direction, which a
    bone pointing at it already has, with the target's true distance reported."""
    model, goal = _around_one_bone(0.0, distance=0.6)
    result = Solver(model, [Task(Position, 0, goal, chain_count=1)]).solve(identity_pose(1))
    assert result.iterations == 0 and not result.converged
    assert result.errors[0] == pytest.approx(0.4)
    turned, near = _around_one_bone(30.0, distance=0.6)
    result = Solver(turned, [Task(Position, 0, near, chain_count=1)]).solve(identity_pose(1))
    tail = turned.tails(turned.matrices(result.rotations))[0]
    assert np.degrees(np.arccos(min(1.0, tail.dot(near) / 0.6))) <= 1e-3
    assert result.iterations <= 12


def test_a_limited_chain_of_one_bone_settles_at_the_edge_of_its_range_without_escapes():
    """Under limits a bone reaches a part of its sphere: a target off it is a compromise (the
    closest point on the edge of the range), which escapes cannot improve."""
    model, goal = _around_one_bone(120.0)
    result = Solver(model, [Task(Position, 0, goal, chain_count=1)],
                    uniform_limits(1, 0.5, 0.3)).solve(identity_pose(1))
    assert result.steps["escapes"] == 0 and result.iterations <= 12
    assert not result.converged


def test_soft_reach_eases_a_limited_chain_as_a_free_one():
    """Three 1 m bones, bent, with their target on the straight line 5 % past the reach (3 m):
    Soft Reach 10 % leaves the tail at ``A − s·exp(−(d − (A − s))/s)`` from the root, with or
    without limits that let the chain straighten; without it, the chain straightens."""
    model = straight_chain(3)
    bent = np.array([qexp(np.array([0.2, 0.0, 0.0])) for _ in range(3)])
    goal = np.array([0.0, 3.15, 0.0])
    aim = 3.0 * (1.0 - 1e-4)
    eased = aim - 0.1 * aim * np.exp(-(3.15 - 0.9 * aim) / (0.1 * aim))
    reached = {}
    for limits in (None, uniform_limits(3, swing=0.5)):
        for soft in (0.0, 0.1):
            result = Solver(model, [Task(Position, 2, goal)], limits,
                            settings=SolverSettings(soft_reach=soft)).solve(bent)
            tail = model.tails(model.matrices(result.rotations))[2]
            reached[limits is None, soft] = np.linalg.norm(tail - model.rest_matrices[0, :3, 3])
    for free in (True, False):
        assert reached[free, 0.1] == pytest.approx(eased, abs=1e-4), reached
        assert reached[free, 0.0] > 2.999, reached


def test_soft_reach_eases_an_animated_chain_only_beyond_where_the_animation_holds_it():
    """The same chain bent a little (its tail 2.94 m from its root, inside the 10 % soft zone),
    solved from that pose: a target at its tail is eased in (left short) unless the chain starts
    as animated (``Solver.solve``'s ``animated``), when it is met at once; a target beyond the
    tail is eased from there on towards the aim, as far as it is past the tail."""
    model = straight_chain(3)
    bent = np.array([qexp(np.array([0.07, 0.0, 0.0])) for _ in range(3)])
    root = model.rest_matrices[0, :3, 3]
    tail = model.tails(model.matrices(bent))[2]
    held = np.linalg.norm(tail - root)
    assert 2.7 < held < 3.0 * (1.0 - 1e-4)
    settings, animated = SolverSettings(soft_reach=0.1), np.ones(3, bool)
    plain = Solver(model, [Task(Position, 2, tail)], settings=settings).solve(bent)
    assert plain.errors[0] > 1e-3
    kept = Solver(model, [Task(Position, 2, tail)], settings=settings).solve(
        bent, remember=True, animated=animated)
    assert kept.iterations == 0 and kept.converged
    aim = 3.0 * (1.0 - 1e-4)
    beyond = root + (tail - root) * 3.15 / held
    result = Solver(model, [Task(Position, 2, beyond)], settings=settings).solve(
        bent, remember=True, animated=animated)
    reached = np.linalg.norm(model.tails(model.matrices(result.rotations))[2] - root)
    room = aim - held
    assert reached == pytest.approx(aim - room * np.exp(-(3.15 - held) / room), abs=1e-4)


def test_an_animated_chain_straighter_than_the_aim_keeps_its_target_and_later_solves_agree():
    """Two 1 m bones animated nearly straight (0.2-1°, the tail past the aim 1e-4 short of the
    reach), Soft Reach 5 %, a target 2 % beyond the tail: it ends where the animation holds the
    tail, at once (the aim rises to it; it was pulled back to the aim, the knee bent 1.6°, in 2
    iterations). A later solve of the frame from its result
    (live posing, Solve) that takes the same animated pose as its ``reference`` stays there,
    where one without it eases the target in again."""
    model = straight_chain(2)
    settings, animated = SolverSettings(soft_reach=0.05), np.ones(2, bool)
    for degrees in (1.0, 0.5, 0.2):
        animation = np.array([qexp(np.zeros(3)), qexp(np.array([np.radians(degrees) / 2, 0, 0]))])
        tail = model.tails(model.matrices(animation))[1]
        solver = Solver(model, [Task(Position, 1, tail * 1.02)], settings=settings)
        frame = solver.solve(animation, remember=True, animated=animated)
        assert frame.iterations == 0, degrees
        for _ in range(2):
            later = solver.solve(frame.rotations, animated=animated, reference=animation)
            assert later.iterations == 0 and np.array_equal(later.rotations, frame.rotations)
        assert solver.solve(frame.rotations).iterations > 0
