"""What ``dqik.build_chain`` reports: rotational DOFs and tasks of an armature."""


def rotational_dofs(pose_bones):
    """3 per bone, minus each axis whose limits are both 0 and minus bones with stiffness 1."""
    dofs = 0
    for pb in pose_bones:
        s = pb.dqik
        if s.stiffness >= 1.0:
            continue
        if not s.use_limits:
            dofs += 3
            continue
        dofs += sum(lo != 0.0 or hi != 0.0 for lo, hi in (
            (s.swing_x_min, s.swing_x_max), (s.twist_min, s.twist_max),
            (s.swing_z_min, s.swing_z_max)))
    return dofs
