"""Validate and build the extension zip with Blender's own extension CLI, from the bpy wheel.

``python tests/extension_cli.py build [OUTPUT_DIR]`` validates the repo and writes
``OUTPUT_DIR/dq_ik-<version>.zip`` (default ``dist/``); it prints the zip path.
"""

import glob
import os
import subprocess
import sys
import tomllib

MODULE = "bl_ext.user_default.dq_ik"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli_path():
    """``bpy/<ver>/scripts/addons_core/bl_pkg/cli/blender_ext.py`` of the bpy this Python runs."""
    import importlib.util
    spec = importlib.util.find_spec("bpy")
    if spec is None:
        raise RuntimeError("bpy is not installed in this Python; run `make test` to create the venv")
    found = glob.glob(os.path.join(os.path.dirname(spec.origin), "*", "scripts", "addons_core",
                                   "bl_pkg", "cli", "blender_ext.py"))
    if not found:
        raise RuntimeError("the bpy wheel has no extension CLI (blender_ext.py)")
    return found[0]


def _run(*args):
    subprocess.run([sys.executable, cli_path(), *args], check=True)


def manifest_version():
    with open(os.path.join(ROOT, "blender_manifest.toml"), "rb") as f:
        return tomllib.load(f)["version"]


def validate():
    _run("validate", ROOT)


def build(output_dir):
    """Validate, then build; returns the zip's path."""
    validate()
    os.makedirs(output_dir, exist_ok=True)  # the CLI fails if the folder is missing
    _run("build", "--source-dir", ROOT, "--output-dir", output_dir)
    path = os.path.join(output_dir, f"dq_ik-{manifest_version()}.zip")
    if not os.path.isfile(path):
        raise RuntimeError(f"the extension CLI did not write {path}")
    return path


def install(zip_path):
    """Install and enable the zip in this process's Blender; returns the extension module.

    ``BLENDER_USER_RESOURCES`` must point to a scratch folder before ``bpy`` is first imported
    (see ``use_scratch_user_resources``).
    """
    import importlib

    import bpy
    result = bpy.ops.extensions.package_install_files(
        filepath=zip_path, repo='user_default', enable_on_install=True)
    if result != {'FINISHED'}:
        raise RuntimeError(f"installing {zip_path} returned {result}")
    return importlib.import_module(MODULE)


def use_scratch_user_resources():
    """Point Blender's user folder at a new temporary folder (call before ``import bpy``)."""
    import tempfile
    if "bpy" in sys.modules:
        raise RuntimeError("set BLENDER_USER_RESOURCES before bpy is imported")
    os.environ["BLENDER_USER_RESOURCES"] = tempfile.mkdtemp(prefix="dqik-user-")


def build_and_install(output_dir):
    """Scratch user folder, validated build, install, enable: the extension module, for scripts."""
    use_scratch_user_resources()
    return install(build(output_dir))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] != "build":
        sys.exit(__doc__)
    print(build(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "dist")))
