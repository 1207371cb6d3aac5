"""The viewport overlay: its draw handlers (``draw``), the layers it draws from the rig and the
session's last result (``layers``) and their geometry (``geometry``)."""
