"""DQ IK's core: the numpy engine (``engine``, no bpy), the Blender side (``blender``), the
settings (``properties``) and the scripting module (``api``)."""
