"""Immutable table-state snapshots, published by the camera thread and read by request handlers.

One writer (the camera loop) and many readers (requests, the MJPEG stream): readers never block the
writer for longer than a reference swap, and a snapshot is never changed once published.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from companion.state import TableState


@dataclass(frozen=True)
class CameraStatus:
    state: str  # starting | ok | reconnecting | ended
    source: str  # what the camera is (index, URL, file, synthetic)
    message: str = ""  # one line for the banner
    since: float = field(default_factory=time.time)  # epoch s this status began

    def to_json(self) -> dict:
        return {"state": self.state, "source": self.source, "message": self.message,
                "since": round(self.since, 3), "ok": self.state == "ok"}


@dataclass(frozen=True, eq=False)
class Snapshot:
    seq: int  # increases by one per published snapshot
    frame: int  # the camera frame behind it (-1: none yet)
    captured_at: float  # epoch s the frame was read
    state: TableState  # the last *registered* state: a frame without anchors never moves units
    registered_now: bool  # whether this very frame registered the table
    camera: CameraStatus
    jpeg: bytes | None = None  # the annotated frame, encoded once for every MJPEG viewer
    tracker_ms: float = 0.0  # pipeline time for this frame
    reason: str = ""  # why this frame did not register, if it did not

    @property
    def state_age_s(self) -> float:
        return max(0.0, time.time() - self.state.timestamp) if self.state.timestamp else float("inf")

    def meta_json(self) -> dict:
        return {"seq": self.seq, "frame": self.frame, "captured_at": round(self.captured_at, 3),
                "state_frame": self.state.frame, "state_time": round(self.state.timestamp, 3),
                "registered_now": self.registered_now, "reason": self.reason,
                "tracker_ms": round(self.tracker_ms, 2), "camera": self.camera.to_json()}


def empty_snapshot(source: str) -> Snapshot:
    return Snapshot(0, -1, 0.0, TableState(registered=False, reason="no frame yet"), False,
                    CameraStatus("starting", source, "waiting for the first frame"))


class SnapshotHub:
    """Holds the latest snapshot; `wait_newer` lets a stream sleep until the next one."""

    def __init__(self, first: Snapshot) -> None:
        self._latest = first
        self._changed = threading.Condition()
        self.closed = False

    def latest(self) -> Snapshot:
        return self._latest  # a reference read is atomic; the object is immutable

    def publish(self, snapshot: Snapshot) -> None:
        with self._changed:
            self._latest = snapshot
            self._changed.notify_all()

    def wait_newer(self, seq: int, timeout_s: float) -> Snapshot | None:
        """The next snapshot after `seq` (or the latest after the timeout); None once closed."""
        with self._changed:
            self._changed.wait_for(lambda: self._latest.seq > seq or self.closed, timeout=timeout_s)
            return None if self.closed else self._latest

    def close(self) -> None:
        """Shutting down: wake every waiting stream so it can end."""
        with self._changed:
            self.closed = True
            self._changed.notify_all()
