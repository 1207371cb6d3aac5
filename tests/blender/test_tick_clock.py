"""The time budget of a live tick is the whole tick's (``solving/tick_clock.py``): what the tick
took before its solve and what the last one took after it come off the solve's budget, but a
tick's one-off reading (the rig read again, the solver built) does not. The clock reads a
stand-in for ``perf_counter`` here, so every figure is exact."""

import pytest


class _Now:
    """A ``perf_counter`` that says what it is set to (seconds)."""

    def __init__(self):
        self.seconds = 0.0

    def __call__(self):
        return self.seconds


@pytest.fixture
def now(dqik, monkeypatch):
    stand_in = _Now()
    monkeypatch.setattr(dqik.dq_ik_addon.blender.solving.tick_clock, "perf_counter", stand_in)
    return stand_in


@pytest.fixture
def clock(dqik, now):
    return dqik.dq_ik_addon.blender.solving.tick_clock.TickClock()


def test_the_reading_and_the_last_ticks_writing_come_off_the_solves_budget(clock, now):
    clock.reading_ms, clock.finishing_ms = 10.0, 0.5
    now.seconds = 1e-3                      # the tick read for 1 ms before its solve
    assert clock.solve_budget(4.0, 0.0) == pytest.approx(4.0 - 1.0 - 0.5)
    assert clock.reading_ms == pytest.approx(1.0)


def test_a_one_off_reading_longer_than_the_last_ticks_is_not_charged_to_the_solve(clock, now):
    clock.reading_ms = 0.2
    now.seconds = 0.05                      # the rig read again: 50 ms
    assert clock.solve_budget(4.0, 0.0) == pytest.approx(4.0 - 0.2)
    assert clock.reading_ms == pytest.approx(50.0)   # the next tick charges its own, if less


def test_a_tick_past_its_budget_still_makes_its_one_iteration_and_none_means_no_budget(clock):
    clock.finishing_ms = 9.0
    assert clock.solve_budget(4.0, 0.0) == 0.0
    assert clock.solve_budget(None, 0.0) is None


def test_the_time_after_the_solve_is_kept_for_the_next_tick(clock, now):
    clock.finished()
    assert clock.finishing_ms == 0.0        # no solve yet
    now.seconds = 1.0
    clock.solved()
    now.seconds = 1.002
    clock.finished()
    assert clock.finishing_ms == pytest.approx(2.0)
