"""Balance: the body's centre of mass kept over its support polygon (Baerlocher's BALANCE tool,
thesis §4.5 and §7.2–7.3).

A ``Body`` gives every bone a mass m_i, taken at the midpoint of its head and tail, and marks the
bones that carry the weight (a foot and its toe). The centre of mass is

    G = Σ_i w_i (h_i + t_i)/2,        w_i = m_i / Σ m,

and its Jacobian, the kinetic Jacobian ``J_G`` (§4.5), has for each column c of a joint j (a
turn or a slide, ``jacobian.JointFrames``' Plücker columns ``∂p/∂y_c = ω_c × p − m_c``) the
joint's upper-body mass fraction ``s_j = Σ_{i carried by j} w_i`` times the derivative of that
upper body's centre of mass ``G_j = Σ_{i carried by j} w_i p_i / s_j``:

    ∂G/∂y_c = s_j (ω_c × G_j − m_c) = ω_c × S_j − s_j m_c,        S_j = Σ_{i carried by j} w_i p_i.

The support polygon is the convex hull of the supporting bones' heads and tails projected on the
ground plane (normal: the task's target, the world's up in armature space). Balance is an
inequality (§7.3): while G's projection lies inside the polygon by more than the ``band`` the
task has no rows, and nothing holds the body; within the band, or outside, its one row along the
nearest edge's outward normal n holds it, with the error ``−max(d, 0) n`` (d: the projection's
signed distance from the polygon, positive outside), so the lower levels can move the centre of
mass anywhere inside but not across the boundary. The polygon moves with its supports (a foot
sliding on a floor plane, ``AxesPosition``): with q the boundary point nearest to G's projection,
a blend ``(1 − t) a + t b`` of two supporting bones' ends, the row is the derivative of
``d = n·(G − q)``, ``nᵀ (J_G − (1 − t) J_a − t J_b)`` (``jacobian.task_jacobian`` for the ends).

A step solved with no row, deeper inside than the band, may still carry G across the boundary
(an arm pulled back, the hips with it): to first order it moves G to ``G' = G + J_G Δ``. When
``G'`` lands outside, the step is solved again with the row armed for it (``arm``): along the
outward direction ``n'`` from the boundary point ``q`` nearest to ``G'`` (``G' − q = d' n'``),
with the error ``room · n'``, ``room = (G' − G)·n' − d'`` (how far G is from the polygon's
supporting line through q: the edge's line when q is on an edge), so that the step takes G to
that line and no further: the primal active-set rule for this
one inequality (Nocedal & Wright §16.5), at the task's own priority. Without it the line search
halves such a step until G stays inside, and the lower levels barely move. Held on one edge, G
may still slide along it past a corner and out across the next edge: that edge is armed the
same way beside the held one (two rows, given in the ground plane's orthonormal basis, so the
least squares are theirs); one row alone let a reach lean G out of the corner by 0.1 m, every
shorter step worse at Balance's priority, and the solve stopped with a hand 0.75 m short.
"""

from dataclasses import dataclass

import numpy as np

from ..jacobian import cross_rows, second_order_motion, step_slides, step_turns, task_jacobian
from ..kept_rotations import KeptColumns
from ..quaternion import row_dots
from .ground_polygon import convex_hull, nearest_boundary, plane_basis
from .kind import TaskKind


@dataclass(frozen=True)
class Body:
    """The masses (n,) of a model's bones and its supporting bones (n,) bool, and the ``band``
    (model units) within which the boundary holds."""

    masses: np.ndarray
    supports: np.ndarray
    band: float = 1e-3

    def take(self, bones):
        """The body of the sub-model of ``bones``."""
        return Body(np.asarray(self.masses, float)[bones], np.asarray(self.supports, bool)[bones],
                    self.band)

    def massive(self):
        """The bones with mass."""
        return np.flatnonzero(np.asarray(self.masses) > 0.0)


def center_of_mass(world, lengths, masses):
    """G (3,) of the pose matrices ``world`` (n,4,4) with the bones' ``lengths`` and ``masses``."""
    weights = np.asarray(masses, float) / max(float(np.sum(masses)), 1e-300)
    return weights.dot(_midpoints(world, lengths))


_SAME_EDGE = 1.0 - 1e-6     # an armed direction this close to the held edge's is that edge


