"""``dqik.solve`` on random scenes, the way a user's script would drive it: every solve finishes,
writes finite channels in each bone's own rotation mode and keeps every limit.

Each scene: the basic metarig with the HUMANOID preset, every bone in a random rotation mode
(quaternion, the six Euler orders, axis-angle) and posed inside its limits, the armature object
moved, rotated and uniformly scaled, 1–4 targets with random priority, chain length, weight and
position/rotation switches, placed near or far (unreachable), sometimes a box collider at a target
bone and self-collision.
"""

import math

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from mathutils import Quaternion, Vector

_MODES = ('QUATERNION', 'XYZ', 'XZY', 'YXZ', 'YZX', 'ZXY', 'ZYX', 'AXIS_ANGLE')


def _pose_in_random_modes(obj, rng, dqik):
    pose = sp.random_pose_in_limits(obj, [pb.name for pb in obj.pose.bones], rng, dqik, 0.4)
    for pb in obj.pose.bones:
        pb.rotation_mode = _MODES[int(rng.integers(0, len(_MODES)))]
        q = Quaternion(pose[pb.name])
        if pb.rotation_mode == 'QUATERNION':
            pb.rotation_quaternion = q
        elif pb.rotation_mode == 'AXIS_ANGLE':
            axis, angle = q.to_axis_angle()
            pb.rotation_axis_angle = (angle, *axis)
        else:
            pb.rotation_euler = q.to_euler(pb.rotation_mode)


def _random_targets(obj, rng):
    names = [pb.name for pb in obj.pose.bones]
    chosen = [str(n) for n in rng.choice(names, size=int(rng.integers(1, 5)), replace=False)]
    for name, empty in sp.add_targets(obj, chosen).items():
        settings = obj.pose.bones[name].dqik
        settings.priority = int(rng.integers(1, 4))
        settings.chain_count = int(rng.integers(0, 5))
        settings.weight = float(rng.uniform(0.1, 2.0))
        settings.use_rotation = bool(rng.random() < 0.3)
        settings.use_position = bool(rng.random() < 0.9) or not settings.use_rotation
        offset = rng.normal(size=3) * rng.choice([0.05, 0.5, 3.0])
        empty.location = Vector(sp.world_tail(obj, name) + offset)
        empty.rotation_euler = rng.uniform(-3.0, 3.0, 3)
    return chosen


def _box_collider(obj, bone):
    collection = bpy.data.collections.new("Colliders")
    bpy.context.scene.collection.children.link(collection)
    mesh = bpy.data.meshes.new("box")
    corners = [(x, y, z) for x in (-0.15, 0.15) for y in (-0.15, 0.15) for z in (-0.15, 0.15)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(corners, [], faces)
    box = bpy.data.objects.new("box", mesh)
    collection.objects.link(box)
    box.location = obj.matrix_world @ obj.pose.bones[bone].tail
    obj.dqik.colliders = collection


def _worst_limit_violation(obj, dqik):
    limits_mod = dqik.dq_ik_addon.engine.limits
    worst = 0.0
    for pb in obj.pose.bones:
        channels = [*pb.rotation_quaternion, *pb.rotation_euler, *pb.rotation_axis_angle]
        assert all(math.isfinite(v) for v in channels), pb.name
        settings = pb.dqik
        if settings.use_limits:
            limits = limits_mod.SwingTwistLimits(
                *(np.array([getattr(settings, f)]) for f in sp.LIMIT_FIELDS), np.array([True]))
            q = np.array(pb.matrix_basis.to_quaternion())[None]
            worst = max(worst, float(limits_mod.limit_violation(q, limits)[0]))
    return worst


@pytest.mark.parametrize("seed", range(12))
def test_random_scenes_solve_and_keep_the_limits(clean_scene, dqik, seed):
    rng = np.random.default_rng(seed)
    obj = rigs.metarig("basic")
    assert bpy.ops.dqik.apply_preset(preset='HUMANOID') == {'FINISHED'}
    obj.location = rng.normal(size=3)
    obj.rotation_euler = rng.uniform(-3.0, 3.0, 3)
    obj.scale = (float(rng.uniform(0.3, 3.0)),) * 3
    _pose_in_random_modes(obj, rng, dqik)
    chosen = _random_targets(obj, rng)
    if rng.random() < 0.3:
        _box_collider(obj, chosen[0])
    obj.dqik.use_self_collision = bool(rng.random() < 0.2)
    bpy.context.view_layer.objects.active = obj
    bpy.context.view_layer.update()
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    bpy.context.view_layer.update()
    assert _worst_limit_violation(obj, dqik) <= 1e-5   # float32 pose channels
