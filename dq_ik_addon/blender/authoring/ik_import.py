"""Blender's own IK settings turned into DQ IK settings (``dqik.import_limits``).

Per bone (all bones, or the selected ones), local X becomes ``swing_x``, Z ``swing_z`` and Y the
twist, in radians relative to the rest pose:

- ``lock_ik_*`` gives both bounds 0; ``use_ik_limit_*`` with ``ik_min/max_*`` gives the range;
  an axis without either is free (±180°).
- A Limit Rotation constraint in Local Space limits the axes it uses (its Euler angles are taken as
  swing/twist angles, exact for motion about one axis). Other owner spaces are not converted.
  Where both apply, the tighter bound of each side wins.
- DQ IK limits always contain the rest pose, so a range that does not (Limit Rotation 10°..40°)
  is widened to include 0 and reported.
- ``ik_stiffness_*`` becomes ``stiffness``: the mean over the axes that are not locked (a locked
  axis does not move, so its stiffness means nothing). Bones without stiffness keep theirs.
- An IK constraint becomes the owner bone's task: target, subtarget, chain_count, weight,
  ``use_location`` → ``use_position``, ``use_rotation`` (rotation-only: the orient weight is the
  weight). Pole targets, an influence below 1, a second IK constraint, targetless or
  Use-Tail-off IK, Limit Distance IK and stretch are reported as not converted. A bone that
  already has a DQ IK task keeps it, and the constraint is reported as not converted.
- A Damped Track or Track To constraint becomes the owner bone's aim task: target, subtarget,
  ``track_axis`` → ``aim_axis``, chain length 1 (the constraint turns its bone alone). Track To's
  up axis (the aim leaves the roll free), a head/tail offset and an influence below 1 are reported
  as not converted; a bone that already has a task keeps it.
- Converted constraints are muted (not deleted) when ``mute_constraints`` is on, so Blender's
  constraints do not fight DQ IK; unmute them to go back. Muted constraints are skipped.
- Constraints on bones the animator does not see (hidden, or in hidden bone collections only)
  are the rig's own mechanism, not an IK set-up to take over: a generated Rigify rig's 38 IK
  and Damped Track constraints on MCH bones, which converted and muted moved its deforming
  bones. They are left alone, and counted in the report (``ImportNotes.left``).
"""

import math

from .limit_presets import LimitBounds

_FREE = (-math.pi, math.pi)


def _deg(angle):
    return f"{math.degrees(angle):.0f}°"


class ImportNotes:
    """What an import converted, widened and could not convert, for the report."""

    def __init__(self):
        self.limited, self.stiffened, self.tasks, self.muted = [], [], [], []
        self.widened, self.lost, self.left = [], [], []

    def summary(self, obj_name):
        parts = [f"imported limits of {len(self.limited)} bones",
                 f"stiffness of {len(self.stiffened)} bones", f"{len(self.tasks)} tasks"]
        text = f"DQ IK '{obj_name}': " + ", ".join(parts)
        if self.muted:
            text += f" ({len(self.muted)} constraints muted)"
        if self.widened:
            text += "; widened to include the rest pose: " + ", ".join(self.widened)
        if self.lost:
            text += "; not converted: " + ", ".join(self.lost)
        if self.left:
            text += (f"; left alone: {len(self.left)} constraints on hidden bones (the rig's own "
                     "mechanism)")
        return text

    def changed(self):
        return bool(self.limited or self.stiffened or self.tasks)


def shown(bone):
    """True when the animator sees ``bone``: not hidden, and in a shown bone collection (or in
    none)."""
    if bone.hide:
        return False
    collections = list(bone.collections)
    return not collections or any(getattr(collection, "is_visible_effectively",
                                          collection.is_visible) for collection in collections)


def _widen(lo, hi, label, notes):
    """``(lo, hi)`` clamped to ±180° and widened to contain 0 (noted when it had to be); a
    minimum above the maximum is taken the other way round, and noted."""
    if lo > hi:
        notes.lost.append(f"minimum above maximum in {label} ({_deg(lo)} > {_deg(hi)}; "
                          "imported as the range between them)")
    lo, hi = max(-math.pi, min(lo, hi)), min(math.pi, max(lo, hi))
    fixed = (min(lo, 0.0), max(hi, 0.0))
    if fixed != (lo, hi):
        notes.widened.append(f"{label} ({_deg(lo)}..{_deg(hi)} → {_deg(fixed[0])}..{_deg(fixed[1])})")
    return fixed


def _ik_ranges(pb, notes):
    """``{axis: (lo, hi)}`` from the bone's own IK locks and limits."""
    ranges = {}
    for axis in "xyz":
        if getattr(pb, f"lock_ik_{axis}"):
            ranges[axis] = (0.0, 0.0)
        elif getattr(pb, f"use_ik_limit_{axis}"):
            ranges[axis] = _widen(getattr(pb, f"ik_min_{axis}"), getattr(pb, f"ik_max_{axis}"),
                                  f"IK limit {axis.upper()} on {pb.name}", notes)
    if pb.ik_stretch > 0.0:
        notes.lost.append(f"IK stretch on {pb.name}")
    return ranges


