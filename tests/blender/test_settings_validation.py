"""Every setting a solve reads is checked: a NaN, infinite or out-of-range value (through a raw
ID property write, which no property range or callback sees), a swing/twist minimum above its
maximum, a zero or degenerate armature scale and a target at an infinite location are each
refused with a message naming the bone, the setting and the value, and the pose is left as it
was, bit for bit."""

import math
import re

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp

NAN, INF = float("nan"), float("inf")
_CHANNELS = (("rotation_quaternion", 4), ("rotation_euler", 3), ("rotation_axis_angle", 4),
             ("location", 3), ("scale", 3))


def _rig(dqik):
    """The basic metarig, renamed 'Rig', with a reachable task on hand.L (chain of 3), limits
    on its forearm and upper arm and self-collision on (so capsule radii are read), solved once
    so that its session is warm."""
    obj = rigs.metarig("basic")
    obj.name = "Rig"
    empty = sp.add_targets(obj, ["hand.L"], chain_count=3)["hand.L"]
    for name in ("forearm.L", "upper_arm.L"):
        obj.pose.bones[name].dqik.use_limits = True
    obj.dqik.use_self_collision = True
    empty.location = sp.world_tail(obj, "hand.L") + np.array([0.0, -0.05, 0.05])
    bpy.context.view_layer.update()
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    return obj, empty


def _pose_channels(obj):
    """Every pose channel as Blender stores it (float32), as bytes."""
    pose_bones = obj.pose.bones
    out = []
    for name, width in _CHANNELS:
        values = np.empty(len(pose_bones) * width, dtype=np.float32)
        pose_bones.foreach_get(name, values)
        out.append(values.tobytes())
    return out


def _bone_raw(bone, field, value):
    """Write a ``PoseBone.dqik`` setting as a raw ID property, then tell the session, as the
    README asks of scripts."""
    def write(obj, dqik, _empty):
        obj.pose.bones[bone].dqik[field] = value
        dqik.api.session_for(obj).invalidate()
    return write


def _armature_raw(field, value):
    """Write an ``Object.dqik`` setting as a raw ID property; the session notices by itself."""
    def write(obj, _dqik, _empty):
        obj.dqik[field] = value
    return write


def _scale(*scale):
    def write(obj, _dqik, _empty):
        obj.scale = scale
    return write


def _shear_to_flat(obj, _dqik, _empty):
    """Under a parent scaled 1e7 times along X, turned 45° about Z: the armature's world axes
    are millions of units long but lie within 2e-7 of one plane."""
    parent = bpy.data.objects.new("stretch", None)
    bpy.context.scene.collection.objects.link(parent)
    parent.scale = (1e7, 1.0, 1.0)
    obj.parent = parent
    obj.rotation_euler.z = math.pi / 4


def _target_at(value):
    def write(_obj, _dqik, empty):
        empty.location.x = value
    return write


_BONE = "'Rig' bone 'hand.L': "
_FOREARM = "'Rig' bone 'forearm.L': "
_UPPER_ARM = "'Rig' bone 'upper_arm.L': "
_LIMIT = "; give it a value from -180° to 0°"
CASES = [
    *[(f"weight={v}", _bone_raw("hand.L", "weight", v), f"{_BONE}Weight is {shown}; "
       "give it a finite value ≥ 0")
      for v, shown in ((NAN, "nan"), (INF, "inf"), (-INF, "-inf"), (-1.0, "-1"),
                       (3.4e38, "3.4e+38 (infinite)"))],
    ("priority=0", _bone_raw("hand.L", "priority", 0),
     f"{_BONE}Priority is 0; give it a whole number from 1 to 32"),
    ("priority=33", _bone_raw("hand.L", "priority", 33), f"{_BONE}Priority is 33"),
    ("chain_count=-1", _bone_raw("hand.L", "chain_count", -1),
     f"{_BONE}Chain Length is -1; give it a whole number from 0 to 255"),
    ("chain_count=256", _bone_raw("hand.L", "chain_count", 256), f"{_BONE}Chain Length is 256"),
    *[(f"stiffness={v}", _bone_raw("forearm.L", "stiffness", v),
       f"{_FOREARM}Stiffness is {shown}; give it a value from 0 to 1")
      for v, shown in ((NAN, "nan"), (-INF, "-inf"), (1.5, "1.5"), (-0.1, "-0.1"))],
    *[(f"{field}={v}", _bone_raw("forearm.L", field, v), f"{_FOREARM}{name} is {shown}")
      for field, name in (("swing_x_min", "Swing X Min"), ("swing_z_max", "Swing Z Max"),
                          ("twist_min", "Twist Min"), ("twist_max", "Twist Max"))
      for v, shown in ((NAN, "nan"), (INF, "inf"))],
    ("swing_x_min=0.5", _bone_raw("upper_arm.L", "swing_x_min", 0.5),
     f"{_UPPER_ARM}Swing X Min is 28.65° (0.5 rad){_LIMIT}"),
    ("twist_min=-4", _bone_raw("upper_arm.L", "twist_min", -4.0),
     f"{_UPPER_ARM}Twist Min is -229.2° (-4 rad){_LIMIT}"),
    ("swing_z_min>swing_z_max", lambda obj, dqik, empty: (
        _bone_raw("forearm.L", "swing_z_min", 0.5)(obj, dqik, empty),
        _bone_raw("forearm.L", "swing_z_max", -0.2)(obj, dqik, empty)),
     f"{_FOREARM}Swing Z Min, 28.65° (0.5 rad), is above Swing Z Max, -11.46° (-0.2 rad)"),
    *[(f"radius={v}", _bone_raw("upper_arm.L", "radius", v),
       f"{_UPPER_ARM}Radius is {shown}; give it a finite value ≥ 0")
      for v, shown in ((NAN, "nan"), (INF, "inf"), (-0.5, "-0.5"))],
    *[(f"{field}={v}", _armature_raw(field, v), f"'Rig': {name} is {shown}; give it {expected}")
      for field, name, expected in (("tolerance", "Tolerance", "a finite value ≥ 1e-09"),
                                    ("damping", "Damping", "a finite value ≥ 0"),
                                    ("margin", "Margin", "a finite value ≥ 0"),
                                    ("rest_weight", "Rest Pull", "a finite value ≥ 0"))
      for v, shown in ((NAN, "nan"), (INF, "inf"), (-INF, "-inf"), (-1.0, "-1"))],
    ("tolerance=0", _armature_raw("tolerance", 0.0), "'Rig': Tolerance is 0; give it a finite"),
    *[(f"balance_priority={v}", lambda obj, dqik, empty, v=v: (
        setattr(obj.dqik, "use_balance", True), _armature_raw("balance_priority", v)(obj, dqik,
                                                                                    empty)),
       f"'Rig': Balance Priority is {v}; give it a whole number from 1 to 32") for v in (-3, 1000)],
    ("max_iterations=0", _armature_raw("max_iterations", 0),
     "'Rig': Max Iterations is 0; give it a whole number from 1 to 100000"),
    ("max_iterations=-5", _armature_raw("max_iterations", -5), "'Rig': Max Iterations is -5"),
    *[(f"scale={scale}", _scale(*scale), "'Rig' has a zero or degenerate scale")
      for scale in ((0.0, 1.0, 1.0), (1.0, 1.0, 0.0), (0.0, 0.0, 0.0), (1e-8, 1.0, 1.0))],
    ("sheared flat", _shear_to_flat, "'Rig' has a zero or degenerate scale"),
    *[(f"target x={v}", _target_at(v), f"hand.L target location is not finite ({shown}); skipped")
      for v, shown in ((INF, "3.4e+38"), (-INF, "-3.4e+38"), (NAN, "nan"), (1e31, "1e+31"))],
]


