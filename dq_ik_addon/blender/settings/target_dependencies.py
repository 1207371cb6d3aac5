"""Targets that the solve itself moves, found and left out.

A task whose target follows a bone that the same solve turns is a dependency cycle: each solve
moves the target it aimed at, so the next solve chases it, leaves it off the bone again and
spends a same-level task's freedom on it. ``without_cycles`` leaves such tasks out with a
warning naming the target and the bone.

What a target follows is what Blender computes its world transform from (Blender manual,
"Objects › Parent" and "Constraints"):

- a bone subtarget follows that bone;
- an object follows its parent: the parent bone for ``parent_type`` 'BONE', and for a vertex
  parent ('VERTEX', 'VERTEX_3') on a mesh that an Armature modifier (or Armature parenting)
  deforms, also the bones named by those vertices' groups;
- an object, a bone or any ancestor of that bone follows the targets of its constraints that are
  not muted and have influence (``target``/``subtarget``, each target of an Armature constraint,
  an IK constraint's pole);
- and, through any of these, whatever the object or bone it follows follows.

A bone moves with each of its ancestors, so a target is moved by the solve when a bone of the
solved armature it follows, or an ancestor of that bone, is one the solve turns: a bone of a
task's chain (``chain_count``) with stiffness below 1, as ``Problem.moved_mask``. Which bones
turn depends on which tasks remain, so the check repeats until no further task is left out (the
turned set only shrinks). Drivers, hooks and surface constraints (Shrinkwrap) on deformed meshes
are not followed.

It runs on every solve, as parenting and constraints change without any update callback: about
6 µs for four tasks whose targets have no parent and no constraint (a few attribute reads each),
about 50 µs when a target follows a bone of the solved armature, the only case in which the
turned bones are worked out (basic and human metarigs, bpy 5.0.1 and 4.5.15).
"""

import numpy as np

from ...engine import joint_masks

_VERTEX_PARENTS = {'VERTEX': 1, 'VERTEX_3': 3}


def without_cycles(obj, model, sources):
    """``(kept, warnings)``: the ``TaskSource``s of the armature ``obj`` (``ChainModel``
    ``model``) whose targets the solve of the kept ones does not move, and a warning for each
    source left out. A source whose target is another bone of the armature that the solve
    moves (its ``partner``) is kept as a loop instead (its ``loop_parts``), when its kinds
    have a loop; a partner the solve does not move is a target like any other."""
    plain = [source._replace(partner=-1) for source in sources]
    followed = [_followed_bones(obj, source) for source in sources]
    if not any(followed):
        return plain, []
    loops, chains = set(), joint_masks(model, plain)
    stiff = _stiff_bones(obj, model, chains.any(axis=0), followed)
    kept, warnings = list(range(len(sources))), []
    while True:
        turned = chains[kept].any(axis=0) & ~stiff
        cycles = {}
        for i in set(kept) - loops:
            cycle = turned_bone_followed(model, followed[i], turned)
            if cycle is not None:
                cycles[i] = cycle
        looping = {i for i in cycles if sources[i].partner >= 0 and sources[i].loop_parts}
        chosen = [sources[i]._replace(parts=sources[i].loop_parts) if i in loops | looping
                  else plain[i] for i in range(len(sources))]
        if not cycles:
            return [chosen[i] for i in kept], warnings
        loops |= looping
        warnings += [_describe(obj, sources[i], *cycles[i]) for i in sorted(cycles)
                     if i not in looping]
        kept = [i for i in kept if i not in cycles or i in looping]
        chains = joint_masks(model, chosen)


def _stiff_bones(obj, model, in_chains, followed):
    """(n,) bool: the bones with stiffness 1, which the solve never turns, read only among those
    that matter: the bones in the chains (``in_chains``) that move a followed bone."""
    bones = [model.index[name] for names in followed for name in names if name in model.index]
    stiff = np.zeros(len(model), dtype=bool)
    pose_bones = obj.pose.bones
    moving = model.descendants_mask()[:, bones].any(axis=1) & in_chains
    for i in np.flatnonzero(moving).tolist():
        stiff[i] = pose_bones[i].dqik.stiffness >= 1.0
    return stiff


