"""The frame says when the camera clips the anchors' white paper (block colours are named against it)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from companion.synth.render import Renderer
from companion.vision.exposure import PAPER_CLIPPED_WARNING, paper_clipped_share
from companion.vision.locator import Locator
from companion.vision.tableview import TableView
from companion.vision.tracker import LiveTracker
from tests.conftest import rendered


def _exposed(gain: float):
    """Scene 3 through the camera's sRGB curve, its light times `gain` (an auto-exposure set for a
    dark table, a lamp brought close): (scene, frame)."""
    base, _ = rendered(3)
    scene = replace(base, imaging=replace(base.imaging, gamma=0.0, exposure=gain))
    return scene, Renderer().render(scene)


@pytest.mark.parametrize("gain, clipped", [(1.0, False), (3.0, True)])
def test_a_frame_that_clips_the_anchors_paper_says_so(gain, clipped):
    scene, frame = _exposed(gain)
    locator = Locator(scene.setup())
    analysis = locator.analyse(frame)
    assert analysis.state.registered
    assert (PAPER_CLIPPED_WARNING in analysis.state.warnings) == clipped
    view = TableView(locator.camera(frame.shape[1], frame.shape[0])[0], analysis.registration.pose)
    assert paper_clipped_share(frame, view, scene.setup().anchors) == pytest.approx(float(clipped), abs=0.2)
    # a grey frame is judged by its one channel
    grey = frame.mean(axis=2).astype(np.uint8)
    assert paper_clipped_share(grey, view, scene.setup().anchors) == pytest.approx(float(clipped), abs=0.2)


def test_the_live_tracker_says_so_from_its_block_searches_and_takes_it_back():
    scene, bright = _exposed(3.0)
    _, normal = _exposed(1.0)
    tracker = LiveTracker(scene.setup())
    try:
        state = tracker.update(bright, 0, 0.0)
        assert PAPER_CLIPPED_WARNING in state.warnings
        state = tracker.update(bright, 1, 0.1)  # nothing moved: the same warning, once
        assert state.warnings.count(PAPER_CLIPPED_WARNING) == 1
        for frame in range(2, 6):  # the exposure lowered: gone at the next block search (seconds)
            state = tracker.update(normal, frame, 3.0 * frame)
        assert PAPER_CLIPPED_WARNING not in state.warnings
    finally:
        tracker.close()
