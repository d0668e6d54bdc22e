"""The lens's spread measured on the anchors, and markers read on the frame sharpened with it."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from companion.synth.render import Renderer, blur_kernel, linear_to_srgb
from companion.synth.scene import random_scene
from companion.vision.deblur import MAX_SPREAD_MISFIT, SHARP_ENOUGH_PX, lens_spread, measure_spread, sharpened
from companion.vision.locator import Locator
from companion.vision.markers import MarkerDetections, marker_bits
from companion.vision.tracker import LiveTracker

DICT = "DICT_4X4_50"


def _anchor_frame(kind: str, sigma_px: float, motion_deg: float = 0.0, side_px: float = 48.0):
    """One anchor, turned 20 degrees, blurred in linear light by the synthetic camera's kernel and
    encoded with the sRGB curve: the frame and the marker's corners."""
    bits = (marker_bits(DICT, 2) > 0).astype(np.float32)
    ss = 8
    print_px = np.pad(cv2.resize(bits, None, fx=40, fy=40, interpolation=cv2.INTER_NEAREST), 40, constant_values=1.0)
    a = math.radians(20)
    centre = np.array([100.0, 90.0])
    half = side_px / 2
    corners = np.array([centre + half * np.array([math.cos(a) * sx - math.sin(a) * sy, math.sin(a) * sx + math.cos(a) * sy])
                        for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
    src = np.array([[40, 40], [280, 40], [280, 280], [40, 280]], np.float32)
    warp = cv2.getPerspectiveTransform(src, ((corners + 0.5) * ss - 0.5).astype(np.float32))
    big = cv2.warpPerspective(print_px, warp, (200 * ss, 180 * ss), flags=cv2.INTER_AREA, borderValue=0.35)
    linear = cv2.resize(big, (200, 180), interpolation=cv2.INTER_AREA) * 0.8 + 0.03
    linear = cv2.filter2D(linear, -1, blur_kernel(kind, sigma_px, motion_deg), borderType=cv2.BORDER_REPLICATE)
    gray = np.round(255 * linear_to_srgb(linear)).astype(np.uint8)
    return gray, corners[None]


@pytest.mark.parametrize("kind, sigma_px, expect_size", [("disc", 1.0, 2.0), ("gauss", 0.8, 0.8), ("motion", 1.0, 4.0)])
def test_the_spread_is_measured_on_an_anchor(kind: str, sigma_px: float, expect_size: float):
    gray, corners = _anchor_frame(kind, sigma_px, motion_deg=45.0)
    spread = measure_spread(gray, corners, np.array([2]), DICT)
    assert spread.kind == kind
    assert abs(spread.size_px - expect_size) <= 0.25
    if kind == "motion":
        assert abs((spread.angle_deg - 45.0 + 90) % 180 - 90) <= 12.0
    assert spread.misfit < 0.05


def test_a_sharp_frame_is_left_as_it_is():
    gray, corners = _anchor_frame("gauss", 0.5)
    assert measure_spread(gray, corners, np.array([2]), DICT).spread_px < SHARP_ENOUGH_PX


def test_a_spread_that_does_not_explain_the_anchor_is_not_used():
    # White clipped by an exposure twice too long: no kernel explains the anchor, and the frame
    # is not deconvolved with the least bad one (a wide Gaussian).
    gray, corners = _anchor_frame("disc", 1.0)
    clipped = np.clip(gray.astype(np.float32) * 2.0, 0, 255).astype(np.uint8)
    spread = measure_spread(clipped, corners, np.array([2]), DICT)
    assert spread.misfit > MAX_SPREAD_MISFIT and spread.spread_px > SHARP_ENOUGH_PX
    found = MarkerDetections(np.array([2]), corners.copy(), corners.copy(), np.zeros(1))
    assert lens_spread(clipped, found, frozenset({2}), DICT) is None
    assert lens_spread(gray, found, frozenset({2}), DICT) is not None


def test_sharpening_gives_a_blurred_edge_back():
    gray, corners = _anchor_frame("disc", 1.0)
    spread = measure_spread(gray, corners, np.array([2]), DICT)
    sharp = sharpened(gray, spread)
    # The steepest step across the anchor's edges, blurred and sharpened.
    steep = lambda g: float(np.abs(np.diff(g.astype(np.float32), axis=1)).max())  # noqa: E731
    assert steep(sharp) > 1.4 * steep(gray)


@pytest.mark.slow
def test_minis_under_a_defocus_disc_are_read_on_the_sharpened_frame():
    # A hard-level table out of focus: a disc of 2.1 px radius over 2-3 px modules. Before the
    # sharpened look, 3 of these 12 minis were not found (34, 36, 40; 40 still is not).
    scene = _defocused_table()
    image = Renderer().render(scene)
    state = Locator(scene.setup(), blocks=False).locate(image)
    truth = {m.id: m for m in scene.minis}
    seen = {m.id: m for m in state.minis}
    assert len(seen) >= len(truth) - 1, f"missed {sorted(set(truth) - set(seen))}"
    assert not set(seen) - set(truth)
    for marker_id, m in seen.items():
        t = truth[marker_id]
        assert math.hypot(m.x_mm - t.x_mm, m.y_mm - t.y_mm) < 4.0, marker_id


def _defocused_table():
    scene = random_scene(4243, "hard", randomise=True)
    return replace(scene, imaging=replace(scene.imaging, blur_kernel="disc", blur_sigma_px=1.05, gamma=0.0, sharpen=0.0))


@pytest.mark.slow
def test_the_live_tracker_reads_them_too_and_follows_one_that_walks():
    # Mini 36 is read only on the sharpened frame; pushed 4 mm a frame, it is looked for in its box
    # sharpened, not held at its start until the next whole-frame search.
    scene = _defocused_table()
    tracker = LiveTracker(scene.setup(), blocks=False)
    renderer = Renderer()
    state = tracker.update(renderer.render(scene), 0, 0.0)
    assert len(state.minis) >= len(scene.minis) - 1
    assert state.mini(36) is not None
    walker = next(m for m in scene.minis if m.id == 36)
    for f in range(1, 5):
        moved = replace(walker, x_mm=walker.x_mm + 4.0 * f)
        frame = replace(scene, minis=tuple(moved if m.id == 36 else m for m in scene.minis), noise_seed=f)
        state = tracker.update(renderer.render(frame), f, f / 10)
        seen = state.mini(36)
        assert seen.status == "seen", f"frame {f}: {seen.status}"
        assert math.hypot(seen.x_mm - moved.x_mm, seen.y_mm - moved.y_mm) < 3.0, f"frame {f}"
