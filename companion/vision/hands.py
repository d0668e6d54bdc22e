"""Where a hand or an arm lies over the table, in the block finder's top-down view.

A hand is skin-toned once the anchors' paper is made white, and wider than any brick: opened with
a disc HAND_WIDTH_MM across, a brick's outline (a 4 x 6 brick is 32 mm wide) leaves nothing, a
palm or an arm stays. It is told from the table against the table as seen over a window wider
than an arm (HAND_TABLE_WINDOW_MM): the block finder's own local table, a median over 60 mm,
takes an arm's middle for table, and a wooden table is skin-toned itself. The rest of it is what
shares its chromaticity, paler where a lamp's glare lights it, darker on its far side (but not as
dark as its shadow on the table), and a rim HAND_RIM_MM wide, shaded by its own roundness. What
lies in it is no block the frame can read: the block finder leaves it out (a hand's shaded rim on
wood was read as a black brick).
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.colours import PAPER_ALBEDO, colour_distance

HANDS_WARNING = ("a hand or an arm over the table hides part of it: no block is read under it or beside it "
                 "(take it away and look again)")
SKIN_HUES = (0, 22)  # OpenCV hues (half degrees): red to yellow-orange
HAND_HUES = (-10, 22)  # ... and pink for a hand (a path-traced one in a clipped frame's glare reads -10 deg)
HAND_MM2 = 2500.0  # a hand or an arm covers more than this (a 2x4 brick seen from above: ~900 mm2)
HAND_WIDTH_MM = 40.0  # a palm and an arm are wider than this; a brick (4 x 6 at most, 32 mm) is not
HAND_TABLE_WINDOW_MM = 240.0  # the table round a hand: a median over this (an arm is ~90 mm wide)
HAND_CONTRAST = 20.0  # colour distance (8-bit levels) from that table of a hand's skin
HAND_RIM_MM = 12.0  # a hand's shaded rim beyond its skin-toned part
HAND_CHROMA = 0.08  # chromaticity (b, g, r over their sum) this near the skin-toned part's is more of the hand
HAND_LIT = 0.75  # ... where it is no darker than this of the skin-toned part (its shadow on the table is)


def skin_toned(bgr: np.ndarray, hues: tuple[int, int] = SKIN_HUES) -> np.ndarray:
    """Per colour (N, 3) BGR: a hue within `hues`, moderate saturation, bright (a hand or an arm)."""
    pixels = np.clip(np.asarray(bgr, np.float32), 0, 255).astype(np.uint8).reshape(-1, 1, 3)
    hsv = cv2.cvtColor(pixels, cv2.COLOR_BGR2HSV).reshape(-1, 3).astype(int)
    low, high = hues
    hue = np.where(hsv[:, 0] >= 90, hsv[:, 0] - 180, hsv[:, 0])  # (red about 0, pink below it)
    return (hue >= low) & (hue <= high) & (hsv[:, 1] >= 45) & (hsv[:, 1] <= 170) & (hsv[:, 2] >= 90)


def skin_toned_on_paper(pixels_bgr: np.ndarray, white: np.ndarray, hues: tuple[int, int] = SKIN_HUES) -> np.ndarray:
    """`skin_toned` of pixels (N, 3, BGR) once the anchors' paper (`white`, RGB 0-1) is made white."""
    return skin_toned(pixels_bgr.astype(np.float32) / np.maximum(np.asarray(white, np.float32)[::-1], 1e-3) * PAPER_ALBEDO,
                      hues)


def hand_regions(view: np.ndarray, white: np.ndarray, mm_per_px: float) -> np.ndarray:
    """Where hands and arms lie (uint8 mask, 1 = hand) in a top-down view of the table (BGR,
    `mm_per_px`), the anchors' paper `white` (RGB 0-1)."""
    differs = colour_distance(view, _wide_table(view, mm_per_px), blur_px=1.0) > HAND_CONTRAST
    skin = np.zeros(view.shape[:2], np.uint8)
    skin[differs] = skin_toned_on_paper(view[differs], white, HAND_HUES)
    if np.count_nonzero(skin) * mm_per_px ** 2 < HAND_MM2:
        return np.zeros_like(skin)  # (most frames: the opening below is most of the time)
    wide_px = int(HAND_WIDTH_MM / mm_per_px) | 1
    as_wide = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (wide_px, wide_px))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(cv2.morphologyEx(skin, cv2.MORPH_OPEN, as_wide),
                                                               connectivity=8)
    big = np.flatnonzero(stats[:, cv2.CC_STAT_AREA] * mm_per_px ** 2 >= HAND_MM2)
    palms = np.isin(labels, big[big > 0]).astype(np.uint8)
    if not palms.any():
        return palms
    hands = _whole(view, palms, differs, as_wide)
    rim_px = 2 * int(HAND_RIM_MM / mm_per_px) + 1
    grown = cv2.dilate(hands, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (rim_px, rim_px)))
    return grown & (differs | (hands > 0)).astype(np.uint8)


def _wide_table(view: np.ndarray, mm_per_px: float) -> np.ndarray:
    """The table as a median over HAND_TABLE_WINDOW_MM sees it (BGR, the view's size)."""
    scale = 4  # taken at 4 times the view's pixel (a median over a window this wide is costly)
    small = cv2.resize(view, None, fx=1 / scale, fy=1 / scale, interpolation=cv2.INTER_AREA)
    window_px = int(HAND_TABLE_WINDOW_MM / (scale * mm_per_px)) | 1
    return cv2.resize(cv2.medianBlur(small, window_px), (view.shape[1], view.shape[0]), interpolation=cv2.INTER_LINEAR)


def _whole(view: np.ndarray, palms: np.ndarray, differs: np.ndarray, as_wide: np.ndarray) -> np.ndarray:
    """The hands whose skin-toned parts are `palms`, whole: with what differs from the table, is not
    their shadow, shares their chromaticity (their lit side is paler, their far side darker) and
    is as wide as a hand (`as_wide`, the opening's disc), where it touches them."""
    bgr = view.astype(np.float32)
    brightness = bgr.sum(axis=2)
    chroma = bgr / np.maximum(brightness, 1.0)[..., None]
    like = np.sqrt(((chroma - np.median(chroma[palms > 0], axis=0)) ** 2).sum(axis=2)) <= HAND_CHROMA
    lit = brightness >= HAND_LIT * float(np.median(brightness[palms > 0]))
    body = cv2.morphologyEx(((differs & like & lit) | (palms > 0)).astype(np.uint8), cv2.MORPH_OPEN, as_wide)
    _, labels = cv2.connectedComponents(body, connectivity=8)
    touching = np.unique(labels[palms > 0])
    return palms | np.isin(labels, touching[touching > 0]).astype(np.uint8)
