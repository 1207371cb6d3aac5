"""The prioritized, joint-limited solver on synthetic chains (numpy only)."""

import numpy as np
import pytest
from chains import (
    ball,
    identity_pose,
    random_limits,
    random_pose_in_limits,
    random_tree,
    straight_chain,
    turned_both_ways,
    uniform_limits,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dq_ik_addon.engine import ChainModel
from dq_ik_addon.engine.jacobian import JointFrames, column_mask, task_jacobian
from dq_ik_addon.engine.limits import limit_violation
from dq_ik_addon.engine.quaternion import qconj, qexp, qlog, qmul, qnormalize
from dq_ik_addon.engine.solver import Solver, SolverSettings, solve
from dq_ik_addon.engine.tasks import Aim, Orientation, Position, Task, TaskSet


def test_jacobian_matches_central_differences():
    rng = np.random.default_rng(0)
    model = random_tree(rng, 9)
    q = random_pose_in_limits(rng, uniform_limits(9))
    tasks = TaskSet(model, [Task(Position, 8, np.zeros(3)), Task(Position, 5, np.zeros(3))])
    world = model.matrices(q)
    joints = np.arange(9)
    points = model.tails(world)[tasks.bones]
    j_pos, j_rot = task_jacobian(*JointFrames(model, joints)(world), points,
                                 column_mask(tasks.joint_masks, joints))
    h = 1e-6
    for j in joints:
        for k in range(3):
            plus, minus = turned_both_ways(q, j, k, h)
            wp, wm = model.matrices(plus), model.matrices(minus)
            fd_pos = (model.tails(wp)[tasks.bones] - model.tails(wm)[tasks.bones]) / (2 * h)
            col = 3 * j + k
            scale = max(1.0, np.abs(fd_pos).max())
            assert np.abs(j_pos[:, :, col] - fd_pos).max() <= 1e-6 * scale
            # angular velocity: R+ R-ᵀ ≈ I + 2h[ω]×
            rel = wp[tasks.bones, :3, :3] @ np.swapaxes(wm[tasks.bones, :3, :3], 1, 2)
            fd_rot = np.stack([rel[:, 2, 1], rel[:, 0, 2], rel[:, 1, 0]], axis=1) / (2 * h)
            expected = np.where(tasks.joint_masks[:, j][:, None], fd_rot, 0.0)
            assert np.abs(j_rot[:, :, col] - expected).max() <= 1e-6


def test_second_order_motion_leaves_a_third_order_error():
    """``e(Δ) = e − J Δ − s(Δ) + O(‖Δ‖³)`` for position and orientation tasks, one of them on a
    chain that stops short of the root: halving the step divides what is left by 8 (by 4 without
    ``s``). The orientation targets are the bones' own orientations: at e ≠ 0 the orientation
    error's linear model (the angular velocity) is itself only first-order exact."""
    from dq_ik_addon.engine.jacobian import chain_order, second_order_motion
    from dq_ik_addon.engine.quaternion import matrix_to_quat
    rng = np.random.default_rng(7)
    model = random_tree(rng, 9)
    q = random_pose_in_limits(rng, uniform_limits(9))
    world = model.matrices(q)
    own = [matrix_to_quat(world[bone, :3, :3]) for bone in (8, 5)]
    goals = [Task(Position, 8, rng.normal(size=3), chain_count=3),
             Task(Position, 5, rng.normal(size=3))]
    tasks = TaskSet(model, goals + [Task(Orientation, 8, own[0], chain_count=3),
                                    Task(Orientation, 5, own[1])])
    joints = np.array([j for j in range(9) if tasks.joint_masks[:, j].any()])
    frame = JointFrames(model, joints)(world)
    points = model.tails(world)[tasks.bones[:2]]
    masks = tasks.joint_masks[:2]
    j_pos, j_rot = task_jacobian(*frame, points, column_mask(masks, joints))
    position, rotation = tasks.errors(world)
    chain, ancestors = chain_order(masks, model.descendants_mask(), joints)
    direction = rng.normal(size=(joints.size, 3))

    def residuals(size, task):     # the task's own chain turns (the others' joints: not its model)
        delta = size * direction * chain[task][:, None]
        moved = q.copy()
        moved[joints] = qmul(qexp(0.5 * delta), q[joints])
        new_position, new_rotation = tasks.errors(model.matrices(moved))
        s_pos, s_rot = second_order_motion(*frame, points, delta, chain, ancestors, rotation)
        linear = (position - j_pos.dot(delta.ravel()), rotation - j_rot.dot(delta.ravel()))
        return np.array([np.abs(new - lin)[task].max() for new, lin in
                         zip((new_position, new_rotation, new_position, new_rotation),
                             (*linear, linear[0] - s_pos, linear[1] - s_rot))])

    for task in range(len(goals)):
        coarse, fine = residuals(2e-2, task), residuals(1e-2, task)
        np.testing.assert_allclose(coarse[:2] / fine[:2], 4.0, rtol=0.05)
        np.testing.assert_allclose(coarse[2:] / fine[2:], 8.0, rtol=0.1)
        assert (fine[2:] < 0.05 * fine[:2]).all()


def test_normal_jacobian_is_the_positional_jacobian_along_the_normals():
    """Contact rows use ``nᵀ J_p`` from triple products; it equals ``task_jacobian``'s rows
    contracted with n, for points on any bones (including ones no joint moves)."""
    from dq_ik_addon.engine.jacobian import normal_jacobian
    rng = np.random.default_rng(3)
    model = random_tree(rng, 9)
    q = random_pose_in_limits(rng, uniform_limits(9))
    world = model.matrices(q)
    joints = np.array([0, 2, 3, 5, 8])
    points = rng.normal(size=(6, 3))
    normals = rng.normal(size=(6, 3))
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    masks = model.descendants_mask()[:, rng.integers(0, 9, 6)].T
    frame, columns = JointFrames(model, joints)(world), column_mask(masks, joints)
    j_pos, _ = task_jacobian(*frame, points, columns, False)
    np.testing.assert_allclose(normal_jacobian(*frame, points, normals, columns),
                               np.einsum('pi,pij->pj', normals, j_pos), rtol=0, atol=1e-12)


def test_orientation_error_takes_the_short_way():
    model = straight_chain(2)
    target = np.array([np.cos(0.2), 0.0, 0.0, np.sin(0.2)])
    for sign in (1.0, -1.0):
        tasks = TaskSet(model, [Task(Orientation, 1, sign * target)])
        rotation, = tasks.errors(model.matrices(identity_pose(2)))
        assert np.allclose(rotation[0], [0, 0, 0.4])


def test_reaches_targets_made_by_fk_inside_limits():
    rng = np.random.default_rng(1)
    model = straight_chain(5)
    limits = uniform_limits(5)
    for _ in range(40):
        goal = model.tails(model.matrices(random_pose_in_limits(rng, limits)))[4]
        result = solve(model, identity_pose(5), [Task(Position, 4, goal)], limits=limits,
                       settings=SolverSettings(max_iterations=200))
        assert result.errors[0] < 1e-5
        assert limit_violation(result.rotations, limits).max() <= 1e-6


def test_limit_on_its_boundary_does_not_stop_the_others():
    """A target only reachable with the first joint resting on its limit is still reached."""
    model = straight_chain(3)
    limits = uniform_limits(3, swing=0.6)
    pose = identity_pose(3)
    pose[0] = qexp(np.array([0.0, 0.0, 0.3]))          # joint 0 at its 0.6 rad swing bound
    pose[1] = qexp(np.array([0.0, 0.0, -0.2]))
    pose[2] = qexp(np.array([0.15, 0.0, 0.1]))
    goal = model.tails(model.matrices(pose))[2]
    result = solve(model, identity_pose(3), [Task(Position, 2, goal)], limits=limits,
                   settings=SolverSettings(max_iterations=300))
    assert result.errors[0] < 1e-5
    assert limit_violation(result.rotations, limits).max() <= 1e-6


def _conflict(priority_a, priority_b, weight_a=1.0, weight_b=1.0):
    """Two tails of a branching rig pulled apart: both cannot be met."""
    rest = np.tile(np.eye(4), (3, 1, 1))
    rest[1, 1, 3] = 1.0
    rest[2, 1, 3] = 1.0
    model_parents = [-1, 0, 0]
    model = ChainModel.from_bones(["root", "a", "b"], model_parents, rest,
                                  lengths=np.ones(3), connected=[False, True, True])
    # both tails sit at distance 2 from the root's head, on the same point: only one goal can be met
    goal_a = 2.0 * np.array([np.sin(0.5), np.cos(0.5), 0.0])
    goal_b = 2.0 * np.array([-np.sin(0.5), np.cos(0.5), 0.0])
    tasks = [Task(Position, 1, goal_a, priority=priority_a, weight=weight_a, chain_count=2),
             Task(Position, 2, goal_b, priority=priority_b, weight=weight_b, chain_count=2)]
    stiff = np.array([0.0, 1.0, 1.0])  # only the shared root may move: a true conflict
    return solve(model, identity_pose(3), tasks, stiffness=stiff,
                 settings=SolverSettings(max_iterations=300)), model


def test_priority_one_wins_and_two_is_minimized_in_its_null_space():
    result, _ = _conflict(1, 2)
    assert result.errors[0] < 1e-5
    other, _ = _conflict(2, 1)
    assert other.errors[1] < 1e-5
    assert other.errors[0] > 0.1


def test_same_level_gives_the_weighted_compromise():
    result, _ = _conflict(1, 1)
    a, b = result.errors
    assert a > 1e-3 and b > 1e-3
    assert abs(a - b) < 1e-4  # equal weights, symmetric problem: the middle


def test_a_heavier_task_wins_more_of_a_same_level_conflict():
    """Within a level the tasks' weights set the compromise: weighted least squares over the one
    shared joint puts the root's turn φ at (3·0.5 − 0.5)/4 = 0.25 rad for weights 3 and 1, so
    the tails miss by 2·2·sin(0.125) and 2·2·sin(0.375) (chords of a radius-2 circle)."""
    result, _ = _conflict(1, 1, weight_a=3.0, weight_b=1.0)
    a, b = result.errors
    assert a == pytest.approx(4 * np.sin(0.125), rel=0.02)
    assert b == pytest.approx(4 * np.sin(0.375), rel=0.02)


@pytest.mark.parametrize("reach", [0.0, 1.3])
def test_a_scaled_rig_is_solved_with_the_same_rotations(reach):
    """Damping, step clamps and contact bands are fractions of the chain size: a rig and its
    target 100 times larger (with the tolerance, in metres, 100 times larger) give the same
    rotations, iteration for iteration; for a target in reach (FK of an in-limit pose) and for one
    1.3 times the chain's length away, where the stretched chain is near singular and damped."""
    limits = uniform_limits(5)
    pose = random_pose_in_limits(np.random.default_rng(12), limits)
    results = []
    for scale in (1.0, 100.0):
        model = straight_chain(5, length=scale)
        goal = model.tails(model.matrices(pose))[4]
        if reach:
            goal = goal / np.linalg.norm(goal) * reach * 5 * scale
        results.append(solve(model, identity_pose(5), [Task(Position, 4, goal)], limits=limits,
                             settings=SolverSettings(tolerance=1e-5 * scale, max_iterations=200)))
    small, large = results
    assert reach or (small.errors[0] < 1e-5 and large.errors[0] < 1e-3)
    assert small.iterations == large.iterations
    np.testing.assert_allclose(small.rotations, large.rotations, atol=1e-9)


def test_priority_secondary_task_uses_the_remaining_freedom():
    """A redundant arm: task 1 holds the tip, task 2 moves the middle as far as it can."""
    model = straight_chain(4)
    tip = model.tails(model.matrices(random_pose_in_limits(np.random.default_rng(3),
                                                           uniform_limits(4))))[3]
    tasks = [Task(Position, 3, tip, priority=1),
             Task(Position, 1, np.array([0.8, 1.5, 0.0]), priority=2)]
    both = solve(model, identity_pose(4), tasks, settings=SolverSettings(max_iterations=300))
    alone = solve(model, identity_pose(4), tasks[:1], settings=SolverSettings(max_iterations=300))
    assert both.errors[0] < 1e-5
    world = model.matrices(alone.rotations)
    alone_middle = np.linalg.norm(model.tails(world)[1] - tasks[1].target)
    assert both.errors[1] < alone_middle - 1e-3


def test_unreachable_target_settles_without_oscillation():
    model = straight_chain(4)
    goal = np.array([3.0, 4.0, 2.0])
    start = random_pose_in_limits(np.random.default_rng(5), uniform_limits(4))
    result = solve(model, start, [Task(Position, 3, goal)], settings=SolverSettings(max_iterations=100))
    history = np.array([h[0] for h in result.level_errors])
    assert np.isfinite(history).all()
    assert np.all(np.diff(history[10:]) <= 1e-6)
    assert result.errors[0] == pytest.approx(np.linalg.norm(goal) - 4.0, abs=1e-3)
    assert history[-1] == pytest.approx(0.1 * 4.0, abs=1e-3)     # solved for 1.1 × the reach


def test_folded_target_on_a_straight_chain_is_reached():
    model = straight_chain(4)
    result = solve(model, identity_pose(4), [Task(Position, 3, np.array([0.5, 1.0, 0.0]))],
                   settings=SolverSettings(max_iterations=200))
    assert result.errors[0] < 1e-5


def test_stiffness_one_locks_and_stiffer_moves_less():
    model = straight_chain(3)
    goal = np.array([1.0, 2.0, 0.5])
    locked = solve(model, identity_pose(3), [Task(Position, 2, goal)], stiffness=[1.0, 0.0, 0.0])
    assert np.allclose(locked.rotations[0], [1, 0, 0, 0])
    soft = solve(model, identity_pose(3), [Task(Position, 2, goal)], stiffness=[0.0, 0.0, 0.0])
    stiff = solve(model, identity_pose(3), [Task(Position, 2, goal)], stiffness=[0.9, 0.0, 0.0])
    angle = lambda q: 2 * np.arccos(min(1.0, abs(q[0])))
    assert angle(stiff.rotations[0]) < angle(soft.rotations[0])
    assert stiff.errors[0] < 1e-5


@pytest.mark.parametrize("seed", range(11, 16))
def test_rest_pull_keeps_the_redundant_freedom_near_the_preferred_pose(seed):
    """The lowest level pulls the null space towards ``preferred`` (``rest_weight``): a redundant
    arm reaching the same target from the rest pose ends nearer that pose with the pull than
    without it, and the task is met either way (the pull ranks below every task)."""
    model = straight_chain(4)
    rng = np.random.default_rng(seed)
    preferred = random_pose_in_limits(rng, uniform_limits(4))
    goal = model.tails(model.matrices(random_pose_in_limits(rng, uniform_limits(4))))[3]

    def distance_to_preferred(rest_weight):
        result = solve(model, identity_pose(4), [Task(Position, 3, goal)], preferred=preferred,
                       settings=SolverSettings(rest_weight=rest_weight, max_iterations=300))
        assert result.errors[0] < 1e-5
        turn = qmul(preferred, qconj(result.rotations))
        return np.linalg.norm(2 * qlog(turn * np.sign(turn[:, :1])))

    assert distance_to_preferred(0.5) < 0.9 * distance_to_preferred(0.0)


def test_degenerate_inputs_never_give_nan():
    model = straight_chain(3, length=0.0)
    for goal in (np.zeros(3), np.array([1.0, 0.0, 0.0]), np.array([np.nan, 0, 0])[:0].sum() + np.zeros(3)):
        result = solve(model, identity_pose(3), [Task(Position, 2, goal),
                                                 Task(Orientation, 2, np.array([0.0, 0.0, 0.0, 1.0]))])
        assert np.isfinite(result.rotations).all()
    coincident = straight_chain(3)
    result = solve(coincident, identity_pose(3), [Task(Position, 2, np.array([0.0, 0.0, 0.0]))])
    assert np.isfinite(result.rotations).all()


def test_results_are_deterministic():
    rng = np.random.default_rng(9)
    model = random_tree(rng, 12)
    tasks = [Task(Position, 11, np.array([0.3, 0.5, 0.2])),
             Task(Position, 7, np.array([-0.4, 0.1, 0.9]), priority=2)]
    a = solve(model, identity_pose(12), tasks, limits=uniform_limits(12))
    b = solve(model, identity_pose(12), tasks, limits=uniform_limits(12))
    assert np.array_equal(a.rotations, b.rotations)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 12), tasks=st.integers(1, 4),
       obstacle=st.booleans(), self_collision=st.booleans())
