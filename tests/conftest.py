"""Shared fixtures: rendered synthetic tables are costly (~1-3 s), so each is rendered once per run."""

from __future__ import annotations

import signal
import subprocess
import time
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.synth.render import Renderer
from companion.synth.scene import Scene, random_scene
from companion.synth.siege import base_scene, siege_scene, siege_setup

REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"


@lru_cache(maxsize=8)
def rendered(seed: int, level: str = "standard", n_hands: int = 0) -> tuple[Scene, np.ndarray]:
    scene = random_scene(seed, level, n_hands=n_hands)
    return scene, Renderer().render(scene)


@pytest.fixture(scope="session")
def standard_scene() -> tuple[Scene, np.ndarray]:
    return rendered(101)


@pytest.fixture()
def write_setup(tmp_path):
    """Write a setup TOML text to a file and return its path."""

    def write(text: str, name: str = "setup.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> tuple[str, str]:
    """Stop a child and reap it, whatever happens: `sig` first (SIGTERM: a child started from a
    background job ignores SIGINT), SIGKILL if it is still there after `timeout_s`."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return out or "", err or ""


LATE_FRAME = 40  # of the 48-frame script: attackers before the castle, the new wall up


@pytest.fixture(scope="session")
def siege():
    """(base scene, setup, folder with one late siege frame as PNG, the scene behind it)."""
    return _siege_frames()


_CACHE: dict = {}


def _siege_frames():
    if not _CACHE:
        import tempfile

        base = base_scene()
        scene = siege_scene(base, LATE_FRAME)
        folder = Path(tempfile.mkdtemp(prefix="siege-frames-"))
        cv2.imwrite(str(folder / "frame.png"), Renderer().render(scene))
        _CACHE.update(base=base, setup=siege_setup(base), folder=folder, scene=scene)
    return _CACHE["base"], _CACHE["setup"], _CACHE["folder"], _CACHE["scene"]


def wait_for(predicate, timeout_s: float = 20.0, what: str = "condition"):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
