"""The engine runs on numpy alone: importing any module of any of its sub-packages pulls in
neither Blender's modules nor the Blender side, and no engine source imports them."""

import ast
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENGINE = os.path.join(ROOT, "dq_ik_addon", "engine")
BLENDER_MODULES = ("bpy", "bpy_extras", "mathutils", "bmesh", "gpu", "gpu_extras")


def engine_sources():
    """Every ``.py`` file of the engine, sub-packages included, with its module name."""
    for folder, _, files in os.walk(ENGINE):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                yield path, module.removesuffix(".__init__")


def test_the_walk_finds_every_sub_package():
    modules = {module for _, module in engine_sources()}
    assert {"dq_ik_addon.engine.solver", "dq_ik_addon.engine.tasks.position",
            "dq_ik_addon.engine.limits.swing_twist"} <= modules


def test_importing_every_engine_module_imports_no_blender_module():
    modules = [module for _, module in engine_sources()]
    probe = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {BLENDER_MODULES!r}\n"
        "             or m.startswith(('dq_ik_addon.blender', 'dq_ik_addon.properties'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_no_engine_source_imports_blender():
    for path, module in engine_sources():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
                assert node.level < 3 or module.count(".") > 3, (module, node.module)
            else:
                continue
            assert not any(name.split(".")[0] in BLENDER_MODULES for name in names), (module, names)
