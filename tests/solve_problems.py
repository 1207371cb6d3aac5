"""Provably reachable IK problems on real rigs: targets are FK of random poses inside the limits."""

import bpy
import numpy as np
import rigs

LIMIT_FIELDS = ("swing_x_min", "swing_x_max", "swing_z_min", "swing_z_max", "twist_min", "twist_max")
EFFECTORS = ("hand.L", "hand.R", "foot.L", "foot.R")


def chain_bones(obj, effectors, length=0):
    """Names of the effectors and all their ancestors (``length`` > 0: the effector and its
    parents up to that many bones in all, as a task's Chain Length)."""
    names = set()
    for name in effectors:
        pb, count = obj.pose.bones[name], 0
        while pb is not None and (length <= 0 or count < length):
            names.add(pb.name)
            pb, count = pb.parent, count + 1
    return sorted(names)


def random_pose_in_limits(obj, names, rng, dqik, max_free_angle=0.6):
    """Quaternions inside each bone's swing/twist limits (or within ``max_free_angle`` if unlimited)."""
    swing_twist = dqik.dq_ik_addon.engine.swing_twist
    out = {}
    for name in names:
        s = obj.pose.bones[name].dqik
        if s.use_limits:
            angle = rng.uniform(0, 2 * np.pi)
            radius = np.sqrt(rng.uniform(0, 1))
            a = s.swing_x_max if np.cos(angle) >= 0 else -s.swing_x_min
            b = s.swing_z_max if np.sin(angle) >= 0 else -s.swing_z_min
            q = swing_twist.quat_from_swing_twist(radius * a * np.cos(angle),
                                                  radius * b * np.sin(angle),
                                                  rng.uniform(s.twist_min, s.twist_max))
        else:
            q = rigs.random_quaternions(rng, 1, max_free_angle)[0]
        out[name] = np.asarray(q, dtype=float)
    return out


def set_pose(obj, rotations):
    for name, q in rotations.items():
        pb = obj.pose.bones[name]
        pb.rotation_mode = 'QUATERNION'
        pb.rotation_quaternion = q
    bpy.context.view_layer.update()


def clear_pose(obj):
    for pb in obj.pose.bones:
        pb.rotation_mode = 'QUATERNION'
        pb.rotation_quaternion = (1, 0, 0, 0)
        pb.location = (0, 0, 0)
    bpy.context.view_layer.update()


def world_tail(obj, name):
    return np.array(obj.matrix_world @ obj.pose.bones[name].tail)


def fk_targets(obj, dqik, count, seed, length=0):
    """Targets ({effector: world point}) of ``count`` problems, each the effectors' tails in
    Blender's FK of a random in-limits pose of their chains (``length``: ``chain_bones``); the
    pose is left at rest."""
    names = chain_bones(obj, EFFECTORS, length)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        set_pose(obj, random_pose_in_limits(obj, names, rng, dqik))
        out.append({name: world_tail(obj, name) for name in EFFECTORS})
    clear_pose(obj)
    return out


def place_targets(empties, targets):
    for name, empty in empties.items():
        empty.location = targets[name]


def effector_errors(obj, empties):
    """Distance of each effector's evaluated tail to its Empty, after a depsgraph update."""
    bpy.context.view_layer.update()
    return np.array([np.linalg.norm(world_tail(obj, n) - np.array(e.matrix_world.translation))
                     for n, e in empties.items()])


def press_twice(obj, targets, **task_settings):
    """Feet at priority 1, hands at 2 (and ``task_settings``, e.g. ``chain_count``); each problem
    of ``targets`` solved from rest by one press of Solve and then a second with nothing changed.
    Returns the effector errors after each press, two (problems, effectors) arrays (effectors in
    ``EFFECTORS`` order)."""
    empties = add_targets(obj, EFFECTORS, **task_settings)
    for name in EFFECTORS:
        obj.pose.bones[name].dqik.priority = 1 if name.startswith("foot") else 2
    first, second = [], []
    for goal in targets:
        clear_pose(obj)
        place_targets(empties, goal)
        bpy.ops.dqik.solve()
        first.append(effector_errors(obj, empties))
        bpy.ops.dqik.solve()
        second.append(effector_errors(obj, empties))
    return np.array(first), np.array(second)


def add_targets(obj, effectors, **task_settings):
    """An Empty per effector, made that bone's target; returns {bone: empty}."""
    empties = {}
    for name in effectors:
        empty = bpy.data.objects.new(f"target_{name}", None)
        bpy.context.scene.collection.objects.link(empty)
        settings = obj.pose.bones[name].dqik
        settings.use_target, settings.target = True, empty
        for key, value in task_settings.items():
            setattr(settings, key, value)
        empties[name] = empty
    bpy.context.view_layer.objects.active = obj
    return empties


