"""DQ IK: prioritized, joint-limited, collision-aware inverse kinematics on dual quaternions.

Registration gathers the property groups, operators, panels, the viewport overlay's handlers
(``panels/overlay/draw.py``), the live posing key map (``operators/live_keys.py``) and the application handlers of the solving sessions
(``dq_ik_addon/blender/lifecycle/handlers.py``); ``unregister`` removes exactly what
``register`` added and drops every session, so enabling and disabling the extension repeatedly
leaves nothing behind. Nothing else happens here: the product is in ``dq_ik_addon/``,
``operators/`` and ``panels/`` (``docs/architecture.md``).
"""

import bpy

from . import api, operators, panels  # noqa: F401  (api: the scripting module's public path)
from .dq_ik_addon import properties
from .dq_ik_addon.blender.lifecycle import handlers

_CLASSES = (*properties.CLASSES, *operators.CLASSES, *panels.CLASSES)


def register():
    for cls in _CLASSES:
        bpy.utils.register_class(cls)
    properties.register_properties()
    panels.register_menu()
    panels.register_overlay()
    operators.register_keymap()
    handlers.register()


def unregister():
    handlers.unregister()
    operators.unregister_keymap()
    panels.unregister_overlay()
    panels.unregister_menu()
    properties.unregister_properties()
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)
