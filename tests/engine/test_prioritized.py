"""``prioritized``: the prioritized damped least-squares step, clamped along each singular
direction of a level, and its basis, which gives the step of any errors; soft rows below every
level."""

import numpy as np

from dq_ik_addon.engine.prioritized import NullSpaceGoal, PrioritizedBasis, prioritized_step


def test_each_singular_direction_of_a_level_step_is_clamped_alone():
    """``prioritized_step``'s clamp (``max_task_step``, ``max_joint_step``): along each singular
    direction of a level the predicted task motion is at most ``max_motion`` and the joint motion
    at most ``max_turn``; directions within both keep their damped least-squares motion."""
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


def test_a_prioritized_basis_gives_the_step_of_any_errors():
    """``PrioritizedBasis.steps`` with new errors (a chord, a correction) is ``prioritized_step``
    of the same Jacobians and constraints with those errors, damping and clamps included."""
    rng = np.random.default_rng(8)
    jacobians = [rng.normal(size=(6, 12)), rng.normal(size=(3, 12)), rng.normal(size=(3, 12))]
    rows = rng.normal(size=(2, 12))
    projector = np.eye(12) - np.linalg.pinv(rows).dot(rows)
    start = (np.linalg.pinv(rows).dot(rng.normal(size=2)), projector)
    basis = PrioritizedBasis(jacobians, projector)
    for scale in (1e-3, 1.0, 10.0):
        errors = [scale * rng.normal(size=jac.shape[0]) for jac in jacobians]
        pull = rng.normal(size=12)
        goal = NullSpaceGoal(pull=pull)
        expected = prioritized_step(list(zip(jacobians, errors)), start, goal, 0.5, 2.0, 1.0)
        got = basis.steps(errors, start[0], goal, 0.5, 2.0, 1.0)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_soft_rows_are_one_more_level_below_every_task_and_the_pull_moves_in_what_they_leave():
    """``NullSpaceGoal``: the soft rows change no level's predicted error, meet what the levels
    leave of them in the least-squares sense (undamped: ``(J_s P_K)⁺``), and the pull adds
    motion that moves neither the levels nor the soft rows."""
    rng = np.random.default_rng(3)
    jacobians = [rng.normal(size=(3, 12)), rng.normal(size=(3, 12))]
    errors = [rng.normal(size=3), rng.normal(size=3)]
    soft = (rng.normal(size=(4, 12)), rng.normal(size=4))
    pull = rng.normal(size=12)
    basis = PrioritizedBasis(jacobians)
    plain = basis.steps(errors)[-1]
    held = basis.steps(errors, None, NullSpaceGoal(soft))[-1]
    pulled = basis.steps(errors, None, NullSpaceGoal(soft, pull))[-1]
    for jac in jacobians:
        np.testing.assert_allclose(jac.dot(held), jac.dot(plain), atol=1e-12)
        np.testing.assert_allclose(jac.dot(pulled), jac.dot(plain), atol=1e-12)
    stacked = np.vstack(jacobians)
    projector = np.eye(12) - np.linalg.pinv(stacked).dot(stacked)
    jac_s, err_s = soft
    expected = plain + np.linalg.pinv(jac_s.dot(projector)).dot(err_s - jac_s.dot(plain))
    np.testing.assert_allclose(held, expected, atol=1e-10)
    np.testing.assert_allclose(jac_s.dot(pulled), jac_s.dot(held), atol=1e-10)
    assert np.linalg.norm(pulled - held) > 0.1      # (12 − 3 − 3 − 4 = 2 directions left)