@pytest.mark.parametrize("change, message", [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_a_bad_setting_is_refused_by_name_and_the_pose_is_left_as_it_was(
        clean_scene, dqik, change, message):
    obj, empty = _rig(dqik)
    before = _pose_channels(obj)
    change(obj, dqik, empty)
    bpy.context.view_layer.update()
    with pytest.raises(RuntimeError, match=re.escape(message)):
        bpy.ops.dqik.solve()
    assert _pose_channels(obj) == before
    assert dqik.api.session_for(obj).last_result.status == 'ERROR'


def test_build_chain_refuses_bad_task_settings_and_scale(clean_scene, dqik):
    obj, _empty = _rig(dqik)
    obj.pose.bones["hand.L"].dqik["weight"] = NAN
    with pytest.raises(RuntimeError, match=re.escape(f"{_BONE}Weight is nan")):
        bpy.ops.dqik.build_chain()
    obj.pose.bones["hand.L"].dqik["weight"] = 1.0
    obj.scale.y = 0.0
    with pytest.raises(RuntimeError, match="zero or degenerate scale"):
        bpy.ops.dqik.build_chain()


def test_a_target_at_infinity_is_skipped_with_a_warning(clean_scene, dqik, capfd):
    """Beside a task that can be solved, the one whose target is at inf (stored as 3.4e38) is
    skipped with a warning and its chain left alone."""
    obj, empty = _rig(dqik)
    far = sp.add_targets(obj, ["hand.R"], chain_count=3)["hand.R"]
    far.location = (INF, 0.0, 0.0)
    empty.location.z += 0.02
    bpy.context.view_layer.update()
    right_arm = [obj.pose.bones[name].rotation_quaternion.copy()
                 for name in ("hand.R", "forearm.R", "upper_arm.R")]
    capfd.readouterr()
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    out = capfd.readouterr()
    assert "hand.R target location is not finite (3.4e+38); skipped" in out.out + out.err
    snapshot = dqik.api.session_for(obj).last_result
    assert [(task.name, task.status) for task in snapshot.tasks] == [
        ("hand.L", 'MET'), ("hand.R", 'MISSING')]
    assert right_arm == [obj.pose.bones[name].rotation_quaternion
                         for name in ("hand.R", "forearm.R", "upper_arm.R")]


def test_a_non_finite_value_given_to_a_property(clean_scene, dqik):
    """Blender 5.0: the property keeps its value (``set_transform``); Blender 4.5, which has no
    such hook, stores NaN or 3.4e38 (inf) and the solve refuses it."""
    obj, _empty = _rig(dqik)
    settings = obj.pose.bones["hand.L"].dqik
    before = _pose_channels(obj)
    for value, shown in ((NAN, "nan"), (INF, "3.4e+38 (infinite)")):
        settings.weight = 2.0
        settings.weight = value
        if bpy.app.version >= (5, 0, 0):
            assert settings.weight == 2.0
            obj.dqik.tolerance = value
            assert obj.dqik.tolerance == pytest.approx(1e-5)
        else:
            with pytest.raises(RuntimeError, match=re.escape(f"{_BONE}Weight is {shown}")):
                bpy.ops.dqik.solve()
            assert _pose_channels(obj) == before
    settings.weight = 1.0
    assert bpy.ops.dqik.solve() == {'FINISHED'}


def test_a_disabled_limit_is_not_checked(clean_scene, dqik):
    """Limits of a bone with Limits off are not used, so not refused."""
    obj, _empty = _rig(dqik)
    obj.pose.bones["forearm.L"].dqik["swing_x_min"] = math.nan
    obj.pose.bones["forearm.L"].dqik.use_limits = False
    assert bpy.ops.dqik.solve() == {'FINISHED'}
