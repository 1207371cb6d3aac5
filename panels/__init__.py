"""DQ IK's user interface: Bone Properties panel, 3D Viewport sidebar tab and Pose menu entry."""

from . import bone_panel, menu, sidebar

CLASSES = (*bone_panel.CLASSES, *sidebar.CLASSES, *menu.CLASSES)
register_menu = menu.register_menu
unregister_menu = menu.unregister_menu
