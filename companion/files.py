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


def write_image_atomic(path: str | Path, image: np.ndarray) -> None:
    path = Path(path)
    suffix = path.suffix.lower() or ".png"
    ok, buf = cv2.imencode(suffix, image)
    if not ok:
        raise InputError(f"{path}: cannot encode an image as {suffix} (try .png or .jpg)")
    write_bytes_atomic(path, buf.tobytes())
