"""Blender side of DQ IK: the armature bridge and the ``dqik.*`` operators."""

from . import build_chain, solve

CLASSES = (*build_chain.CLASSES, *solve.CLASSES,)
from . import import_limits, presets; CLASSES = (*CLASSES, *presets.CLASSES, *import_limits.CLASSES)  # noqa: E702
