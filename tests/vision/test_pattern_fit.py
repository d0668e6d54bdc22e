"""The pattern fit on quads it cannot fit: it says so (None), never raises or returns NaN."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from companion.vision.markers import fit_pattern

FRAMES = Path(__file__).with_name("frames")


def test_a_tiny_skewed_quad_is_no_fit_rather_than_a_crash():
    # 64 x 64 px of a path-traced hard frame (pbr, seed 2, scene 12): a 6 px quad of texture that
    # the darkened look decoded as an absent id (17). Mapped onto the marker's square, the patch
    # around it reaches the homography's vanishing line; the fit's first residual was NaN and
    # `bench vision --absent` stopped with a ValueError in the blur's quantisation.
    gray = cv2.cvtColor(cv2.imread(str(FRAMES / "pbr_hard_tiny_quad.png")), cv2.COLOR_BGR2GRAY).astype(np.float32)
    quad = np.array([[32.0, 27.0], [35.0, 33.0], [32.0, 36.0], [28.0, 34.0]])
    assert fit_pattern(gray, quad, "DICT_4X4_50", 17) is None
    for marker_id in range(50):
        for turn in range(4):
            fit = fit_pattern(gray, np.roll(quad, turn, axis=0), "DICT_4X4_50", marker_id)
            assert fit is None or (np.isfinite(fit.residual) and np.isfinite(fit.corners_px).all())
