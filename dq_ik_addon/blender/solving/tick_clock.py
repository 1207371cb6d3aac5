"""A live tick's time budget as the whole tick's: ``Object.dqik.time_budget_ms`` is what a tick
may take, reading the pose and the targets and writing the result included, so the solve gets
the budget less the tick's steady overhead around it (``Session.tick``)."""

from time import perf_counter


class TickClock:
    """What a session's ticks take around their solves, and the budget it leaves a solve."""

    def __init__(self):
        self.reading_ms = 0.0      # the last tick's ms before its solve
        self.finishing_ms = 0.0    # ... and from its solve's end to its own
        self.solved_at = None      # when the last solve ended (``time.perf_counter``)

    def solve_budget(self, budget, begun):
        """The ms a solve may take of the tick's ``budget`` (None: no budget) when the tick
        began at ``begun`` (``time.perf_counter``): what it took before the solve (or the last
        tick's, when that was less: a rig read again, a solver built or an obstacle query made
        is a tick's once, and is not taken from its solve) and what the last tick took after
        its solve come off; 0 leaves the one iteration a solve always makes."""
        reading = (perf_counter() - begun) * 1e3
        steady, self.reading_ms = min(reading, self.reading_ms), reading
        return None if budget is None else max(budget - steady - self.finishing_ms, 0.0)

    def solved(self):
        self.solved_at = perf_counter()

    def finished(self):
        """The tick ends: what it took after its solve is kept for the next one's budget."""
        if self.solved_at is not None:
            self.finishing_ms = (perf_counter() - self.solved_at) * 1e3
