"""Balance (``tasks.balance``): the centre of mass's Jacobian against differences, the support
polygon's geometry, and a body reaching forward with its feet planted: with balance its centre
of mass stays over the feet, the hips going back; without, it leaves them."""

import numpy as np
import pytest

from dq_ik_addon.engine import ChainModel, Orientation, Position, Solver, Task, acceptance
from dq_ik_addon.engine.escapes import Stalls
from dq_ik_addon.engine.jacobian import JointFrames, chain_order, column_mask
from dq_ik_addon.engine.moving_joints_fk import GivenPose, MovingJointsFK
from dq_ik_addon.engine.quaternion import matrix_to_quat, qexp, qmul
from dq_ik_addon.engine.tasks import Balance, Body, TaskSet
from dq_ik_addon.engine.tasks.balance import _ends_jacobian, _kinetic_jacobian, center_of_mass
from dq_ik_addon.engine.tasks.ground_polygon import polygon_distance, support_polygon
from dq_ik_addon.engine.tasks.kind import StepMotion

UP = np.array([0.0, 0.0, 1.0])
FEET = [7, 10]


def _body():
    """A pelvis (0, root) with a spine (1), a neck (2), an arm of two bones reaching forward
    (3, 4; forward is −Y) and two legs of thigh, shin and foot (5-7, 8-10)."""
    up, down = [[1, 0, 0], [0, 0, -1], [0, 1, 0]], [[1, 0, 0], [0, 0, 1], [0, -1, 0]]
    forward = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]
    frames = [up, up, up, forward, forward, down, down, forward, down, down, forward]
    heads = [[0, 0, 1.0], [0, 0, 1.1], [0, 0, 1.6], [0.2, 0, 1.5], [0.2, -0.3, 1.5],
             [0.1, 0, 1.0], [0.1, 0, 0.5], [0.1, 0, 0.05], [-0.1, 0, 1.0], [-0.1, 0, 0.5],
             [-0.1, 0, 0.05]]
    rest = np.tile(np.eye(4), (11, 1, 1))
    rest[:, :3, :3], rest[:, :3, 3] = frames, heads
    return ChainModel.from_bones(
        ["pelvis", "spine", "neck", "arm", "forearm", "thigh.L", "shin.L", "foot.L", "thigh.R",
         "shin.R", "foot.R"], [-1, 0, 1, 1, 3, 0, 5, 6, 0, 8, 9], rest,
        lengths=[0.1, 0.5, 0.2, 0.3, 0.3, 0.5, 0.45, 0.2, 0.5, 0.45, 0.2],
        connected=[False, False, True, False, True, False, True, False, False, True, False])


def _start(model, seed=0):
    rng = np.random.default_rng(seed)
    q = np.tile([1.0, 0, 0, 0], (len(model), 1))
    return qmul(qexp(rng.normal(scale=0.05, size=(len(model), 3))), q)


def _bodies(model):
    supports = np.zeros(len(model), bool)
    supports[FEET] = True
    return Body(model.lengths.copy(), supports)


def _keepers(model):
    """The keepers of ``model`` (``ChainModel.keeps``), as a solve whose FK turns them all."""
    return np.flatnonzero(model.keeps >= 0)


def _bound(model, body):
    """``(tasks, batch, mask, joints, columns)``: a position task on the arm and on each foot
    and a balance of ``body``, bound to every joint turning and the pelvis sliding; ``mask``:
    the balance's columns."""
    joints, sliders = np.arange(len(model)), np.array([0])
    columns = np.concatenate([joints, sliders])
    tasks = TaskSet(model, [Task(Position, b, np.zeros(3)) for b in (4, *FEET)]
                    + [Task(Balance, 0, UP, body=body)])
    batch = tasks.batches[1]
    batch.bind(model, columns, model.descendants_mask(), _keepers(model))
    return tasks, batch, column_mask(tasks.joint_masks, columns)[3:], joints, columns