def plant_feet(obj, feet, **task_settings):
    """An Empty per foot, a target at priority 1 with Match Rotation (and ``task_settings``),
    placed on the foot's tail with the foot's rotation; returns {bone: empty}."""
    empties = add_targets(obj, feet, priority=1, use_rotation=True, **task_settings)
    for name, empty in empties.items():
        empty.matrix_world = obj.matrix_world @ obj.pose.bones[name].matrix
        empty.location = world_tail(obj, name)
    bpy.context.view_layer.update()
    return empties


def limit_violation(obj, names, dqik):
    """Largest violation (rad) of the DQ IK limits over ``names``, with Blender's own decomposition."""
    worst = 0.0
    limits_mod = dqik.dq_ik_addon.engine.limits
    for name in names:
        pb = obj.pose.bones[name]
        s = pb.dqik
        if not s.use_limits:
            continue
        limits = limits_mod.SwingTwistLimits(*(np.array([getattr(s, f)]) for f in LIMIT_FIELDS),
                                             np.array([True]))
        swing, twist = pb.rotation_quaternion.to_swing_twist('Y')
        exp = swing.to_exponential_map()
        q = np.array(pb.rotation_quaternion)[None]
        ours = limits_mod.limit_violation(q, limits)[0]
        # the same test in Blender's own terms (README, "Limit semantics"); a zero bound locks
        # its half-axis, and there the distance from the axis is the violation
        a = s.swing_x_max if exp.x >= 0 else -s.swing_x_min
        b = s.swing_z_max if exp.z >= 0 else -s.swing_z_min
        locked = max(abs(exp.x) if a == 0 else 0.0, abs(exp.z) if b == 0 else 0.0)
        ellipse = np.sqrt((exp.x / a if a else 0.0) ** 2 + (exp.z / b if b else 0.0) ** 2)
        swing_out = max(ellipse - 1.0, 0.0) * max(a, b)
        twist_out = max(s.twist_min - twist, twist - s.twist_max, 0.0)
        worst = max(worst, ours, locked, swing_out, twist_out)
    return worst


def capsule_radii(obj, dqik, model):
    """Every bone's capsule radius and the collision mask, as a new solving session measures them."""
    colliders = dqik.dq_ik_addon.blender.colliders
    return colliders.capsules.capsule_radii(obj, model, colliders.geometry.ColliderCache())


def obstacle_distance(obj, dqik, point):
    """Signed distance (armature units) of the world ``point`` from the armature's colliders."""
    obstacles = dqik.dq_ik_addon.blender.colliders.obstacles.SceneObstacles(
        obj, bpy.context.evaluated_depsgraph_get(), lambda _warning: None,
        dqik.dq_ik_addon.blender.colliders.obstacles.ColliderCache())
    local = np.array(obj.matrix_world.inverted()) @ np.append(point, 1.0)
    return float(obstacles(local[None, :3], np.array([10.0]))[0][0])


def deepest_clearance(obj, dqik, names=None):
    """Smallest clearance (distance − radius − margin, metres) of the capsule sample points of
    ``names`` (default: every bone) against the armature's colliders, in the pose Blender
    evaluates (constraints included: on a Rigify rig the FK controls hang from constrained
    bones)."""
    rig = dqik.dq_ik_addon.blender.rig
    model = rig.model_reader.read_model(obj)
    obstacles = dqik.dq_ik_addon.blender.colliders.obstacles.SceneObstacles(
        obj, bpy.context.evaluated_depsgraph_get(), lambda _warning: None,
        dqik.dq_ik_addon.blender.colliders.obstacles.ColliderCache())
    pose = rig.pose.PoseArrays(obj)     # after the depsgraph above evaluated the current pose
    radii, enabled = capsule_radii(obj, dqik, model)
    if names is not None:
        enabled &= np.isin(np.array(model.names), names)
    capsules = dqik.dq_ik_addon.engine.contacts.Capsules(model, radii, enabled)
    points = capsules.points(pose.evaluated)
    distance, _ = obstacles(points, np.full(len(capsules), 10.0))   # armature units
    unit = rig.model_reader.world_unit(obj)
    return float(np.min((distance - capsules.radii) * unit - obj.dqik.margin))


def box(name, low, high, collection):
    """A closed box mesh with its corners at ``low``/``high`` (no object scale)."""
    (x0, y0, z0), (x1, y1, z1) = low, high
    verts = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
             (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    faces = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    collection.objects.link(obj)
    return obj


def collider_collection(scene, armature):
    collection = bpy.data.collections.new("Colliders")
    scene.collection.children.link(collection)
    armature.dqik.colliders = collection
    return collection
