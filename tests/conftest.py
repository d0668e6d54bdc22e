"""Shared fixtures: rendered synthetic tables are costly (~1-3 s), so each is rendered once per run."""

from __future__ import annotations

import signal
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from companion.synth.render import Renderer
from companion.synth.scene import Scene, random_scene

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
