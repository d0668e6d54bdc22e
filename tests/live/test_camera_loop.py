"""The camera thread: snapshots, a camera that fails and comes back, frames without anchors."""

from __future__ import annotations

import cv2
import numpy as np

from companion.errors import CameraError
from companion.live.camera_loop import CameraLoop
from companion.live.snapshots import SnapshotHub, empty_snapshot
from companion.vision.sources import Frame, FrameSource, LoopingSource, open_source
from tests.conftest import wait_for


class _Scripted(FrameSource):
    """Frames from a list of images, then the source ends (as an unplugged camera does)."""

    def __init__(self, images):
        self.images = list(images)
        self.index = 0
        self.description = "scripted"

    def read(self):
        if self.index >= len(self.images):
            return None
        frame = Frame(self.images[self.index], self.index, 1000.0 + self.index)
        self.index += 1
        return frame


def _frame_image(siege):
    _, _, folder, _ = siege
    return open_source(str(folder)).read().image


def test_snapshots_carry_the_annotated_frame_and_state(siege):
    _, setup, folder, scene = siege
    hub = SnapshotHub(empty_snapshot("test"))
    loop = CameraLoop(lambda: LoopingSource(lambda: open_source(str(folder))), setup, hub, "test", 0.05).start()
    try:
        first = wait_for(lambda: hub.latest() if hub.latest().state.registered else None)
        later = hub.wait_newer(first.seq, 5.0)
        assert later.seq > first.seq and later.frame > first.frame
        assert first.jpeg[:2] == b"\xff\xd8" and first.camera.state == "ok"
        assert {m.id for m in first.state.minis} == {m.id for m in scene.minis if m.id != 40}
    finally:
        loop.stop()


def test_a_frame_without_anchors_never_moves_units(siege):
    _, setup, _, _ = siege
    good = _frame_image(siege)
    blank = np.full_like(good, 90)  # a hand over the whole lens
    hub = SnapshotHub(empty_snapshot("test"))
    loop = CameraLoop(lambda: _Scripted([good, blank, blank]), setup, hub, "test", 0.0)
    loop.start()
    try:
        wait_for(lambda: hub.latest().frame == 2, what="three frames")
        last = hub.latest()
        assert not last.registered_now and last.state.registered and last.state.frame == 0
        assert last.reason
    finally:
        loop.stop()


def test_a_lost_camera_is_reconnected_with_backoff_and_the_last_state_kept(siege):
    _, setup, _, _ = siege
    good = _frame_image(siege)
    opened = []

    def flaky():
        opened.append(1)
        if len(opened) == 2:
            raise CameraError("camera 0: cannot open (is it plugged in?)")
        return _Scripted([good])

    hub = SnapshotHub(empty_snapshot("test"))
    loop = CameraLoop(flaky, setup, hub, "camera 0", 0.0)
    loop.start()
    try:
        wait_for(lambda: hub.latest().camera.state == "reconnecting", what="the camera to be reported lost")
        lost = hub.latest()
        assert lost.state.registered and "trying again" in lost.camera.message  # the last state stays
        assert not lost.registered_now and "camera is reconnecting" in lost.reason  # but nothing is registered now
        wait_for(lambda: len(opened) >= 3, timeout_s=10, what="reconnection attempts")
    finally:
        loop.stop()


def test_a_folder_image_that_vanishes_or_breaks_does_not_end_the_camera_thread(siege, tmp_path):
    # A folder served as a camera while another program writes into it: an image listed, then
    # gone or half written when its turn comes. The thread reports it and opens the folder again.
    _, setup, _, _ = siege
    cv2.imwrite(str(tmp_path / "a.png"), _frame_image(siege))
    opened = []

    def folder():
        source = open_source(str(tmp_path))
        opened.append(1)
        if len(opened) == 2:
            (tmp_path / "b.png").write_bytes(b"half an image")  # listed next time: not readable
        if len(opened) == 1:
            (tmp_path / "b.png").write_bytes(cv2.imencode(".png", _frame_image(siege))[1].tobytes())
            source = open_source(str(tmp_path))
            (tmp_path / "b.png").unlink()  # listed, then gone before it is read
        return source

    hub = SnapshotHub(empty_snapshot("test"))
    loop = CameraLoop(folder, setup, hub, "a folder", 0.0).start()
    try:
        wait_for(lambda: "b.png" in hub.latest().camera.message, what="the broken image to be reported")
        wait_for(lambda: len(opened) >= 4, timeout_s=10, what="the folder opened again")
        assert loop._thread.is_alive()
        wait_for(lambda: hub.latest().state.registered, what="frames from the folder again")
    finally:
        loop.stop()


def test_the_host_view_is_never_an_empty_box_while_the_camera_starts(siege):
    import threading

    _, setup, _, _ = siege
    good = _frame_image(siege)
    opening = threading.Event()

    def slow_camera():  # a webcam that takes its time to open
        opening.wait(10.0)
        return _Scripted([good])

    hub = SnapshotHub(empty_snapshot("test"))
    published = []
    publish = hub.publish
    hub.publish = lambda snapshot: (published.append(snapshot), publish(snapshot))
    loop = CameraLoop(slow_camera, setup, hub, "test", 0.0).start()
    try:
        card = hub.latest()  # at once, before the camera opened: a card that says so
        assert card.jpeg[:2] == b"\xff\xd8" and card.camera.state == "starting" and card.frame == -1
        opening.set()
        wait_for(lambda: hub.latest().state.registered or None, what="the first registered frame")
        first = next(s for s in published if s.frame == 0)
        # the frame itself is shown before its analysis, which takes a second or more
        assert first.reason == "first frame: finding the table" and first.jpeg != card.jpeg and not first.state.registered
    finally:
        loop.stop()


def test_labels_on_the_host_view_are_readable_on_a_laptop_screen():
    # a 1080p frame shown ~900 px wide on a 1280 x 800 screen: its labels ~12 px tall or more
    from companion.vision.draw import TableAnnotator

    annotator = TableAnnotator()
    (_, text_px), _ = cv2.getTextSize("20 berserker", cv2.FONT_HERSHEY_SIMPLEX,
                                      annotator.font_scale * annotator.scale(1920), 1)
    assert text_px * 900 / 1920 >= 11.5
