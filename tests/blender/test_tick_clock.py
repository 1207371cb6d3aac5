"""The time budget of a live tick is the whole tick's (``solving/tick_clock.py``): what the tick
took before its solve and what the last one took after it come off the solve's budget, but a
tick's one-off reading (the rig read again, the solver built) does not."""

import time

import pytest


@pytest.fixture
def clock(dqik):
    return dqik.dq_ik_addon.blender.solving.tick_clock.TickClock()


def test_the_reading_and_the_last_ticks_writing_come_off_the_solves_budget(clock):
    clock.reading_ms, clock.finishing_ms = 10.0, 0.5
    begun = time.perf_counter() - 1e-3      # the tick read for 1 ms before its solve
    assert clock.solve_budget(4.0, begun) <= 4.0 - 1.0 - 0.5
    assert clock.reading_ms >= 1.0


def test_a_one_off_reading_longer_than_the_last_ticks_is_not_charged_to_the_solve(clock):
    clock.reading_ms = 0.2
    begun = time.perf_counter() - 0.05      # the rig read again: 50 ms
    assert clock.solve_budget(4.0, begun) == pytest.approx(4.0 - 0.2)
    assert clock.reading_ms >= 50.0         # the next tick charges its own reading, if less


def test_a_tick_past_its_budget_still_makes_its_one_iteration_and_none_means_no_budget(clock):
    clock.finishing_ms = 9.0
    assert clock.solve_budget(4.0, time.perf_counter()) == 0.0
    assert clock.solve_budget(None, time.perf_counter()) is None


def test_the_time_after_the_solve_is_kept_for_the_next_tick(clock):
    clock.finished()
    assert clock.finishing_ms == 0.0        # no solve yet
    clock.solved()
    time.sleep(2e-3)
    clock.finished()
    assert clock.finishing_ms >= 2.0
