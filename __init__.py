"""DQ IK: prioritized, joint-limited, collision-aware inverse kinematics on dual quaternions.

Registration gathers the property groups, operators and panels; ``unregister`` removes exactly
what ``register`` added, so enabling and disabling the extension repeatedly leaves nothing behind.
"""

import bpy

from . import operators, panels, properties

_CLASSES = (*properties.CLASSES, *operators.CLASSES, *panels.CLASSES)


def register():
    for cls in _CLASSES:
        bpy.utils.register_class(cls)
    properties.register_properties()
    panels.register_menu()


def unregister():
    panels.unregister_menu()
    properties.unregister_properties()
    for cls in reversed(_CLASSES):
        bpy.utils.unregister_class(cls)
