"""DQ IK settings set on a library override survive saving, also where the library has none.

``PoseBone.dqik`` and ``Object.dqik`` are Python pointers to property groups, stored as ID
property groups that exist only once read or written. Blender records what an override changed
by comparing it with its linked reference (``rna_property_override_diff_default``,
``PROP_POINTER`` case, ``source/blender/makesrna/intern/rna_rna.cc``). From Blender 5.0 that
comparison reads both pointers without creating a missing group
(``RNA_property_pointer_get_never_create``, blender/blender#146221): where the reference has no
group (a rig linked from a file where DQ IK never touched that bone or object) the pointers
differ, and Blender records one REPLACE of the whole ``dqik`` pointer instead of one operation
per changed setting. Applying it fails (``RNA_property_pointer_set: expected ID type, not
DQIK_PG_bone``, ``rna_access.cc``), so after a reload, or a library reload, every setting of that
bone or object is back at its default. Blender 4.5 created the reference's group while
comparing, so it compared setting by setting.

So every library override object and its reference get their ``dqik`` groups, and those of all
their pose bones, on both sides (equal groups give no operation, differing ones one per changed
setting) whenever Blender is about to compare them or has just read the references afresh:

- ``save_pre``: runs before ``wm_file_write`` (``wm_files.cc``) builds the saved operations;
- ``load_post``, ``blend_import_post``: a loaded file and a (re)loaded library bring references
  without groups; the next comparison (an undo step, a save, the one that starts a library
  reload) then records per-setting operations again;
- a depsgraph update after the file's number of objects changed: making an override adds
  objects, and undo steps and library reloads compare before any other handler runs.

The reference's groups live in memory only (linked data is never saved); the override's are
empty where no setting was changed.
"""

import bpy
from bpy.app.handlers import persistent

HANDLERS = ("save_pre", "load_post", "blend_import_post")
_objects_seen = [None]     # len(bpy.data.objects) at the last depsgraph update that paired


def _pair(local, reference):
    """Read ``dqik`` on both sides, which creates a missing group (``RNA_property_pointer_get``,
    ``rna_access.cc``)."""
    local.dqik
    reference.dqik


@persistent
def pair_override_settings(*_args):
    """Give every library override object and its reference their DQ IK settings groups, and
    those of their pose bones (a handler of each of ``HANDLERS``)."""
    _objects_seen[0] = len(bpy.data.objects)
    for obj in bpy.data.objects:
        override = obj.override_library
        if override is None or override.reference is None:
            continue
        reference = override.reference
        _pair(obj, reference)
        if obj.pose is None or reference.pose is None:
            continue
        for bone in obj.pose.bones:
            reference_bone = reference.pose.bones.get(bone.name)
            if reference_bone is not None:
                _pair(bone, reference_bone)


def follow_updates():
    """From a depsgraph update: pair again when the file's number of objects changed."""
    if len(bpy.data.objects) != _objects_seen[0]:
        pair_override_settings()
