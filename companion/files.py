"""Atomic file writes: a reader (or a crash, or kill -9) sees the old file or the new one, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import cv2
import numpy as np

from companion.errors import InputError


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def check_image_target(path: str | Path) -> Path:
    """Where an image the player asked for will go: a format OpenCV writes, in a folder that
    exists (a typo in a folder name must not quietly create a tree). Checked before the work."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not suffix or not cv2.haveImageWriter(f"x{suffix}"):
        raise InputError(f"{path}: not an image file name OpenCV can write (use .png or .jpg)")
    if not path.parent.is_dir():
        raise InputError(f"{path}: the folder {path.parent} does not exist")
    return path


def write_image_atomic(path: str | Path, image: np.ndarray) -> None:
    path = Path(path)
    suffix = path.suffix.lower() or ".png"
    try:
        ok, buf = cv2.imencode(suffix, image)
    except cv2.error:
        ok = False
    if not ok:
        raise InputError(f"{path}: cannot encode an image as {suffix} (try .png or .jpg)")
    write_bytes_atomic(path, buf.tobytes())