def turned_bone_followed(model, followed, turned):
    """``(followed bone, the bone the solve turns that moves it, via)`` for the first bone of
    ``followed`` ({name: via}) that moves with a turned bone (``turned``, (n,) mask), or None."""
    for name, via in followed.items():
        bone = model.index.get(name, -1)
        while bone >= 0 and not turned[bone]:
            bone = model.parents[bone]
        if bone >= 0:
            return name, model.names[bone], via
    return None


def _describe(obj, source, bone, turned, via):
    """The warning of a task left out, e.g. ``hand.L: its target 'Empty' moves with bone
    'forearm.L', which this solve moves; skipped``."""
    target = source.target
    moved = "which this solve moves" if turned == bone else \
        f"a descendant of bone '{turned}', which this solve moves"
    if target == obj and bone == source.subtarget and not via:
        return (f"{source.name}: its target, bone '{bone}', "
                + ("is moved by this solve" if turned == bone else f"is {moved}") + "; skipped")
    named = f"'{target.name}'" + (f" bone '{source.subtarget}'"
                                  if source.subtarget and target.type == 'ARMATURE' else "")
    through = f" (through {', '.join(via)})" if via else ""
    return f"{source.name}: its target {named} moves with bone '{bone}'{through}, {moved}; skipped"


def _followed_bones(armature, source):
    """{bone name of ``armature``: what lies between (names, in order)} for every bone of the
    solved armature that the source's target follows."""
    target = source.target
    if target is None:
        return {}
    try:
        return bones_followed(armature, [(target, source.subtarget if target.type == 'ARMATURE' else "")])
    except ReferenceError:       # a deleted target: ``aimed_tasks`` names it
        return {}


def bones_followed(armature, starts):
    """{bone of ``armature``: via} for the bones that the ``starts`` (pairs of an object and one
    of its bones, or "") follow, depth first, each object and bone visited once and each bone's
    ancestors walked once. A start bone that another start follows is given that path (not
    the empty one it starts with)."""
    found, seen, walked = {}, set(), set()
    stack = [(target, subtarget, ()) for target, subtarget in starts]
    while stack:
        obj, bone, via = stack.pop()
        key = (obj.as_pointer(), bone)
        if key in seen:
            if via and found.get(bone) == () and obj == armature:
                found[bone] = via
            continue
        seen.add(key)
        pose_bone = obj.pose.bones.get(bone) if bone and obj.pose is not None else None
        if pose_bone is None:
            if obj != armature:       # the solve does not move the armature object
                stack += _object_follows(armature, obj, via)
            continue
        if obj == armature:
            found.setdefault(bone, via)
        else:
            stack.append((obj, "", via))
        while pose_bone is not None and (key := (key[0], pose_bone.name)) not in walked:
            walked.add(key)
            stack += _constraint_targets(armature, pose_bone.constraints, via,
                                         f" of bone '{pose_bone.name}'")
            pose_bone = pose_bone.parent
    return found


def _node(armature, obj, bone, via):
    """``(object, bone name or "", via)``: a bone name counts only on an armature; ``via`` gains
    the object's name unless it is the solved armature."""
    return (obj, bone if bone and obj.type == 'ARMATURE' else "",
            via if obj == armature else via + (f"'{obj.name}'",))


def _object_follows(armature, obj, via):
    """The nodes an object follows: its parent (bone), the bones deforming its vertex parent,
    its constraints' targets."""
    nodes = []
    parent = obj.parent
    if parent is not None:
        kind = obj.parent_type
        nodes.append(_node(armature, parent, obj.parent_bone if kind == 'BONE' else "", via))
        if kind in _VERTEX_PARENTS and parent.type == 'MESH':
            vertices = obj.parent_vertices[:_VERTEX_PARENTS[kind]]
            nodes += _deforming_bones(armature, parent, vertices, via + (f"'{parent.name}'",))
    return nodes + _constraint_targets(armature, obj.constraints, via, "")


