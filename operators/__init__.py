"""The ``dqik.*`` operators, thin shells over ``dq_ik_addon/blender/``."""

from . import (
               add_target,
               bake,
               build_chain,
               import_limits,
               live,
               live_keys,
               plant,
               presets,
               solve,
               targets_from_animation,
)

CLASSES = (*build_chain.CLASSES, *solve.CLASSES, *add_target.CLASSES, *presets.CLASSES,
           *import_limits.CLASSES, *live.CLASSES, *live_keys.CLASSES, *bake.CLASSES,
           *targets_from_animation.CLASSES, *plant.CLASSES)
register_keymap = live_keys.register_keymap
unregister_keymap = live_keys.unregister_keymap
