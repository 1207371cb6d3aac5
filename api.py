"""The scripting module at its public path, ``bl_ext.<repo>.dq_ik.api``: everything of
``dq_ik_addon/api.py``, which documents it."""

from .dq_ik_addon.api import *  # noqa: F403
from .dq_ik_addon.api import __all__, __doc__  # noqa: F401
