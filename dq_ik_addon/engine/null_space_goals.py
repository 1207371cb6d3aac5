"""What a full step does with the freedom its task levels leave (``prioritized.NullSpaceGoal``).

- **Soft rows**: the components of their tails that some tasks leave free (``TaskKind.free_rows``:
  a foot on a floor plane, a hand on a line), kept where the solve started, as one more level
  below every task: every step holds them where they are, the full step also brings them back
  (``prioritized.NullSpaceGoal``), as a chord step does; a correction of the levels above one
  holds them (``held_rows``). On a frame change the start is the animated pose, so a foot on a
  floor follows the animation's path over it.
- **Rest pull** ``z = w · 2 log(q_pref ⊗ q*)`` in what the soft rows leave, ``w = rest_weight ·
  min(1, _PULL_FADE L / ‖e‖)``: it fades in as the tasks near their goals, so it cannot drag a
  chain back into the local minimum it is leaving (a knee bent backwards, say); slides are
  pulled to their preferred locations (``Slides.pull``). Baerlocher's "distance to the reference
  posture" criterion (thesis §4.7).
"""

import numpy as np

from .prioritized import NullSpaceGoal
from .quaternion import qcanonical, qconj, qlog, qmul

# The rest pull is at full weight once the task error is under this fraction of the chain size
_PULL_FADE = 0.05


def rest_pull(problem, rotations, preferred, levels):
    """The rest pull (module docstring) in the scaled joint columns, and the slides'; a step
    skips it at the preferred pose itself, where it is 0, and in corrections."""
    q = rotations.take(problem.joints, axis=0)
    pull = 2.0 * qlog(qcanonical(qmul(preferred.take(problem.joints, axis=0), qconj(q)))).ravel()
    remaining = np.sqrt(sum(float(err.dot(err)) for _, err in levels))
    weight = problem.settings.rest_weight * min(
        1.0, _PULL_FADE * problem.size / max(remaining, 1e-300))
    turning = pull.size
    return np.concatenate([weight * pull * problem.column_scale[:turning],
                           problem.slides.pull(rotations, preferred, weight)])


def null_space_goal(problem, world, frame, pull):
    """``(soft rows J_s in the scaled columns, or None; the full step's NullSpaceGoal, or
    None)`` at ``world`` (``frame``: its ``JointFrame``) with the rest ``pull`` (or None)."""
    stays = problem.tasks.stays(world, frame, problem.task_columns)
    if stays is None:
        return None, None if pull is None else NullSpaceGoal(None, pull)
    rows = stays[0] * problem.column_scale
    return rows, NullSpaceGoal((rows, stays[1]), pull)


def held_rows(problem, rows, world):
    """The ``NullSpaceGoal`` of the soft ``rows`` of the last full step with their errors at
    ``world`` (a chord step's, a correction's), or None when there are none."""
    return None if rows is None else NullSpaceGoal((rows, problem.tasks.stays(world)[1]))
