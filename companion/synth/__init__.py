"""The synthetic cameras: test instruments, never on the product path."""

# The synthetic cameras by name (see `worlds.py`); here so the command line can list them cheaply.
RENDERERS = ("raycast", "pbr", "plain")