def test_fuzz_limits_are_never_exceeded(seed, n, tasks, obstacle, self_collision):
    """Random trees (some bones of zero length), limits, stiffness, pose locations and tasks
    (position, orientation or both; near, far or on a joint; priorities 1–3, weights), with or
    without a ball obstacle and self-collision: no exception, no overflow, division by zero or
    invalid operation, no NaN, limits kept, also when solving again from the result."""
    rng = np.random.default_rng(seed)
    model = random_tree(rng, n)
    if rng.random() < 0.3:
        lengths = np.where(rng.random(n) < 0.3, 0.0, model.lengths)
        model = ChainModel(model.names, model.parents, model.rest_matrices, lengths,
                           model.connected)
    limits = random_limits(rng, n)
    task_list = []
    for _ in range(tasks):
        kind = int(rng.integers(0, 4))           # position, orientation, both, aim
        point = rng.normal(size=3) * rng.choice([0.1, 1.0, 5.0])
        if rng.random() < 0.1:
            point = model.rest_matrices[int(rng.integers(0, n)), :3, 3].copy()
        goals = [(Position, point, ())] * (kind in (0, 2)) \
            + [(Orientation, rng.normal(size=4), ())] * (kind in (1, 2)) \
            + [(Aim, point, tuple(rng.normal(size=3)))] * (kind == 3)
        bone, priority = int(rng.integers(0, n)), int(rng.integers(1, 4))
        weight, chain = float(rng.uniform(0.1, 2)), int(rng.integers(0, 5))
        task_list += [Task(goal_kind, bone, target, priority, weight, chain, options)
                      for goal_kind, target, options in goals]
    start = random_pose_in_limits(rng, limits)
    solver = Solver(model, task_list, limits=limits,
                    stiffness=rng.uniform(0, 1, n) * (rng.random(n) < 0.3),
                    settings=SolverSettings(max_iterations=30),
                    locations=rng.normal(scale=0.05, size=(n, 3)) if rng.random() < 0.3 else None,
                    obstacles=ball(rng.normal(size=3), 0.3) if obstacle else None,
                    radii=rng.uniform(0.0, 0.1, n) if obstacle or self_collision else None,
                    self_collision=self_collision)
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        result = solver.solve(start)
        again = solver.solve(result.rotations)
    for pose in (result.rotations, again.rotations):
        assert np.isfinite(pose).all()
        assert limit_violation(pose, limits).max(initial=0) <= 1e-6


