"""A solve's settings, and the chain size L its lengths are fractions of."""

from dataclasses import dataclass

import numpy as np


@dataclass
class SolverSettings:
    """``tolerance`` in the model's units (metres for an unscaled armature), and in radians for
    each angular task's error unless ``angular_tolerance`` (radians) is given: a caller that
    scales ``tolerance`` into the units of a scaled armature keeps the angular one as it was;
    ``damping``, ``max_task_step`` and ``contact_band`` (how far beyond ``margin`` contacts are
    detected; as long as the largest task motion of one step, so that no step can jump over an
    obstacle unseen) are fractions of the chain size; ``margin`` (clearance from obstacles) in
    the model's units; ``max_joint_step`` in radians; ``time_budget_ms``: a solve stops after
    this long (None: no budget); ``soft_reach``: the fraction of a chain's reach (one that slides
    no bone) over which a target near or beyond it is eased in (``TaskSet.set_reach``; 0: none)."""

    max_iterations: int = 300
    tolerance: float = 1e-5
    damping: float = 0.05
    rest_weight: float = 0.1
    max_task_step: float = 0.25
    max_joint_step: float = 0.6
    time_budget_ms: float = None
    margin: float = 0.01
    contact_band: float = 0.25
    angular_tolerance: float = None
    soft_reach: float = 0.0

    def task_tolerance(self, angular):
        """The tolerance of a task's error: ``angular_tolerance`` (if given) for an angular one,
        else ``tolerance``; ``angular`` may be an array (task by task)."""
        angular_tolerance = self.tolerance if self.angular_tolerance is None \
            else self.angular_tolerance
        return np.where(angular, angular_tolerance, self.tolerance)


def chain_size(model):
    """L: the longest head-to-tail distance from a root, at rest (≥ 1 mm)."""
    heads = model.rest_matrices[:, :3, 3]
    tails = model.tails(model.rest_matrices)
    root_of = np.arange(len(model))
    for idx, parent_idx in model.levels:
        root_of[idx] = root_of[parent_idx]
    reach = np.linalg.norm(np.concatenate([heads, tails]) - np.concatenate([heads, heads])[
        np.concatenate([root_of, root_of])], axis=1)
    return max(float(reach.max(initial=0.0)), 1e-3)
