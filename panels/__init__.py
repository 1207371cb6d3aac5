"""DQ IK's user interface: Bone Properties panel, 3D Viewport sidebar tab, the armature's
settings in Properties › Object Data, Pose menu entry, viewport overlay and the extension's
preferences (the live posing keys)."""

from . import bone_panel, menu, object_data, preferences, sidebar
from .overlay import draw as overlay_draw

CLASSES = (*bone_panel.CLASSES, *sidebar.CLASSES, *object_data.CLASSES, *menu.CLASSES,
           *preferences.CLASSES)
register_menu = menu.register_menu
unregister_menu = menu.unregister_menu
register_overlay = overlay_draw.register
unregister_overlay = overlay_draw.unregister