def test_each_singular_direction_of_a_level_step_is_clamped_alone():
    """``prioritized_step``'s clamp (``max_task_step``, ``max_joint_step``): along each singular
    direction of a level the predicted task motion is at most ``max_motion`` and the joint motion
    at most ``max_turn``; directions within both keep their damped least-squares motion."""
    from dq_ik_addon.engine.prioritized import prioritized_step
    rng = np.random.default_rng(8)
    jac = rng.normal(size=(6, 12)) * np.array([3.0, 2.0, 1.0, 0.5, 0.2, 0.05])[:, None]
    err = rng.normal(size=6)
    u, s, vt = np.linalg.svd(jac, full_matrices=False)
    free = prioritized_step([(jac, err)])[-1]
    clamped = prioritized_step([(jac, err)], max_motion=0.5, max_turn=4.0)[-1]
    free_motion, motion = u.T.dot(jac.dot(free)), u.T.dot(jac.dot(clamped))
    assert np.all(np.abs(motion) <= 0.5 + 1e-12)
    assert np.all(np.abs(vt.dot(clamped)) <= 4.0 + 1e-12)
    within = (np.abs(free_motion) <= 0.5) & (np.abs(vt.dot(free)) <= 4.0)
    assert within.any() and not within.all()
    np.testing.assert_allclose(motion[within], free_motion[within], rtol=1e-9)
    assert np.all(np.sign(motion) == np.sign(free_motion))


