"""The sidebar's task list and sub-panels: rows (which bones, in what order, with what status
light and error after a real solve), a row click selecting its bone, the list state and settings
surviving save and reload, two armatures each with their own list, and the panels registered
and drawn against real Blender data.

Background Blender has no window, so panels cannot be drawn by Blender itself;
``RecordingLayout`` stands in for ``UILayout`` only, and checks every call against Blender's
own RNA: each keyword is a parameter of that ``UILayout`` function, each icon exists, each
property exists on the real data it is drawn from, and each operator is registered.
"""

import importlib

import bpy
import pytest
import rigs
import solve_problems as sp

EFFECTORS = ("hand.L", "hand.R", "foot.L", "foot.R")


def _modules(dqik):
    return (importlib.import_module(f"{dqik.__name__}.panels.task_rows"),
            importlib.import_module(f"{dqik.__name__}.api"))


def _rig_with_tasks():
    """The basic metarig with a target on each hand (priority 2) and foot (priority 1), each on
    its bone's tail (reachable), and hand.R switched off."""
    obj = rigs.metarig("basic")
    empties = sp.add_targets(obj, EFFECTORS, chain_count=3)
    for name, empty in empties.items():
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
        empty.location = sp.world_tail(obj, name)
    obj.pose.bones["hand.R"].dqik.use_target = False
    bpy.context.view_layer.update()
    return obj, empties


def _summary(rows):
    return [(row.name, row.priority, row.status) for row in rows]


def test_rows_by_priority_then_name_with_the_last_solves_status(clean_scene, dqik):
    task_rows, api = _modules(dqik)
    obj, empties = _rig_with_tasks()
    assert _summary(task_rows.task_rows(obj)) == [
        ("foot.L", 1, 'NONE'), ("foot.R", 1, 'NONE'), ("hand.L", 2, 'NONE'), ("hand.R", 2, 'OFF')]

    assert bpy.ops.dqik.solve() == {'FINISHED'}
    rows = task_rows.task_rows(obj)
    assert _summary(rows) == [
        ("foot.L", 1, 'MET'), ("foot.R", 1, 'MET'), ("hand.L", 2, 'MET'), ("hand.R", 2, 'OFF')]
    assert rows[0].error.endswith(" mm") and rows[3].error == ""
    assert [row.index for row in rows] == [obj.pose.bones.find(row.name) for row in rows]

    empties["hand.L"].location.x += 5.0                       # out of reach
    bpy.context.view_layer.update()
    assert bpy.ops.dqik.solve() == {'FINISHED'}
    hand = {row.name: row for row in task_rows.task_rows(obj)}["hand.L"]
    assert hand.status == 'CLOSEST'
    assert float(hand.error.split()[0]) > 1000.0              # more than a metre short, in mm
    assert task_rows.STATUS_ICONS[hand.status] == 'STRIP_COLOR_02'


def test_a_missing_target_and_a_failed_solve_are_red(clean_scene, dqik):
    task_rows, api = _modules(dqik)
    obj, empties = _rig_with_tasks()
    session = api.session_for(obj)
    # a bone subtarget the target armature does not have: missing for the solve
    foot = obj.pose.bones["foot.R"].dqik
    foot.target, foot.subtarget = obj, "no such bone"
    session.tick()
    status = {row.name: (row.status, row.error) for row in task_rows.task_rows(obj)}
    assert status["foot.R"] == ('MISSING', "target missing")
    assert status["foot.L"][0] == 'MET'
    # a deleted target: the row is red at once, without solving
    bpy.data.objects.remove(empties["foot.L"])
    status = {row.name: (row.status, row.error) for row in task_rows.task_rows(obj)}
    assert status["foot.L"] == ('MISSING', "no target")
    # a solve that fails: every task that is on is red; a bone switched off without a target
    # is no task any more (foot.L)
    for name in ("hand.L", "foot.L"):
        obj.pose.bones[name].dqik.use_target = False
    with pytest.raises(api.ArmatureError):
        session.tick()
    status = {row.name: row.status for row in task_rows.task_rows(obj)}
    assert status == {"foot.R": 'ERROR', "hand.L": 'OFF', "hand.R": 'OFF'}
    assert {task_rows.STATUS_ICONS[s] for s in ('MISSING', 'SKIPPED', 'ERROR')} == \
        {'STRIP_COLOR_01'}


def test_the_list_filters_by_name_and_orders_every_bone(clean_scene, dqik):
    task_rows, _ = _modules(dqik)
    obj, empties = _rig_with_tasks()
    obj.pose.bones["spine"].dqik.use_target = True           # on, without a target: listed
    shown = task_rows.list_order(obj)
    assert [obj.pose.bones[i].name for i in shown] == \
        ["foot.L", "foot.R", "spine", "hand.L", "hand.R"]
    assert [obj.pose.bones[i].name for i in task_rows.list_order(obj, "HAND")] == \
        ["hand.L", "hand.R"]
    assert [obj.pose.bones[i].name for i in task_rows.list_order(obj, ".l", invert=True)] == \
        ["foot.R", "spine", "hand.R"]
    flags, order = task_rows.filter_flags(obj, shown, 4)
    assert sorted(order) == list(range(len(obj.pose.bones)))  # a permutation of every bone
    assert [i for i, flag in enumerate(flags) if flag == 4] == sorted(shown)
    assert [order[i] for i in shown] == list(range(len(shown)))
    bpy.data.objects.remove(empties["hand.R"])     # off and now without a target: not a task
    assert [obj.pose.bones[i].name for i in task_rows.list_order(obj)] == \
        ["foot.L", "foot.R", "spine", "hand.L"]


