"""Blender ⇄ engine: the armature reader and writer, tasks and settings read from the scene,
colliders, the solving session per armature and the handlers that keep it true to the file."""
