"""Shared instruments for the web tests: rendered siege frames on disk (a real image-folder camera),
and a running companion (camera thread + app) over them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import pytest

from companion.live.camera_loop import CameraLoop
from companion.live.snapshots import SnapshotHub, empty_snapshot
from companion.live.store import GameStore
from companion.synth.render import Renderer
from companion.vision.sources import LoopingSource, open_source
from companion.web import create_app
from companion.web.context import Companion
from tests.conftest import wait_for

_BATTLEFIELDS: dict = {}


def battlefield_frames(frame: int) -> tuple:
    """(setup, folder with frame `frame` of the 30-frame F0R60D demo script as PNG), rendered once."""
    if frame not in _BATTLEFIELDS:
        import tempfile

        from companion.synth import battlefield

        base = battlefield.base_scene()
        folder = Path(tempfile.mkdtemp(prefix="battlefield-"))
        cv2.imwrite(str(folder / "frame.png"), Renderer().render(battlefield.battlefield_scene(base, frame, 30)))
        _BATTLEFIELDS[frame] = (battlefield.battlefield_setup(base), folder)
    return _BATTLEFIELDS[frame]


class Running:
    """A companion over the siege frame folder: camera thread, hub, store, app."""

    def __init__(self, setup, folder: Path, db: Path | None, token: str = "test-token-0123456789") -> None:
        self.hub = SnapshotHub(empty_snapshot("test camera"))
        self.store = GameStore(db, setup) if db is not None else None
        self.companion = Companion(setup, self.hub, token, self.store, join_url="http://localhost/join?t=" + token)
        self.app = create_app(self.companion, {"TESTING": True})
        spec = str(folder)
        self.loop = CameraLoop(lambda: LoopingSource(lambda: open_source(spec)), setup, self.hub, "test camera",
                               min_interval_s=0.05).start()
        wait_for(lambda: self.hub.latest().state.registered, what="the first registered frame")

    def client(self, joined: bool = True):
        client = self.app.test_client()
        if joined:
            response = client.get(f"/join?t={self.companion.token}")
            assert response.status_code == 303
        return client

    def post(self, client, path: str, body: dict | None = None, csrf: bool = True):
        headers = {"X-Companion-Token": self.companion.csrf} if csrf else {}
        return client.post(path, json=body or {}, headers=headers)

    def close(self) -> None:
        self.loop.stop()
        if self.store is not None:
            self.store.close()


@pytest.fixture
def running(siege, tmp_path):
    _, setup, folder, _ = siege
    r = Running(setup, folder, tmp_path / "game.sqlite")
    yield r
    r.close()


def variant(setup, ruleset: str, **sections):
    """The same table and roster under another rule system (read back, as a setup file would be)."""
    import tomllib

    from companion.setup_file import parse_setup, setup_to_toml

    return parse_setup(tomllib.loads(setup_to_toml(replace(setup, ruleset=ruleset, sections=dict(sections)))), setup.path)
