"""Errors a player can cause, each with the exit code the command line uses.

All subclass ValueError (bad input, not a bug): the CLI prints ``str(error)`` as one line and exits
with ``exit_code``; anything else escaping is a bug and is allowed to show a traceback.
"""

from __future__ import annotations


class CompanionError(ValueError):
    exit_code = 1


class SetupError(CompanionError):
    """The setup file is missing, malformed, or has unknown keys or bad values."""

    exit_code = 2


class InputError(CompanionError):
    """An image, a state file or a command-line value cannot be used."""

    exit_code = 3


class CameraError(CompanionError):
    """A camera, video file or URL cannot be opened or read."""

    exit_code = 4
