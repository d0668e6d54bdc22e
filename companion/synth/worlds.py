"""The synthetic cameras the benches score against, by name, and a cache for the slow one.

- `plain`: the ray-caster as the project first drew it (display values, a Gaussian blur);
- `raycast`: the same geometry with the camera and the room randomised (tone curve, sharpening,
  blur shape, exposure, light colour: `scene.randomised_imaging`; one to three lamps that cast
  soft shadows: `scene.random_lighting`);
- `pbr`: the physically based camera (`pbr.py`, Mitsuba 3), whose frames are rendered once and kept
  in a cache outside the repository (`$XDG_CACHE_HOME/table-companion/renders`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from companion.synth import RENDERERS
from companion.synth.render import Renderer
from companion.synth.scene import Scene, random_scene, scene_truth


def bench_scene(renderer: str, seed: int, level: str = "standard", **kwargs) -> Scene:
    """The scene a bench draws for this seed: the same geometry whatever the renderer."""
    return random_scene(seed, level, randomise=renderer == "raycast", **kwargs)


def cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "table-companion" / "renders"


class Camera:
    """Renders a scene the way one named synthetic camera does."""

    def __init__(self, renderer: str, samples: int | None = None, cache: bool = True) -> None:
        if renderer not in RENDERERS:
            raise ValueError(f"unknown renderer {renderer!r} (one of {', '.join(RENDERERS)})")
        self.renderer = renderer
        self.samples = samples
        self.cache = cache
        self._raycaster = Renderer()

    def render(self, scene: Scene) -> np.ndarray:
        if self.renderer != "pbr":
            return self._raycaster.render(scene)
        from companion.synth import pbr

        # The linear render is cached, the webcam's processing done each time: it is cheap, and
        # changing it needs no new render.
        look = pbr.scene_look(scene)
        path = cache_dir() / f"{self._key(scene, look)}.npy"
        linear = None
        if self.cache and path.exists():
            try:
                linear = np.load(path).astype(np.float32)
            except (OSError, ValueError):
                linear = None
        if linear is None:
            # Kept as the cache keeps it (half floats), so a first run and a rerun score the
            # same frames: developed from the full floats, a first run's figures differed.
            linear = pbr.render_linear(scene, look, self.samples, seed=scene.noise_seed).astype(np.float16)
            if self.cache:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")  # (two test workers may render the same)
                np.save(tmp, linear)
                os.replace(tmp, path)
            linear = linear.astype(np.float32)
        return pbr.develop(linear, look, seed=scene.noise_seed)

    def _key(self, scene: Scene, look) -> str:
        from companion.synth import pbr

        truth = scene_truth(scene)
        text = json.dumps([pbr.VERSION, truth, [repr(a) for a in scene.anchors], scene.texture_seed,
                           scene.noise_seed, scene.dictionary, repr(look.render_key()), self.samples,
                           scene.camera.width_px, scene.camera.height_px], sort_keys=True, default=str)
        trimmed = [(m.id, m.margin_modules) for m in scene.minis if m.margin_modules != 1.0]
        if trimmed:  # (full margins are implied: keys of frames rendered before margins varied stay valid)
            text += json.dumps(trimmed)
        return hashlib.sha256(text.encode()).hexdigest()[:24]
