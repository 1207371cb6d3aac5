"""Blender ⇄ engine, by job: ``rig`` (read the armature, write the pose), ``settings`` (tasks,
solver settings, validation), ``colliders``, ``solving`` (the session per armature, frame
change, live posing), ``keys`` (bake, key writing, clean-up, auto-keying), ``authoring``
(presets, IK import, target Empties) and ``lifecycle`` (handlers, library overrides, render
lock)."""
