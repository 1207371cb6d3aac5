"""Test harness: engine tests import ``dq_ik_addon.engine`` from the repo; Blender tests get the extension
built with Blender's CLI, installed from its zip into a temporary user folder and enabled.

``BLENDER_USER_RESOURCES`` must be set before the first ``import bpy`` of the process, so it is set
here, when pytest loads this file.
"""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extension_cli  # noqa: E402

extension_cli.use_scratch_user_resources()


_EXIT_STATUS = [0]


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _EXIT_STATUS[0] = int(exitstatus)


def pytest_unconfigure(config):
    """Leave the process directly once pytest has reported everything.

    bpy 4.5.15 can deadlock at interpreter exit: a static destructor waits for its delayed-close
    file thread (seen with gdb: ``GlobalState::~GlobalState`` / ``delayed_close_thread_run``),
    so ``make test-lts`` would never return. Nothing is left to clean up at this point.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_EXIT_STATUS[0])


@pytest.fixture(scope="session")
def extension_zip(tmp_path_factory):
    """The extension zip, validated and built by Blender's own extension CLI."""
    return extension_cli.build(str(tmp_path_factory.mktemp("dist")))


@pytest.fixture(scope="session")
def dqik(extension_zip):
    """The installed and enabled extension module (``bl_ext.user_default.dq_ik``)."""
    import bpy
    module = extension_cli.install(extension_zip)
    assert hasattr(bpy.types.PoseBone, "dqik")
    yield module


@pytest.fixture
def clean_scene(dqik):
    """An empty scene, with the extension still enabled."""
    import bpy
    bpy.ops.wm.read_homefile(use_empty=True)
    yield bpy.context.scene
    bpy.ops.wm.read_homefile(use_empty=True)
