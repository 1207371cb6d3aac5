"""The ``dqik.*`` operators, thin shells over ``dq_ik_addon/blender/``."""

from . import (
               add_target,
               bake,
               build_chain,
               import_limits,
               live,
               plant,
               presets,
               solve,
               targets_from_animation,
)

CLASSES = (*build_chain.CLASSES, *solve.CLASSES, *add_target.CLASSES, *presets.CLASSES,
           *import_limits.CLASSES, *live.CLASSES, *bake.CLASSES,
           *targets_from_animation.CLASSES, *plant.CLASSES)
