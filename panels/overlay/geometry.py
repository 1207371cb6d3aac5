"""The viewport overlay's shapes as line lists: plain numpy, no ``bpy`` or ``gpu``.

Every builder returns a ``(2k, 3)`` array of line-segment end points (``gpu`` ``'LINES'``:
vertices 2i and 2i + 1 make a segment), batched over bones; ``overlay_layers`` feeds them from
the armature and ``overlay_draw`` draws them.

Joint limits follow the README's limit semantics (Blender's ``q.to_swing_twist('Y')``): a bone's
rotation ``q = swing ⊗ twist`` is applied in its parent frame ``F`` (its rest frame under the
parent's pose); the swing is allowed iff ``(s_x/a)² + (s_z/b)² ≤ 1`` with ``s`` the swing's
exponential map, ``a = swing_x_max`` if ``s_x ≥ 0`` else ``−swing_x_min``, likewise ``b``;
the twist ``τ`` about local Y iff ``twist_min ≤ τ ≤ twist_max``.
"""

import numpy as np

from ...dq_ik_addon.engine import qrotate, quat_from_swing_twist, quat_to_matrix

# Segment counts: as few as keep the curves smooth at a bone's size on screen (each segment of a
# wide line costs the software rasterizer of a headless or VM session about 0.25 µs a redraw).
CONE_SEGMENTS = 48     # per swing boundary; a multiple of 4, so the four semi-axis ends are on it
ARC_SEGMENTS = 24      # per twist arc
CIRCLE_SEGMENTS = 16   # per capsule end ring; a multiple of 4 (the side lines start on it)
_Y = np.array([0.0, 1.0, 0.0])
_Z = np.array([0.0, 0.0, 1.0])


def closed_loops(points):
    """Segments joining each ``(m, k, 3)`` row of points into a closed loop."""
    return _pairs(points, np.roll(points, -1, axis=-2))


def open_polylines(points):
    """Segments joining each ``(m, k, 3)`` row of points, first to last."""
    return _pairs(points[..., :-1, :], points[..., 1:, :])


def segments(starts, ends):
    """Segments from each of the ``(m, 3)`` ``starts`` to the matching ``ends``."""
    return _pairs(starts, ends)


def _pairs(starts, ends):
    starts, ends = np.broadcast_arrays(starts, ends)
    return np.stack([starts, ends], axis=-2).reshape(-1, 3)


def orthonormal_frames(x_axes, y_axes):
    """``(m, 3, 3)`` rotation matrices whose columns are Gram–Schmidt's orthonormal axes of the
    ``(m, 3)`` axes given: ``y = y/‖y‖`` (a bone's axis keeps its direction), ``x`` made
    orthogonal to it and unit, ``z = x × y`` (right-handed). Strips the scale and shear of a
    pose matrix, and float32 round-off, from the axes a rotation acts in."""
    y = np.asarray(y_axes, dtype=float)
    y = y / np.linalg.norm(y, axis=-1, keepdims=True)
    x = np.asarray(x_axes, dtype=float)
    x = x - np.sum(x * y, axis=-1, keepdims=True) * y
    x = x / np.linalg.norm(x, axis=-1, keepdims=True)
    return np.stack([x, y, np.cross(x, y)], axis=-1)


def swing_boundary(ranges, count=CONE_SEGMENTS):
    """``(m, count, 2)`` swing exponential maps ``(s_x, s_z)`` on the edge of each bone's four
    quarter-ellipses: ``(a cos θ, b sin θ)`` for θ = 2πk/count, with the semi-axes of θ's
    quadrant, ``a = x_max`` (cos θ ≥ 0) or ``−x_min``, ``b = z_max`` (sin θ ≥ 0) or ``−z_min``;
    ``ranges`` is ``(m, 4)``: swing_x_min, swing_x_max, swing_z_min, swing_z_max. A zero bound
    (a locked half-axis) flattens its quarters onto the other axis."""
    theta = np.arange(count) * (2.0 * np.pi / count)
    cos, sin = np.cos(theta), np.sin(theta)
    ranges = np.asarray(ranges, dtype=float)[:, None, :]
    a = np.where(cos >= 0.0, ranges[..., 1], -ranges[..., 0])
    b = np.where(sin >= 0.0, ranges[..., 3], -ranges[..., 2])
    return np.stack([a * cos, b * sin], axis=-1)


