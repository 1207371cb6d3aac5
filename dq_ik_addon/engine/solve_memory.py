"""What a solver remembers of its solves that never changes a result.

- ``same_pose``: two starts this close (``SAME_POSE`` in every quaternion component, about a
  float32 round trip through pose channels) are one start.
- ``ResultCache``: results by their exact inputs (the start, the targets, the given pose, the
  obstacle query), for solves that must be functions of their inputs alone (a frame of an
  animation: ``Solver.solve(remember=True)``). A solve is deterministic, so a hit returns what
  solving again would, with no iteration: a frame visited again (scrubbing back, a bake or a
  render after playback) costs nothing. At most ``SIZE`` results are kept, the oldest dropped
  first.
"""

import numpy as np

SAME_POSE = 1e-6
SIZE = 4096


def same_pose(a, b):
    """Rotations ``a`` and ``b`` agree within ``SAME_POSE`` in every quaternion component."""
    return bool(np.abs(a - b).max(initial=0.0) <= SAME_POSE)


class ResultCache:
    """Solve results by exact inputs (module docstring)."""

    def __init__(self):
        self._results = {}

    def get(self, key):
        return self._results.get(key)

    def put(self, key, result):
        if len(self._results) >= SIZE:
            del self._results[next(iter(self._results))]
        self._results[key] = result
