"""The solving session per armature, through the scripting module ``api``: reuse across ticks,
what makes it rebuild, when it is dropped, its snapshot; operator polls; overridable settings."""

import importlib
import math
import re

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from mathutils import Quaternion

REACHED = 1e-4


def _api(dqik):
    """``bl_ext.<repo>.dq_ik.api``, imported as a script would."""
    return importlib.import_module(f"{dqik.__name__}.api")


def _arm(clean_scene, dqik):
    """The basic metarig with a reachable target on hand.L (chain of 3: where the hand is with
    the elbow bent) and its session."""
    obj = rigs.metarig("basic")
    empties = sp.add_targets(obj, ["hand.L"], chain_count=3)
    sp.set_pose(obj, {"forearm.L": Quaternion((1.0, 0.0, 0.0), 0.5)})
    empties["hand.L"].location = sp.world_tail(obj, "hand.L")
    sp.clear_pose(obj)
    return obj, empties["hand.L"], _api(dqik).session_for(obj)


def _forearm_turn(obj):
    return obj.pose.bones["forearm.L"].rotation_quaternion.angle


def test_ticks_reuse_the_warm_solver_and_report_each_task(clean_scene, dqik):
    obj, empty, session = _arm(clean_scene, dqik)
    snapshot = session.tick()
    solver = session.solver
    assert session.last_result is snapshot and snapshot.status == 'MET' and snapshot.converged
    (task,) = snapshot.tasks
    assert (task.name, task.status) == ("hand.L", 'MET') and task.position_error <= REACHED
    assert snapshot.contacts is None and snapshot.ms > 0.0
    empty.location.z += 0.02
    bpy.context.view_layer.update()
    assert session.tick().status == 'MET'
    assert session.solver is solver and _api(dqik).session_for(obj) is session
    bpy.context.view_layer.update()
    assert np.linalg.norm(sp.world_tail(obj, "hand.L") - np.array(empty.location)) <= REACHED


def test_what_the_solvers_build_found_is_reported_by_every_tick(clean_scene, dqik):
    """A constraint on a bone the solve turns is named by the first tick, which builds the
    solver, and by the warm ticks after it too."""
    obj, empty, session = _arm(clean_scene, dqik)
    obj.pose.bones["forearm.L"].constraints.new('LIMIT_ROTATION')
    named = "forearm.L (constraint 'Limit Rotation')"
    assert any(named in warning for warning in session.tick().warnings)
    solver = session.solver
    empty.location.z += 0.02
    bpy.context.view_layer.update()
    assert any(named in warning for warning in session.tick().warnings)
    assert session.solver is solver


def _stiffen_forearm_by_property(obj, session):
    obj.pose.bones["forearm.L"].dqik.stiffness = 1.0      # its update callback: rebuilt


def _stiffen_forearm_by_raw_write(obj, session):
    """A raw write calls no update callback: the documented ``invalidate()`` picks it up."""
    obj.pose.bones["forearm.L"].dqik["stiffness"] = 1.0
    session.invalidate()


@pytest.mark.parametrize("stiffen", [_stiffen_forearm_by_property, _stiffen_forearm_by_raw_write])
def test_a_changed_bone_setting_is_obeyed(clean_scene, dqik, stiffen):
    obj, empty, session = _arm(clean_scene, dqik)
    session.tick()
    assert _forearm_turn(obj) > 0.1
    sp.clear_pose(obj)
    stiffen(obj, session)
    session.tick()
    assert _forearm_turn(obj) == 0.0


def test_a_raw_write_of_an_armature_setting_is_seen_without_help(clean_scene, dqik):
    obj, empty, session = _arm(clean_scene, dqik)
    session.tick()
    sp.clear_pose(obj)
    obj.dqik["max_iterations"] = 1
    assert session.tick().iterations == 1


