"""Keys: the bake of a frame range, writing keys into slotted actions, the bake's clean-up, auto-
keying, and the frames and slots an armature plays."""
