"""The engine runs on numpy alone: importing it pulls in neither bpy nor mathutils."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_importing_the_engine_imports_no_blender_module():
    probe = (
        "import sys\n"
        "import ik_engine\n"
        "import ik_engine.solver, ik_engine.limits, ik_engine.tasks\n"
        "import ik_engine.euler, ik_engine.jacobian, ik_engine.prioritized\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('bpy', 'mathutils', 'bmesh'))\n"
        "print(loaded)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_no_engine_source_mentions_an_import_of_blender():
    engine = os.path.join(ROOT, "ik_engine")
    for name in os.listdir(engine):
        if name.endswith(".py"):
            with open(os.path.join(engine, name), encoding="utf-8") as f:
                for line in f:
                    stripped = line.strip()
                    assert not stripped.startswith(("import bpy", "from bpy", "import mathutils",
                                                    "from mathutils")), (name, line)
