"""Curve cleanup that keeps the targets: which baked keys may go.

Blender's own "Clean Curves" (``bpy_extras/anim_utils.py``, ``bake_action_iter`` with
``do_clean``) drops keys whose value a curve would have anyway, one curve at a time, with a
tolerance on the values: small errors in the rotations of a chain add up at its end, so a foot
that was planted slides. Here the keys of all cleaned curves are dropped together, at the same
frames, and only where the pose that Blender would play between the kept keys (each channel
interpolated linearly, as the baked keys are) keeps every task within the tolerance on every
frame it spans, and no limb deeper in a collider than the solve had it by more than the
tolerance; ``tolerable`` measures that, with the solve's own forward kinematics and contacts.

The search is Ramer–Douglas–Peucker's over time (Douglas & Peucker 1973, "Algorithms for the
reduction of the number of points required to represent a digitized line"): a span between two
kept keys is tried with linear interpolation; if a frame in it is out of tolerance, the worst
frame is kept and both halves are tried again. Each try is one batched call of ``tolerable``.
"""

import numpy as np


def kept_keys(frames, values, tolerable):
    """Indices of the keys to keep (sorted; the first and last always), of curves with values
    ``values`` (F, C) at ``frames`` (F,). ``tolerable(indices, interpolated)`` returns, for the
    frames ``indices`` and their interpolated values (m, C), each frame's error over its
    allowance: ≤ 1 where the interpolated pose is within tolerance."""
    frames = np.asarray(frames, dtype=np.float64)
    count = len(frames)
    keep = np.zeros(count, dtype=bool)
    keep[[0, count - 1]] = True
    spans = [(0, count - 1)]
    while spans:
        first, last = spans.pop()
        if last - first < 2:
            continue
        inner = np.arange(first + 1, last)
        t = ((frames[inner] - frames[first]) / (frames[last] - frames[first]))[:, None]
        interpolated = values[first] + (values[last] - values[first]) * t
        excess = np.asarray(tolerable(inner, interpolated))
        worst = int(np.argmax(excess))
        if excess[worst] > 1.0:
            middle = int(inner[worst])
            keep[middle] = True
            spans += [(first, middle), (middle, last)]
    return np.flatnonzero(keep)


class TaskTolerance:
    """``tolerable`` for ``kept_keys``: each frame's task errors and contact penetration, with
    the cleaned bones posed by interpolated channel values, over what the frame allows them.

    Poses are measured by the solver itself (``Solver.measure``), as it saw that frame
    (``states``, one ``SolveState`` per frame: each task batch's targets, Blender's evaluated
    parents, the obstacle query, since colliders may move or deform), from the sub-model's
    recorded rotations (every bone the solve reads) and the recorded locations of the bones it
    slides (``slid``, one (s,3) array per frame; the layout's ``'LOCATION'`` columns are theirs,
    in the order of ``Solver.slid_bones``); distances in the solver's units (armature
    space, ``Session.unit``). A task allows ``tolerance`` where the solve met it (its error
    within the solver's ``solver_tolerance``), else its solved error plus ``tolerance``: a
    reachable target stays within the tolerance and an unreachable one gets no more than that
    farther. Angular errors count as distances at the chain's size, as the solver weighs them.
    With contacts, the total depth by which the capsules sink past their clearance (the seats
    of that frame's targets included) may exceed the solved frame's by ``tolerance`` at most,
    so dropped keys never swing a limb through a collider the solve went around. The solver
    keeps the last frame's targets until its next ``retarget``."""

    def __init__(self, solver, recorded, slid, states, layout, to_quaternions, tolerance,
                 solver_tolerance):
        self.solver, self.recorded, self.slid, self.states = solver, recorded, slid, states
        self.layout, self.to_quaternions = layout, to_quaternions
        self.scale = solver.error_scale
        solved = np.array([self._errors(i, recorded[i], slid[i] if slid else None)
                           for i in range(len(recorded))])
        tasks = len(self.scale)
        self.allowed = np.where(solved <= solver_tolerance, tolerance, solved + tolerance)
        self.allowed[:, tasks:] = solved[:, tasks:] + tolerance

    def _errors(self, frame, rotations, slides):
        """Each task's error (distance units) at recorded frame ``frame`` posed by
        ``rotations`` (the sub-model's, (b,4)) and ``slides`` (the slid bones' locations, or
        None), then, with contacts, their penetration."""
        measured = self.solver.measure(rotations, state=self.states[frame], slides=slides)
        errors = measured.errors * self.scale
        return errors if measured.penetration is None else np.append(errors, measured.penetration)

    def __call__(self, indices, interpolated):
        excess = np.empty(len(indices))
        channels = [(mode == 'LOCATION', rows, values if mode == 'LOCATION' else
                     self.to_quaternions(mode, values))
                    for mode, columns, width, rows in self.layout
                    for values in [interpolated[:, columns].reshape(len(indices), -1, width)]]
        for k, frame in enumerate(indices.tolist()):
            rotations = self.recorded[frame].copy()
            slides = self.slid[frame].copy() if self.slid else None
            for located, rows, values in channels:
                (slides if located else rotations)[rows] = values[k]
            excess[k] = np.max(self._errors(frame, rotations, slides) / self.allowed[frame])
        return excess
