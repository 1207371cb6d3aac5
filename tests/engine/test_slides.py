"""Sliding bones (``slides``): a bone's location as three more degrees of freedom of the solve.

Their Jacobian columns and second-order terms against differences, and a crouch: two legs
planted at priority 1 and the pelvis dragged down at priority 2, on a body whose pelvis slides.
"""

import numpy as np
import pytest
from chains import random_pose_in_limits, random_tree, uniform_limits

from dq_ik_addon.engine import (
    ChainModel,
    Orientation,
    Position,
    Solver,
    SwingTwistLimits,
    Task,
    acceptance,
)
from dq_ik_addon.engine.jacobian import (
    JointFrames,
    chain_order,
    column_mask,
    second_order_motion,
    task_jacobian,
)
from dq_ik_addon.engine.quaternion import matrix_to_quat, qexp, qmul
from dq_ik_addon.engine.tasks import TaskSet

SLIDERS = np.array([0, 3])


def _posed_tree(seed):
    rng = np.random.default_rng(seed)
    model = random_tree(rng, 9)
    q = random_pose_in_limits(rng, uniform_limits(9))
    locations = rng.normal(size=(9, 3)) * 0.1
    tasks = TaskSet(model, [Task(Position, 8, np.zeros(3)), Task(Position, 5, np.zeros(3)),
                            Task(Orientation, 8, np.array([1.0, 0, 0, 0]))])
    return rng, model, q, locations, tasks


def test_slide_columns_match_central_differences():
    """A slide's columns move the points its bone carries by the bone's location axes (in its
    parent's pose, scaled), and turn nothing."""
    _, model, q, locations, tasks = _posed_tree(0)
    joints = np.arange(9)
    world = model.matrices(q, locations)
    columns = np.concatenate([joints, SLIDERS])
    frame = JointFrames(model, joints, SLIDERS)(world)
    points = model.tails(world)[tasks.bones]
    j_pos, j_rot = task_jacobian(frame, points, column_mask(tasks.joint_masks, columns))
    h = 1e-6
    for s, bone in enumerate(SLIDERS):
        for k in range(3):
            plus, minus = locations.copy(), locations.copy()
            plus[bone, k] += h
            minus[bone, k] -= h
            fd = (model.tails(model.matrices(q, plus)) - model.tails(model.matrices(q, minus)))[
                tasks.bones] / (2 * h)
            col = 3 * (joints.size + s) + k
            np.testing.assert_allclose(j_pos[:, :, col], fd, atol=1e-7)
            assert not j_rot[:, :, col].any()


@pytest.mark.parametrize("seed", range(3))
def test_second_order_motion_with_slides_leaves_a_third_order_error(seed):
    """With slides among the columns (one on the root, one on a bone that turns with the joints
    above it), halving a step divides what ``e − J Δ − s`` leaves by 8."""
    rng, model, q, locations, _ = _posed_tree(seed)
    tasks = TaskSet(model, [Task(Position, b, rng.normal(size=3)) for b in range(4, 9)])
    joints = np.arange(9)
    columns = np.concatenate([joints, SLIDERS])
    world = model.matrices(q, locations)
    frame = JointFrames(model, joints, SLIDERS)(world)
    points = model.tails(world)[tasks.bones]
    j_pos, _ = task_jacobian(frame, points, column_mask(tasks.joint_masks, columns), False)
    chain, ancestors = chain_order(tasks.joint_masks, model.descendants_mask(), columns)
    error, = tasks.errors(world)
    direction = rng.normal(size=(columns.size, 3))

    def residual(size):
        delta = size * direction
        moved, located = q.copy(), locations.copy()
        moved = moved.copy()
        moved[joints] = qmul(qexp(0.5 * delta[:9]), q[joints])
        located[SLIDERS] += delta[9:]
        new, = tasks.errors(model.matrices(moved, located))
        s_pos, _ = second_order_motion(frame, points, delta, chain, ancestors)
        return np.abs(new - (error - j_pos.dot(delta.ravel()) - s_pos)).max()

    np.testing.assert_allclose(residual(2e-2) / residual(1e-2), 8.0, rtol=0.1)