def test_the_centre_of_mass_jacobian_matches_central_differences():
    model = _body()
    body = _bodies(model)
    q = _start(model, 1)
    locations = np.zeros((len(model), 3))
    tasks, batch, mask, joints, columns = _bound(model, body)
    # the balance moves the joints its fellow tasks move: here the arm's and the legs' chains
    assert tasks.joint_masks[3].tolist() == tasks.joint_masks[:3].any(axis=0).tolist()
    world = model.matrices(q, locations)
    frame = JointFrames(model, joints, columns[joints.size:])(world)
    # the row along each direction n is n nᵀ J_G: read J_G off three directions of a forced row
    effectors = tasks._effectors(world)[1]
    mids = batch._geometry(effectors)[0][3]
    jg = np.zeros((3, columns.size * 3))
    for axis in range(3):
        n = np.eye(3)[axis]
        batch._geometry_of = (world, [(True, n, 0.0, mids, None, None, np.zeros((4, 3)),
                                       np.zeros(4))])     # a still polygon
        jg[axis] = batch.jacobian(frame, effectors, mask)[0][axis]
    fd = _central_differences(
        q, locations, joints, columns,
        lambda rotations, slid: center_of_mass(model.matrices(rotations, slid), model.lengths,
                                               body.masses))
    for c in range(columns.size):
        if not mask[0, 3 * c]:      # the neck: no task moves it
            assert not jg[:, 3 * c:3 * c + 3].any()
            continue
        np.testing.assert_allclose(jg[:, 3 * c:3 * c + 3], fd[3 * c:3 * c + 3].T, atol=1e-7)


@pytest.mark.parametrize("seed", range(3))
def test_the_centre_of_mass_second_order_leaves_a_third_order_error(seed):
    """``Balance.second_order`` along each axis of a forced row over a still polygon: under a
    step of every column (the pelvis sliding too), halving it divides what ``G(Δ) − G − J_G Δ −
    s_G`` leaves by 8."""
    model = _body()
    body = _bodies(model)
    rng = np.random.default_rng(seed)
    q = _start(model, seed)
    locations = np.zeros((len(model), 3))
    tasks, batch, mask, joints, columns = _bound(model, body)
    world = model.matrices(q, locations)
    frame = JointFrames(model, joints, columns[joints.size:])(world)
    effectors = tasks._effectors(world)[1]
    mids = batch._geometry(effectors)[0][3]
    _, ancestors = chain_order(tasks.joint_masks, model.descendants_mask(), columns)
    jg, s_g = np.zeros((3, columns.size * 3)), np.zeros(3)
    direction = rng.normal(size=(columns.size, 3)) * mask[0].reshape(-1, 3)

    def along(axis, delta):
        n = np.eye(3)[axis]
        batch._geometry_of = (world, [(True, n, 0.0, mids, None, None, np.zeros((4, 3)),
                                       np.zeros(4))])     # a still polygon
        jg[axis] = batch.jacobian(frame, effectors, mask)[0][axis]
        return batch.second_order(StepMotion(frame, delta, None, ancestors[3:]), effectors,
                                  None)[0][axis]

    def residual(size):
        delta = size * direction
        s_g[:] = [along(axis, delta) for axis in range(3)]
        moved, slid = q.copy(), locations.copy()
        moved[joints] = qmul(qexp(0.5 * delta[:joints.size]), q[joints])
        slid[columns[joints.size:]] += delta[joints.size:]
        start = center_of_mass(world, model.lengths, body.masses)
        after = center_of_mass(model.matrices(moved, slid), model.lengths, body.masses)
        return np.abs(after - start - jg.dot(delta.ravel()) - s_g).max()

    assert residual(2e-2) > 1e-9
    np.testing.assert_allclose(residual(2e-2) / residual(1e-2), 8.0, rtol=0.1)