def _limit_rotation_ranges(pb, con, notes):
    """``{axis: (lo, hi)}`` from a Limit Rotation constraint (Local Space only)."""
    if con.owner_space != 'LOCAL':
        notes.lost.append(f"Limit Rotation in {con.owner_space} space on {pb.name}")
        return {}
    if con.influence <= 0.0:
        notes.lost.append(f"Limit Rotation with influence 0 on {pb.name} (it limits nothing)")
        return {}
    if con.influence < 1.0:
        notes.lost.append(f"influence {con.influence:g} of Limit Rotation on {pb.name} "
                          "(imported as full limits)")
    return {axis: _widen(getattr(con, f"min_{axis}"), getattr(con, f"max_{axis}"),
                         f"Limit Rotation {axis.upper()} on {pb.name}", notes)
            for axis in "xyz" if getattr(con, f"use_limit_{axis}")}


def import_bone_limits(pb, notes):
    """Write the bone's combined limits and stiffness to ``pb.dqik``."""
    sources = [_ik_ranges(pb, notes)]
    sources += [_limit_rotation_ranges(pb, con, notes) for con in pb.constraints
                if con.type == 'LIMIT_ROTATION' and not con.mute]
    combined = {axis: _FREE for axis in "xyz"}
    for ranges in sources:
        for axis, (lo, hi) in ranges.items():
            combined[axis] = (max(combined[axis][0], lo), min(combined[axis][1], hi))
    if any(sources):
        LimitBounds(combined['x'], combined['z'], combined['y']).write(pb.dqik)
        notes.limited.append(pb.name)
    free = [axis for axis in "xyz" if not getattr(pb, f"lock_ik_{axis}")] or list("xyz")
    stiffness = [getattr(pb, f"ik_stiffness_{axis}") for axis in free]
    if any(value > 0.0 for value in stiffness):
        pb.dqik.stiffness = sum(stiffness) / len(stiffness)
        notes.stiffened.append(pb.name)


def _ik_problem(pb, con):
    """Why an IK constraint cannot become a DQ IK task, or None."""
    if con.ik_type != 'COPY_POSE':
        return f"IK Limit Distance on {pb.name}"
    if con.target is None:
        return f"IK without target on {pb.name}"
    if not con.use_tail:
        return f"IK with Use Tail off on {pb.name}"
    if not (con.use_location or con.use_rotation):
        return f"IK without position or rotation on {pb.name}"
    return None


def _has_task(pb, notes):
    """Why ``pb`` keeps the task it has (one set up before the import, or one this import
    made), or None."""
    if pb.name in notes.tasks:
        return "the bone already has a task from this import"
    if pb.dqik.use_target and pb.dqik.target is not None:
        return f"the bone already has a DQ IK task, to '{pb.dqik.target.name}'"
    return None


def import_ik_task(pb, con, mute, notes):
    """Turn one IK constraint into ``pb.dqik``'s task; note what is lost (a bone that already
    has a task keeps it)."""
    problem = _ik_problem(pb, con)
    kept = _has_task(pb, notes) if problem is None else None
    if kept is not None:
        problem = f"IK constraint '{con.name}' on {pb.name} ({kept})"
    if problem is not None:
        notes.lost.append(problem)
        return
    task = pb.dqik
    task.use_target, task.target, task.subtarget = True, con.target, con.subtarget
    task.chain_count = con.chain_count
    task.use_position, task.use_rotation = con.use_location, con.use_rotation
    task.weight = con.weight if con.use_location else con.orient_weight
    if con.use_location and con.use_rotation and abs(con.orient_weight - con.weight) > 1e-6:
        notes.lost.append(f"orient weight on {pb.name} (uses the weight)")
    if con.pole_target is not None:
        notes.lost.append(f"pole target on {pb.name}")
    if con.influence < 1.0:
        notes.lost.append(f"influence {con.influence:g} of the IK constraint on {pb.name}")
    _imported(pb, con, mute, notes)


def import_aim_task(pb, con, mute, notes):
    """Turn a Damped Track or Track To constraint into ``pb.dqik``'s aim task; note what is
    lost."""
    label = f"{'Damped Track' if con.type == 'DAMPED_TRACK' else 'Track To'} on {pb.name}"
    if con.target is None:
        notes.lost.append(f"{label} without target")
        return
    kept = _has_task(pb, notes)
    if kept is not None:
        notes.lost.append(f"{label} ({kept})")
        return
    task = pb.dqik
    task.use_target, task.target, task.subtarget = True, con.target, con.subtarget
    task.use_position = task.use_rotation = False
    task.use_aim, task.aim_axis, task.chain_count = True, con.track_axis, 1
    if con.type == 'TRACK_TO':
        notes.lost.append(f"up axis of {label} (the aim leaves the roll free)")
    if con.head_tail != 0.0:
        notes.lost.append(f"head/tail offset of {label}")
    if con.influence < 1.0:
        notes.lost.append(f"influence of {label}")
    _imported(pb, con, mute, notes)


def _imported(pb, con, mute, notes):
    """Note ``pb``'s task as imported from ``con``, muting ``con`` if asked."""
    notes.tasks.append(pb.name)
    if mute:
        con.mute = True
        notes.muted.append(pb.name)
