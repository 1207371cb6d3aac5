"""Test rigs: Blender's own Rigify metarigs and a small hand-built rig with awkward bones."""

import math

import bpy
import numpy as np


def _new_armature_object(name="Rig"):
    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    return obj


def metarig(kind):
    """``'basic'`` → Rigify basic human (29 bones); ``'human'`` → Rigify human (159 bones)."""
    bpy.ops.preferences.addon_enable(module="rigify")
    if kind == "basic":
        bpy.ops.object.armature_basic_human_metarig_add()
    else:
        bpy.ops.object.armature_human_metarig_add()
    obj = bpy.context.active_object
    bpy.ops.object.mode_set(mode='POSE')
    return obj


def awkward_rig():
    """Two roots, rolled bones, a disconnected bone with an offset, a connected chain."""
    obj = _new_armature_object("Awkward")
    bpy.ops.object.mode_set(mode='EDIT')
    eb = obj.data.edit_bones
    root_a = eb.new("root_a")
    root_a.head, root_a.tail, root_a.roll = (0, 0, 0), (0, 0, 1), 0.3
    upper = eb.new("upper")
    upper.head, upper.tail, upper.roll = (0, 0, 1), (0.4, 0.1, 1.6), -1.1
    upper.parent, upper.use_connect = root_a, True
    lower = eb.new("lower")
    lower.head, lower.tail, lower.roll = (0.4, 0.1, 1.6), (0.9, -0.2, 1.9), 2.0
    lower.parent, lower.use_connect = upper, True
    offset = eb.new("offset")
    offset.head, offset.tail, offset.roll = (0.3, 0.5, 1.2), (0.3, 0.9, 1.0), 0.7
    offset.parent, offset.use_connect = upper, False
    root_b = eb.new("root_b")
    root_b.head, root_b.tail, root_b.roll = (2, 1, 0), (2.5, 1, 0.2), math.pi / 3
    leaf = eb.new("leaf")
    leaf.head, leaf.tail, leaf.roll = (2.6, 1.2, 0.3), (2.6, 1.7, 0.3), -0.4
    leaf.parent, leaf.use_connect = root_b, False
    bpy.ops.object.mode_set(mode='POSE')
    return obj


def random_quaternions(rng, n, max_angle):
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1, keepdims=True)
    angle = rng.uniform(0.0, max_angle, size=n)
    return np.column_stack([np.cos(angle / 2), axis * np.sin(angle / 2)[:, None]])


def pose_matrices(obj):
    """Blender's evaluated ``PoseBone.matrix`` of every bone, (n,4,4) row-major."""
    bpy.context.view_layer.update()
    flat = np.empty(len(obj.pose.bones) * 16)
    obj.pose.bones.foreach_get("matrix", flat)
    return flat.reshape(-1, 4, 4).transpose(0, 2, 1)


def select_bones(obj, names):
    """Select exactly the pose bones ``names``, the first one active (``PoseBone.select`` from
    Blender 5.0, ``Bone.select`` before)."""
    bones = obj.pose.bones if "select" in bpy.types.PoseBone.bl_rna.properties else obj.data.bones
    for bone in bones:
        bone.select = bone.name in names
    obj.data.bones.active = obj.data.bones[names[0]]
    bpy.context.view_layer.update()


def move_to_collection(obj, collection):
    """Unlink ``obj`` from its collections and link it to ``collection`` only."""
    for owner in obj.users_collection:
        owner.objects.unlink(obj)
    collection.objects.link(obj)


INHERIT_SCALE_MODES = ('FULL', 'FIX_SHEAR', 'AVERAGE', 'NONE', 'NONE_LEGACY', 'ALIGNED')


def flag_rig(rng):
    """Every combination of Bone flags a pose depends on: each inherit scale mode with inherit
    rotation on and off and local location on and off (24 bones), in a shuffled chain with
    rolled bones, connected and offset heads, and a branch; the armature object scaled by 0.01
    and turned 90° about X, as an FBX/Mixamo import is."""
    obj = _new_armature_object("Flags")
    bpy.ops.object.mode_set(mode='EDIT')
    edit_bones = obj.data.edit_bones
    combos = [(m, r, l) for m in INHERIT_SCALE_MODES for r in (True, False) for l in (True, False)]
    order = rng.permutation(len(combos))
    previous, head = None, np.zeros(3)
    for k, index in enumerate(order):
        mode, inherit_rotation, local_location = combos[index]
        bone = edit_bones.new(f"b{k:02d}_{mode}_{'rot' if inherit_rotation else 'hinge'}_"
                              f"{'local' if local_location else 'global'}")
        connected = previous is not None and rng.random() < 0.4
        start = head if connected else head + rng.normal(scale=0.3, size=3)
        bone.head, bone.tail = start, start + rng.normal(size=3) * 0.4 + (0.0, 0.0, 0.3)
        bone.roll = float(rng.uniform(-np.pi, np.pi))
        if previous is not None:
            parent = previous if rng.random() < 0.8 else edit_bones[int(rng.integers(0, k))]
            bone.parent = parent
            bone.use_connect = connected and parent == previous
        bone.inherit_scale = mode
        bone.use_inherit_rotation, bone.use_local_location = inherit_rotation, local_location
        previous, head = bone, np.array(bone.tail)
    bpy.ops.object.mode_set(mode='POSE')
    obj.scale = (0.01, 0.01, 0.01)
    obj.rotation_euler = (math.pi / 2, 0.0, 0.0)
    return obj


def generate_rigify_rig():
    """Blender's production rig: the human metarig generated by Rigify (706 bones), in Pose
    Mode, active; about 5 s."""
    meta = metarig("human")
    bpy.ops.object.mode_set(mode='OBJECT')
    bpy.ops.pose.rigify_generate()
    rig = bpy.context.active_object
    meta.hide_set(True)
    bpy.ops.object.mode_set(mode='POSE')
    return rig


def fk_mode(rig):
    """Every limb of a generated Rigify rig in FK mode (the ``IK_FK`` switch at 1)."""
    for side in "LR":
        rig.pose.bones[f"upper_arm_parent.{side}"]["IK_FK"] = 1.0
        rig.pose.bones[f"thigh_parent.{side}"]["IK_FK"] = 1.0
    bpy.context.view_layer.update()


# the FK controls of a generated Rigify rig's limbs, effector first; a chain length of 4 covers
# each (the locked MCH-hand_fk / MCH-foot_fk bone between the effector and the lower limb counts)
RIGIFY_FK_LIMBS = {f"{limb}.{side}": [f"{name}.{side}" for name in names]
                   for side in "LR"
                   for limb, names in (("arm", ("hand_fk", "forearm_fk", "upper_arm_fk")),
                                       ("leg", ("foot_fk", "shin_fk", "thigh_fk")))}
