"""DQ IK's user interface: the Bone Properties panel and the 3D Viewport sidebar tab."""

from . import bone_panel, sidebar

CLASSES = (*bone_panel.CLASSES, *sidebar.CLASSES)