class Balance(TaskKind):
    """Centres of mass over support polygons; targets: the up direction (k,3); each task's
    ``Body`` is in ``bodies`` (set by the task set). Rows in metres."""

    planes = None   # each ground plane's basis (``set_targets``)

    def bind(self, model, columns, moves, keepers):
        """Take what the Jacobian needs of the solve: per body, its bones with mass and their
        lengths and mass fractions, its supporting bones, and per column joint (``columns``:
        ``Problem.column_joints``) the fractions of those bones it carries (``moves``: the
        model's ``descendants_mask``), less what the ``keepers`` the FK turns take back."""
        self.parts = []
        # keepers: the share of each one's lever each column loses (``KeptColumns``), and the
        # mass fractions it carries (per body)
        kept = KeptColumns(model, columns, moves, keepers)
        for body in self.bodies:
            massive = body.massive()
            weights = np.asarray(body.masses, float)[massive]
            weights = weights / max(float(weights.sum()), 1e-300)
            carried = moves[np.ix_(columns, massive)] * weights          # (M, massive)
            supports = np.flatnonzero(body.supports)
            ends_moved = np.repeat(np.tile(moves[np.ix_(columns, supports)].T, (2, 1)), 3,
                                   axis=1)                     # (2S, 3M): heads, then tails
            self.parts.append((massive, model.lengths[massive], weights, carried,
                               np.repeat(carried.sum(axis=1), 3), supports,
                               model.lengths[body.supports], ends_moved, kept.keepers,
                               kept.shares, moves[np.ix_(kept.keepers, massive)] * weights))
        self._geometry_of = self._jacobians_of = (None, None)
        self.armed = {}     # task: (n', room) of the step being solved again (``arm``)

    def set_targets(self, targets):
        """New up directions, and with them each ground plane's basis ``(u, v)`` (3,2); the same
        ones keep what was measured on them (a live tick's new hand targets: its first measure
        is the pose the last tick ended at)."""
        if self.planes is not None and np.array_equal(targets, self.targets):
            return
        super().set_targets(targets)
        self.planes = [plane_basis(up) for up in self.targets]
        self._geometry_of = (None, None)     # measured on the old planes

    def _geometry(self, effectors):
        """Per task ``(active, n, d, mids, ground, polygon, ends, blend)`` at the pose (cached
        per pose): its bones' midpoints, G and the support polygon on the ground plane (``(u,
        v)`` coordinates; None without supports), the supports' heads then tails (2S,3) and
        the weights (2S,) of the boundary point nearest to G among them (module docstring)."""
        world = effectors.world
        if self._geometry_of[0] is world:
            return self._geometry_of[1]
        rows = []
        for (massive, lengths, weights, _, _, supports, support_lengths, *_), body, plane in zip(
                self.parts, self.bodies, self.planes):
            mids = _midpoints(world.take(massive, axis=0), lengths)
            if not supports.size:       # nothing to stand on: never active
                rows.append((False, np.zeros(3), -np.inf, mids, None, None, None, None))
                continue
            heads = world[supports, :3, 3]
            ends = np.concatenate([heads, heads + support_lengths[:, None] * world[supports, :3, 1]])
            flat = ends.dot(plane)
            hull = convex_hull(flat)
            ground, polygon = weights.dot(mids).dot(plane), flat[hull]
            d, n, k, t = nearest_boundary(ground, polygon)
            blend = np.zeros(len(ends))
            blend[hull[k]] += 1.0 - t
            blend[hull[(k + 1) % len(hull)]] += t
            rows.append((d > -body.band, plane.dot(n), d, mids, ground, polygon, ends, blend))
        self._geometry_of = (world, rows)
        return rows

    def holds(self, effectors):
        """Within twice the band of the boundary (where a descent along it settles)."""
        return any(row[2] > -2.0 * body.band
                   for row, body in zip(self._geometry(effectors), self.bodies))

    def _held(self, k, row):
        """The rows task ``k`` holds (``row``: its ``_geometry``), ``(n, error, blend)`` each:
        its edge's while active, an armed one's (``arm``), or both, at a corner; and the basis
        (3, r) they are given in: along n for one, the ground plane's (orthonormal, so the
        least squares are the two rows') for two."""
        active, n, d, *_, blend = row
        held = ([(n, -max(d, 0.0), blend)] if active else []) + \
            ([self.armed[k]] if k in self.armed else [])
        if len(held) == 2:      # (n, n⊥): a pose's own error −d n is the held row's alone
            along = self.planes[k].T.dot(n)
            return held, np.stack([n, self.planes[k].dot([-along[1], along[0]])], axis=1)
        return held, np.array([h[0] for h in held]).T

    def errors(self, effectors):
        out = np.zeros((len(self.bodies), 3))
        for k, row in enumerate(self._geometry(effectors)):
            held, basis = self._held(k, row)
            if held:
                out[k] = basis.dot([error for _, error, _ in held])
        return out

    def _jacobians(self, frame, k, row, part):
        """``(J_Gᵀ, the supports' ends' Jacobians)`` of task ``k`` at ``frame`` (its ``row`` of
        ``_geometry``), kept for the frame: ``jacobian`` and ``arm`` read them at one pose."""
        if self._jacobians_of[0] is not frame:
            self._jacobians_of = (frame, {})
        made = self._jacobians_of[1]
        if k not in made:
            made[k] = (_kinetic_jacobian(frame, self._carried(row[3], part), part),
                       _ends_jacobian(frame, row[6], part))
        return made[k]

    def _carried(self, mids, part):
        """``S_j = Σ w_i p_i`` (M,3) over the bones each column joint carries (their ``mids``),
        less per keeper k ``Σ_i w_i (p_i − h_k)`` over the bones k carries: a joint between k's
        source and k carries them by k's head h_k, turning them by (1 − w_k) of its turn only."""
        sums = part[3].dot(mids)
        keepers, shares, under = part[8:]
        if keepers.size:
            lever = under.dot(mids) - under.sum(axis=1)[:, None] * \
                self._geometry_of[0][keepers, :3, 3]
            sums = sums - shares.dot(lever)
        return sums

    def second_order(self, motion, effectors, errors):
        """The held rows' second-order change (``jacobian.second_order_motion``): the centre of
        mass's ``s_G = Σ_j W_j × (v_j × (S_j − s_j c_j))`` less the boundary point's (of the
        supports' ends it blends), along each held normal; the edge's own turn is left out (the
        tasks above hold the supports). Every point joint j carries sees the same ``W_j = ½ v_j
        + Σ_{i<j} v_i``, so the sum over the bones collapses onto J_G's ``S_j``, ``s_j``; a
        slide ``w_j`` adds ``Σ_{i<j} v_i × s_j w_j``."""
        frame, delta = motion.frame, motion.delta
        out = np.zeros((len(self.bodies), 3))
        turns = step_turns(frame, delta)                                # v_j (M,3)
        for k, (row, part) in enumerate(zip(self._geometry(effectors), self.parts)):
            held, basis = self._held(k, row)
            if not held:
                continue
            ancestors = motion.ancestors[k]
            above = ancestors.dot(turns)                                # Σ_{i<j} v_i (M,3)
            lever = above + 0.5 * turns
            arms = self._carried(row[3], part) - part[4][::3, None] * frame.heads[::3]
            s_g = turns.T.dot(row_dots(lever, arms)) - arms.T.dot(row_dots(lever, turns))
            if frame.slides:
                first = len(delta) - frame.slides
                s_g = s_g + cross_rows(above[first:], step_slides(frame, delta)
                                       * part[4][3 * first::3, None]).sum(axis=0)
            along = []
            for n, _, blend in held:
                ends = np.flatnonzero(blend)
                chain = part[7][ends, ::3].astype(float)
                s_q = blend[ends].dot(second_order_motion(
                    frame, row[6][ends], delta, chain,
                    ancestors[None] * chain[:, :, None] * chain[:, None, :])[0]) \
                    if ends.size else 0.0
                along.append(n.dot(s_g - s_q))
            out[k] = basis.dot(along)
        return out

    def jacobian(self, frame, effectors, mask):
        rows = self._geometry(effectors)
        out = np.zeros((len(rows), 3, frame.axes.shape[1]))
        for k, (row, part) in enumerate(zip(rows, self.parts)):
            held, basis = self._held(k, row)
            if held:
                kinetic, ends = self._jacobians(frame, k, row, part)
                along = [kinetic.dot(n) - blend.dot(n.dot(ends)) for n, _, blend in held]
                out[k] = basis.dot(np.array(along) * mask[k])
        return out

    def arm(self, frame, effectors, delta):
        """Arm the rows of the bodies whose centre of mass the joint step ``delta`` (3M,) takes
        outside to first order (module docstring): from inside beyond the band, or, held on an
        edge, across another one (past a corner); True when any is."""
        self.armed = {}
        for k, ((active, n, _, mids, ground, polygon, ends, held_blend), part, plane) in enumerate(
                zip(self._geometry(effectors), self.parts, self.planes)):
            if polygon is None:
                continue
            kinetic, ends_jacobian = self._jacobians(frame, k, (None, None, None, mids, None, None,
                                                                ends), part)
            moved = delta.dot(kinetic).dot(plane)
            ends_moved = ends_jacobian.dot(delta).dot(plane)
            flat = ends.dot(plane) + ends_moved
            hull = convex_hull(flat)
            beyond, outward, edge, t = nearest_boundary(ground + moved, flat[hull])
            blend = np.zeros(len(ends))
            blend[hull[edge]] += 1.0 - t
            blend[hull[(edge + 1) % len(hull)]] += t
            same = active and (plane.dot(outward).dot(n) > _SAME_EDGE or (
                np.count_nonzero(blend) == 2 and
                np.array_equal(np.flatnonzero(blend), np.flatnonzero(held_blend))))
            if beyond > 0.0 and not same:
                carried = blend.dot(ends_moved)     # the boundary point's own motion
                self.armed[k] = (plane.dot(outward),
                                 float((moved - carried).dot(outward)) - beyond, blend)
        return bool(self.armed)

    def disarm(self):
        self.armed = {}


def _kinetic_jacobian(frame, sums, part):
    """``J_G`` transposed (3M,3) of the joints' ``S_j`` ``sums`` (M,3, ``Balance._carried``;
    module docstring): ``ω_c × S_j − s_j m_c`` per column."""
    sums = np.repeat(sums, 3, axis=0)       # S_j per column (3M,3)
    return cross_rows(frame.axes.T, sums) - part[4][:, None] * frame.moments


def _ends_jacobian(frame, ends, part):
    """The supports' ends' position Jacobians (2S,3,3M) at the pose (``part[7]``: the columns
    that move each)."""
    return task_jacobian(frame, ends, part[7], orientation=False)[0]


def _midpoints(frames, lengths):
    """Each bone's midpoint (k,3), halfway from its head to its tail, of its pose matrix and
    length."""
    return frames[:, :3, 3] + (0.5 * lengths)[:, None] * frames[:, :3, 1]