def test_a_rig_edit_in_edit_mode_gives_a_new_model(clean_scene, dqik):
    obj, empty, session = _arm(clean_scene, dqik)
    session.tick()
    model = session.model
    bpy.ops.object.mode_set(mode='EDIT')
    obj.data.edit_bones["forearm.L"].tail.z += 0.05
    bpy.ops.object.mode_set(mode='POSE')
    sp.clear_pose(obj)
    assert session.tick().status == 'MET'
    assert session.model is not model
    assert np.isclose(session.model.lengths[session.model.index["forearm.L"]],
                      obj.data.bones["forearm.L"].length, atol=1e-6)


def test_a_bone_reparented_in_edit_mode_gives_a_new_model(clean_scene, dqik):
    obj, empty, session = _arm(clean_scene, dqik)
    session.tick()
    bpy.ops.object.mode_set(mode='EDIT')
    hand = obj.data.edit_bones["hand.L"]
    hand.use_connect = False
    hand.parent = obj.data.edit_bones["upper_arm.L"]
    bpy.ops.object.mode_set(mode='POSE')
    session.tick()
    model = session.model
    assert model.names[model.parents[model.index["hand.L"]]] == "upper_arm.L"


def test_a_collider_moved_between_ticks_is_avoided(clean_scene, dqik):
    obj, empty, session = _arm(clean_scene, dqik)
    collection = bpy.data.collections.new("Colliders")
    clean_scene.collection.children.link(collection)
    obj.dqik.colliders = collection
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.mesh.primitive_cube_add(size=0.2, location=(5.0, 5.0, 5.0))
    cube = bpy.context.active_object
    rigs.move_to_collection(cube, collection)
    bpy.context.view_layer.update()
    assert session.tick().status == 'MET'
    sp.clear_pose(obj)
    cube.location = empty.location                         # now around the target
    bpy.context.view_layer.update()
    assert session.tick().status == 'CLOSEST'
    bpy.context.view_layer.update()
    assert sp.deepest_clearance(obj, dqik, ["hand.L"]) >= -1e-3


def test_a_missing_target_is_reported_and_a_failed_tick_leaves_an_error(clean_scene, dqik):
    obj, empty, session = _arm(clean_scene, dqik)
    foot = sp.add_targets(obj, ["foot.L"], chain_count=2)["foot.L"]
    foot.location = sp.world_tail(obj, "foot.L")
    bpy.context.view_layer.update()
    session.tick()
    bpy.data.objects.remove(foot)
    snapshot = session.tick()
    status = {task.name: task.status for task in snapshot.tasks}
    assert status == {"hand.L": 'MET', "foot.L": 'MISSING'}
    assert any("foot.L" in warning for warning in snapshot.warnings)
    assert "foot.L target missing" in snapshot.describe()
    bpy.data.objects.remove(empty)
    with pytest.raises(_api(dqik).ArmatureError, match="no bone with an enabled DQ IK target"):
        session.tick()
    assert session.last_result.status == 'ERROR' and "DQ IK target" in session.last_result.error


@pytest.mark.parametrize("scale", [(1.3, 1.3, 1.3), (1.0, 1.6, 0.8)])
def test_pose_scale_set_between_ticks_is_solved_with(clean_scene, dqik, scale):
    """Pose scale is a pose channel, read on every tick: a forearm scaled between two ticks
    (uniformly, or along its length) is solved with its scale, and the evaluated hand meets
    the target."""
    obj, empty, session = _arm(clean_scene, dqik)
    session.tick()
    obj.pose.bones["forearm.L"].scale = scale
    bpy.context.view_layer.update()
    assert session.tick().status == 'MET'
    bpy.context.view_layer.update()
    tail = np.array(obj.matrix_world @ obj.pose.bones["hand.L"].tail)
    assert np.linalg.norm(tail - np.array(empty.matrix_world.translation)) <= 1e-4


