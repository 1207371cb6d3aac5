"""Shared setup for the benchmark scripts (not a benchmark itself; running it does nothing).

``install()`` builds the extension zip with Blender's CLI and installs it into a scratch user
folder (``tests/extension_cli.py``); it must run before ``bpy`` is imported, so the scripts import
``bpy``, ``rigs`` and ``solve_problems`` only after calling it.
"""

import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (os.path.join(ROOT, "tests"), ROOT):
    if _path not in sys.path:
        sys.path.insert(0, _path)


@contextlib.contextmanager
def quiet():
    """Silence stdout at the file-descriptor level (Blender's CLI and Rigify print chatter)."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
        try:
            yield
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)


@contextlib.contextmanager
def writing_back(obj, channel):
    """While the block runs, a ``frame_change_post`` handler writes ``obj``'s pose ``channel``
    (4 wide: ``rotation_quaternion``; 3: ``rotation_euler``) back unchanged and tags the object,
    as DQ IK writes a solved pose (``PoseArrays.write``), solving nothing: the least any solver
    that writes pose channels from Python adds to a frame change (Blender then copies the
    armature for evaluation and evaluates its whole pose again)."""
    import bpy
    bones, width = obj.pose.bones, 4 if channel == "rotation_quaternion" else 3

    def write_back(scene, depsgraph=None):
        values = np.empty(len(bones) * width, dtype=np.float32)
        bones.foreach_get(channel, values)
        bones.foreach_set(channel, values)
        obj.update_tag(refresh={'OBJECT'})
    bpy.app.handlers.frame_change_post.append(write_back)
    try:
        yield
    finally:
        bpy.app.handlers.frame_change_post.remove(write_back)


def install():
    """Build, install and enable the extension; returns ``bl_ext.user_default.dq_ik``."""
    import extension_cli
    with quiet():
        return extension_cli.build_and_install(tempfile.mkdtemp(prefix="dqik-bench-"))


def engine(dqik, name):
    """The engine submodule ``dq_ik_addon.engine.<name>`` of the installed extension (by import, so a
    same-named function re-exported by the package cannot shadow it)."""
    return importlib.import_module(f"{dqik.__name__}.dq_ik_addon.engine.{name}")


def new_rig(kind):
    """An empty scene holding a Rigify metarig (``'basic'`` 29 bones, ``'human'`` 159), in pose mode."""
    import bpy
    import rigs
    bpy.ops.wm.read_homefile(use_empty=True)
    with quiet():
        return rigs.metarig(kind)


def use_quaternions(obj):
    """Every pose bone to quaternion rotation mode (the metarigs mix in some YXZ Eulers)."""
    for pb in obj.pose.bones:
        pb.rotation_mode = 'QUATERNION'


def set_rotations(obj, rotations, locations=None):
    """Write (n,4) quaternions (and (n,3) locations) to all bones at once; see ``use_quaternions``.
    The armature object alone is tagged, as ``dqik.solve`` does (pose channels are object data;
    a tag of everything also re-evaluates the armature data, half as much again for Blender)."""
    bones = obj.pose.bones
    bones.foreach_set("rotation_quaternion", np.ascontiguousarray(rotations, dtype=np.float32).ravel())
    if locations is not None:
        bones.foreach_set("location", np.ascontiguousarray(locations, dtype=np.float32).ravel())
    obj.update_tag(refresh={'OBJECT'})


def rotations_of(obj):
    """Every pose bone's ``rotation_quaternion`` channels, (n,4) (see ``use_quaternions``)."""
    flat = np.empty(len(obj.pose.bones) * 4, dtype=np.float32)
    obj.pose.bones.foreach_get("rotation_quaternion", flat)
    return flat.reshape(-1, 4)


def evaluated_matrices(obj):
    """The evaluated ``PoseBone.matrix`` of every bone (no depsgraph update), (n,4,4) row-major."""
    flat = np.empty(len(obj.pose.bones) * 16, dtype=np.float32)
    obj.pose.bones.foreach_get("matrix", flat)
    return flat.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)


REPEATS = 3


def fastest_ms(call, before=None, repeats=REPEATS):
    """``(ms, result)``: the fastest of ``repeats`` timed runs of ``call()``, each preceded by an
    untimed ``before()``. The machine's other load only ever adds time, so the fastest run is the
    cost of the work itself; the runs repeat the same deterministic computation."""
    best, result = float("inf"), None
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        result = call()
        best = min(best, (time.perf_counter() - start) * 1e3)
    return best, result


PROCESSES = 3


def in_processes(script, arguments=(), count=PROCESSES):
    """Run ``script`` (a benchmark's path) ``count`` times in fresh processes with ``--one`` and
    ``arguments``, and return what each printed as JSON on its last line. Some effects last a
    whole process (where the operating system puts Blender's and the software rasterizer's
    threads on a 2-core machine: a whole process's figures can come out about twice as long),
    so a benchmark keeps the process with the fastest figure, as ``fastest_ms`` keeps the
    fastest run."""
    return [json.loads(subprocess.run([sys.executable, os.path.abspath(script), "--one",
                                       *arguments], capture_output=True, text=True, check=True)
                       .stdout.strip().splitlines()[-1]) for _ in range(count)]


def pressed(idname):
    """A call of the operator ``idname`` (``"dqik.solve"``) as a button or a shortcut runs it: the
    operator and its undo push. ``bpy.ops``' Python wrapper also evaluates the view layer before
    and after every call (``_view_layer_update`` in ``scripts/modules/bpy/ops.py``), an update
    of the whole scene that a press leaves to the next redraw; the benchmarks time that update
    on its own row."""
    from _bpy import ops

    return lambda: ops.call(idname, {})


def same_warm_start(solver, before=None):
    """A ``before`` for ``fastest_ms`` that gives ``solver`` back the last result it remembered,
    with the limited joints' parameters its last trial found there (and runs ``before``): every
    repeat is then the same warm solve, one that goes on from the previous step's result, not a
    solve from a start it did not produce (``Solver.warm_start``, ``Solver.resume``)."""
    memory = solver.warm_start()

    def restore():
        if before is not None:
            before()
        solver.resume(memory)
    return restore


def median_p90(samples):
    samples = np.asarray(samples, dtype=float)
    return float(np.median(samples)), float(np.percentile(samples, 90))


def markdown(headers, rows):
    """A markdown table from a header list and rows of already formatted cells."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def versions():
    import bpy
    return f"Blender {bpy.app.version_string} (bpy), numpy {np.__version__}, Python {sys.version.split()[0]}"
