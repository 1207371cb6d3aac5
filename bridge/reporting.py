"""Operator plumbing: user-facing errors become ``self.report`` messages, never tracebacks."""

import traceback

from .armature import ArmatureError


def run_reported(operator, action):
    """Run ``action()`` and turn any failure into an ERROR report and ``{'CANCELLED'}``.

    Expected problems (``ArmatureError``) are reported as they are; anything else is reported with
    its type and also printed with the traceback to the system console, for bug reports.
    """
    try:
        return action()
    except ArmatureError as err:
        operator.report({'ERROR'}, str(err))
    except Exception as err:  # an unexpected bug must still not leave a traceback dialog
        traceback.print_exc()
        operator.report({'ERROR'}, f"DQ IK internal error ({type(err).__name__}): {err}")
    return {'CANCELLED'}
