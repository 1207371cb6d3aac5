"""Targets that the solve itself moves (``dq_ik_addon/blender/settings/target_dependencies.py``): a target following a
bone the solve turns, directly, through other objects, through a constraint, as a subtarget bone
or through a deformed mesh's vertex, is named in a warning and its task is skipped; the others
are solved and a second solve changes nothing. A target following a bone the solve leaves alone
is reached."""

import importlib

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp

REACHED = 1e-4
LEFT_ARM = ("shoulder.L", "upper_arm.L", "forearm.L", "hand.L")


def _four_tasks(dqik):
    """The basic metarig with feet (priority 1) and hands (priority 2) on reachable targets
    (Blender's FK of a random pose), and its session."""
    obj = rigs.metarig("basic")
    (goal,) = sp.fk_targets(obj, dqik, 1, seed=7)
    empties = sp.add_targets(obj, sp.EFFECTORS)
    for name in sp.EFFECTORS:
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
    sp.place_targets(empties, goal)
    bpy.context.view_layer.update()
    return obj, empties, importlib.import_module(f"{dqik.__name__}.api").session_for(obj)


def _parent(child, parent, bone=""):
    """Parent ``child`` to ``parent`` (to its bone ``bone`` if given), keeping it in place."""
    world = child.matrix_world.copy()
    child.parent = parent
    if bone:
        child.parent_type, child.parent_bone = 'BONE', bone
    bpy.context.view_layer.update()
    child.matrix_world = world
    bpy.context.view_layer.update()


def _bone_parent(obj, empties):
    _parent(empties["hand.L"], obj, "forearm.L")
    return "its target 'target_hand.L' moves with bone 'forearm.L', which this solve moves"


def _through_an_empty(obj, empties):
    between = bpy.data.objects.new("Between", None)
    bpy.context.scene.collection.objects.link(between)
    _parent(between, obj, "forearm.L")
    _parent(empties["hand.L"], between)
    return "moves with bone 'forearm.L' (through 'Between'), which this solve moves"


def _child_of(obj, empties):
    constraint = empties["hand.L"].constraints.new('CHILD_OF')
    constraint.target, constraint.subtarget = obj, "forearm.L"
    return "moves with bone 'forearm.L' (through constraint 'Child Of'), which this solve moves"


def _subtarget_on_the_chain(obj, empties):
    obj.pose.bones["hand.L"].dqik.target = obj
    obj.pose.bones["hand.L"].dqik.subtarget = "forearm.L"
    return "hand.L: its target, bone 'forearm.L', is moved by this solve; skipped"


def _subtarget_the_effector_itself(obj, empties):
    obj.pose.bones["hand.L"].dqik.target = obj
    obj.pose.bones["hand.L"].dqik.subtarget = "hand.L"
    return "hand.L: its target, bone 'hand.L', is moved by this solve; skipped"


def _vertex_of_a_skinned_mesh(obj, empties):
    """A one-vertex mesh skinned to forearm.L by an Armature modifier, the target
    vertex-parented to it."""
    mesh = bpy.data.meshes.new("Skin")
    mesh.from_pydata([tuple(obj.matrix_world @ obj.pose.bones["forearm.L"].tail)], [], [])
    skin = bpy.data.objects.new("Skin", mesh)
    bpy.context.scene.collection.objects.link(skin)
    skin.vertex_groups.new(name="forearm.L").add([0], 1.0, 'REPLACE')
    skin.modifiers.new("Armature", 'ARMATURE').object = obj
    _parent(empties["hand.L"], skin)
    empties["hand.L"].parent_type, empties["hand.L"].parent_vertices = 'VERTEX', (0, 0, 0)
    return "moves with bone 'forearm.L' (through 'Skin'), which this solve moves"


@pytest.mark.parametrize("make_cycle", [_bone_parent, _through_an_empty, _child_of,
                                        _subtarget_on_the_chain, _subtarget_the_effector_itself,
                                        _vertex_of_a_skinned_mesh])
