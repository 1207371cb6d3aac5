"""The scene's colliders as the engine's obstacle query, and the bones' capsule radii."""
