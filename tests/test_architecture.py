"""The layout the project was commissioned with, checked statically (no bpy): the top level, the
size of modules, the narrow engine boundary, and the one module map (``docs/architecture.md``)
naming every product module."""

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRODUCT = ("dq_ik_addon", "operators", "panels")
BLENDER_SIDE = ("dq_ik_addon/blender", "operators", "panels", "dq_ik_addon/properties.py",
                "dq_ik_addon/api.py")


def product_modules():
    """Every ``.py`` file of the product, as a path relative to the repository."""
    found = ["__init__.py", "api.py"]
    for top in PRODUCT:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            found += [os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, "/")
                      for name in files if name.endswith(".py")]
    return sorted(found)


def _lines(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read().splitlines()


def test_the_top_level_is_the_commissioned_one():
    for name in ("blender_manifest.toml", "__init__.py", "dq_ik_addon", "operators", "panels",
                 "tests", "README.md", "dq_ik_addon/engine", "dq_ik_addon/blender",
                 "dq_ik_addon/properties.py", "dq_ik_addon/api.py"):
        assert os.path.exists(os.path.join(ROOT, name)), name


def test_the_root_init_only_registers():
    tree = ast.parse("\n".join(_lines("__init__.py")))
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert functions == {"register", "unregister"}


@pytest.mark.parametrize("path", product_modules())
def test_no_module_is_too_long(path):
    limit = 300 if path.startswith("dq_ik_addon/engine/") else 400
    assert len(_lines(path)) <= limit


def _engine_imports(path):
    """The engine modules ``path`` imports, as dotted names after ``engine``."""
    tree = ast.parse("\n".join(_lines(path)))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            match = re.match(r"(?:dq_ik_addon\.)?engine(\..+)?$", node.module)
            if match and (node.level > 0 or node.module.startswith("dq_ik_addon")):
                found.append(match.group(1) or "")
    return found


@pytest.mark.parametrize("path", [p for p in product_modules()
                                  if p.startswith(BLENDER_SIDE) or p == "api.py"])
def test_the_blender_side_imports_the_engine_package_only(path):
    """The engine's package (``dq_ik_addon/engine/__init__.py``) is its whole API for the
    Blender side, as ``intern/iksolver``'s few calls are for Blender."""
    assert [name for name in _engine_imports(path) if name] == []


def test_nothing_outside_the_engine_reaches_the_solvers_problem():
    for path in product_modules():
        if not path.startswith("dq_ik_addon/engine/"):
            assert not re.search(r"\.problem\b", "\n".join(_lines(path))), path


def test_the_module_map_names_every_product_module():
    text = "\n".join(_lines("docs/architecture.md"))
    missing = [path for path in product_modules() if f"`{path}`" not in text]
    assert missing == []


def test_the_readme_links_the_module_map_and_keeps_none_of_its_own():
    readme = "\n".join(_lines("README.md"))
    assert "docs/architecture.md" in readme
    scripts = set(os.listdir(os.path.join(ROOT, "benchmarks"))) \
        | set(os.listdir(os.path.join(ROOT, "demo")))    # named in the README as commands
    named = [path for path in product_modules() if not path.endswith("__init__.py")
             and os.path.basename(path) not in scripts
             and re.search(rf"`[\w/]*{re.escape(os.path.basename(path))}`", readme)]
    assert named == []