def test_a_keeper_keeps_its_sources_rotation_and_the_jacobian_follows_it():
    """The neck keeps the pelvis's world rotation (``ChainModel.keeps``, Rigify's head at the
    torso's): turning the spine carries it without turning it, turning the pelvis turns it,
    and J_G, with the neck carried by its head alone by the spine, matches differences of the
    centre of mass of that forward kinematics."""
    model = _body()
    model.keeps[2] = 0
    body = _bodies(model)
    q = _start(model, 1)
    joints, sliders = np.setdiff1d(np.arange(len(model)), [2]), np.array([0])
    fk = MovingJointsFK(model, joints, sliders)
    assert fk.keepers.tolist() == [2]
    world = fk.start(q)
    turned = q.copy()
    turned[1] = qmul(qexp(np.array([0.3, 0.0, 0.2])), q[1])
    bent = fk(turned)
    np.testing.assert_allclose(bent[2, :3, :3], world[2, :3, :3], atol=1e-12)
    np.testing.assert_allclose(bent[2, :3, 3], model.tails(bent)[1], atol=1e-12)
    turned[0] = qmul(qexp(np.array([0.0, 0.4, 0.0])), q[0])
    tipped = fk(turned)
    np.testing.assert_allclose(tipped[2, :3, :3] @ world[2, :3, :3].T,
                               tipped[0, :3, :3] @ world[0, :3, :3].T, atol=1e-12)
    jacobian, expected = _keeper_jacobian(model, body, fk, q, world, joints, sliders)
    np.testing.assert_allclose(jacobian(), expected, atol=1e-7)


def _central_differences(q, locations, joints, columns, function, h=1e-6):
    """(3C, …) central differences of ``function(rotations, locations)`` along each column's
    three axes: a turn of joint ``columns[c]`` (left update, as the solve) for the first
    ``joints.size`` columns, a slide of its location after them."""
    rows = []
    for c, joint in enumerate(columns):
        for k in range(3):
            plus, minus = q.copy(), q.copy()
            lp, lm = locations.copy(), locations.copy()
            if c < joints.size:
                delta = np.zeros(3)
                delta[k] = h / 2
                plus[joint] = qmul(qexp(delta), q[joint])
                minus[joint] = qmul(qexp(-delta), q[joint])
            else:
                lp[joint, k] += h
                lm[joint, k] -= h
            rows.append((np.asarray(function(plus, lp)) - np.asarray(function(minus, lm))) / (2 * h))
    return np.array(rows)


def test_the_balance_row_is_the_derivative_of_the_distance_to_a_polygon_its_feet_move():
    """The polygon moves with the supports (a foot sliding on a floor): the row along n is the
    derivative of G's signed distance d from the polygon, feet and centre of mass both moving,
    against central differences of d (the band wide, so that the row is there inside too)."""
    model = _body()
    q = _start(model, 3)
    locations = np.zeros((len(model), 3))
    tasks, batch, mask, joints, columns = _bound(
        model, Body(model.lengths.copy(), _bodies(model).supports, band=10.0))

    def distance(rotations, slid):
        batch._geometry_of = (None, None)
        return batch._geometry(tasks._effectors(model.matrices(rotations, slid))[1])[0][2]

    world = model.matrices(q, locations)
    effectors = tasks._effectors(world)[1]
    n = batch._geometry(effectors)[0][1]
    frame = JointFrames(model, joints, columns[joints.size:])(world)
    row = n.dot(batch.jacobian(frame, effectors, mask)[0])
    feet_moved = np.repeat(model.descendants_mask()[np.ix_(columns, FEET)].any(axis=1), 3)
    assert np.abs(row[feet_moved & mask[0].astype(bool)]).max() > 0.01
    expected = _central_differences(q, locations, joints, columns, distance) * mask[0]
    np.testing.assert_allclose(row, expected, atol=1e-6)


