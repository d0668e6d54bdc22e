"""Table companion: sees a miniature wargame table through a webcam and answers rules questions."""

__version__ = "0.1.0"
