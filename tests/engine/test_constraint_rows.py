"""``constraint_rows``: the active rows' ``(C⁺ r, I − C⁺C)``, by joint blocks and by rank-one
updates, equals the pseudo-inverse of all of them; rows no joint can move constrain nothing."""

import numpy as np

from dq_ik_addon.engine.constraint_rows import ConstraintRows, joint_block_solution


def test_joint_block_solution_equals_the_full_pseudo_inverse():
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
    rows = ConstraintRows(2, np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((1, 6)))
    step, projector = rows.solution(np.array([True]), np.array([-0.01]))
    assert np.array_equal(step, np.zeros(6)) and np.array_equal(projector, np.eye(6))


def test_contact_rows_join_the_active_set_by_rank_one_updates():
    """With dense (contact) rows the update spans every column and equals the pseudo-inverse of
    all active rows, up to the contact damping (10⁻⁶ relative for well separated rows)."""
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


def test_nearly_parallel_limit_rows_that_disagree_barely_move_the_joint():
    """Two limit rows of one joint 2.5e-7 apart in direction, their right-hand sides 3.8e-6
    apart (a swing bound and the ellipse's, linearized at the same pose, on a body leaning far
    out): undamped, meeting both turned the joint by radians; damped (``_LIMIT_DAMPING``), the
    step stays within 1e-3 of the one row's solution, joint block by block and through the
    general update alike."""
    gradient = np.array([[-2.8648, 0.0, 0.0], [-5.7185, 1.0e-6, 1.0e-6]])
    slack = np.array([0.0019386, 0.0038735])
    alone = slack[0] / gradient[0, 0]
    rows = ConstraintRows(2, np.array([1, 1]), gradient)
    empty = (np.zeros(6), np.eye(6))
    for block_diagonal in (True, False):
        step, _ = rows.with_rows(empty, np.array([0, 1]), slack, block_diagonal)
        assert np.abs(step - np.array([0, 0, 0, alone, 0, 0])).max() <= 1e-3
    step, _ = joint_block_solution(np.array([1, 1]), gradient, slack, 2)
    assert np.abs(step - np.array([0, 0, 0, alone, 0, 0])).max() <= 1e-3
