"""The pose bone and channel an F-curve or driver path names."""

from functools import lru_cache


@lru_cache(maxsize=8192)
def bone_channel(path):
    """``('hand.L', 'rotation_euler')`` for ``pose.bones["hand.L"].rotation_euler`` (the part
    after the bone is '' for the bone itself, or starts with ``[`` for a custom property), or
    ``(None, None)`` for a path that is not a pose bone's. The name is read as Blender writes
    it into paths (``bpy.utils.escape_identifier``: ``\\`` and ``\"`` escaped). Remembered by
    path: every live tick reads the paths of every driver of the rig again (``rig_checks``)."""
    prefix = 'pose.bones["'
    if not path.startswith(prefix):
        return None, None
    name, found, rest = path[len(prefix):].partition('"]')
    if "\\" in name:        # escaped: read it character by character (rare, and slower)
        name, k = [], len(prefix)
        while k < len(path) and path[k] != '"':
            k += 1 if path[k] != "\\" else 2
            name.append(path[k - 1])
        found, rest = path[k:k + 2], path[k + 2:]
        name = "".join(name)
    if found != '"]':
        return None, None
    return name, rest[1:] if rest.startswith(".") else rest
