"""Solving: the session per armature and its snapshot, Solve on Frame Change, and live posing
without the modal shell."""
