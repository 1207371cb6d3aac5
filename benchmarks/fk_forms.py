"""The solver's forward kinematics in its two forms, 4×4 matrices (the engine's) and unit dual
quaternions (Kenwright eqs. 13, 15; Bartelink §5.1, Alg. 6), timed side by side on the engine
alone (figures and verdict: docs/fk_forms.md).

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/fk_forms.py fk problems.pkl
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/fk_forms.py solve problems.pkl 5

``fk``: one FK of all bones of the basic (29 bones) and human (159 bones) metarigs of the saved
problems, random rotations and the problems' locations: ``model.matrices`` against
``model.forward`` (the dual quaternions alone, the lower bound of the DQ form) and
``dq_to_matrix(model.forward(...))`` (what the solver would call, since tails, contacts and
errors read matrices). Microseconds, fastest of 7 runs of 2,000 calls.

``solve``: ``replay.py``'s warm solves of basic-root, human-root and basic-collision with the
solver's FK and joint frames in each form, the forms alternating for the given number of rounds
(fastest of 7 replays each). The DQ form replaces the problem's ``fk`` (``DualQuaternionFK``: the
moving part composed by ``ChainModel.forward``, each rigid bone ``D_a ⊗ (D_a* ⊗ D_i)`` on its
anchor, converted to matrices once per call) and ``joint_frames`` (``ScrewAxisFrames``:
joint j's Δθ_jk turns about the screw axis ``F̂_j ê_k F̂_j*`` = ``a_jk + ε c_j × a_jk`` of its
pre-rotation frame ``F̂_j = D̂_parent ⊗ L_j``, van den Bergen GDC 2015 "Déjà vu"; Bartelink
digest §4.6), so the Jacobians come from the DQ pose. Iteration counts must match; on the
Blender rigs the two differ by the float32 rest matrices' lack of rigidity (about 3e-6 m).
"""

import contextlib
import io
import os
import pickle
import sys
import timeit

import numpy as np

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__))]
import replay  # noqa: E402  (puts the repository on sys.path)

from dq_ik_addon.engine import ChainModel  # noqa: E402
from dq_ik_addon.engine import problem as problem_module  # noqa: E402
from dq_ik_addon.engine import solver as solver_module  # noqa: E402
from dq_ik_addon.engine.dual_quaternion import (  # noqa: E402
    dq_conj,
    dq_mul,
    dq_to_matrix,
    dq_translation,
)
from dq_ik_addon.engine.jacobian import JointFrames, turn_frame  # noqa: E402
from dq_ik_addon.engine.moving_joints_fk import GivenPose, MovingJointsFK  # noqa: E402
from dq_ik_addon.engine.quaternion import qmul, quat_to_matrix  # noqa: E402

SOLVES = ("basic-root", "human-root", "basic-collision")
KEPT_POSES = 16


class DualQuaternionFK(MovingJointsFK):
    """``MovingJointsFK`` in dual quaternions: returns the pose matrices the solver reads and
    keeps the last ``KEPT_POSES`` DQ poses by their matrices, for ``ScrewAxisFrames``."""

    def __init__(self, model, joints):
        super().__init__(model, joints)
        self.poses = []

    def start(self, rotations, given=None):
        self.given = given = GivenPose() if given is None else given
        pose = self.model.forward(rotations, given.locations)
        self.frames = (self.hung_rows, pose[self.hung])     # as dual quaternions
        self.riding_offsets = dq_mul(dq_conj(pose[self.anchors]), pose[self.riding])
        self.fixed_matrices = pose[self.fixed].copy()    # fixed poses, as dual quaternions
        return self._matrices(pose)

    def __call__(self, rotations):
        locations = self.given.locations
        pose = np.empty((len(self.model), 8))
        pose[self.moving] = self.part.forward(
            rotations.take(self.moving, axis=0),
            None if locations is None else locations.take(self.moving, axis=0),
            self.frames if self.hung.size else None)
        pose[self.fixed] = self.fixed_matrices
        pose[self.riding] = dq_mul(pose.take(self.anchors, axis=0), self.riding_offsets)
        return self._matrices(pose)

    def _matrices(self, pose):
        world = dq_to_matrix(pose)
        self.poses = [(world, pose)] + self.poses[:KEPT_POSES - 1]
        return world

    def pose_of(self, world):
        return next(pose for kept, pose in self.poses if kept is world)


class ScrewAxisFrames(JointFrames):
    """``JointFrames`` from the DQ pose: the axes ``a_jk = R(f_j) e_k`` of the screw axes, with
    ``f_j = Re(D̂_parent) ⊗ Re(L_j)``, and the heads ``c_j = vec(2 d_j r_j*)``."""

    def __init__(self, model, joints, fk):
        super().__init__(model, joints)
        self.fk = fk
        self.offset_rotations = model.rest_offset_dqs[self.joints, :4]

    def __call__(self, world):
        pose = self.fk.pose_of(world)
        parent = pose.take(self.parents, axis=0)[:, :4]
        parent[self.rooted] = [1.0, 0.0, 0.0, 0.0]
        axes = quat_to_matrix(qmul(parent, self.offset_rotations))
        heads = dq_translation(pose.take(self.joints, axis=0))
        return turn_frame(axes.transpose(1, 0, 2).reshape(3, 3 * self.joints.size),
                          heads.repeat(3, axis=0))


@contextlib.contextmanager
def dual_quaternion_form():
    """Solvers built in this context use the DQ form of the FK and joint frames: their
    ``Problem`` (the class the engine's ``solver`` module builds) is made with them."""
    class DualQuaternionProblem(problem_module.Problem):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.fk = DualQuaternionFK(self.model, self.joints)
            self.joint_frames = ScrewAxisFrames(self.model, self.joints, self.fk)

    solver_module.Problem = DualQuaternionProblem
    try:
        yield
    finally:
        solver_module.Problem = problem_module.Problem


def fk(path):
    with open(path, "rb") as handle:
        problems = pickle.load(handle)
    rng = np.random.default_rng(0)
    for name in ("basic-root", "human-root"):
        model = ChainModel(*problems[name]["model"])
        rotations = rng.normal(size=(len(model), 4))
        locations = problems[name]["locations"]

        def micros(call):
            return min(timeit.repeat(call, number=2000, repeat=7)) / 2000 * 1e6
        matrices = micros(lambda: model.matrices(rotations, locations))
        forward = micros(lambda: model.forward(rotations, locations))
        converted = micros(lambda: dq_to_matrix(model.forward(rotations, locations)))
        gap = np.abs(dq_to_matrix(model.forward(rotations, locations))
                     - model.matrices(rotations, locations)).max()
        print(f"{name.split('-')[0]} metarig, {len(model)} bones: matrices {matrices:.1f} µs, "
              f"dual quaternions {forward:.1f} µs, dual quaternions to matrices {converted:.1f} µs "
              f"(max difference {gap:.1e})")


def solve(path, rounds):
    for name in SOLVES:
        for label, adapt in (("matrices", contextlib.nullcontext), ("dual quaternions", dual_quaternion_form)) \
                * rounds:
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                best = min(replay.run(path, name, False, adapt) for _ in range(replay.TIMED_RUNS))
            iterations = printed.getvalue().splitlines()[0].split(", ")[1]
            print(f"{name}, {label}: {iterations}, fastest of {replay.TIMED_RUNS} replays "
                  f"{best * 1e3:.3f} ms per warm solve")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "fk":
        fk(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "solve":
        solve(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
    else:
        sys.exit(__doc__)