def test_joint_block_solution_equals_the_full_pseudo_inverse():
    from dq_ik_addon.engine.constraint_rows import joint_block_solution
    rng = np.random.default_rng(4)
    owner = np.array([2, 0, 2, 3, 2, 0])
    gradient = rng.normal(size=(6, 3))
    gradient[4] = gradient[0] + gradient[2]        # a dependent row on joint 2
    slack = rng.uniform(0, 1, 6)
    slack[4] = slack[0] + slack[2]
    step, projector = joint_block_solution(owner, gradient, slack, 4)
    rows = np.zeros((6, 12))
    for r, (j, g) in enumerate(zip(owner, gradient)):
        rows[r, 3 * j:3 * j + 3] = g
    pinv = np.linalg.pinv(rows)
    assert np.allclose(step, pinv @ slack)
    assert np.allclose(projector, np.eye(12) - pinv @ rows)


def test_adding_limit_rows_one_at_a_time_equals_solving_them_together():
    """Greville's rank-one updates (``ConstraintRows.with_rows``) give the same
    ``(C⁺ r, I − C⁺C)`` as solving the rows together, a dependent row included."""
    from dq_ik_addon.engine.constraint_rows import ConstraintRows, joint_block_solution
    rng = np.random.default_rng(5)
    owner = np.array([2, 0, 2, 3, 2, 0])
    gradient = rng.normal(size=(6, 3))
    gradient[4] = gradient[0] - 2.0 * gradient[2]
    slack = rng.uniform(0, 1, 6)
    slack[4] = slack[0] - 2.0 * slack[2]
    rows = ConstraintRows(4, owner, gradient)
    first = np.array([True, False, False, True, False, False])
    start = rows.solution(first, slack)
    added = rows.with_rows(start, np.array([2, 1, 4, 5]), slack, True)
    step, projector = joint_block_solution(owner, gradient, slack, 4)
    assert np.allclose(added[0], step) and np.allclose(added[1], projector)
    assert np.allclose(start[0], rows.solution(first, slack)[0])   # the start is left as it was


