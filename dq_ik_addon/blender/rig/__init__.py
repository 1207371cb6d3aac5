"""The armature read into the engine's model and pose arrays, and the pose written back: one reader
for the session, Check Rig and the overlay."""
