"""DQ IK settings read from the bones and the armature: tasks and their targets, joint limits,
solver settings, their validation, and the settings keys or drivers set."""