def test_a_step_that_carries_the_centre_of_mass_out_arms_the_row_onto_the_boundary():
    """A step that takes the centre of mass, deeper inside than the band, 5 cm out of the
    polygon (to first order): ``arm`` gives the row along the outward normal n' at the boundary
    point q nearest to where G lands, with the error ``room · n'`` that takes G onto the
    polygon's supporting line at q (an edge's line), its Jacobian ``n' n'ᵀ J_G``; ``disarm``
    gives back the pose's rows (none)."""
    model = _body()
    world = model.matrices(_start(model, 0))
    tasks = TaskSet(model, [Task(Position, b, np.zeros(3)) for b in (4, *FEET)]
                    + [Task(Balance, 0, UP, body=_bodies(model))])
    columns = np.arange(len(model))
    batch = tasks.batches[1]
    batch.bind(model, columns, model.descendants_mask(), _keepers(model))
    frame = JointFrames(model, columns)(world)
    effectors = tasks._effectors(world)[1]
    active, _, inside, mids, ground, polygon, ends, _ = batch._geometry(effectors)[0]
    assert not active and inside < -batch.bodies[0].band
    plane = batch.planes[0]
    kinetic = _kinetic_jacobian(frame, batch._carried(mids, batch.parts[0]), batch.parts[0])
    forward = np.array([0.0, -1.0, 0.0])
    upper = np.repeat(np.isin(columns, [1, 2, 3, 4]), 3)         # the feet stay: a still polygon
    pushed = kinetic.dot(forward) * upper
    delta = pushed * 0.5 / kinetic.T.dot(pushed).dot(forward)     # G moves 0.5 m forward
    landed = ground + kinetic.T.dot(delta).dot(plane)
    beyond, outward = polygon_distance(landed, polygon)
    assert beyond > 0.05
    errors = tasks.errors(world)
    armed = tasks.arm(world, frame, delta, errors)
    assert armed is not None and not np.array_equal(armed[1], errors[1])
    row = armed[1][0]
    room = float(np.linalg.norm(row))
    assert np.allclose(row / room, plane.dot(outward)) and abs(row.dot(UP)) <= 1e-15
    nearest = landed - beyond * outward       # the boundary point nearest to where G lands
    moved = ground + row.dot(plane)           # G moved by the row: on the supporting line there
    assert abs((moved - nearest).dot(outward)) <= 1e-12
    assert polygon_distance(moved, polygon)[0] >= -1e-12
    mask = column_mask(tasks.joint_masks, columns)[3:]
    n = plane.dot(outward)
    boundary = batch.armed[0][2].dot(n.dot(_ends_jacobian(frame, ends, batch.parts[0])))
    expected = n[:, None] * ((kinetic.dot(n) - boundary) * mask[0])[None, :]
    np.testing.assert_allclose(batch.jacobian(frame, effectors, mask)[0], expected, atol=1e-15)
    tasks.disarm()
    assert not tasks.errors(world)[1].any() and not batch.jacobian(frame, effectors, mask).any()
    assert tasks.arm(world, frame, 0.01 * delta, errors) is None     # G stays inside


def test_the_support_polygon_and_distances():
    points = np.array([[0, 0, 0.1], [1, 0, 0.0], [1, 1, 0.2], [0, 1, 0.0], [0.5, 0.5, 0.3]])
    polygon, (u, v) = support_polygon(points, UP)
    assert len(polygon) == 4 and np.allclose(polygon @ UP, 0.0)
    flat = np.stack([polygon @ u, polygon @ v], axis=1)
    for point, distance in (([0.5, 0.5], -0.5), ([0.9, 0.5], -0.1), ([2.0, 0.5], 1.0),
                            ([2.0, 2.0], np.sqrt(2.0))):
        p3 = np.array([*point, 0.0])
        d, n = polygon_distance(np.array([p3 @ u, p3 @ v]), flat)
        assert d == pytest.approx(distance)
        assert np.linalg.norm(n) == pytest.approx(1.0)