def test_sessions_are_dropped_on_file_load_deletion_and_undo(clean_scene, dqik):
    obj, empty, session = _arm(clean_scene, dqik)
    count = dqik.dq_ik_addon.blender.solving.sessions.session_count
    session.tick()
    assert count() == 1
    bpy.data.objects.remove(obj)
    bpy.context.view_layer.update()                       # depsgraph_update_post
    assert count() == 0
    with pytest.raises(_api(dqik).ArmatureError, match="was deleted"):
        session.tick()
    obj, empty, session = _arm(clean_scene, dqik)
    session.tick()
    bpy.ops.wm.read_homefile(use_empty=True)              # load_post
    assert count() == 0
    obj, empty, session = _arm(clean_scene, dqik)
    bpy.ops.ed.undo_push(message="targets set")
    session.tick()
    bpy.ops.ed.undo_push(message="solved")
    assert count() == 1
    name = obj.name
    assert bpy.ops.ed.undo() == {'FINISHED'}              # undo_post
    assert count() == 0
    _api(dqik).session_for(bpy.data.objects[name]).tick()
    assert count() == 1
    assert bpy.ops.ed.redo() == {'FINISHED'}              # redo_post
    assert count() == 0


def test_session_for_refuses_what_is_not_an_armature(clean_scene, dqik):
    mesh = bpy.data.objects.new("Mesh", bpy.data.meshes.new("Mesh"))
    with pytest.raises(_api(dqik).ArmatureError, match="needs an armature object"):
        _api(dqik).session_for(mesh)
    unlinked = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    with pytest.raises(_api(dqik).ArmatureError, match="no pose yet"):
        _api(dqik).session_for(unlinked).tick()


def test_wrong_arguments_to_the_scripting_api_get_clear_messages(clean_scene, dqik):
    """A name, the armature data, None, a mesh, an unknown option, bone or point: each an
    ``ArmatureError`` that says what was wrong, before anything changes."""
    api = _api(dqik)
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"], chain_count=3)
    mesh = bpy.data.objects.new("Body", bpy.data.meshes.new("Body"))
    bpy.context.scene.collection.objects.link(mesh)
    scene, options = bpy.context.scene, api.BakeOptions(1, 3)
    refused = [
        (lambda: api.session_for("metarig"), "needs an armature object, not 'metarig'"),
        (lambda: api.session_for(obj.data), "needs an armature object, not bpy.data.armatures"),
        (lambda: api.FrameBake(mesh, scene, options), "not 'Body', a mesh"),
        (lambda: api.FrameBake(None, scene, options), "not nothing"),
        (lambda: api.FrameBake(obj, None, options), "needs the scene"),
        (lambda: api.FrameBake(obj, scene, None), "needs its BakeOptions"),
        (lambda: api.FrameBake(obj, scene, api.BakeOptions(1, 3, bones='SELECT')),
         "bones='SELECT'; it is one of 'TASK_CHAINS', 'SELECTED', 'ALL'"),
    ]
    live = api.LivePosing(obj)
    refused += [(lambda: live.pin("hand"), "no bone 'hand' to pin"),
                (lambda: live.drag("hand", (0.0, 0.0, 1.0)), "no bone 'hand' to drag"),
                (lambda: live.drag("hand.L", "up"), "three finite numbers"),
                (lambda: live.pin(obj.pose.bones["hand.R"]), "to pin (a bone's name)"),
                (lambda: live.drag(3, (0.0, 0.0, 1.0)), "no bone 3 to drag")]
    for call, message in refused:
        with pytest.raises(api.ArmatureError, match=re.escape(message)):
            call()
    assert live.session.dragged is None and not live.pins
    live.cancel()
    assert scene.frame_current == 1


@pytest.mark.parametrize("operator", ["solve", "build_chain", "apply_preset", "import_limits",
                                      "add_target"])
def test_polls_say_why_without_raising(clean_scene, dqik, operator):
    poll = getattr(bpy.ops.dqik, operator).poll
    assert not poll()                                      # nothing active
    mesh = bpy.data.objects.new("Mesh", bpy.data.meshes.new("Mesh"))
    clean_scene.collection.objects.link(mesh)
    bpy.context.view_layer.objects.active = mesh
    assert not poll()
    with pytest.raises(RuntimeError, match="Select an armature"):
        getattr(bpy.ops.dqik, operator)()
    obj = rigs.metarig("basic")
    obj.data.bones.active = obj.data.bones["hand.L"]
    assert poll()
    bpy.ops.object.mode_set(mode='EDIT')
    assert not poll()
    bpy.ops.object.mode_set(mode='POSE')