def swing_directions(swings):
    """The bone's +Y axis after the swing ``exp((s_x, 0, s_z))``, in its parent frame:
    ``(..., 3)`` unit vectors for ``(..., 2)`` exponential maps."""
    swings = np.asarray(swings, dtype=float)
    quaternions = quat_from_swing_twist(swings[..., 0], swings[..., 1], 0.0)
    return qrotate(quaternions, np.broadcast_to(_Y, swings.shape[:-1] + (3,)))


def swing_cones(frames, heads, lengths, ranges, current):
    """``(cone, marker)`` line lists of the swing limits of m bones.

    ``cone``: the boundary of ``swing_boundary`` at the bone's length from its head, the point
    ``head + length · F · swing_directions(s)`` for each boundary ``s``, closed into a loop, and
    the four spokes from the head to the semi-axis ends. ``marker``: the current swing, from the
    head along ``F · swing_directions(current)`` (the bone's own Y axis) to 1.15 lengths, past
    the cone's edge. ``frames``: ``(m, 3, 3)`` parent frames ``F`` (columns: the axes the rotation
    is applied in); ``heads`` ``(m, 3)``; ``lengths`` ``(m,)``; ``ranges`` ``(m, 4)`` as
    ``swing_boundary``; ``current`` ``(m, 2)`` the bones' swing exponential maps."""
    frames = np.asarray(frames, dtype=float)
    heads = np.asarray(heads, dtype=float)
    lengths = np.asarray(lengths, dtype=float)
    rim = heads[:, None, :] + lengths[:, None, None] * _in_frames(
        frames, swing_directions(swing_boundary(ranges)))
    axis_ends = rim[:, ::CONE_SEGMENTS // 4]
    spokes = segments(heads[:, None, :], axis_ends)
    cone = np.concatenate([closed_loops(rim), spokes])
    pointing = _in_frames(frames, swing_directions(current)[:, None, :])[:, 0]
    marker = segments(heads, heads + 1.15 * lengths[:, None] * pointing)
    return cone, marker


def twist_frames(frames, current_swings):
    """``F · R(swing)``: each bone's parent frame turned by its current swing, the frame whose
    Y axis is the bone's and in which the twist turns the bone's Z axis about that Y axis."""
    turn = quat_from_swing_twist(current_swings[:, 0], current_swings[:, 1], 0.0)
    return frames @ quat_to_matrix(turn)


def twist_arcs(swung, centres, radii, twist_ranges, current, count=ARC_SEGMENTS):
    """``(arc, marker)`` line lists of the twist limits of m bones, drawn around each bone.

    A twist τ about the bone's Y axis takes its Z axis to ``G (sin τ, 0, cos τ)``, ``G`` =
    ``twist_frames``: the arc is that direction at ``radius`` from ``centre`` for τ from
    ``twist_min`` to ``twist_max`` (``twist_ranges`` ``(m, 2)``), with a radius to each end;
    ``marker`` the current twist ``current`` ``(m,)`` (the bone's own Z axis) at 1.25 radii."""
    angles = np.linspace(0.0, 1.0, count + 1)
    twist_ranges = np.asarray(twist_ranges, dtype=float)
    tau = twist_ranges[:, :1] + angles * (twist_ranges[:, 1:] - twist_ranges[:, :1])
    centres = np.asarray(centres, dtype=float)
    radii = np.asarray(radii, dtype=float)
    points = centres[:, None, :] + radii[:, None, None] * _turned_z(swung, tau)
    ends = points[:, [0, -1]]
    arc = np.concatenate([open_polylines(points),
                          segments(centres[:, None, :], ends)])
    now = _turned_z(swung, np.asarray(current, dtype=float)[:, None])[:, 0]
    return arc, segments(centres, centres + 1.25 * radii[:, None] * now)


def _turned_z(swung, tau):
    """``G (sin τ, 0, cos τ)`` for ``(m, k)`` angles: ``(m, k, 3)``."""
    local = np.stack([np.sin(tau), np.zeros_like(tau), np.cos(tau)], axis=-1)
    return _in_frames(swung, local)


def _in_frames(frames, local):
    """``(m, k, 3)`` vectors ``local`` (in each frame's axes) in the space of ``frames``
    ``(m, 3, 3)`` (columns: the axes): ``F v`` for every v."""
    return local @ frames.transpose(0, 2, 1)


def _capsule_template():
    """The wire of a capsule as ``(coefficients (V, 3), along (V,))``: each vertex is
    ``head + along · (tail − head) + radius · (c_x x + c_y y + c_z z)`` in the capsule's frame
    (y along the segment). Segments: a ring at each end, four lines along the sides and, per
    end, two half circles over the cap (in the xy and zy planes)."""
    ring = np.arange(CIRCLE_SEGMENTS) * (2.0 * np.pi / CIRCLE_SEGMENTS)
    circle = np.stack([np.cos(ring), np.zeros_like(ring), np.sin(ring)], axis=-1)
    half = np.linspace(0.0, np.pi, CIRCLE_SEGMENTS // 2 + 1)
    parts = []
    for along, outward in ((0.0, -1.0), (1.0, 1.0)):
        parts.append((closed_loops(circle[None]), along))
        for across in (np.array([1.0, 0.0, 0.0]), _Z):
            cap = np.cos(half)[:, None] * across + outward * np.sin(half)[:, None] * _Y
            parts.append((open_polylines(cap[None]), along))
    sides = circle[::CIRCLE_SEGMENTS // 4]
    side_lines = np.stack([sides, sides], axis=1).reshape(-1, 3)
    coefficients = np.concatenate([c for c, _ in parts] + [side_lines])
    along = np.concatenate([np.full(len(c), t) for c, t in parts]
                           + [np.tile([0.0, 1.0], len(sides))])
    return coefficients, along


_CAPSULE_COEFFICIENTS, _CAPSULE_ALONG = _capsule_template()
CAPSULE_VERTICES = len(_CAPSULE_ALONG)     # per capsule, in ``capsule_wires``' output


def capsule_wires(heads, tails, x_axes, radii):
    """Wire capsules around the segments ``heads → tails`` (``(m, 3)``) with ``radii`` (``(m,)``):
    ``_capsule_template`` in the ``orthonormal_frames`` of ``x_axes`` and ``tail − head``;
    every vertex lies at ``radius`` from its segment, ``CAPSULE_VERTICES`` per capsule."""
    heads = np.asarray(heads, dtype=float)
    axis = np.asarray(tails, dtype=float) - heads
    frames = orthonormal_frames(x_axes, axis)
    points = heads[:, None, :] + _CAPSULE_ALONG[:, None] * axis[:, None, :] \
        + np.asarray(radii, dtype=float)[:, None, None] * _in_frames(frames, _CAPSULE_COEFFICIENTS)
    return points.reshape(-1, 3)


def contact_marks(points, normals, size):
    """Each contact as a cross of three lines of ``size`` centred on its point and its normal,
    ``size`` · 2 long, from the point outwards."""
    points = np.asarray(points, dtype=float)
    return np.concatenate([segments(points, points + 2.0 * size * np.asarray(normals)),
                           crosses(points, size)])


def crosses(points, size):
    """A cross of three lines of ``size`` on each point (a task whose target is missing)."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    arms = 0.5 * size * np.eye(3)
    return segments((points[:, None, :] - arms).reshape(-1, 3),
                    (points[:, None, :] + arms).reshape(-1, 3))


def balance_marks(centre, polygon, size):
    """The balance layer: the support ``polygon`` (p,3) as a closed outline, a cross on the
    centre of mass ``centre`` (3,) and on its projection along the world's Z onto the polygon's
    plane, and the line between them."""
    centre, polygon = np.asarray(centre, dtype=float), np.asarray(polygon, dtype=float)
    ground = np.array([centre[0], centre[1], polygon[:, 2].mean()])
    outline = segments(polygon, np.roll(polygon, -1, axis=0)) if len(polygon) > 1 else \
        np.zeros((0, 3))
    return np.concatenate([outline, crosses(np.stack([centre, ground]), size),
                           segments(centre[None], ground[None])])