def _deforming_bones(armature, mesh, vertices, via):
    """Bone nodes moving ``vertices`` of ``mesh``: for each armature deforming the mesh (Armature
    modifier shown in the viewport, or Armature parenting), the bones named by the vertex groups
    those vertices are weighted to."""
    deformers = [m.object for m in mesh.modifiers
                 if m.type == 'ARMATURE' and m.object is not None and m.show_viewport]
    if mesh.parent is not None and mesh.parent_type == 'ARMATURE':
        deformers.append(mesh.parent)
    if not deformers:
        return []
    points, groups = mesh.data.vertices, mesh.vertex_groups
    names = {groups[g.group].name for v in vertices if v < len(points)
             for g in points[v].groups if g.weight > 0.0 and g.group < len(groups)}
    return [_node(armature, deformer, name, via) for deformer in deformers for name in names]


def acts(constraint):
    """True for a constraint Blender applies: not muted, with influence above 0."""
    return not constraint.mute and constraint.influence > 0.0


def _constraint_targets(armature, constraints, via, owner):
    """The nodes targeted by ``constraints`` that are not muted and have influence; each path
    gains the constraint's name followed by ``owner`` (`` of bone 'x'``, or "" for an object's)."""
    nodes = []
    for constraint in constraints:
        if not acts(constraint):
            continue
        if constraint.type == 'ARMATURE':
            pairs = [(t.target, t.subtarget) for t in constraint.targets]
        else:
            pairs = [(getattr(constraint, "target", None), getattr(constraint, "subtarget", ""))]
            if constraint.type == 'IK':
                pairs.append((constraint.pole_target, constraint.pole_subtarget))
        step = via + (f"constraint '{constraint.name}'{owner}",)
        nodes += [_node(armature, target, bone, step) for target, bone in pairs
                  if target is not None]
    return nodes


def mutual_targets(armature, sources):
    """``(names, warnings)``: the ``sources`` of ``armature`` whose target follows another
    armature (a bone of it, its object, through parents and constraints) that has a DQ IK task
    whose target follows a bone of ``armature`` in turn, and a warning naming both: the two
    solve one after the other, each from where the other was, so neither is met once the other
    has moved, and neither may be reported met."""
    found = {}
    for source in sources:
        try:
            others = _armatures_followed(armature, source.target)
        except ReferenceError:      # a deleted target: ``aimed_tasks`` names it
            continue
        for other in others:
            starts = [(pb.dqik.target, pb.dqik.subtarget) for pb in other.pose.bones
                      if pb.dqik.use_target and pb.dqik.target is not None]
            if starts and bones_followed(armature, starts):
                found[source.name] = other
                break
    return set(found), [f"{name}: its target follows '{other.name}', whose DQ IK targets follow "
                        f"'{armature.name}' in turn; each solves from where the other was, so "
                        f"{name} is not reported met (target an Empty instead)"
                        for name, other in found.items()]


def armatures_followed(armature, targets):
    """The armatures other than ``armature`` that any of ``targets`` (objects, or None) is or
    follows (``_armatures_followed``); a deleted target is passed over."""
    found = {}
    for target in targets:
        try:
            found.update((other.as_pointer(), other)
                         for other in _armatures_followed(armature, target))
        except ReferenceError:
            continue
    return list(found.values())


def _armatures_followed(armature, target):
    """The armatures other than ``armature`` that ``target`` is or follows through parents and
    constraint targets (objects only: a bone's constraints belong to its armature)."""
    found, seen, stack = [], set(), [] if target is None else [target]
    while stack:
        obj = stack.pop()
        if obj.as_pointer() in seen or obj == armature:
            continue
        seen.add(obj.as_pointer())
        if obj.type == 'ARMATURE':
            found.append(obj)
        stack += [node[0] for node in _object_follows(armature, obj, ())]
    return found
