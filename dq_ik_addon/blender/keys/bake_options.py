"""What ``dqik.bake`` is asked to bake (``BakeOptions``), the frames that makes
(``bake_frames``) and what a finished bake reports (``BakeReport``)."""

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ArmatureError
from .keyed_frames import driving_objects, keyed_frames

BONE_SETS = ('TASK_CHAINS', 'SELECTED', 'ALL')
MAX_FRAME = 1048574     # MAXFRAME, source/blender/makesdna/DNA_scene_types.h (MINAFRAME is −MAXFRAME)
ACTIONS = ('NEW', 'ACTIVE')
FRAME_CHOICES = ('STEP', 'KEYED')


@dataclass(frozen=True)
class BakeOptions:
    """What ``dqik.bake`` bakes (its operator properties):

    - ``frame_start``, ``frame_end`` (inclusive, within ±``MAX_FRAME``), ``step`` (the end
      frame is baked too when the steps miss it);
    - ``bones``: ``'TASK_CHAINS'`` (the bones the enabled tasks move), ``'SELECTED'`` or
      ``'ALL'``; bones the solve does not move are keyed with their animated channels
      (rotation, location, scale) at each baked frame;
    - ``action``: ``'NEW'`` (a DQ IK action; the active one goes to the NLA) or ``'ACTIVE'``;
    - ``frames``: ``'STEP'`` (every ``step`` frames) or ``'KEYED'`` (the frames where the
      armature, a target, a collider or a parent of one has a key, and the range's ends);
    - ``cleanup_tolerance``: 0 keys every baked frame; above 0, keys of the solved bones are
      dropped where every task stays within it (world metres) on every frame, and
      no capsule sinks deeper into a collider than in the solve by more than it;
    - ``switch_off_tasks``: afterwards, every task it baked (the balance too) and Solve on
      Frame Change are off, so the keys play on their own (tasks it left out, a missing target,
      stay on)."""

    frame_start: int
    frame_end: int
    step: int = 1
    bones: str = 'TASK_CHAINS'
    action: str = 'NEW'
    frames: str = 'STEP'
    cleanup_tolerance: float = 0.0
    switch_off_tasks: bool = True


@dataclass(frozen=True)
class BakeReport:
    """What a finished bake did: frames solved, bones and keys written, where the keys and the
    animation that was there before went, the largest task error of any frame (metres;
    NaN without position tasks), seconds spent, the solve's warnings and how many frames'
    solves stopped at Max Iterations while still improving (``cut_short``)."""

    frames: int
    bones: tuple
    keys: int
    action: str
    old_animation: str
    worst_error: float
    seconds: float
    warnings: tuple
    cut_short: int = 0

    def describe(self):
        rate = self.frames / self.seconds if self.seconds > 0 else float("inf")
        short = (f"; {self.cut_short} frames stopped at Max Iterations while still improving "
                 "(raise it and bake again)") if self.cut_short else ""
        return (f"DQ IK: baked {self.frames} frames of {len(self.bones)} bones "
                f"({self.keys} keys) into '{self.action}' at {rate:.0f} frames/s; largest task "
                f"error {self.worst_error * 1e3:.3g} mm{short}; {self.old_animation}")


def check_options(options):
    """``ArmatureError`` unless ``options`` is a ``BakeOptions`` whose choices are known, naming
    the one that is not and those it may be."""
    if not isinstance(options, BakeOptions):
        raise ArmatureError(f"A bake needs its BakeOptions, not {options!r}")
    for field, choices in (("bones", BONE_SETS), ("action", ACTIONS), ("frames", FRAME_CHOICES)):
        value = getattr(options, field)
        if value not in choices:
            raise ArmatureError(f"Unknown bake option {field}={value!r}; it is one of "
                                + ", ".join(repr(choice) for choice in choices))


def check_frame_range(start, end):
    """``ArmatureError`` for a frame range that is empty or reversed, or goes past the frames
    Blender plays (``scene.frame_set`` holds at ±``MAX_FRAME``)."""
    if end < start:
        raise ArmatureError(f"The frame range {start}–{end} is empty or reversed; the end must "
                            "not come before the start")
    if start < -MAX_FRAME or end > MAX_FRAME:
        raise ArmatureError(f"The frame range {start}–{end} goes past the frames Blender "
                            f"plays (±{MAX_FRAME})")


def bake_frames(obj, options):
    """The frames a bake solves, in order (ints), or ``ArmatureError`` for an empty or reversed
    range or a step below 1."""
    start, end, step = options.frame_start, options.frame_end, options.step
    numbers = {"frame_start": start, "frame_end": end, "step": step}
    odd = [f"{name} {value!r}" for name, value in numbers.items()
           if isinstance(value, bool) or not isinstance(value, (int, np.integer))]
    if odd:
        raise ArmatureError(f"Bake frames are whole numbers, not {', '.join(odd)}")
    tolerance = options.cleanup_tolerance
    if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance >= 0):
        raise ArmatureError(f"The Clean Up tolerance must be a finite distance ≥ 0, not "
                            f"{tolerance!r}")
    check_frame_range(start, end)
    if step < 1:
        raise ArmatureError(f"The step must be at least 1 frame, not {step}")
    if options.frames == 'STEP':      # the end frame too, so the keys span the whole range
        return np.unique(np.append(np.arange(start, end + 1, step), end))
    keyed = keyed_frames(driving_objects(obj))
    inside = np.round(keyed[(keyed >= start) & (keyed <= end)]).astype(np.int64)
    return np.unique(np.concatenate([[start, end], inside]))
