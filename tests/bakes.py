"""What the ``dqik.bake`` tests (``tests/blender/test_bake_*.py``) share: animated targets, the
user's own keys, bakes through ``FrameBake`` and the operator, a bake's F-curves, and the rotations
and target errors the keys play back."""

import bpy
import numpy as np
import solve_problems as sp

FRAMES = (1, 120)


def animated_targets(obj, frames=FRAMES, amplitude=0.06):
    """Hand and foot targets keyed along smooth loops around points 12 cm from the rest tails
    towards the chain's root (bent limbs: reachable): feet at priority 1, hands at 2."""
    empties = sp.add_targets(obj, sp.EFFECTORS)
    for name in sp.EFFECTORS:
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
    first, last = frames
    for k, (name, empty) in enumerate(empties.items()):
        root = np.array(obj.matrix_world @ obj.pose.bones[name].parent.parent.head)
        rest = sp.world_tail(obj, name)
        rest += 0.12 * (root - rest) / np.linalg.norm(root - rest)
        for frame in np.linspace(first, last, 7):
            phase = 2 * np.pi * (frame - first) / (last - first) + k
            empty.location = rest + amplitude * np.array(
                [np.sin(phase), 0.5 * np.cos(phase), 0.7 * np.sin(2 * phase)])
            empty.keyframe_insert("location", frame=frame)
    bpy.context.view_layer.objects.active = obj
    return empties


def fcurves(dqik, obj):
    """Every F-curve of the armature's action in its slot."""
    return fcurves_of(dqik, obj.animation_data.action, obj)


def fcurves_of(dqik, action, obj):
    """Every F-curve of ``action`` in the slot with the identifier of the armature's."""
    slot = action.slots.get(obj.animation_data.action_slot.identifier)
    return dqik.dq_ik_addon.blender.keys.action_slots.slot_fcurves(action, slot)


def baker(dqik, obj, **options):
    """A ``FrameBake`` of ``obj`` over ``FRAMES`` with ``options``, not yet stepped."""
    return dqik.api.FrameBake(obj, bpy.context.scene, dqik.api.BakeOptions(*FRAMES, **options))


def played(obj, names, frames):
    """(F, k, 4) the bones' rotations Blender evaluates at each frame (in any rotation mode),
    and the effectors' errors (F, 4) against their targets."""
    scene = bpy.context.scene
    rotations, errors = [], []
    empties = {name: obj.pose.bones[name].dqik.target for name in sp.EFFECTORS}
    for frame in frames:
        scene.frame_set(int(frame))
        rotations.append([np.array(obj.pose.bones[name].matrix_basis.to_quaternion())
                          for name in names])
        errors.append(sp.effector_errors(obj, empties))
    return np.array(rotations), np.array(errors)


def same_rotations(a, b):
    """Largest |1 - |<a, b>|| style distance: the norm of a - b up to sign, per rotation."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return np.minimum(np.linalg.norm(a - b, axis=-1), np.linalg.norm(a + b, axis=-1)).max()


def key_old_animation(obj):
    """An action of the user's own: the head and the left upper arm turning over frames 1–120,
    in a slot of the armature."""
    for frame, angle in ((1, 0.0), (60, 0.4), (120, -0.3)):
        for name in ("spine.006", "upper_arm.L"):
            pose_bone = obj.pose.bones[name]
            pose_bone.rotation_mode = 'QUATERNION'
            pose_bone.rotation_quaternion = (np.cos(angle / 2), np.sin(angle / 2), 0, 0)
            pose_bone.keyframe_insert("rotation_quaternion", frame=frame, group=name)
    obj.pose.bones["spine.006"].rotation_quaternion = (1, 0, 0, 0)
    return obj.animation_data.action


def bone_rotations(obj, frames, name="spine.006"):
    """(F, 4) the bone's (the head's by default) rotation quaternion at each frame."""
    scene = bpy.context.scene
    out = []
    for frame in frames:
        scene.frame_set(frame)
        out.append(np.array(obj.pose.bones[name].rotation_quaternion))
    return np.array(out)


def random_rotation_modes(obj, names, seed):
    """The bones ``names`` put in quaternion, Euler or axis-angle modes, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    modes = ('QUATERNION', 'XYZ', 'ZXY', 'AXIS_ANGLE')
    for name in names:
        obj.pose.bones[name].rotation_mode = modes[int(rng.integers(0, len(modes)))]


def short_bake(obj, **options):
    """A 20-frame bake of ``obj``'s animated targets through the operator."""
    bpy.context.view_layer.objects.active = obj
    return bpy.ops.dqik.bake(frame_start=1, frame_end=20, **options)
