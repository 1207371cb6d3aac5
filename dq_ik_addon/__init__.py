"""DQ IK engine: dual-quaternion chain model and prioritized IK, on numpy alone (no bpy)."""

from .chain_model import ChainModel

__all__ = ["ChainModel"]
