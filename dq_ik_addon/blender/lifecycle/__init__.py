"""What keeps DQ IK true to the file: application handlers, library overrides, Render > Lock
Interface."""