def _reach(model, forward, balance, priority=2, aside=0.0):
    q = _start(model, 2)
    world = model.matrices(q)
    tails = model.tails(world)
    tasks = [Task(Position, f, tails[f]) for f in FEET] + \
        [Task(Orientation, f, matrix_to_quat(world[f, :3, :3])) for f in FEET] + \
        [Task(Position, 4, tails[4] + [aside, -forward, -0.6], priority=3)]
    if balance:
        tasks.append(Task(Balance, 0, UP, priority=priority, body=_bodies(model)))
    translation = np.zeros((len(model), 3))
    translation[0] = 1.0
    solver = Solver(model, tasks, translation=translation)
    result = solver.solve(q)
    posed = model.matrices(result.rotations, result.locations)
    feet = np.concatenate([model.tails(posed)[FEET], posed[FEET, :3, 3]])
    polygon, (u, v) = support_polygon(feet, UP)
    centre = center_of_mass(posed, model.lengths, model.lengths)
    d, _ = polygon_distance(np.array([centre @ u, centre @ v]),
                            np.stack([polygon @ u, polygon @ v], axis=1))
    return result, d, np.linalg.norm(model.tails(posed)[FEET] - tails[FEET], axis=1).max()


@pytest.mark.parametrize("forward", [0.9, 1.1, 1.3])
def test_balance_keeps_the_centre_of_mass_over_the_feet_of_a_body_reaching_forward(forward):
    model = _body()
    _, outside, _ = _reach(model, forward, balance=False)
    assert outside > 0.01                  # without balance it tips over its toes
    result, inside, feet = _reach(model, forward, balance=True)
    assert inside <= 1e-3
    assert feet <= 1e-4
    assert result.errors[:4].max() <= 1e-4


@pytest.mark.parametrize("passes", [0, acceptance.SETTLING_PASSES])
def test_ticks_of_one_iteration_follow_a_hand_dragged_past_the_lean(monkeypatch, passes):
    """Live ticks (a time budget that allows one iteration) while a hand target moves forward
    and down past what leaning over the feet gives: each tick's step trades the feet's and the
    balance's last digits for the hand's progress, and the solve returns its best state; with
    the step restored in the tick's last iteration (``TimeBudget.settling``) the hand keeps up
    with the closest pose an untimed solve finds, without (``SETTLING_PASSES`` 0) it stopped
    0.26 m behind it. The feet hold on every tick."""
    monkeypatch.setattr(acceptance, "SETTLING_PASSES", passes)
    model = _body()
    q = _start(model, 2)
    world = model.matrices(q)
    tails = model.tails(world)
    tasks = [Task(Position, f, tails[f]) for f in FEET] + \
        [Task(Orientation, f, matrix_to_quat(world[f, :3, :3])) for f in FEET] + \
        [Task(Position, 4, tails[4], priority=3),
         Task(Balance, 0, UP, priority=2, body=_bodies(model))]
    translation = np.zeros((len(model), 3))
    translation[0] = 1.0
    solver = Solver(model, tasks, translation=translation)
    result = solver.solve(q)
    solver.settings.time_budget_ms = 1e-3
    goals, feet = [task.target for task in tasks], 0.0
    for step in range(1, 41):
        goals[4] = tails[4] + np.array([0.0, -0.03, -0.009]) * step
        solver.retarget(goals)
        result = solver.solve(result.rotations, locations=result.locations)
        assert result.iterations == 1
        feet = max(feet, result.errors[:4].max())
    solver.settings.time_budget_ms = None
    closest = solver.solve(result.rotations, locations=result.locations).errors[4]
    assert feet <= 1e-5
    behind = result.errors[4] - closest
    assert behind <= 0.01 if passes else behind >= 0.2, (result.errors[4], closest)


def test_a_reach_whose_best_state_a_restoration_made_descends_from_it_once_more(monkeypatch):
    """Reaching 1.7 m forward with Balance, the descents trade the feet's last digits for the
    hand's progress; the best state is a stall the restoration put back (``Steps.settled``),
    which no descent had started from. One last descent from it (``Stalls.unexplored``), as a
    second press of Solve would make, ends nearer the hand's target, the feet held."""
    model = _body()
    last, inside, feet = _reach(model, 1.7, balance=True)
    monkeypatch.setattr(Stalls, "unexplored", lambda self, best: False)
    returned, _, _ = _reach(model, 1.7, balance=True)
    assert last.errors[4] < returned.errors[4] - 1e-3
    assert last.iterations > returned.iterations
    assert inside <= 1e-3 and feet <= 1e-4