def _body():
    """A pelvis (root, 0) with a spine (1) and two legs of thigh, shin and foot (2-4, 5-7)
    hanging down from it: a body that stands 1 m tall at the hips."""
    names = ["pelvis", "spine", "thigh.L", "shin.L", "foot.L", "thigh.R", "shin.R", "foot.R"]
    parents = [-1, 0, 0, 2, 3, 0, 5, 6]
    rest = np.tile(np.eye(4), (8, 1, 1))
    rest[:2, :3, :3] = [[1, 0, 0], [0, 0, -1], [0, 1, 0]]     # +Y up
    rest[[2, 3, 5, 6], :3, :3] = [[1, 0, 0], [0, 0, 1], [0, -1, 0]]     # +Y down the legs
    rest[[4, 7], :3, :3] = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]    # +Y forward (world −Y)
    rest[:, :3, 3] = [[0, 0, 1.0], [0, 0, 1.1], [0.1, 0, 1.0], [0.1, 0, 0.5], [0.1, 0, 0.0],
                      [-0.1, 0, 1.0], [-0.1, 0, 0.5], [-0.1, 0, 0.0]]
    return ChainModel.from_bones(names, parents, rest,
                                 lengths=[0.1, 0.5, 0.5, 0.5, 0.15, 0.5, 0.5, 0.15],
                                 connected=[False, False, False, True, True, False, True, True])


def test_a_sliding_pelvis_crouches_with_the_feet_planted():
    """Feet held (position and rotation, priority 1), the pelvis's tail dragged 0.1-0.3 m down
    (priority 2): the pelvis slides down, the knees bend inside their limits."""
    model = _body()
    bent = np.radians(np.array([0, 0, -5.0, 10.0, -5.0, -5.0, 10.0, -5.0]))   # knees a little bent
    start = np.zeros((8, 4))
    start[:, 0], start[:, 1] = np.cos(bent / 2), np.sin(bent / 2)
    world = model.matrices(start)
    feet = [4, 7]
    limits = SwingTwistLimits(*(np.full(8, v) for v in (-2.5, 2.5, -0.3, 0.3, -0.3, 0.3)),
                              np.ones(8, bool))
    translation = np.zeros((8, 3))
    translation[0] = 1.0
    pelvis_tail = model.tails(world)[0]
    for drop in (0.1, 0.2, 0.3):
        tasks = [Task(Position, f, model.tails(world)[f]) for f in feet] + \
            [Task(Orientation, f, matrix_to_quat(world[f, :3, :3])) for f in feet] + \
            [Task(Position, 0, pelvis_tail - [0, 0, drop], priority=2)]
        solver = Solver(model, tasks, limits, translation=translation)
        result = solver.solve(start)
        assert result.converged, result.errors
        assert result.errors.max() < 1e-5
        assert result.locations[0, 2] != 0.0
        posed = model.matrices(result.rotations, result.locations)
        np.testing.assert_allclose(model.tails(posed)[feet], model.tails(world)[feet], atol=1e-5)


def _knees_bent():
    """``_body`` with its knees bent 10° (hips and ankles −5°), its pelvis sliding: ``(model,
    rotations, pose matrices, translation)``."""
    model = _body()
    bent = np.radians(np.array([0, 0, -5.0, 10.0, -5.0, -5.0, 10.0, -5.0]))
    q = np.zeros((8, 4))
    q[:, 0], q[:, 1] = np.cos(bent / 2), np.sin(bent / 2)
    translation = np.zeros((8, 3))
    translation[0] = 1.0
    return model, q, model.matrices(q), translation



def _first_step(model, q, tasks, translation):
    """``(solver, its measure of the pose q, the full step of its first iteration)``."""
    solver = Solver(model, tasks, translation=translation)
    problem = solver.problem
    state = problem.slides.state(q[solver.bones], solver.given.locations)
    start = solver._measure(state, problem.fk.start(state, solver.given))
    solver.steps.begin()
    return solver, start, solver.steps.full(start[1], start[0], start[2], start[0])[0][-1]

