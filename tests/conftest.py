"""Test harness: engine tests import ``dq_ik_addon`` from the repo; Blender tests get the extension
built with Blender's CLI, installed from its zip into a temporary user folder and enabled.

``BLENDER_USER_RESOURCES`` must be set before the first ``import bpy`` of the process, so it is set
here, when pytest loads this file.
"""

import importlib
import os
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ["BLENDER_USER_RESOURCES"] = tempfile.mkdtemp(prefix="dqik-user-")

from extension_cli import MODULE  # noqa: E402  (after the environment is set)


@pytest.fixture(scope="session")
def extension_zip(tmp_path_factory):
    """The extension zip, validated and built by Blender's own extension CLI."""
    import extension_cli
    return extension_cli.build(str(tmp_path_factory.mktemp("dist")))


@pytest.fixture(scope="session")
def dqik(extension_zip):
    """The installed and enabled extension module (``bl_ext.user_default.dq_ik``)."""
    import bpy
    result = bpy.ops.extensions.package_install_files(
        filepath=extension_zip, repo='user_default', enable_on_install=True)
    assert result == {'FINISHED'}
    module = importlib.import_module(MODULE)
    assert hasattr(bpy.types.PoseBone, "dqik")
    yield module


@pytest.fixture
def clean_scene(dqik):
    """An empty scene, with the extension still enabled."""
    import bpy
    bpy.ops.wm.read_homefile(use_empty=True)
    yield bpy.context.scene
    bpy.ops.wm.read_homefile(use_empty=True)
