"""Calling Blender's operators quietly from the demo: their console output (written by Blender's
C code, below Python) captured, the DQ IK report lines picked out of it, the wall time measured."""

import contextlib
import os
import sys
import tempfile
import time


@contextlib.contextmanager
def captured_output():
    """Capture everything written to stdout/stderr at the file-descriptor level (Blender's C
    code prints operator reports and render progress there). Yields a list that receives the
    captured text when the block ends; if the block fails, the text is replayed on stderr."""
    text = []
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    failed = False
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield text
        except BaseException:
            failed = True
            raise
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            sink.seek(0)
            text.append(sink.read().decode("utf-8", "replace"))
            if failed:
                sys.stderr.write(text[0])


def report_lines(text, prefix="DQ IK"):
    """The operator reports (``Info: DQ IK ...``) among captured console output."""
    lines = [line.strip() for line in text.splitlines() if prefix in line]
    return [line.split("Info: ", 1)[-1] if line.startswith("Info: ") else line for line in lines]


def timed_operator(operator, **properties):
    """Run ``operator(**properties)`` with its console output captured; returns its result, its
    DQ IK report lines and its wall time (ms)."""
    with captured_output() as out:
        start = time.perf_counter()
        result = operator(**properties)
        elapsed_ms = (time.perf_counter() - start) * 1e3
    return result, report_lines(out[0]), elapsed_ms