def test_active_rows_that_no_joint_can_move_constrain_nothing():
    """A penetrating contact point on a bone no joint moves gives an all-zero row: the
    constraint level is then empty, not an error."""
    from dq_ik_addon.engine.constraint_rows import ConstraintRows
    rows = ConstraintRows(2, np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((1, 6)))
    step, projector = rows.solution(np.array([True]), np.array([-0.01]))
    assert np.array_equal(step, np.zeros(6)) and np.array_equal(projector, np.eye(6))


def test_contact_rows_join_the_active_set_by_rank_one_updates():
    """With dense (contact) rows the update spans every column and equals the pseudo-inverse of
    all active rows, up to the contact damping (10⁻⁶ relative for well separated rows)."""
    from dq_ik_addon.engine.constraint_rows import ConstraintRows
    rng = np.random.default_rng(6)
    owner = np.array([1, 3])
    gradient = rng.normal(size=(2, 3))
    dense = rng.normal(size=(3, 12))
    slack = rng.uniform(0, 1, 5)
    rows = ConstraintRows(4, owner, gradient, dense)
    first = np.array([True, False, False, False, False])
    step, projector = rows.with_rows(rows.solution(first, slack), np.array([2, 1, 4]), slack, True)
    stacked = np.zeros((4, 12))
    stacked[0, 3:6], stacked[1, 9:12] = gradient
    stacked[2:] = dense[[0, 2]]
    pinv = np.linalg.pinv(stacked)
    assert np.allclose(step, pinv @ slack[[0, 1, 2, 4]], rtol=1e-5, atol=1e-8)
    assert np.allclose(projector, np.eye(12) - pinv @ stacked)


_ONE_FREE = {"swing_x": (("swing_z", "twist"), 0), "swing_z": (("swing_x", "twist"), 1),
             "twist": (("swing_x", "swing_z"), 2)}


