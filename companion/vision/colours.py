"""Naming a block's colour from a palette, under the table's own light.

A camera's numbers mix the brick's albedo with the light falling on it. The anchors' white paper
margin is the reference: a colour divided by the paper's (and by how much brighter or darker the
table is here than at the anchors) is an albedo relative to paper, comparable with a palette.
"""

from __future__ import annotations

import math

import numpy as np

# Lego palette, sRGB 0-1 albedo (Bright Red, Bright Blue, Bright Yellow, Dark Green, White, Black,
# Light Bluish Gray, Orange). `detect_blocks` takes another for other bricks.
LEGO_PALETTE: dict[str, tuple[float, float, float]] = {
    "red": (0.79, 0.10, 0.04),
    "blue": (0.00, 0.33, 0.75),
    "yellow": (0.95, 0.80, 0.22),
    "green": (0.14, 0.47, 0.25),
    "white": (0.93, 0.93, 0.91),
    "black": (0.08, 0.09, 0.11),
    "gray": (0.63, 0.65, 0.66),
    "orange": (0.99, 0.54, 0.09),
}
PAPER_ALBEDO = 0.92  # printer paper, the anchors' margin
FLOOR = 0.03  # albedos are clipped here before logs: a black brick still reflects a little


def classify_colour(relative_rgb: np.ndarray, palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE
                    ) -> tuple[str, float]:
    """The palette name nearest an albedo relative to paper (RGB), and a 0-1 confidence.

    Distances are taken between log albedos: light scales all channels alike, so an error in the
    light estimate moves every candidate equally far and the hue still decides. The confidence is
    the margin to the second nearest name, relative to its distance."""
    probe = np.log(np.clip(np.asarray(relative_rgb, float), FLOOR, None))
    scored = sorted((float(np.linalg.norm(probe - np.log(np.clip(np.asarray(ref) / PAPER_ALBEDO, FLOOR, None)))), name)
                    for name, ref in palette.items())
    best = scored[0]
    second = scored[1][0] if len(scored) > 1 else math.inf
    confidence = 1.0 if not math.isfinite(second) else float(np.clip(2 * (second - best[0]) / max(second, 1e-6), 0, 1))
    return best[1], confidence
