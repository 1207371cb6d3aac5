"""The protocol every joint-limit kind implements, over the moving joints of a solve.

A limit kind is one module of this package. Its per-bone settings (one value per bone of the
model) have ``for_joints(bones, column_weights)``, which gives the solve's ``JointLimits`` over
the m joints it moves (``column_weights``: (m,) the stiffness weights √(1 − stiffness) of each
joint's Δθ columns). The solver asks it for:

- ``column_scale`` (m,3): each joint's Δθ column scales, the weights times the axes its limits
  leave free;
- ``rows(params, sens)``: the linear rows ``G Δθ ≤ r`` of the limited joints at the pose,
  ``(owner, gradient, rhs, equality)`` (``constraint_rows.ConstraintRows``' limit rows), and
  ``row_joint``, each row's joint;
- ``terms(q)`` / ``parameters(q)``: the joints' limit parameters p (m,3) with their sensitivity
  ``S = ∂p/∂Δθ`` (m,3,3), or p alone;
- ``project(q, params)``: rotations (m,4) brought inside the limits (q itself when inside);
- ``retraction(joints)``: ``retract(p) -> (q, p)`` for joints stepping in parameter space,
  ``p ← p + S Δθ``, which keeps a joint on the bound it rests on exactly;
- ``tracks_parameters(params)``: which joints' parameters can carry such a step;
- ``limited`` (m,): which joints have limits (the escapes turn the others towards rest);
- ``escape_start(q, moved, attempt)``: rotations (m,4) for the ``attempt``-th escape from a
  local minimum, the ``moved`` joints moved into their ranges;
- ``fold_start(q, folding)``: rotations (m,4) with the hinges and the joints resting on a bound
  moved ``folding`` (m,) in [0, 1] of a little way into their ranges, or None when none moves.
"""


class JointLimits:
    """Limits of the m moving joints of a solve (see the module docstring)."""

    column_scale = None
    row_joint = None
    limited = None

    def rows(self, params, sens):
        raise NotImplementedError

    def terms(self, q):
        raise NotImplementedError

    def parameters(self, q):
        raise NotImplementedError

    def project(self, q, params=None):
        raise NotImplementedError

    def retraction(self, joints):
        raise NotImplementedError

    def tracks_parameters(self, params):
        raise NotImplementedError

    def escape_start(self, q, moved, attempt):
        raise NotImplementedError

    def fold_start(self, q, folding):
        raise NotImplementedError