def test_a_target_the_solve_moves_is_named_and_skipped(clean_scene, dqik, make_cycle):
    obj, empties, session = _four_tasks(dqik)
    expected = make_cycle(obj, empties)
    bpy.context.view_layer.update()
    snapshot = session.tick()
    (warning,) = [w for w in snapshot.warnings if w.startswith("hand.L")]
    assert expected in warning and warning.endswith("; skipped")
    assert {t.name: t.status for t in snapshot.tasks} == {
        "hand.L": 'SKIPPED', "hand.R": 'MET', "foot.L": 'MET', "foot.R": 'MET'}
    assert "hand.L skipped" in snapshot.describe()
    assert all(obj.pose.bones[name].rotation_quaternion.angle == 0.0 for name in LEFT_ARM)
    others = {name: empties[name] for name in ("hand.R", "foot.L", "foot.R")}
    assert sp.effector_errors(obj, others).max() <= REACHED
    pose = rigs.pose_matrices(obj)
    again = session.tick()
    assert again.warnings == snapshot.warnings and again.iterations <= 1
    assert np.abs(rigs.pose_matrices(obj) - pose).max() <= 1e-6


def test_build_chain_warns_of_it_and_counts_the_tasks_left(clean_scene, dqik, capfd):
    obj, empties, _session = _four_tasks(dqik)
    _bone_parent(obj, empties)
    assert bpy.ops.dqik.build_chain() == {'FINISHED'}
    out = capfd.readouterr()
    report = out.out + out.err
    assert "hand.L: its target 'target_hand.L' moves with bone 'forearm.L'" in report
    assert "3 tasks" in report


def test_with_every_task_skipped_the_tick_fails_and_says_why(clean_scene, dqik):
    obj, empties, session = _four_tasks(dqik)
    for name in ("hand.R", "foot.L", "foot.R"):
        obj.pose.bones[name].dqik.use_target = False
    _bone_parent(obj, empties)
    api = importlib.import_module(f"{dqik.__name__}.api")
    with pytest.raises(api.ArmatureError, match="no bone with an enabled DQ IK target: "
                                                "hand.L: its target 'target_hand.L' moves"):
        session.tick()


def _short_arm_chains(obj, empties, chain_count, stiffness=0.0):
    """Feet and hand.R off; hand.L's target parented to shoulder.L, at hand.L's tail with the
    elbow bent (reachable by upper arm and forearm alone)."""
    for name in ("hand.R", "foot.L", "foot.R"):
        obj.pose.bones[name].dqik.use_target = False
    settings = obj.pose.bones["hand.L"].dqik
    settings.chain_count = chain_count
    obj.pose.bones["shoulder.L"].dqik.stiffness = stiffness
    sp.set_pose(obj, {"forearm.L": np.array([np.cos(0.3), np.sin(0.3), 0.0, 0.0])})
    empties["hand.L"].location = sp.world_tail(obj, "hand.L")
    sp.clear_pose(obj)
    _parent(empties["hand.L"], obj, "shoulder.L")


@pytest.mark.parametrize("chain_count, stiffness", [(3, 0.0), (4, 1.0)])
def test_a_target_on_a_bone_the_solve_leaves_alone_is_reached(clean_scene, dqik, chain_count,
                                                              stiffness):
    """Chain Length 3 stops below shoulder.L; with 4, a locked shoulder.L does not turn."""
    obj, empties, session = _four_tasks(dqik)
    _short_arm_chains(obj, empties, chain_count, stiffness)
    snapshot = session.tick()
    assert snapshot.warnings == () and snapshot.status == 'MET'
    assert sp.effector_errors(obj, {"hand.L": empties["hand.L"]}).max() <= REACHED


def test_the_same_target_with_a_chain_through_its_bone_is_skipped(clean_scene, dqik):
    obj, empties, session = _four_tasks(dqik)
    _short_arm_chains(obj, empties, chain_count=4)
    with pytest.raises(importlib.import_module(f"{dqik.__name__}.api").ArmatureError,
                       match="moves with bone 'shoulder.L', which this solve moves"):
        session.tick()