def test_a_reach_that_leans_into_a_corner_of_the_polygon_holds_both_edges_and_is_met():
    """Back and aside: the centre of mass comes to a corner of the polygon, and one edge's row
    alone let the steps slide it out across the other edge (the hand stopped 0.43 m short);
    with the crossed edge armed beside the held one the hand is met inside the polygon."""
    model = _body()
    result, inside, feet = _reach(model, -0.7, balance=True, aside=0.7)
    assert inside <= 1e-3 and feet <= 1e-4
    assert result.errors[4] <= 1e-4, result.errors


def test_a_balance_alone_or_without_supports_does_not_fail():
    """Balance moves the joints the other tasks move: alone it moves nothing (and solves at
    once); without supports it is never active and never holds a pose."""
    model = _body()
    q = _start(model)
    alone = Solver(model, [Task(Balance, 0, UP, body=_bodies(model))]).solve(q)
    assert alone.iterations == 0
    unsupported = Body(model.lengths.copy(), np.zeros(len(model), bool))
    tasks = TaskSet(model, [Task(Position, 4, np.zeros(3)), Task(Balance, 0, UP, body=unsupported)])
    batch = tasks.batches[1]
    batch.bind(model, np.arange(len(model)), model.descendants_mask(), _keepers(model))
    assert not tasks.holding(model.matrices(q))


def test_a_new_up_direction_is_measured_at_once():
    """The ground plane follows the target (the world's up in armature space) on the very next
    measure of the same pose: a turned armature is not balanced on its old plane."""
    model = _body()
    world = model.matrices(_start(model))
    tasks = TaskSet(model, [Task(Position, 4, np.zeros(3)), Task(Balance, 0, UP,
                                                                  body=_bodies(model))])
    batch = tasks.batches[1]
    batch.bind(model, np.arange(len(model)), model.descendants_mask(), _keepers(model))
    before = batch.errors(tasks._effectors(world)[1])
    tilted = np.array([0.0, -np.sin(0.5), np.cos(0.5)])
    tasks.set_targets([np.zeros(3), tilted])
    after = batch.errors(tasks._effectors(world)[1])
    assert not np.allclose(before, after)
    assert abs(after[0] @ tilted) < 1e-12       # the error lies in the new ground plane


def test_a_partial_keeper_turns_part_of_the_way_and_the_jacobian_follows_it_to_first_order():
    """The neck keeps half of the pelvis's world rotation (Rigify's ``MCH-ROT-neck``, Neck
    Follow 0.5), a joint of the driven part itself: its FK turns it to ``R (Rᵀ R_s)^½`` of its
    own pose's R and the pelvis's R_s (``kept_rotations``, Blender's blend of a constraint by
    its influence), and J_G, with the joints between the pelvis and the neck turning what the
    neck carries by half their turn, matches central differences of that FK to first order in
    the angle between R and R_s (0.25 rad here: within 2e-4 of entries up to 1), where taking
    the neck as turned whole by them is off by the neck's whole lever."""
    base = _body()
    keeps = np.full(len(base), -1)
    keeps[2] = 0
    model = base.followed(base.parents, base.riders, keeps, np.where(keeps >= 0, 0.5, 1.0))
    body = _bodies(model)
    q = _start(model, 1)
    joints, sliders = np.arange(len(model)), np.array([0])
    fk = MovingJointsFK(model, joints, sliders)
    assert fk.part_keepers.tolist() == [2] and fk.keepers.size == 0
    world = fk.start(q)
    own, source = base.matrices(q)[2, :3, :3], world[0, :3, :3]
    angle, axis = _axis_angle(own.T @ source)
    np.testing.assert_allclose(world[2, :3, :3], own @ _rotation(axis, angle / 2), atol=1e-12)
    assert angle > 0.2
    jacobian, expected = _keeper_jacobian(model, body, fk, q, world, joints, sliders)
    error = np.abs(jacobian() - expected)
    assert error.max() <= 2e-4
    whole = np.abs(jacobian(whole=True) - expected)
    assert whole.max() > 10 * error.max()


