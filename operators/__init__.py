"""Blender side of DQ IK: the armature bridge and the ``dqik.*`` operators."""

from . import build_chain, import_limits, presets, solve

CLASSES = (*build_chain.CLASSES, *solve.CLASSES, *presets.CLASSES, *import_limits.CLASSES)
