"""The one error the Blender side raises for the user, and how an operator reports it.

``ArmatureError``'s message is meant for the user; ``run_reported`` turns any failure into an
ERROR report (``Operator.report``), never a traceback dialog."""

import traceback


class ArmatureError(Exception):
    """An armature the solver cannot work on; the message is meant for the user."""


def check_armature_object(obj, role="A DQ IK session"):
    """``ArmatureError`` unless ``obj`` is an armature object (not deleted): ``role`` needs
    one."""
    try:
        kind, name = getattr(obj, "type", None), getattr(obj, "name", None)
    except ReferenceError:
        raise ArmatureError(f"{role} needs an armature object, and this one was deleted") \
            from None
    if kind != 'ARMATURE':
        what = "nothing" if obj is None else f"'{name}', a {kind.lower()}" \
            if isinstance(kind, str) and isinstance(name, str) else repr(obj)
        raise ArmatureError(f"{role} needs an armature object, not {what}")


def no_task(obj, warnings):
    """The ``ArmatureError`` of ``obj`` left with no task to solve, with the ``warnings`` that
    left its tasks out."""
    return ArmatureError(f"'{obj.name}' has no bone with an enabled DQ IK target"
                         + ("" if not warnings else ": " + "; ".join(warnings)))


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
