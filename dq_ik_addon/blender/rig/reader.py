"""One reader of the rig for the solving session, Check Rig and the overlay: the model a solve of
the armature uses, Blender's parenting (``model_reader.read_model``) with the bones that follow
others through constraints re-parented and ridden (``constraint_followers.followed_model``),
and the task sources read from the bones' settings on that model.

The last model read of each armature is kept (``last_model``), so that the overlay, which must
neither make a session nor read the rig on every redraw, draws from the model the session solves
with while the rig is the same (``model_reader.rig_key``)."""

from typing import NamedTuple

from ..settings.scene_tasks import bone_settings, task_sources
from .constraint_followers import followed_model
from .model_reader import read_model, rig_key


class Rig(NamedTuple):
    """``model``: the ``ChainModel`` a solve uses; ``sources``: the ``TaskSource`` of every bone
    with a task; ``warnings``: the tasks left out, with why."""

    model: object
    sources: list
    warnings: list


def read_rig(obj, extra_bones=()):
    """The ``Rig`` of the armature ``obj``; ``extra_bones``: indices of bones the solve pulls
    besides the task bones (a dragged bone), which no rider may be above either."""
    model = read_model(obj)
    sources, warnings = task_sources(model, bone_settings(obj))
    return Rig(_followed(obj, model, [s.bone for s in sources] + list(extra_bones)), sources,
               warnings)


def last_model(obj, key):
    """The model last read of ``obj`` while its ``rig_key`` was ``key``, or, if there is none,
    the model read now with the bones whose ``use_target`` is set as the task bones (no setting
    is checked: drawing never refuses a rig)."""
    last = _LAST.get(obj.session_uid)
    if last is not None and last[0] == key:
        return last[1]
    return _followed(obj, read_model(obj), [i for i, settings in enumerate(bone_settings(obj))
                                            if settings.use_target])


def _followed(obj, model, pulled):
    """``followed_model`` of ``model`` with the bones ``pulled``, kept as ``obj``'s last model."""
    model = followed_model(obj, model, pulled)
    _LAST[obj.session_uid] = (rig_key(obj), model)
    return model


def forget():
    """Drop every kept model (a file load, undo or redo re-allocates the rigs)."""
    _LAST.clear()


_LAST = {}  # Object.session_uid → (rig_key, the model last read)
