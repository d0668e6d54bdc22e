"""Sensor noise (a dark room's gained-up webcam, a garbled stream) is no print: the second look and
the card reading leave it alone (`markers.neighbour_correlation`)."""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.markers import (ALL_WINDOWS, MIN_NEIGHBOUR_CORRELATION, dictionary, make_detector,
                                      neighbour_correlation, rescue_rejected)


def _noise(shape: tuple[int, ...], level: float, sd: float, seed: int = 0) -> np.ndarray:
    return np.clip(level + np.random.default_rng(seed).normal(0, sd, shape), 0, 255).astype(np.uint8)


def test_neighbouring_pixels_agree_on_a_print_not_in_noise():
    print_px = cv2.resize(cv2.aruco.generateImageMarker(dictionary("DICT_4X4_50"), 7, 60), (18, 18),
                          interpolation=cv2.INTER_AREA)
    patch = cv2.copyMakeBorder(print_px, 3, 3, 3, 3, cv2.BORDER_CONSTANT, value=255)
    noisy_print = np.clip(patch + np.random.default_rng(1).normal(0, 8, patch.shape), 0, 255).astype(np.uint8)
    assert neighbour_correlation(noisy_print) > 3 * MIN_NEIGHBOUR_CORRELATION
    assert neighbour_correlation(_noise((24, 24), 128, 25)) < MIN_NEIGHBOUR_CORRELATION
    assert neighbour_correlation(np.full((10, 10), 200, np.uint8)) == 0.0


def test_the_second_look_takes_nothing_from_noise():
    gray = _noise((360, 640), 60, 25)
    _, _, rejected = make_detector("DICT_4X4_50", windows=ALL_WINDOWS).detectMarkers(gray)
    assert len(rejected) > 20  # noise makes candidate outlines by the dozen
    ids, quads = rescue_rejected(gray, rejected, "DICT_4X4_50", set())
    assert ids == [] and quads == []