@pytest.mark.parametrize("free", sorted(_ONE_FREE))
def test_single_axis_joints_stay_on_their_axis_while_the_chain_reaches(free):
    """Joints whose limits lock every swing/twist parameter but one (a knee: side swing and twist
    locked) turn about that parameter's axis alone (``turning_axes``: their other two columns are
    zeroed); the chain still reaches FK targets made inside the limits."""
    from dq_ik_addon.engine.swing_twist import swing_twist_params
    rng = np.random.default_rng(4)
    model = straight_chain(4, 0.5)
    limits = uniform_limits(4, swing=0.8, twist=0.5)
    single = np.array([False, True, False, True])
    locked, kept = _ONE_FREE[free]
    for name in locked:
        getattr(limits, name + "_min")[single] = 0.0
        getattr(limits, name + "_max")[single] = 0.0
    getattr(limits, free + "_min")[single] = -0.05
    getattr(limits, free + "_max")[single] = 1.2
    for _ in range(20):
        truth = random_pose_in_limits(rng, limits)
        goal = model.tails(model.matrices(truth))[3]
        result = solve(model, identity_pose(4), [Task(Position, 3, goal)], limits=limits)
        assert result.errors[0] <= 1e-4
        params = np.array(swing_twist_params(result.rotations[single]))
        assert np.abs(np.delete(params, kept, axis=0)).max() <= 1e-9
        assert limit_violation(result.rotations, limits).max() <= 1e-6


def test_turning_axes_zero_the_locked_axes_of_one_parameter_joints():
    from dq_ik_addon.engine.limits import SwingTwistLimits
    from dq_ik_addon.engine.limits.swing_twist_rows import turning_axes
    #            knee (s_x)  s_z only   twist only  locked    two free   disabled knee
    low = np.array([[-0.1, 0.0, 0.0, 0.0, 0.0, -0.1],       # swing_x_min
                    [0.0, -0.5, 0.0, 0.0, 0.0, 0.0],        # swing_z_min
                    [0.0, 0.0, -1.0, 0.0, -1.0, 0.0]])      # twist_min
    high = np.array([[2.0, 0.0, 0.0, 0.0, 0.5, 2.0],
                     [0.0, 0.5, 0.0, 0.0, 0.0, 0.0],
                     [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]])
    limits = SwingTwistLimits(low[0], high[0], low[1], high[1], low[2], high[2],
                              np.array([True] * 5 + [False]))
    np.testing.assert_array_equal(turning_axes(limits), [[1, 0, 0], [0, 0, 1], [0, 1, 0],
                                                         [0, 0, 0], [1, 1, 1], [1, 1, 1]])


def test_small_corrections_reuse_the_last_linearization(monkeypatch):
    """Chord steps (``steps.Steps.chord``): along a warm path, corrections within ``_CHORD`` ×
    tolerance reuse the last step's Jacobians instead of a full step (Jacobian, limit rows,
    active set); the solves still meet the tolerance and keep the limits, with fewer full steps
    than without chords."""
    from dq_ik_addon.engine import steps as steps_module
    model = straight_chain(4, 0.5)
    limits = uniform_limits(4, swing=1.0, twist=0.5)
    rng = np.random.default_rng(21)
    poses = [random_pose_in_limits(rng, limits, scale=0.7) for _ in range(3)]
    path = [model.tails(model.matrices(qnormalize((1 - t) * a + t * b)))[3]
            for a, b in zip(poses, poses[1:]) for t in np.linspace(0, 1, 12)[1:]]
    counts = {}
    for label, bound in (("chords", steps_module._CHORD), ("full steps only", 0.0)):
        monkeypatch.setattr(steps_module, "_CHORD", bound)
        solver = Solver(model, [Task(Position, 3, path[0])], limits)
        q = identity_pose(4)
        for goal in path:
            solver.retarget([goal])
            result = solver.solve(q)
            assert result.converged and result.errors[0] < 1e-5
            assert limit_violation(result.rotations, limits).max() <= 1e-6
            q = result.rotations
            for kind in ("full", "chord"):
                counts[label, kind] = counts.get((label, kind), 0) + result.steps[kind]
    assert counts["chords", "chord"] > 0 and counts["full steps only", "chord"] == 0
    assert counts["chords", "full"] < counts["full steps only", "full"]


def test_a_settled_unreachable_solve_is_not_repeated():
    """Solving again from the closest reachable pose, targets unchanged, returns it at once;
    a moved target, or a start the user changed, solves again."""
    model = straight_chain(3)
    limits = uniform_limits(3, swing=0.4, twist=0.2)
    solver = Solver(model, [Task(Position, 2, np.array([1.5, 1.0, 0.5]))], limits)
    first = solver.solve(identity_pose(3))
    assert not first.converged and first.iterations > 0
    again = solver.solve(first.rotations.astype(np.float32))       # through pose channels
    assert again.iterations == 0
    np.testing.assert_array_equal(again.rotations, first.rotations)
    np.testing.assert_array_equal(again.errors, first.errors)
    nudged = first.rotations.copy()
    nudged[0] = qmul(qexp(np.array([0.0, 0.0, 0.05])), nudged[0])
    assert solver.solve(nudged).iterations > 0
    solver.retarget([[1.4, 1.0, 0.5]])
    assert solver.solve(first.rotations).iterations > 0


def test_a_solve_cut_short_resumes_where_it_stopped():
    model = straight_chain(4)
    solver = Solver(model, [Task(Position, 3, np.array([1.0, 2.0, 1.0]))], uniform_limits(4),
                    settings=SolverSettings(max_iterations=1))
    first = solver.solve(identity_pose(4))
    assert first.cut_short and not first.converged
    second = solver.solve(first.rotations)
    assert second.iterations == 1
    assert second.errors[0] < first.errors[0]


