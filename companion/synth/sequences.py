"""Scenes that move, for the live benches and the tracker's tests: the benches' table, a scripted
walk with a hand sweeping over it, the same table at another stream size."""

from __future__ import annotations

import math
from dataclasses import replace

from companion.synth.scene import Scene, SynthHand, SynthMini, random_scene
from companion.vision.camera import CameraModel


def bench_table(seed: int, n_bricks: int = 6, randomise: bool = False) -> Scene:
    """The live benches' table: 12 minis and a few loose bricks, the same for a seed in every sequence
    (`randomise`: camera and room as the `raycast` camera's, lamps and their shadows)."""
    return random_scene(seed * 7919 + 11, "standard", n_minis=12, n_bricks=n_bricks, randomise=randomise)


def towards_middle(scene: Scene, mini: SynthMini) -> float:
    """The direction (radians) from a mini to the table's middle: a move that way stays on the table."""
    return math.atan2(scene.table.depth_mm / 2 - mini.y_mm, scene.table.width_mm / 2 - mini.x_mm)


def scripted_scene(base: Scene, frame: int, frames: int) -> Scene:
    """Frame `frame` of the scripted sequence built on `base` (camera fixed)."""
    minis = list(base.minis)
    walk_mm = 3.0
    spans = [(int(frames * 0.15), int(frames * 0.55)), (int(frames * 0.5), int(frames * 0.9))]
    for k, (start, end) in enumerate(spans[: len(minis)]):
        m = minis[k]
        steps = min(max(frame - start, 0), end - start)
        x, y = _walk(m.x_mm, m.y_mm, math.radians(m.heading_deg), walk_mm, steps, base.table.width_mm,
                     base.table.depth_mm)
        minis[k] = replace(m, x_mm=x, y_mm=y, heading_deg=(m.heading_deg + 0.5 * steps) % 360)
    hands: tuple[SynthHand, ...] = ()
    h_start, h_end = int(frames * 0.3), int(frames * 0.75)
    if h_start <= frame < h_end and len(minis) > 2:
        # The hand sweeps across the table through a standing mini (it covers it halfway through).
        target = minis[2]
        t = (frame - h_start) / max(h_end - h_start - 1, 1)
        x = target.x_mm + (t - 0.5) * 500
        hands = (SynthHand(x, target.y_mm + 30, 110.0, 90.0),)
    return replace(base, minis=tuple(minis), hands=hands, noise_seed=frame)


def _walk(x: float, y: float, direction: float, step_mm: float, steps: int, width_mm: float,
          depth_mm: float, keep_off_mm: float = 80.0) -> tuple[float, float]:
    """Walk `steps` steps, turning back at the table edges."""
    dx, dy = math.cos(direction) * step_mm, math.sin(direction) * step_mm
    for _ in range(steps):
        if not keep_off_mm <= x + dx <= width_mm - keep_off_mm:
            dx = -dx
        if not keep_off_mm <= y + dy <= depth_mm - keep_off_mm:
            dy = -dy
        x, y = x + dx, y + dy
    return x, y


def at_height(scene: Scene, height_px: int) -> Scene:
    """The same table through the same lens, the camera streaming `height_px` lines (720p: many
    webcams' default): the intrinsics scale with the image."""
    k = height_px / scene.camera.height_px
    if k == 1.0:
        return scene
    matrix = scene.camera.matrix.copy()
    matrix[:2] *= k
    matrix[:2, 2] = (scene.camera.matrix[:2, 2] + 0.5) * k - 0.5  # pixel centres stay pixel centres
    camera = CameraModel(matrix, scene.camera.distortion.copy(), round(scene.camera.width_px * k), height_px)
    return replace(scene, camera=camera)
