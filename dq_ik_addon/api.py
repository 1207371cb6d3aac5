"""DQ IK for scripts: one solving session per armature.

    import bpy
    from bl_ext.user_default.dq_ik import api   # the module path of the installed extension

    session = api.session_for(bpy.data.objects["Armature"])
    snapshot = session.tick()          # solve from the current pose, write it
    print(snapshot.status, snapshot.iterations, snapshot.ms)
    for task in snapshot.tasks:        # TaskReport: name, status, errors per kind of task
        print(task.name, task.status, task.errors)   # {'position': metres, 'rotation': radians}

``session.last_result`` keeps the last ``SolveSnapshot``; ``session.solver`` is the warm engine
``Solver`` and ``session.model`` its ``ChainModel`` (None before the first tick). A session
follows settings changed through their properties, by keyframes or by drivers, and rig edits
by itself; call ``session.invalidate()`` after writing a setting as a raw ID property
(``blender/solving/session.py`` says why). Problems raise ``ArmatureError``
with a message meant for the user.

Live posing, what ``dqik.live`` runs (``blender/solving/live_posing.py``), ticked by the script::

    live = api.LivePosing(rig)         # the pose it starts from is kept
    live.tick()                        # one live tick (None: nothing moved)
    live.confirm(bpy.context)          # or live.cancel(): the starting pose back, bit for bit

Baking, what ``dqik.bake`` runs (``blender/keys/baking.py``), one frame at a time if you like::

    bake = api.FrameBake(rig, bpy.context.scene, api.BakeOptions(1, 120, cleanup_tolerance=1e-4))
    report = bake.finish()             # or bake.step() per frame; bake.cancel() puts all back
    print(report.describe())
"""

from .blender.errors import ArmatureError
from .blender.keys.bake_options import BakeOptions, BakeReport
from .blender.keys.baking import FrameBake
from .blender.solving.live_posing import LivePosing
from .blender.solving.session import Session
from .blender.solving.sessions import drop_sessions, session_for
from .blender.solving.snapshot import SolveSnapshot, TaskReport

__all__ = ["ArmatureError", "BakeOptions", "BakeReport", "FrameBake", "LivePosing", "Session",
           "SolveSnapshot", "TaskReport", "drop_sessions", "session_for"]