def test_only_a_solve_stopped_by_its_budget_is_cut_short():
    model = straight_chain(4)
    reached = solve(model, identity_pose(4), [Task(Position, 3, np.array([1.0, 2.0, 1.0]))])
    beyond = solve(model, identity_pose(4), [Task(Position, 3, np.array([9.0, 2.0, 1.0]))])
    assert reached.converged and not reached.cut_short
    assert not beyond.converged and not beyond.cut_short


def test_a_warm_start_at_the_last_result_continues_from_it_exactly():
    """A start within float32 rounding of the last result (a round trip through pose channels)
    continues from the exact result: the same answer as a new solver started from the float64
    result. A start the user moved further is taken as given and projected onto the limits."""
    rng = np.random.default_rng(7)
    model = straight_chain(4)
    limits = uniform_limits(4)
    goal = model.tails(model.matrices(random_pose_in_limits(rng, limits)))[3]
    solver = Solver(model, [Task(Position, 3, goal)], limits)
    first = solver.solve(identity_pose(4))
    moved_goal = goal + np.array([0.03, -0.02, 0.01])
    solver.retarget([moved_goal])
    warm = solver.solve(first.rotations.astype(np.float32))
    fresh = Solver(model, [Task(Position, 3, moved_goal)], limits).solve(first.rotations)
    assert warm.iterations == fresh.iterations
    np.testing.assert_allclose(warm.rotations, fresh.rotations, rtol=0, atol=1e-9)
    outside = warm.rotations.copy()
    outside[1] = qmul(qexp(np.array([0.0, 0.0, 1.2])), outside[1])   # far past its swing limit
    again = solver.solve(outside)
    assert limit_violation(again.rotations, limits).max() <= 1e-6


def test_a_correction_step_starts_from_the_limits_the_last_step_rested_on(monkeypatch):
    """Warm solves of a branched chain with three tasks near limits: a correction step (every level
    within ``_POLISH`` × tolerance) that starts from the rows the last step ended on, when it meets
    the tasks, needs fewer prioritized decompositions (one per active-set pass) than finding those
    rows again pass by pass, and reaches the targets inside the limits all the same."""
    from dq_ik_addon.engine import steps as steps_module

    def warm_solves(polish):
        monkeypatch.setattr(steps_module, "_POLISH", polish)
        rng = np.random.default_rng(5)
        model = random_tree(rng, 14)
        limits = random_limits(rng, 14)
        leaves = [i for i in range(14) if i not in set(model.parents.tolist())][:3]
        goals = model.tails(model.matrices(random_pose_in_limits(rng, limits)))[leaves]
        solver = Solver(model, [Task(Position, int(b), g) for b, g in zip(leaves, goals)], limits)
        rotations = solver.solve(identity_pose(14)).rotations
        decompositions, violations, converged = 0, [], []
        for _ in range(30):
            solver.retarget(goals + 0.02 * rng.normal(size=goals.shape))
            result = solver.solve(rotations)
            rotations = result.rotations
            decompositions += result.steps["decompositions"]
            violations.append(limit_violation(rotations, limits).max())
            converged.append(result.converged)
        return decompositions, max(violations), all(converged)

    polished, violation, reached = warm_solves(steps_module._POLISH)
    afresh, _, reached_afresh = warm_solves(0.0)
    assert polished < afresh
    assert reached and reached_afresh and violation <= 1e-6


def test_second_order_corrections_take_fewer_full_steps(monkeypatch):
    """Chebyshev's correction (``steps.Steps``): along a warm path of a branched chain with
    two tasks, a first step solved for the errors less their second-order change lands close
    enough for a chord step or the tolerance, so the solves take fewer full steps than with
    Newton's first steps (no correction unless the linear model already meets the tolerance);
    they still meet the tolerance and keep the limits."""
    from dq_ik_addon.engine import steps as steps_module
    rng = np.random.default_rng(4)
    model = random_tree(rng, 10)
    limits = random_limits(rng, 10)
    leaves = [i for i in range(10) if i not in set(model.parents.tolist())][:2]
    poses = [random_pose_in_limits(rng, limits, scale=0.6) for _ in range(3)]
    path = [model.tails(model.matrices(qnormalize((1 - t) * a + t * b)))[leaves]
            for a, b in zip(poses, poses[1:]) for t in np.linspace(0, 1, 12)[1:]]
    counts = {}
    for label, linear in (("corrected", steps_module._LINEAR), ("Newton", 0.0)):
        monkeypatch.setattr(steps_module, "_LINEAR", linear)
        solver = Solver(model, [Task(Position, int(b), g) for b, g in zip(leaves, path[0])],
                        limits)
        q = solver.solve(identity_pose(10)).rotations
        counts[label] = 0
        for goals in path:
            solver.retarget(goals)
            result = solver.solve(q)
            assert result.converged and result.errors.max() < 1e-5
            assert limit_violation(result.rotations, limits).max() <= 1e-6
            q = result.rotations
            counts[label] += result.steps["full"]
    assert counts["corrected"] < counts["Newton"]