def test_a_row_click_selects_its_bone_only(clean_scene, dqik):
    obj, _ = _rig_with_tasks()
    armature = importlib.import_module(f"{dqik.__name__}.dq_ik_addon.blender.rig.objects")
    for name in ("hand.L", "foot.R"):
        obj.dqik.active_task_index = obj.pose.bones.find(name)
        assert obj.data.bones.active.name == name
        assert [pb.name for pb in obj.pose.bones if armature.is_selected(pb)] == [name]


def test_the_list_state_and_settings_survive_save_and_reload(clean_scene, dqik, tmp_path):
    obj, _ = _rig_with_tasks()
    settings = obj.dqik
    settings.active_task_index = obj.pose.bones.find("foot.R")
    settings.time_budget_ms, settings.max_iterations, settings.use_self_collision = 12.5, 77, True
    has_frame_option = hasattr(settings, "use_solve_on_frame_change")
    if has_frame_option:
        settings.use_solve_on_frame_change = True
    obj.pose.bones["hand.L"].dqik.weight = 2.5
    name, path = obj.name, str(tmp_path / "tasks.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects[name]
    settings = obj.dqik
    assert obj.pose.bones[settings.active_task_index].name == "foot.R"
    assert (settings.time_budget_ms, settings.max_iterations, settings.use_self_collision) == \
        (12.5, 77, True)
    assert not has_frame_option or settings.use_solve_on_frame_change
    task_rows, _ = _modules(dqik)
    assert _summary(task_rows.task_rows(obj)) == [
        ("foot.L", 1, 'NONE'), ("foot.R", 1, 'NONE'), ("hand.L", 2, 'NONE'), ("hand.R", 2, 'OFF')]
    assert obj.pose.bones["hand.L"].dqik.weight == 2.5


def test_two_armatures_each_list_their_own_tasks(clean_scene, dqik):
    task_rows, api = _modules(dqik)
    first, _ = _rig_with_tasks()
    bpy.ops.object.mode_set(mode='OBJECT')
    second = rigs.awkward_rig()
    empty = sp.add_targets(second, ["leaf"], priority=3)["leaf"]
    empty.location = sp.world_tail(second, "leaf")
    bpy.context.view_layer.update()
    api.session_for(second).tick()
    assert _summary(task_rows.task_rows(second)) == [("leaf", 3, 'MET')]
    assert {row.status for row in task_rows.task_rows(first)} == {'NONE', 'OFF'}
    second.dqik.active_task_index = second.pose.bones.find("leaf")
    first.dqik.active_task_index = first.pose.bones.find("foot.L")
    assert second.data.bones.active.name == "leaf" and first.data.bones.active.name == "foot.L"
    assert second.pose.bones[second.dqik.active_task_index].name == "leaf"


_SIDEBAR = ("DQIK_PT_sidebar", "DQIK_PT_sidebar_tasks", "DQIK_PT_sidebar_solver",
            "DQIK_PT_sidebar_collision", "DQIK_PT_sidebar_live", "DQIK_PT_sidebar_frame_change")


def test_the_sub_panels_are_registered_and_poll_for_armatures_only(clean_scene, dqik):
    panels = [getattr(bpy.types, name) for name in _SIDEBAR]
    assert hasattr(bpy.types, "DQIK_UL_tasks")
    assert hasattr(bpy.types, "DQIK_OT_solve")     # how the Live panel looks for DQIK_OT_live
    assert [getattr(p, "bl_parent_id", "") for p in panels] == ["", *[_SIDEBAR[0]] * 5]
    toggles = {p.__name__ for p in panels if hasattr(p, "draw_header")}
    assert toggles == {"DQIK_PT_sidebar_collision", "DQIK_PT_sidebar_frame_change"}
    assert {p.bl_category for p in panels} == {"DQ IK"}
    assert not any(p.poll(bpy.context) for p in panels)          # nothing active
    mesh = bpy.data.objects.new("Mesh", bpy.data.meshes.new("Mesh"))
    clean_scene.collection.objects.link(mesh)
    bpy.context.view_layer.objects.active = mesh
    assert not any(p.poll(bpy.context) for p in panels)
    rigs.metarig("basic")
    assert all(p.poll(bpy.context) for p in panels)


def test_the_armature_settings_are_in_object_data_too(clean_scene, dqik):
    """Properties › Object Data → DQ IK: the sidebar's armature-wide settings panels, drawn by the
    same code, for an armature only; the secondary ones closed until opened."""
    names = ("solver", "collision", "balance", "frame_change", "overlay")    # Live: sidebar only
    data = [getattr(bpy.types, f"DQIK_PT_data_{name}") for name in names]
    assert not hasattr(bpy.types, "DQIK_PT_data_live")
    assert {p.bl_parent_id for p in data} == {"DQIK_PT_data"}
    assert {p.bl_context for p in data} == {"data"}
    assert [p.draw for p in data] == [getattr(bpy.types, f"DQIK_PT_sidebar_{name}").draw
                                      for name in names]
    assert all("DEFAULT_CLOSED" in p.bl_options for p in data)
    assert not bpy.types.DQIK_PT_data.poll(bpy.context)
    rigs.metarig("basic")
    assert all(p.poll(bpy.context) for p in (bpy.types.DQIK_PT_data, *data))
