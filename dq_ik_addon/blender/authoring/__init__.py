"""Authoring DQ IK settings: limit presets, importing Blender's IK settings, target Empties."""