def test_every_setting_is_library_overridable(dqik):
    for owner in (bpy.types.PoseBone, bpy.types.Object):
        pointer = owner.bl_rna.properties["dqik"]
        settings = [p for p in pointer.fixed_type.properties
                    if p.identifier not in ("rna_type", "name")]
        assert pointer.is_overridable and len(settings) >= 7
        assert [p.identifier for p in settings if not p.is_overridable] == []


def _override_settings(name):
    """The settings the test sets on the library override of the object called ``name``."""
    rig = next(o for o in bpy.data.objects if o.name == name and o.override_library)
    hand, forearm = rig.pose.bones["hand.L"].dqik, rig.pose.bones["forearm.L"].dqik
    return (hand.use_target, hand.target and hand.target.name, hand.chain_count,
            round(hand.stiffness, 6), round(forearm.swing_x_max, 6), rig.dqik.max_iterations,
            rig.dqik.use_solve_on_frame_change, rig.dqik.show_overlay_tasks)


@pytest.mark.parametrize("library_settings", [False, True])
def test_settings_set_on_a_library_override_survive_save_reload_and_library_reload(
        clean_scene, dqik, tmp_path, library_settings):
    """Blender 5.0 records a whole-group REPLACE, which no reload can apply, where the linked
    reference has no DQ IK group (``dq_ik_addon/blender/lifecycle/liboverride.py``); here the library has none, or
    only some (hand.L's stiffness, the armature's iterations)."""
    rig = rigs.metarig("basic")
    bpy.ops.object.mode_set(mode='OBJECT')
    if library_settings:
        rig.pose.bones["hand.L"].dqik.stiffness = 0.25
        rig.dqik.max_iterations = 50
    name, library = rig.name, str(tmp_path / "rig.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library)
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (_source, linked):
        linked.objects = [name]
    bpy.context.scene.collection.objects.link(linked.objects[0])
    rig = linked.objects[0].override_create(remap_local_usages=True)
    bpy.context.view_layer.update()              # depsgraph_update_post, as after the menu
    target = bpy.data.objects.new("Goal", None)
    bpy.context.scene.collection.objects.link(target)
    hand = rig.pose.bones["hand.L"].dqik
    hand.use_target, hand.target, hand.chain_count = True, target, 3
    rig.pose.bones["forearm.L"].dqik.swing_x_max = 0.3
    rig.dqik.max_iterations, rig.dqik.use_solve_on_frame_change = 123, True
    rig.dqik.show_overlay_tasks = False
    bpy.ops.ed.undo_push(message="settings")     # Blender compares before any save
    expected, main = _override_settings(name), str(tmp_path / "main.blend")
    assert expected == (True, "Goal", 3, 0.25 if library_settings else 0.0, 0.3, 123, True,
                        False)
    bpy.data.libraries[0].reload()
    assert _override_settings(name) == expected
    bpy.ops.wm.save_as_mainfile(filepath=main)
    for _ in range(2):                           # saved again after a reload: still there
        bpy.ops.wm.open_mainfile(filepath=main)
        assert _override_settings(name) == expected
        bpy.data.libraries[0].reload()
        assert _override_settings(name) == expected
        bpy.ops.wm.save_as_mainfile(filepath=main)


def test_dqik_solve_reports_the_session_snapshot(clean_scene, dqik, capfd):
    obj, empty, session = _arm(clean_scene, dqik)
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    snapshot = session.last_result
    assert f"converged in {snapshot.iterations} iterations; hand.L" in capfd.readouterr().out
    assert math.isfinite(snapshot.tasks[0].position_error)
