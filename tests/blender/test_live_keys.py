"""The live posing key map (``operators/live_keys.py``): registered with the extension in the
add-on key configuration, matched by the live operator's modal handler with the keys the user
set, drawn in the extension's preferences, and its operators acting on a running live posing."""

from types import SimpleNamespace

import bpy
import numpy as np
import rigs
import solve_problems as sp


def _keymap():
    return bpy.context.window_manager.keyconfigs.addon.keymaps["DQ IK Live"]


def _press(key, **modifiers):
    """What the modal handler reads of a key press (a plain record, as ``bpy.types.Event``)."""
    pressed = {"shift": False, "ctrl": False, "alt": False, "oskey": False, **modifiers}
    return SimpleNamespace(type=key, value='PRESS', is_repeat=False, **pressed)


def test_the_key_map_is_in_the_addon_key_configuration(dqik):
    items = {(item.idname, item.type, bool(item.shift), bool(item.alt))
             for item in _keymap().keymap_items}
    assert items == {("dqik.live_keep", 'RET', False, False),
                     ("dqik.live_keep", 'NUMPAD_ENTER', False, False),
                     ("dqik.live_cancel", 'ESC', False, False),
                     ("dqik.live_drag", 'D', True, True), ("dqik.live_pin", 'P', True, True)}


def test_presses_are_matched_as_the_user_set_them(dqik):
    action = dqik.operators.live_keys.action
    context = bpy.context
    assert action(context, _press('RET')) == "dqik.live_keep"
    assert action(context, _press('D', shift=True, alt=True)) == "dqik.live_drag"
    assert action(context, _press('D')) is None           # D alone: Blender's annotation
    item = next(item for item in _keymap().keymap_items if item.idname == "dqik.live_pin")
    item.type, item.shift, item.alt = 'J', False, False  # remapped
    try:
        assert action(context, _press('J')) == "dqik.live_pin"
        assert action(context, _press('P', shift=True, alt=True)) is None
    finally:
        item.type, item.shift, item.alt = 'P', True, True


def test_the_preferences_show_the_keys(dqik):
    preferences = bpy.context.preferences.addons[dqik.__name__].preferences
    assert type(preferences).__name__ == "DQIK_AP_preferences"


def test_the_key_operators_act_on_a_running_live_posing(clean_scene, dqik):
    obj = rigs.metarig("basic")
    assert not bpy.ops.dqik.live_cancel.poll()
    target = sp.add_targets(obj, ["hand.L"], chain_count=3)["hand.L"]
    target.location = sp.world_tail(obj, "hand.L") + np.array([0.1, -0.1, 0.1])
    live = dqik.dq_ik_addon.blender.solving.live_posing.LivePosing(obj)
    live.tick()
    assert bpy.ops.dqik.live_pin.poll()
    rigs.select_bones(obj, ["forearm.L"])
    assert bpy.ops.dqik.live_pin() == {'FINISHED'}
    assert obj.pose.bones["forearm.L"].dqik.use_target
    assert bpy.ops.dqik.live_cancel() == {'FINISHED'}
    assert live.stopped and not obj.pose.bones["forearm.L"].dqik.use_target
    assert all(tuple(pb.rotation_quaternion) == (1.0, 0.0, 0.0, 0.0)
               or pb.rotation_mode != 'QUATERNION' for pb in obj.pose.bones)
