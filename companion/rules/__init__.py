"""The rule systems. Pure Python (no OpenCV, no Flask): functions of (table, setup, game state)
whose every answer carries its reasons."""
