"""Blender side of DQ IK: the armature bridge and the ``dqik.*`` operators."""

from . import build_chain

CLASSES = (*build_chain.CLASSES,)
