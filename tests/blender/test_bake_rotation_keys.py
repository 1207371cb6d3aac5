"""``dqik.bake``'s rotation keys: continuous in every rotation mode as mathutils makes them, and a
keyed rotation mode stopping the bake."""

import bakes
import numpy as np
import pytest
import rigs


def test_rotation_keys_are_continuous_in_every_mode_as_mathutils_makes_them(dqik):
    """A rotation turning past ±π about tilted axes: quaternion keys keep dot ≥ 0, Euler keys
    equal mathutils' ``to_euler(order, compat)`` chained frame to frame (no 2π jumps), axis-angle
    keys turn smoothly past π; each key still is the rotation it came from."""
    from mathutils import Euler, Quaternion
    rotation_keys = dqik.dq_ik_addon.blender.rig.rotation_modes
    angle = np.linspace(0.0, 3.5 * np.pi, 200)
    axis = np.array([0.3, 0.8, -0.5]) / np.linalg.norm([0.3, 0.8, -0.5])
    q = np.column_stack([np.cos(angle / 2), np.sin(angle / 2)[:, None] * axis])
    q[::3] *= -1.0                                         # sign flips, as a solver may give
    frames = q[:, None, :]
    quaternion = rotation_keys.channel_values(frames, 'QUATERNION', [[1.0, 0.0, 0.0, 0.0]])
    assert np.einsum("fki,fki->fk", quaternion[1:], quaternion[:-1]).min() >= 0.0
    for order in ('XYZ', 'ZXY', 'YZX'):
        euler = rotation_keys.channel_values(frames, order, [[0.0, 0.0, 0.0]])[:, 0]
        compat = Euler((0.0, 0.0, 0.0), order)
        for key, rotation in zip(euler, q):
            compat = Quaternion(rotation).to_euler(order, compat)
            assert np.abs(key - np.array(compat)).max() <= 1e-5     # mathutils: float32
        assert np.abs(np.diff(euler, axis=0)).max() <= 0.5
    axis_angle = rotation_keys.channel_values(frames, 'AXIS_ANGLE', [[0.0, 0.0, 1.0, 0.0]])[:, 0]
    assert np.abs(np.diff(axis_angle[:, 0])).max() <= 0.1
    back = [Quaternion(key[1:], key[0]) for key in axis_angle]
    assert max(abs(abs(b.dot(Quaternion(r))) - 1.0) for b, r in zip(back, q)) <= 1e-6


def test_axis_angle_keys_of_a_swing_through_rest_keep_their_axis(dqik):
    """A swing from -0.3 to +0.3 rad about X, through the rest pose: the axis stays +X and the
    angle goes through 0 (the unit axis flipped there with the angle ≥ 0, and two keys four
    frames apart played the swing as a hold and a snap)."""
    rotation_keys = dqik.dq_ik_addon.blender.rig.rotation_modes
    angle = np.linspace(-0.3, 0.3, 5)
    q = np.column_stack([np.cos(angle / 2), np.sin(angle / 2), np.zeros((5, 2))])[:, None, :]
    keys = rotation_keys.channel_values(q, 'AXIS_ANGLE', [[0.0, 0.0, 1.0, 0.0]])[:, 0]
    assert np.abs(keys[:, 1:] - keys[0, 1:]).max() <= 1e-12
    np.testing.assert_allclose(keys[:, 0] * np.sign(keys[0, 1]), angle, atol=1e-12)


def test_a_keyed_rotation_mode_stops_the_bake_changing_nothing(clean_scene, dqik):
    obj = rigs.metarig("basic")
    bakes.animated_targets(obj, frames=(1, 20))
    forearm = obj.pose.bones["forearm.L"]
    forearm.rotation_mode = 'QUATERNION'
    forearm.keyframe_insert("rotation_mode", frame=1)
    forearm.rotation_mode = 'XYZ'
    forearm.keyframe_insert("rotation_mode", frame=10)
    curves = len(list(bakes.fcurves(dqik, obj)))
    with pytest.raises(RuntimeError, match="rotation mode of forearm.L"):
        bakes.short_bake(obj, action='ACTIVE')
    assert len(list(bakes.fcurves(dqik, obj))) == curves
