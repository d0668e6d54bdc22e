"""Where frames come from: a webcam index, a video file or stream URL, an image file or folder. All
give `Frame`s through one small interface (the synthetic camera, a test instrument, gives them
too: `companion.synth.source`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import cv2
import numpy as np

from companion.errors import CameraError, InputError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}


@dataclass(frozen=True, eq=False)
class Frame:
    image: np.ndarray  # BGR, uint8
    index: int  # 0, 1, 2 ... in the order the source gave them
    timestamp: float  # seconds since the epoch when it was read
    name: str = ""  # file name or source description
    truth: Any = None  # the synthetic scene behind it, when there is one


def read_image(path: str | Path) -> np.ndarray:
    """An image file as BGR uint8, or a one-line InputError naming the file."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: image not found")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, not an image")
    data = np.fromfile(str(path), dtype=np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise InputError(f"{path}: not a readable image (corrupt or unsupported format)")
    return image


class FrameSource:
    """Iterate frames; `read()` returns None when the source is exhausted."""

    description = "frames"

    def read(self) -> Frame | None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __iter__(self) -> Iterator[Frame]:
        while (frame := self.read()) is not None:
            yield frame

    def __enter__(self) -> "FrameSource":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ImageFolderSource(FrameSource):
    def __init__(self, paths: list[Path], description: str) -> None:
        if not paths:
            raise InputError(f"{description}: no images ({', '.join(sorted(IMAGE_SUFFIXES))})")
        self.paths = paths
        self.description = description
        self._next = 0

    def read(self) -> Frame | None:
        if self._next >= len(self.paths):
            return None
        path = self.paths[self._next]
        frame = Frame(read_image(path), self._next, time.time(), str(path))
        self._next += 1
        return frame


class VideoCaptureSource(FrameSource):
    """cv2.VideoCapture on a device index, a video file or a stream URL (IP-webcam apps, RTSP, MJPEG)."""

    def __init__(self, target: int | str, width_px: int | None = None, height_px: int | None = None) -> None:
        self.target = target
        self.description = f"camera {target}" if isinstance(target, int) else str(target)
        # OpenCV logs each backend it tried and failed (two WARN lines for a missing device) on
        # stderr; the error below says it once, in the player's words.
        level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
        try:
            self.capture = cv2.VideoCapture(target)
        finally:
            cv2.utils.logging.setLogLevel(level)
        if not self.capture.isOpened():
            self.capture.release()
            raise CameraError(f"{self.description}: cannot open (is it plugged in, the URL right, the file a video?)")
        if width_px and height_px:
            self.capture.set(cv2.CAP_PROP_FRAME_WIDTH, width_px)
            self.capture.set(cv2.CAP_PROP_FRAME_HEIGHT, height_px)
        self._index = 0

    def read(self) -> Frame | None:
        ok, image = self.capture.read()
        if not ok or image is None:
            return None
        frame = Frame(image, self._index, time.time(), self.description)
        self._index += 1
        return frame

    def close(self) -> None:
        self.capture.release()


class LoopingSource(FrameSource):
    """Plays a finite source again from the start when it ends (a still photo or a recorded clip
    served as a camera); frame indices keep counting up."""

    def __init__(self, make: Callable[[], FrameSource]) -> None:
        self._make = make
        self._source = make()
        self.description = self._source.description
        self._index = 0

    def read(self) -> Frame | None:
        frame = self._source.read()
        if frame is None:
            self._source.close()
            self._source = self._make()
            frame = self._source.read()
            if frame is None:
                return None
        frame = Frame(frame.image, self._index, time.time(), frame.name, frame.truth)
        self._index += 1
        return frame

    def close(self) -> None:
        self._source.close()


def open_source(spec: str) -> FrameSource:
    """`0` (device index), `http://...` / `rtsp://...` (stream), a video, an image, a folder of images."""
    spec = spec.strip()
    if spec.isdigit():
        return VideoCaptureSource(int(spec))
    if "://" in spec:
        return VideoCaptureSource(spec)
    path = Path(spec)
    if path.is_dir():
        paths = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        return ImageFolderSource(paths, str(path))
    if not path.exists():
        raise InputError(f"{path}: no such file, folder or camera")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return ImageFolderSource([path], str(path))
    return VideoCaptureSource(str(path))
