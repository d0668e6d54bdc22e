"""The lamps the block finder found from the minis' shadows, scored against the scene's own lamps
(a test instrument: the truth comes from the synthetic camera's room)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from companion.synth.pbr import scene_look
from companion.synth.scene import Scene

MAIN_SHARE = 0.2  # a lamp with this share of the lamps' light or more casts shadows that tell heights
SLOPE_CLOSE = 0.12  # a lamp found this near a true one's slope (mm of shadow per mm of height) is it


def true_lamps(renderer: str, scene: Scene) -> list[tuple[np.ndarray, float]]:
    """The lamps that cast the scene's shadows: each one's slope at the table's centre (mm of shadow
    a mm of height, away from it) and its share of the lamps' light. The path tracer's room has one
    area lamp above the camera (`pbr.scene_look`); the ray-caster's, distant lamps (`Lighting`)."""
    if renderer == "pbr":
        lamp = np.array(scene_look(scene).lamp_mm)
        return [((table_centre_mm(scene) - lamp[:2]) / lamp[2], 1.0)]
    if scene.lighting is None:
        return []
    return [(-np.array(lamp.towards[:2]) / lamp.towards[2], lamp.share) for lamp in scene.lighting.lamps]


def table_centre_mm(scene: Scene) -> np.ndarray:
    return np.array([scene.table.width_mm, scene.table.depth_mm]) / 2


@dataclass
class LampScore:
    main: int = 0  # true lamps with MAIN_SHARE of the light or more
    found: int = 0  # ... found within SLOPE_CLOSE of their slope
    wrong: int = 0  # lamps found that are no true lamp

    def add(self, renderer: str, scene: Scene, found_mm: list[tuple[float, float, float]]) -> None:
        """A scene's lamps found (their places in the table frame) against its own (`true_lamps`)."""
        truth = true_lamps(renderer, scene)
        centre_mm = table_centre_mm(scene)
        slopes = [(centre_mm - np.array(p[:2])) / p[2] for p in found_mm]
        matched: set[int] = set()
        for slope, share in sorted(truth, key=lambda t: -t[1]):
            near = [(float(np.linalg.norm(s - slope)), j) for j, s in enumerate(slopes) if j not in matched]
            best = min(near, default=None)
            hit = best is not None and best[0] <= SLOPE_CLOSE
            if hit:
                matched.add(best[1])
            if share >= MAIN_SHARE:
                self.main += 1
                self.found += hit
        self.wrong += len(slopes) - len(matched)

    def summary(self) -> dict:
        return {"main_lamps": self.main, "found": self.found, "wrong": self.wrong}


def format_lamps(lamps: dict) -> str:
    return (f"lamps (found from the minis' shadows; the scenes' lamps with {MAIN_SHARE} of the light or more): "
            f"{lamps['found']} of {lamps['main_lamps']} found within {SLOPE_CLOSE} of their slope at the table's "
            f"centre, {lamps['wrong']} found that are none")