def test_a_stall_that_traded_the_feet_for_the_pelvis_counts_restored():
    """``Steps.settled``: a step dragging the pelvis down (priority 2) leaves the planted feet
    (priority 1) off by 1.5-23 mm at second order, a state never better than the start, where
    they were met; with the feet restored by the step's own decompositions it keeps the
    pelvis's progress and is better in priority order, so a stall there counts what it gained."""
    model, q, world, translation = _knees_bent()
    tasks = [Task(Position, f, model.tails(world)[f]) for f in (4, 7)] + \
        [Task(Orientation, f, matrix_to_quat(world[f, :3, :3])) for f in (4, 7)] + \
        [Task(Position, 0, model.tails(world)[0] - [0.0, 0.0, 0.3], priority=2)]
    solver, start, step = _first_step(model, q, tasks, translation)
    steps, tol = solver.steps, solver.settings.tolerance
    for scale in (0.25, 0.5, 1.0):
        trial = solver._measure(solver.update(start[0], step, scale))
        assert trial[3][0] > tol and trial[3][1] < start[3][1]
        assert not acceptance.better(trial[3], start[3], tol)
        settled = steps.settled(trial, start, solver._measure)
        assert settled[3][0] <= 0.5 * tol
        assert settled[3][1] < start[3][1] - 0.5 * (start[3][1] - trial[3][1])
        assert acceptance.better(settled[3], start[3], tol)


def test_feet_a_few_tolerances_off_are_restored_too():
    """``Steps.restored``: feet planted 3 × the tolerance off their targets (a restoration left
    them there) are no progress level of their own: the pelvis dragged down drifts them millimetres
    off at second order, and they are restored with the levels above the first one more than 10 ×
    the tolerance off (one pass here: 1.4 mm of 29), not left for the next iteration, whose step
    then only put them back."""
    model, q, world, translation = _knees_bent()
    off = np.array([0.0, 3e-5 / np.sqrt(2.0), 0.0])
    tasks = [Task(Position, f, model.tails(world)[f] + off) for f in (4, 7)] + \
        [Task(Position, 0, model.tails(world)[0] - [0.0, 0.0, 0.3], priority=2)]
    solver, start, step = _first_step(model, q, tasks, translation)
    tol, within = solver.settings.tolerance, acceptance.RESTORED_WITHIN
    assert within == 10.0 and tol < start[3][0] < within * tol
    trial = solver._measure(solver.update(start[0], step, 1.0))
    assert trial[3][0] > within * tol
    restored = solver.steps.restored(trial, start[3], solver._measure)
    assert restored[3][0] < 0.1 * trial[3][0]
    assert restored[3][1] < start[3][1] - 0.5 * (start[3][1] - trial[3][1])


def test_without_translation_the_pelvis_cannot_crouch():
    """The pelvis's tail dragged 0.3 m down: turning alone, the 0.1 m pelvis can at best point
    its tail down, 0.1 m short (0.2 m down it would meet it upside down, its head unmoved)."""
    model = _body()
    world = model.matrices(np.tile([1.0, 0, 0, 0], (8, 1)))
    tasks = [Task(Position, f, model.tails(world)[f]) for f in (4, 7)] + \
        [Task(Position, 0, model.tails(world)[0] - [0, 0, 0.3], priority=2)]
    result = Solver(model, tasks).solve(np.tile([1.0, 0, 0, 0], (8, 1)))
    assert result.locations is None
    assert result.errors[2] > 0.05


def test_locked_location_axes_do_not_slide():
    model = _body()
    start = np.tile([1.0, 0, 0, 0], (8, 1))
    world = model.matrices(start)
    translation = np.zeros((8, 3))
    translation[0] = [1.0, 0.0, 1.0]        # Y locked
    target = model.tails(world)[1] + [0.2, 0.3, -0.1]
    result = Solver(model, [Task(Position, 1, target, chain_count=2)],
                    translation=translation).solve(start)
    assert result.locations[0, 1] == 0.0
    assert np.abs(result.locations[0]).max() > 0.0
