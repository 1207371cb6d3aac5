"""A session's obstacle query: the scene's colliders as the solver's obstacles
(``obstacles.SceneObstacles``), made again only when the armature or a collider moved or changed
shape (``obstacles.placement``), and the warning for each collider whose normals face away from
the armature (left out of the solve until they are flipped)."""

import bpy
import numpy as np

from ...engine import chain_size
from .geometry import ColliderCache
from .obstacles import SceneObstacles, placement


class ObstacleQuery:
    """The obstacle query of one armature, with its ``ColliderCache`` (trees built once per
    collider shape)."""

    def __init__(self):
        self.cache = ColliderCache()
        self.forget()

    def forget(self):
        """Make the query again on next use (the rig was read again)."""
        self._obstacles, self._placement, self._facing_away = None, None, []

    def query(self, obj, model, evaluated, warnings):
        """The ``SceneObstacles`` of the armature ``obj`` (``model``, posed as Blender
        evaluated it: ``evaluated``), with the colliders left out named in ``warnings``."""
        depsgraph = bpy.context.evaluated_depsgraph_get()
        where = placement(obj, depsgraph)
        if where != self._placement:
            self._obstacles = SceneObstacles(obj, depsgraph, warnings.append, self.cache)
            away = self._obstacles.leave_out_facing_away(
                np.concatenate([evaluated[:, :3, 3], model.tails(evaluated)]), chain_size(model))
            self._facing_away = [
                f"the normals of '{name}' face away from '{obj.name}'; flip them (Edit Mode, "
                "Mesh > Normals > Flip) or recalculate them outside (Shift N); it is left out "
                "of the solve until then" for name in away]
            self._placement = where
        warnings += self._facing_away
        return self._obstacles
