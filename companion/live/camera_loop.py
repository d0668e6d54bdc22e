"""The one thread that owns the camera and the pipeline.

It reads frames, runs the live tracker, draws the overlays, encodes the JPEG once and publishes an
immutable snapshot. A camera that fails (unplugged, URL down, file ended) is reopened with backoff
while the last state stays published with its age; a frame without anchors never moves a unit.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from typing import Callable

import cv2
import numpy as np

from companion.errors import CompanionError
from companion.live.snapshots import CameraStatus, Snapshot, SnapshotHub, empty_snapshot
from companion.setup_file import Setup
from companion.state import TableState
from companion.vision.camera import TablePose
from companion.vision.draw import TableAnnotator
from companion.vision.locator import camera_for
from companion.vision.sources import Frame, FrameSource
from companion.vision.tracker import LiveTracker

log = logging.getLogger(__name__)

BACKOFF_S = (0.5, 1.0, 2.0, 4.0, 8.0)  # waits between reconnection attempts, then the last one repeats
STREAM_WIDTH_PX = 1280  # the host view is downscaled before encoding: a quarter of the bytes of 1080p
JPEG_QUALITY = 80


class CameraLoop:
    def __init__(self, open_source: Callable[[], FrameSource], setup: Setup, hub: SnapshotHub, description: str,
                 min_interval_s: float = 0.0, listeners: list[Callable[[Snapshot, Frame], None]] | None = None,
                 overlay: Callable[[], tuple] | None = None) -> None:
        """`overlay`: what the phones are asking about, drawn over every annotated frame."""
        self.open_source = open_source
        self.setup = setup
        self.hub = hub
        self.description = description
        self.min_interval_s = min_interval_s  # files and the synthetic camera would otherwise run flat out
        self.listeners = listeners or []
        self.overlay = overlay
        self.tracker = LiveTracker(setup, blocks_in_background=True)  # no frame waits for a block search
        self.annotator = TableAnnotator()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)
        self._good: TableState = empty_snapshot(description).state
        self._status = CameraStatus("starting", description, "opening the camera")
        self._frame_shown = False

    def start(self) -> "CameraLoop":
        self._set_status(self._status)  # the host screen shows what is happening from its first second
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)
        self.tracker.close()

    # --- the thread --------------------------------------------------------------------------------
    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                source = self.open_source()
            except CompanionError as exc:
                failures = self._lost(f"{exc}", failures)
                continue
            self._set_status(CameraStatus("ok", self.description, source.description))
            try:
                played, error = self._play(source)
                failures = 0 if played else failures
            finally:
                source.close()
            if not self._stop.is_set():
                failures = self._lost(error or f"{self.description}: no more frames (unplugged, stream down or file ended)",
                                      failures)

    def _play(self, source: FrameSource) -> tuple[bool, str]:
        """Frames until the source fails or we are stopped: whether any frame came, and the
        source's error if one ended it."""
        any_frame = False
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                frame = source.read()
            except CompanionError as exc:
                # A folder's image gone or half written when its turn came, a file that is no
                # image: the source is opened again (with the backoff), the thread goes on.
                return any_frame, str(exc)
            if frame is None:
                return any_frame, ""
            any_frame = True
            if self._status.state != "ok":
                self._set_status(CameraStatus("ok", self.description, source.description))
            try:
                self._process(frame)
            except Exception:  # a bug in one frame must not end the camera thread; the log says what
                log.exception("frame %d could not be processed", frame.index)
            rest = self.min_interval_s - (time.monotonic() - started)
            if rest > 0:
                self._stop.wait(rest)
        return any_frame, ""

    def _process(self, frame: Frame) -> None:
        image = frame.image
        if not self._frame_shown:  # the first frame's analysis takes a second or more: show the view now
            self._frame_shown = True
            first = image.copy()
            self.annotator.banner(first, "first frame: finding the table...", (0, 200, 255))
            self._publish(frame.index, frame.timestamp, False, "first frame: finding the table", self._encode(first), 0.0)
        t0 = time.perf_counter()
        state = self.tracker.update(image, frame.index, frame.timestamp)
        tracker_ms = (time.perf_counter() - t0) * 1000
        if state.registered:
            self._good = state
        camera, _ = camera_for(self.setup, image.shape[1], image.shape[0])
        seen_from = state.registration.camera
        pose = TablePose.from_state(seen_from) if seen_from is not None else None
        shapes = ()
        if self.overlay is not None:
            try:
                shapes = tuple(self.overlay())
            except Exception:  # the picture of a question must never stop the camera
                log.exception("overlay failed")
        drawn = self.annotator.annotate(image, state, self.setup, camera, pose, shapes)
        snapshot = self._publish(frame.index, frame.timestamp, state.registered, state.reason, self._encode(drawn),
                                 tracker_ms)
        for listener in self.listeners:
            try:
                listener(snapshot, frame)
            except Exception:  # a listener (the demo script) must not stop the camera
                log.exception("snapshot listener failed")

    def _card(self, text: str) -> np.ndarray:
        card = np.full((720, 1280, 3), 40, np.uint8)
        self.annotator.banner(card, self.description, (220, 220, 220))
        cv2.putText(card, text, (40, 370), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 200, 255), 2, cv2.LINE_AA)
        return card

    @staticmethod
    def _encode(image: np.ndarray) -> bytes | None:
        if image.shape[1] > STREAM_WIDTH_PX:
            scale = STREAM_WIDTH_PX / image.shape[1]
            image = cv2.resize(image, (STREAM_WIDTH_PX, round(image.shape[0] * scale)), interpolation=cv2.INTER_AREA)
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        return data.tobytes() if ok else None

    def _publish(self, frame: int, captured_at: float, registered_now: bool, reason: str, jpeg: bytes | None,
                 tracker_ms: float) -> Snapshot:
        last = self.hub.latest()
        snapshot = Snapshot(last.seq + 1, frame, captured_at, self._good, registered_now, self._status,
                            jpeg if jpeg is not None else last.jpeg, tracker_ms, reason)
        self.hub.publish(snapshot)
        return snapshot

    def _set_status(self, status: CameraStatus) -> None:
        self._status = status
        last = self.hub.latest()
        if not self._frame_shown:  # no picture yet: a card saying why, not an empty box
            last = replace(last, jpeg=self._encode(self._card(f"camera {status.state}: {status.message or status.source}")))
        if status.state == "ok":
            self.hub.publish(replace(last, seq=last.seq + 1, camera=status))
        else:  # no frame now: nothing is registered now (the last state stays, with its age)
            self.hub.publish(replace(last, seq=last.seq + 1, camera=status, registered_now=False,
                                     reason=f"no frame: the camera is {status.state}"))

    def _lost(self, message: str, failures: int) -> int:
        wait = BACKOFF_S[min(failures, len(BACKOFF_S) - 1)]
        since = self._status.since if self._status.state == "reconnecting" else time.time()
        self._set_status(CameraStatus("reconnecting", self.description, f"{message}; trying again in {wait:g} s",
                                      since))
        self._stop.wait(wait)
        return failures + 1
