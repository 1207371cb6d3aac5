"""Swing/twist decomposition ``q = swing ⊗ twist`` with the twist about local +Y (the bone axis).

This is Blender's ``Quaternion.to_swing_twist('Y')`` (``quat_split_swing_and_twist``): q is
canonicalized (w ≥ 0), so the twist angle τ lies in [−π, π] and ``q`` and ``−q`` decompose the
same way.  The swing has no Y component and ``w ≥ 0``, so its rotation vector has norm ≤ π.
"""

import numpy as np

from .quaternion import qcanonical, qmul, qnormalize, quat_from_rotvec, quat_to_rotvec


def swing_twist(q):
    """Return ``(swing (..., 4), tau (...))`` with ``q = ± swing ⊗ (cos τ/2, 0, sin τ/2, 0)``.

    With canonical ``q = (w, x, y, z)``: ``τ = 2 atan2(y, w)`` and, for ``c = cos τ/2``,
    ``s = sin τ/2``, ``swing = q ⊗ twist* = (c w + s y, c x + s z, 0, c z − s x)``
    (Bartelink Thm 4.5.1(b) and digest §6.3; Blender ``quat_split_swing_and_twist``; Kenwright
    eq. 33 corrected).  The swing's Y component is set to exactly 0.  At a swing of π
    (w = y = 0) τ = 0 and swing = q, as in Blender.
    """
    w, x, y, z = np.moveaxis(qcanonical(q), -1, 0)
    half = np.arctan2(y, w)
    c, s = np.cos(half), np.sin(half)
    swing = np.stack([c * w + s * y, c * x + s * z, np.zeros_like(w), c * z - s * x], axis=-1)
    return swing, 2.0 * half


def swing_twist_params(q):
    """``(s_x, s_z, τ)``: x and z of ``swing.to_exponential_map()`` and the twist angle (DESIGN.md §2).

    q is normalized first.  ``(s_x, 0, s_z)`` is the full-angle rotation vector of the swing
    (Baerlocher §3.5.4 option B, "direct rotation"; App. C corrected).
    """
    swing, tau = swing_twist(qnormalize(q))
    s = quat_to_rotvec(swing)
    return s[..., 0], s[..., 2], tau


def quat_from_swing_twist(s_x, s_z, tau):
    """Inverse of ``swing_twist_params``: ``q = exp((s_x, 0, s_z)/2) ⊗ (cos τ/2, 0, sin τ/2, 0)``.

    Round-trips for ``‖(s_x, s_z)‖ < π`` and ``τ ∈ [−π, π]``; the result has ``w ≥ 0``.
    """
    s_x, s_z, tau = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (s_x, s_z, tau)))
    swing = quat_from_rotvec(np.stack([s_x, np.zeros_like(s_x), s_z], axis=-1))
    half = 0.5 * tau
    zero = np.zeros_like(half)
    twist = np.stack([np.cos(half), zero, np.sin(half), zero], axis=-1)
    return qmul(swing, twist)
