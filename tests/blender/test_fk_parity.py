"""Forward kinematics of the chain model equal Blender's PoseBone.matrix (≤ 1e-5, float32 data)."""

import math

import numpy as np
import pytest
import rigs

TOL = 1e-5


def _random_pose(obj, rng):
    """Random rotations (≤ 90°) on all bones; random locations on roots and disconnected bones."""
    pose_bones = obj.pose.bones
    n = len(pose_bones)
    rotations = rigs.random_quaternions(rng, n, math.pi / 2)
    locations = rng.uniform(-0.2, 0.2, size=(n, 3))
    for pb in pose_bones:
        pb.rotation_mode = 'QUATERNION'
    pose_bones.foreach_set("rotation_quaternion", rotations.ravel())
    pose_bones.foreach_set("location", locations.ravel())
    return rotations, locations


@pytest.mark.parametrize("kind, bones", [("basic", 29), ("human", 159)])
def test_metarig_fk_matches_blender(clean_scene, dqik, kind, bones):
    obj = rigs.metarig(kind)
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
    assert len(model) == bones
    rng = np.random.default_rng(7)
    for _ in range(20):
        rotations, locations = _random_pose(obj, rng)
        expected = rigs.pose_matrices(obj)
        got = model.matrices(rotations, locations)
        assert np.abs(got - expected).max() <= TOL
        dq = model.forward(rotations, locations)
        assert np.abs(dqik.dq_ik_addon.engine.dual_quaternion.dq_to_matrix(dq) - got).max() <= TOL  # rest matrices are float32, DQs rigid


def test_awkward_rig_fk_matches_blender(clean_scene, dqik):
    obj = rigs.awkward_rig()
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
    assert int((model.parents < 0).sum()) == 2
    assert model.connected.tolist() == [obj.data.bones[name].use_connect for name in model.names]
    rng = np.random.default_rng(11)
    for _ in range(20):
        rotations, locations = _random_pose(obj, rng)
        assert np.abs(model.matrices(rotations, locations) - rigs.pose_matrices(obj)).max() <= TOL


def test_every_bone_flag_and_pose_scale_matches_blender(clean_scene, dqik):
    """Issue 16: inherit rotation off, local location off, every inherit scale mode, connected
    and offset bones, non-uniform pose scale on every bone (Blender's parent transform,
    ``bone_parent_transform``), on a 0.01-scaled armature turned 90° about X."""
    rng = np.random.default_rng(16)
    obj = rigs.flag_rig(rng)
    model = dqik.dq_ik_addon.blender.rig.model_reader.read_model(obj)
    assert not model.plain
    pose_bones = obj.pose.bones
    for _ in range(20):
        rotations, locations = _random_pose(obj, rng)
        scales = rng.uniform(0.5, 1.6, size=(len(pose_bones), 3))
        pose_bones.foreach_set("scale", scales.ravel())
        got = model.matrices(rotations, locations, scales)
        assert np.abs(got - rigs.pose_matrices(obj)).max() <= TOL


@pytest.mark.parametrize("mode", ['XYZ', 'XZY', 'YXZ', 'YZX', 'ZXY', 'ZYX', 'AXIS_ANGLE'])
def test_every_rotation_mode_is_read_and_written_back(clean_scene, dqik, mode):
    obj = rigs.awkward_rig()
    rig = dqik.dq_ik_addon.blender.rig
    model = rig.model_reader.read_model(obj)
    rng = np.random.default_rng(3)
    for pb in obj.pose.bones:
        pb.rotation_mode = mode
        if mode == 'AXIS_ANGLE':
            axis = rng.normal(size=3)
            pb.rotation_axis_angle = (rng.uniform(-2, 2), *(axis / np.linalg.norm(axis)))
        else:
            pb.rotation_euler = rng.uniform(-1.5, 1.5, size=3)
    expected = rigs.pose_matrices(obj)
    pose = rig.pose.PoseArrays(obj)
    assert np.abs(model.matrices(pose.rotations(), pose.location) - expected).max() <= TOL

    target = rigs.random_quaternions(rng, len(model), math.pi / 2)
    pose.set_rotations(target)
    pose.write(obj)
    assert np.abs(rigs.pose_matrices(obj) - model.matrices(target, pose.location)).max() <= TOL
