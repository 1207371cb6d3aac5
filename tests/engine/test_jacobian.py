"""The Jacobians of ``jacobian``: the task rows against central differences, the second-order
motion of Chebyshev's correction, and the contact rows' normal Jacobian."""

import numpy as np
from chains import random_pose_in_limits, random_tree, turned_both_ways, uniform_limits

from dq_ik_addon.engine.jacobian import (
    JointFrames,
    chain_order,
    column_mask,
    normal_jacobian,
    second_order_motion,
    task_jacobian,
)
from dq_ik_addon.engine.quaternion import matrix_to_quat, qexp, qmul
from dq_ik_addon.engine.tasks import Orientation, Position, Task, TaskSet


def test_jacobian_matches_central_differences():
    rng = np.random.default_rng(0)
    model = random_tree(rng, 9)
    q = random_pose_in_limits(rng, uniform_limits(9))
    tasks = TaskSet(model, [Task(Position, 8, np.zeros(3)), Task(Position, 5, np.zeros(3))])
    world = model.matrices(q)
    joints = np.arange(9)
    points = model.tails(world)[tasks.bones]
    j_pos, j_rot = task_jacobian(JointFrames(model, joints)(world), points,
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
    j_pos, j_rot = task_jacobian(frame, points, column_mask(masks, joints))
    position, rotation = tasks.errors(world)
    chain, ancestors = chain_order(masks, model.descendants_mask(), joints)
    direction = rng.normal(size=(joints.size, 3))

    def residuals(size, task):     # the task's own chain turns (the others' joints: not its model)
        delta = size * direction * chain[task][:, None]
        moved = q.copy()
        moved[joints] = qmul(qexp(0.5 * delta), q[joints])
        new_position, new_rotation = tasks.errors(model.matrices(moved))
        s_pos, s_rot = second_order_motion(frame, points, delta, chain, ancestors, rotation)
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
    j_pos, _ = task_jacobian(frame, points, columns, False)
    np.testing.assert_allclose(normal_jacobian(frame, points, normals, columns),
                               np.einsum('pi,pij->pj', normals, j_pos), rtol=0, atol=1e-12)
