"""DQ IK for scripts: one solving session per armature.

    import bpy
    from bl_ext.user_default.dq_ik import api   # the module path of the installed extension

    session = api.session_for(bpy.data.objects["Armature"])
    snapshot = session.tick()          # solve from the current pose, write it
    print(snapshot.status, snapshot.iterations, snapshot.ms)
    for task in snapshot.tasks:        # TaskReport: name, status, position_error, rotation_error
        print(task.name, task.status, task.position_error)

``session.last_result`` keeps the last ``SolveSnapshot``; ``session.solver`` is the warm engine
``Solver`` and ``session.model`` its ``ChainModel`` (None before the first tick). A session
follows settings changed through their properties, by keyframes or by drivers, and rig edits
by itself; call ``session.invalidate()`` after writing a setting as a raw ID property
(``bridge/session.py`` says why). Problems raise ``ArmatureError``
with a message meant for the user.

Baking, what ``dqik.bake`` runs (``bridge/baking.py``), one frame at a time if you like::

    bake = api.FrameBake(rig, bpy.context.scene, api.BakeOptions(1, 120, cleanup_tolerance=1e-4))
    report = bake.finish()             # or bake.step() per frame; bake.cancel() puts all back
    print(report.describe())
"""

from .bridge.armature import ArmatureError
from .bridge.baking import BakeOptions, BakeReport, FrameBake
from .bridge.session import Session, SolveSnapshot, TaskReport, drop_sessions, session_for

__all__ = ["ArmatureError", "BakeOptions", "BakeReport", "FrameBake", "Session", "SolveSnapshot",
           "TaskReport", "drop_sessions", "session_for"]