def test_a_prioritized_basis_gives_the_step_of_any_errors():
    """``PrioritizedBasis.steps`` with new errors (a chord, a correction) is ``prioritized_step``
    of the same Jacobians and constraints with those errors, damping and clamps included."""
    from dq_ik_addon.engine.prioritized import PrioritizedBasis, prioritized_step
    rng = np.random.default_rng(8)
    jacobians = [rng.normal(size=(6, 12)), rng.normal(size=(3, 12)), rng.normal(size=(3, 12))]
    rows = rng.normal(size=(2, 12))
    projector = np.eye(12) - np.linalg.pinv(rows).dot(rows)
    start = (np.linalg.pinv(rows).dot(rng.normal(size=2)), projector)
    basis = PrioritizedBasis(jacobians, projector)
    for scale in (1e-3, 1.0, 10.0):
        errors = [scale * rng.normal(size=jac.shape[0]) for jac in jacobians]
        pull = rng.normal(size=12)
        expected = prioritized_step(list(zip(jacobians, errors)), start, pull, 0.5, 2.0, 1.0)
        got = basis.steps(errors, start[0], pull, 0.5, 2.0, 1.0)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_a_level_with_a_target_out_of_reach_settles_at_its_compromise_without_escapes():
    """A target dragged beyond reach with a reachable task on its level (a shared root): every
    warm solve settles at the weighted compromise, stretched towards the far target, without
    escaping (an escape restarts from the middle of the ranges: the pose would jump between
    compromises at every step, each costing all the escapes)."""
    rng = np.random.default_rng(11)
    model = random_tree(rng, 9)
    limits = random_limits(rng, 9)
    leaves = [i for i in range(9) if i not in set(model.parents.tolist())][:2]
    reachable = model.tails(model.matrices(random_pose_in_limits(rng, limits)))[leaves[1]]
    far = 20.0 * np.array([1.0, 0.5, 0.2])
    solver = Solver(model, [Task(Position, leaves[0], far), Task(Position, leaves[1], reachable)], limits)
    first = solver.solve(identity_pose(9))
    q, escapes, iterations = first.rotations, [first.steps["escapes"]], []
    for step in range(8):
        solver.retarget([far * (1.0 + 0.01 * step), reachable])
        result = solver.solve(q)
        q = result.rotations
        iterations.append(result.iterations)
        escapes.append(result.steps["escapes"])
        assert np.isfinite(result.rotations).all()
        assert limit_violation(q, limits).max() <= 1e-6
    assert not any(escapes)
    assert max(iterations) <= 20


def test_escapes_that_found_nothing_are_not_repeated_while_the_target_stays_out_of_reach():
    """A target inside the chain's rest-length reach but out of reach under its limits: the
    first solve escapes and finds nothing better; dragged on, the warm solves settle at once
    instead of repeating the escapes at every step. Once a solve converges they are forgotten:
    the same target out of reach again escapes again."""
    model = straight_chain(3)
    limits = uniform_limits(3, swing=0.3, twist=0.1)
    solver = Solver(model, [Task(Position, 2, np.zeros(3))], limits)
    q, iterations, escapes = identity_pose(3), [], []
    for goal in [[1.8 + 0.05 * k, 1.5, 0.0] for k in range(5)] + [[0.3, 2.95, 0.0], [1.8, 1.5, 0.0]]:
        solver.retarget([goal])
        result = solver.solve(q)
        q = result.rotations
        iterations.append(result.iterations)
        escapes.append(result.steps["escapes"])
        assert limit_violation(q, limits).max() <= 1e-6
    assert escapes[0] > 0 and escapes[1:5] == [0, 0, 0, 0] and max(iterations[1:5]) <= 3
    assert escapes[5] == 0 and iterations[5] > 0      # reachable again: converges
    assert escapes[6] > 0


def test_an_escape_that_cannot_beat_the_best_pose_ends_early():
    """``acceptance.hopeless``: after an escape, a descent whose shrinking gains (Aitken's
    extrapolation) cannot take the first level unmet in the best pose below its best error ends;
    one that can, one whose gains do not shrink (no extrapolation; no progress at all is a
    stall), one too young to judge, or one after a best pose with every level met, goes on."""
    from dq_ik_addon.engine.acceptance import hopeless
    tol = SolverSettings().tolerance
    best = np.array([0.050])

    def descent(*errors):
        return [np.array([0.3]), np.array([0.2])] + [np.array([error]) for error in errors]
    history = descent(0.100, 0.090, 0.085)          # heads for 0.080
    assert hopeless(history, best, tol)
    assert not hopeless(history[2:], best, tol)     # three iterations in: too early to tell
    assert not hopeless(descent(0.100, 0.060, 0.040), best, tol)     # heads for 0.020
    assert not hopeless(descent(0.100, 0.095, 0.085), best, tol)     # gains not shrinking
    assert not hopeless(history, np.array([1e-6]), tol)