@pytest.mark.parametrize("neck", [1.0, 0.5])
def test_a_keeper_below_another_loses_its_lever_once(neck):
    """Rigify's layout: the neck (a joint) keeps ``neck`` of the pelvis's rotation, and a head
    riding on it keeps all of it. The joints between the pelvis and the neck turn the head's
    bones by (1 − neck)(1 − 1) of their turn, not 1 − neck − 1: with the inner keeper's share
    taken after the outer one's (``KeptColumns.shares``), J_G matches differences exactly for
    whole keepers (it was 8e-3 off) and to first order otherwise."""
    model, n = _kept_head(neck)
    q = _start(model, 1)
    joints, sliders = np.arange(n - 2), np.array([0])
    fk = MovingJointsFK(model, joints, sliders)
    assert fk.part_keepers.tolist() == [2] and fk.keepers.tolist() == [n - 2]
    world = fk.start(q)
    jacobian, expected = _keeper_jacobian(model, _bodies(model), fk, q, world, joints, sliders)
    assert np.abs(jacobian() - expected).max() <= (1e-9 if neck == 1.0 else 1e-3)


@pytest.mark.parametrize("neck", [1.0, 0.5])
def test_both_fk_paths_carry_the_bones_below_a_keeper_alike_under_uneven_scale(neck):
    """The FK composing whole root paths turns the bones below a keeper with it afterwards; with
    the spine scaled unevenly (the neck's frame sheared) they land where the FK posing bone by
    bone puts them (the carry keeps the shear: ``kept_rotations.keep``)."""
    model, n = _kept_head(neck)
    q = _start(model, 2)
    scales = np.ones((n, 3))
    scales[1] = (1.1, 0.9, 1.0)
    composed = model.matrices(q, scales=scales, plain=True)
    np.testing.assert_allclose(composed, model.matrices(q, scales=scales, plain=False),
                               atol=1e-12)


@pytest.mark.parametrize("neck", [1.0, 0.5])
def test_position_and_orientation_jacobians_of_a_head_below_keepers(neck):
    """A position and an orientation task on a head below the neck (keeping ``neck`` of the
    pelvis's rotation) and its keeper (all of it): their Jacobians (``KeptColumns``) match
    central differences of the FK, exactly for whole keepers and to first order otherwise,
    where the plain chain Jacobians are far off (the joints between the pelvis and the neck
    turn nothing of a wholly kept head)."""
    model, n = _kept_head(neck)
    q = _start(model, 4)
    joints, sliders = np.arange(n - 2), np.array([0])
    columns = np.concatenate([joints, sliders])
    fk = MovingJointsFK(model, joints, sliders)
    world = fk.start(q)
    head = n - 1
    tasks = TaskSet(model, [Task(Position, head, np.zeros(3)),
                            Task(Orientation, head, np.array([1.0, 0, 0, 0]))])
    for batch in tasks.batches:
        batch.bind(model, columns, model.descendants_mask(), _keepers(model))
    masks = tasks.by_batch(column_mask(tasks.joint_masks, columns))
    frame = JointFrames(model, joints, sliders)(world)
    position, orientation = (j[0] for j in tasks.jacobians(frame, world, masks))

    def pose(rotations, slid):
        fk.given = GivenPose(slid if slid.any() else None)
        return fk(rotations)[head]
    start = pose(q, np.zeros((n, 3)))
    moved = _central_differences(q, np.zeros((n, 3)), joints, columns,
                                 lambda r, l: pose(r, l).ravel()).reshape(-1, 4, 4)
    tails = moved[:, :3, 3] + model.lengths[head] * moved[:, :3, 1]
    spins = moved[:, :3, :3] @ start[:3, :3].T     # dR Rᵀ: the angular velocity's cross matrix
    turns = np.stack([spins[:, 2, 1], spins[:, 0, 2], spins[:, 1, 0]], axis=1)
    bound = 1e-6 if neck == 1.0 else 1e-2
    assert np.abs(position - tails.T).max() <= bound
    assert np.abs(orientation - turns.T).max() <= bound
    plain = TaskSet(model, [Task(Position, head, np.zeros(3))])
    plain.batches[0].kept_columns = None
    unkept = plain.jacobians(frame, world, plain.by_batch(column_mask(plain.joint_masks,
                                                                       columns)))[0][0]
    assert np.abs(unkept - tails.T).max() > 10 * bound


