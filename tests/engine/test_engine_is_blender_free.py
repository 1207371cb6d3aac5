"""The engine runs on numpy alone: importing it pulls in neither bpy nor mathutils."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_importing_the_engine_imports_no_blender_module():
    probe = (
        "import sys\n"
        "import dq_ik_addon\n"
        "import dq_ik_addon.solver, dq_ik_addon.limits, dq_ik_addon.tasks\n"
        "import dq_ik_addon.euler, dq_ik_addon.jacobian, dq_ik_addon.prioritized\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('bpy', 'mathutils', 'bmesh'))\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_no_engine_source_mentions_an_import_of_blender():
    engine = os.path.join(ROOT, "dq_ik_addon")
    for name in os.listdir(engine):
        if name.endswith(".py"):
            with open(os.path.join(engine, name), encoding="utf-8") as f:
                for line in f:
                    stripped = line.strip()
                    assert not stripped.startswith(("import bpy", "from bpy", "import mathutils",
                                                    "from mathutils")), (name, line)
