"""The synthetic camera as a frame source: what the demo and the tests play instead of a webcam.

A test instrument (it renders the table from 3D geometry with known truth), kept out of the
product's camera path in `companion.vision.sources`."""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from companion.synth.render import Renderer
from companion.vision.sources import Frame, FrameSource


class SyntheticSource(FrameSource):
    """The synthetic camera: renders `scene_at(index)` for index 0 .. frames-1, truth attached.

    A scene equal to one already rendered (a script holding its last frame) reuses that image."""

    def __init__(self, scene_at: Callable[[int], Any], frames: int, description: str = "synthetic camera") -> None:
        self.scene_at = scene_at
        self.frames = frames
        self.description = description
        self._renderer = Renderer()
        self._index = 0
        self._last: tuple[Any, np.ndarray] | None = None

    def read(self) -> Frame | None:
        if self._index >= self.frames:
            return None
        scene = self.scene_at(self._index)
        if self._last is not None and self._last[0] == scene:
            image = self._last[1]
        else:
            image = self._renderer.render(scene)
            self._last = (scene, image)
        frame = Frame(image, self._index, time.time(), self.description, scene)
        self._index += 1
        return frame
