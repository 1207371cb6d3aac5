"""The zip installs and enables; enabling/disabling three times leaves nothing behind (classes,
properties, menu entries, application handlers, Solve on Frame Change among them, the
overlay's draw handler)."""

import importlib

import addon_utils
import bpy  # noqa: F401  (bpy first: it puts addon_utils on the path)
import pytest
from extension_cli import MODULE


def _dqik_state():
    return {
        "operators": sorted(name for name in dir(bpy.ops.dqik)),
        "pose_bone_prop": hasattr(bpy.types.PoseBone, "dqik"),
        "object_prop": hasattr(bpy.types.Object, "dqik"),
        "classes": sorted(name for name in dir(bpy.types) if name.startswith("DQIK_")),
        "pose_menu_entries": [f.__name__ for f in bpy.types.VIEW3D_MT_pose_ik._dyn_ui_initialize()
                              if f.__module__.startswith(MODULE)],
        "handlers": {name: sum(f.__module__.startswith(MODULE)
                               for f in getattr(bpy.app.handlers, name))
                     for name in ("load_post", "undo_post", "redo_post", "depsgraph_update_post",
                                  "frame_change_post", "blend_import_pre", "blend_import_post")},
        "overlay_drawn": _overlay_handle() is not None,
    }


def _overlay_handle():
    return importlib.import_module(f"{MODULE}.panels.overlay.draw").draw_handle()


def test_disabling_drops_the_solving_sessions(clean_scene, dqik):
    import importlib

    import rigs
    import solve_problems as sp
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"], chain_count=3)
    session_module = importlib.import_module(f"{MODULE}.dq_ik_addon.blender.solving.sessions")
    session_module.session_for(obj).tick()
    assert session_module.session_count() == 1
    addon_utils.disable(MODULE, default_set=True)
    try:
        assert session_module.session_count() == 0
    finally:
        addon_utils.enable(MODULE, default_set=True)


def test_enable_disable_three_times_is_clean(dqik):
    enabled = _dqik_state()
    assert enabled["pose_bone_prop"] and enabled["object_prop"]
    assert "build_chain" in enabled["operators"]
    assert enabled["pose_menu_entries"] == ["draw_pose_menu_entry"]
    assert all(enabled["handlers"].values()) and enabled["overlay_drawn"]
    for _ in range(3):
        handle = _overlay_handle()
        addon_utils.disable(MODULE, default_set=True)
        disabled = _dqik_state()
        assert not disabled["pose_bone_prop"] and not disabled["object_prop"]
        assert disabled["classes"] == []
        assert disabled["pose_menu_entries"] == []
        assert set(disabled["handlers"].values()) == {0} and not disabled["overlay_drawn"]
        with pytest.raises(ValueError):     # Blender no longer has it
            bpy.types.SpaceView3D.draw_handler_remove(handle, 'WINDOW')
        addon_utils.enable(MODULE, default_set=True)
        assert _dqik_state() == enabled


def test_an_overlay_stopped_by_an_error_draws_again_once_enabled_again(clean_scene, dqik):
    """The draw handler's work (``draw_unless_stopped``, for the active armature) draws nothing
    after an unexpected error stopped it, and again after the extension is disabled and
    enabled (which keeps its modules)."""
    import offscreen
    import rigs
    import solve_problems as sp
    from mathutils import Matrix
    if not offscreen.initialise_gpu():
        pytest.skip("Blender cannot draw on this machine, not even after a render")
    obj = rigs.metarig("basic")
    sp.add_targets(obj, ["hand.L"], chain_count=3)["hand.L"].location = (0.0, 0.0, 0.0)
    bpy.context.view_layer.update()
    draw = importlib.import_module(f"{MODULE}.panels.overlay.draw")

    def drawn():
        pixels = offscreen.draw_offscreen(lambda: draw.draw_unless_stopped(bpy.context),
                                          Matrix.Identity(4), Matrix.Scale(0.2, 4), (64, 64))
        return int((pixels[..., 3] > 0.0).sum())

    assert bpy.context.active_object == obj and drawn() > 0
    draw._FAILED.append(True)           # as after an unexpected error
    assert drawn() == 0
    addon_utils.disable(MODULE, default_set=True)
    addon_utils.enable(MODULE, default_set=True)
    assert importlib.import_module(f"{MODULE}.panels.overlay.draw") is draw
    assert drawn() > 0


def test_manifest_is_what_the_design_promises(dqik):
    import os
    import tomllib
    with open(os.path.join(os.path.dirname(dqik.__file__), "blender_manifest.toml"), "rb") as f:
        manifest = tomllib.load(f)
    assert manifest["id"] == "dq_ik"
    assert manifest["blender_version_min"] == "4.5.0"
    assert manifest["license"] == ["SPDX:GPL-3.0-or-later"]
    assert "permissions" not in manifest


def test_installed_zip_has_no_tests_or_benchmarks(dqik):
    import os
    root = os.path.dirname(dqik.__file__)
    assert not os.path.exists(os.path.join(root, "tests"))
    assert not os.path.exists(os.path.join(root, "benchmarks"))
    assert os.path.isdir(os.path.join(root, "dq_ik_addon", "engine"))
