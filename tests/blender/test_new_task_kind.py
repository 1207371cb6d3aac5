"""The task-kind seam on the Blender side: a kind added in this file alone, to the engine (the
tests' ``chains.PointOnPlane``), to the table (``settings/task_kinds.TASK_KINDS``) and to the
properties (a ``PoseBone.dqik`` bool), is read from the bone's settings, solved, reported under
its own key in ``TaskReport.errors`` and in the task list's error text, with nothing else
changed (the Bone panel draws the table's toggles too; panels do not draw headless)."""

import bpy
import numpy as np
import pytest
import rigs
import solve_problems as sp
from chains import PointOnPlane


@pytest.fixture
def plane_kind(dqik, monkeypatch):
    """``use_plane`` on ``PoseBone.dqik`` and a table row: the bone's tail onto the target's XY
    plane (normal: the target's Z axis), reported as ``'plane'``."""
    kinds = dqik.dq_ik_addon.blender.settings.task_kinds
    properties = dqik.dq_ik_addon.properties
    settings_class = properties.DQIK_PG_bone     # PoseBone.dqik, declared as its other toggles
    settings_class.use_plane = bpy.props.BoolProperty(
        name="Plane", update=dqik.dq_ik_addon.blender.settings.edits.settings_changed,
        override={'LIBRARY_OVERRIDABLE'})

    def plane(goal, _matrix, _options):
        normal = goal[:3, 2] / np.linalg.norm(goal[:3, 2])
        return np.append(normal, normal @ goal[:3, 3])

    entry = kinds.TaskKindEntry("use_plane", "plane", PointOnPlane, plane,
                                lambda _settings, _name: (), "plane")
    monkeypatch.setattr(kinds, "TASK_KINDS", kinds.TASK_KINDS + (entry,))
    yield kinds
    del settings_class.use_plane


def test_a_kind_added_to_the_table_is_solved_and_reported(clean_scene, dqik, plane_kind):
    obj = rigs.metarig("basic")
    empty = sp.add_targets(obj, ["hand.L"], chain_count=3, use_position=False)["hand.L"]
    settings = obj.pose.bones["hand.L"].dqik
    settings.use_plane = True
    bpy.context.view_layer.update()
    tail = np.array(obj.matrix_world @ obj.pose.bones["hand.L"].tail)
    empty.location = tail + (0.1, -0.05, 0.12)      # a plane 12 cm above the hand, tilted
    empty.rotation_euler = (0.3, -0.2, 0.0)
    snapshot = dqik.api.session_for(obj).tick()
    report = {task.name: task for task in snapshot.tasks}["hand.L"]
    assert report.status == 'MET' and set(report.errors) == {"plane"}
    assert report.position_error is None and report.rotation_error is None
    bpy.context.view_layer.update()
    matrix = np.array(empty.matrix_world)
    normal = matrix[:3, 2] / np.linalg.norm(matrix[:3, 2])
    reached = np.array(obj.matrix_world @ obj.pose.bones["hand.L"].tail)
    assert abs(normal @ (reached - matrix[:3, 3])) <= 1e-4
    assert report.describe().startswith("hand.L ") and report.describe().endswith(" mm")
    assert snapshot.largest_distance() == report.errors["plane"]
    task_rows = dqik.panels.task_rows
    assert task_rows.error_text(report).endswith(" mm")


def test_a_bone_with_only_the_new_kind_is_a_task_and_none_enabled_names_it(clean_scene, dqik,
                                                                           plane_kind):
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"], use_position=False)
    session = dqik.api.session_for(obj)
    with pytest.raises(dqik.api.ArmatureError, match="none of position, rotation, aim and plane"):
        session.tick()
    obj.pose.bones["hand.L"].dqik.use_plane = True
    assert session.tick().tasks[0].errors.keys() == {"plane"}