def _kept_head(neck):
    """``(model, n)``: ``_body_with_head`` with the neck keeping ``neck`` of the pelvis's
    rotation and the head's keeper all of it."""
    base, n = _body_with_head()
    keeps, weights = np.full(n, -1), np.ones(n)
    keeps[[2, n - 2]], weights[2] = 0, neck
    return base.followed(base.parents, base.riders, keeps, weights), n


def _body_with_head():
    """``(model, n)``: ``_body`` with a head on the neck: a bone at its tail (the one that keeps,
    length 0) and the head itself below it."""
    body = _body()
    count = len(body)
    rest = np.concatenate([body.rest_matrices, body.rest_matrices[[2, 2]]])
    rest[count, :3, 3], rest[count + 1, :3, 3] = [0, 0, 1.8], [0, -0.05, 1.8]
    model = ChainModel(list(body.names) + ["head_keeper", "head"], list(body.parents) + [2, count],
                       rest, list(body.lengths) + [0.0, 0.25], list(body.connected) + [False] * 2)
    return model, count + 2


def _keeper_jacobian(model, body, fk, q, world, joints, sliders):
    """``(jacobian, expected)``: a function giving J_G (3, C', 3) of a balance of ``body`` bound
    to the ``joints`` turning and ``sliders`` sliding, at ``world`` (``whole=True``: with every
    keeper taken as turned whole by the joints between its source and it), and central
    differences of the centre of mass of ``fk`` at ``q``, on the columns that move it."""
    columns = np.concatenate([joints, sliders])
    tasks = TaskSet(model, [Task(Position, b, np.zeros(3)) for b in (4, *FEET)]
                    + [Task(Balance, 0, UP, body=body)])
    batch = tasks.batches[1]
    batch.bind(model, columns, model.descendants_mask(), _keepers(model))
    mask = column_mask(tasks.joint_masks, columns)[3:]
    frame = JointFrames(model, joints, sliders)(world)
    effectors = tasks._effectors(world)[1]
    mids = batch._geometry(effectors)[0][3]
    moved = mask[0, ::3]
    part = batch.parts[0]

    def jacobian(whole=False):
        batch.parts[0] = part[:9] + (part[9] * (0.0 if whole else 1.0), part[10])
        rows = []
        for axis in range(3):
            batch._geometry_of, batch._jacobians_of = (world, [(
                True, np.eye(3)[axis], 0.0, mids, None, None, np.zeros((4, 3)), np.zeros(4))]), \
                (None, None)
            rows.append(batch.jacobian(frame, effectors, mask)[0][axis])
        return np.array(rows).reshape(3, -1, 3)[:, moved]

    def centre(rotations, slid):
        fk.given = GivenPose(slid if slid.any() else None)
        return center_of_mass(fk(rotations), model.lengths, body.masses)
    fd = _central_differences(q, np.zeros((len(model), 3)), joints, columns, centre)
    return jacobian, fd.reshape(-1, 3, 3)[moved].transpose(2, 0, 1)


def _axis_angle(rotation):
    """``(angle, unit axis)`` of a rotation matrix."""
    angle = np.arccos(np.clip((np.trace(rotation) - 1.0) / 2.0, -1.0, 1.0))
    axis = np.array([rotation[2, 1] - rotation[1, 2], rotation[0, 2] - rotation[2, 0],
                     rotation[1, 0] - rotation[0, 1]])
    return angle, axis / np.linalg.norm(axis)


def _rotation(axis, angle):
    """Rodrigues' rotation matrix about the unit ``axis`` by ``angle``."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * k @ k
