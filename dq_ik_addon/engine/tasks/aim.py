"""Aim (look-at) task: a bone axis, from the bone's head, pointing at a target point.

With the bone's world rotation R, its chosen local axis a (``Task.options``, unit; +Y points along
the bone, as Blender's Damped Track ``TRACK_Y``), ``u = R a``, the head h and the direction to
the target ``d = (t − h)/‖t − h‖``, the error is the rotation vector that turns u onto d:

    e = θ (u × d)/‖u × d‖,    θ = atan2(‖u × d‖, u · d)

(any axis normal to u when d = −u; 0 when the target sits on the head). A joint step turns u by
``ω = J_ω Δθ`` (the axes a_jk, Baerlocher Table 4.1) and moves the head by ``J_h Δθ``, which turns
d by ``−d × J_h Δθ / ‖t − h‖``. Neither turn about u changes the aim, so to first order

    e(Δθ) = e − P_u (J_ω + [d]× J_h / ‖t − h‖) Δθ,     P_u = I − u uᵀ

(the look-at orientation task of Baerlocher §4.5.2, with the head's motion included). Rows in radians.
"""

import numpy as np

from ..jacobian import task_jacobian, turn_jacobian
from ..quaternion import row_dots
from .kind import TaskKind

_PARALLEL = 1e-12   # ‖u × d‖ below which u and d are taken as parallel


class Aim(TaskKind):
    """Bone axes (``options``: (k,3) local unit axes) towards target points (k,3)."""

    angular = True

    def __init__(self, targets, options):
        super().__init__(targets, options)
        axes = np.asarray(options, dtype=np.float64).reshape(-1, 3)
        self.axes = axes / np.linalg.norm(axes, axis=1, keepdims=True)
        # a unit vector normal to each axis: the turn's axis when the target lies straight behind
        self.normals = np.cross(self.axes, np.eye(3)[np.argmin(np.abs(self.axes), axis=1)])
        self.normals /= np.linalg.norm(self.normals, axis=1, keepdims=True)

    def _geometry(self, effectors):
        """``(u, d, distance, rotations, heads)`` of the batch at the pose."""
        frames = effectors.frames()
        rotations, heads = frames[:, :3, :3], frames[:, :3, 3]
        u = np.matmul(rotations, self.axes[:, :, None])[:, :, 0]
        to_target = self.targets - heads
        distance = np.sqrt(row_dots(to_target, to_target))
        d = to_target / np.where(distance > 0.0, distance, 1.0)[:, None]
        return u, d, distance, rotations, heads

    def errors(self, effectors):
        u, d, distance, rotations, _ = self._geometry(effectors)
        turn = np.cross(u, d)
        sine = np.sqrt(row_dots(turn, turn))
        angle = np.arctan2(sine, row_dots(u, d))
        behind = sine <= _PARALLEL
        world_normals = np.matmul(rotations, self.normals[:, :, None])[:, :, 0]
        axis = np.where(behind[:, None], world_normals, turn / np.where(behind, 1.0, sine)[:, None])
        return np.where((distance > 0.0)[:, None], axis * angle[:, None], 0.0)

    def jacobian(self, frame, effectors, mask):
        u, d, distance, _, heads = self._geometry(effectors)
        kept = self.kept(effectors)
        turning = turn_jacobian(frame, mask, kept)                               # J_ω (k,3,3m)
        head_motion = task_jacobian(frame, heads, mask, False, kept)[0]      # J_h (k,3,3m)
        inverse = np.where(distance > 0.0, 1.0 / np.where(distance > 0.0, distance, 1.0), 0.0)
        d_cross = np.cross(d[:, :, None], head_motion, axis=1) * inverse[:, None, None]
        total = turning + d_cross
        return total - u[:, :, None] * np.einsum('ki,kic->kc', u, total)[:, None, :]
