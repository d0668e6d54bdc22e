"""Getting a real table ready: printable markers and boards at exact scale (and, to come, camera
and hand calibration)."""
