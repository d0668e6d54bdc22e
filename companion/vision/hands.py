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

A frame exposed for a dark table clips a hand held up towards the lamp: it reads white to pale
pink, its hue lost, and so does the paper (PALE_PAPER). Then it is the pale part (near the
paper's white, little saturation) that is as wide as a hand, larger than a palm's half
(PALE_HAND_MM2), and not a rectangle (a sheet of paper or a broad white keep is; a palm or an arm,
rounded, is not: `_rounded`).
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.colours import PAPER_ALBEDO, colour_distance
from companion.vision.cutout import COARSE_MM, FINE_MM

HANDS_WARNING = ("a hand or an arm over the table hides part of it: no block is read under it or beside it "
                 "(take it away and look again)")
# ... in a live stream, where the blocks last seen there are held while it stays
LIVE_HANDS_WARNING = ("a hand or an arm over the table hides part of it: the blocks there are held as last seen "
                      "and no new one is read under it or beside it")
SKIN_HUES = (0, 22)  # OpenCV hues (half degrees): red to yellow-orange
HAND_HUES = (-10, 22)  # ... and pink for a hand (a path-traced one in a clipped frame's glare reads -10 deg)
HAND_MM2 = 2500.0  # a hand or an arm covers more than this (a 2x4 brick seen from above: ~900 mm2)
SKIN_SHARE = 0.5  # of a candidate, skin-toned under the paper's white balance: a hand, an arm
SKIN_HUE_APART_DEG = 8.0  # a top this far in hue from its walls is glossy plastic under a lamp, not skin
HAND_WIDTH_MM = 40.0  # a palm and an arm are wider than this; a brick (4 x 6 at most, 32 mm) is not
HAND_TABLE_WINDOW_MM = 240.0  # the table round a hand: a median over this (an arm is ~90 mm wide)
HAND_CONTRAST = 20.0  # colour distance (8-bit levels) from that table of a hand's skin
HAND_RIM_MM = 12.0  # a hand's shaded rim beyond its skin-toned part
HAND_CHROMA = 0.08  # chromaticity (b, g, r over their sum) this near the skin-toned part's is more of the hand
HAND_LIT = 0.75  # ... where it is no darker than this of the skin-toned part (its shadow on the table is)
# A clipped frame's hand (path traced, the paper at the camera's ceiling) read 0.9-1.0 of the
# paper's white and saturation 0.02-0.2 (HSV, once the paper is white); its pale parts as wide as
# a hand covered 5600-48000 mm2 (palms ~9000), and no part of any table without hands 1500 mm2.
# Only then: where the paper is not near the camera's ceiling a hand shows its hue, and a pale part
# as wide as a hand is more likely the table's own (a mat's light gray patches read 170-190).
PALE_PAPER = 0.9  # the paper's brightest channel (0-1) from which a hand may read pale
PALE_VALUE = 190  # HSV value (0-255) from which a part is pale, the paper made PAPER_ALBEDO white (235)
PALE_SATURATION = 70  # ... and HSV saturation (0-255) up to which
PALE_HAND_MM2 = 4000.0  # a pale part as wide as a hand covers more (a 64 mm square keep ~3750 once opened)
# A palm's outline fills 0.72-0.84 of its least bounding rectangle (an ellipse pi/4); a rectangle
# opened by the hand's disc still fills 0.9 and more.
ROUNDED_FILL = 0.88
# A pale arm's far side, turned from the lamp, is a band of its gray 0.34-0.6 as bright as its
# lit side and up to 36 mm wide on the table (a black brick was read in it); its shadow on wood
# lay at 0.25-0.28. Anywhere from 0.2 to 0.5 left the same blocks on the clipped bench frames.
PALE_LIT = 0.4


def skin_toned(bgr: np.ndarray, hues: tuple[int, int] = SKIN_HUES) -> np.ndarray:
    """Per colour (N, 3) BGR: a hue within `hues`, moderate saturation, bright (a hand or an arm)."""
    return _skin_toned_hsv(_hsv(bgr), hues)


def skin_toned_on_paper(pixels_bgr: np.ndarray, white: np.ndarray, hues: tuple[int, int] = SKIN_HUES) -> np.ndarray:
    """`skin_toned` of pixels (N, 3, BGR) once the anchors' paper (`white`, RGB 0-1) is made white."""
    return _skin_toned_hsv(_hsv_on_paper(pixels_bgr, white), hues)


def _hsv(bgr: np.ndarray) -> np.ndarray:
    """OpenCV's HSV (N, 3, int) of colours (N, 3) BGR."""
    pixels = np.clip(np.asarray(bgr, np.float32), 0, 255).astype(np.uint8).reshape(-1, 1, 3)
    if not len(pixels):
        return np.zeros((0, 3), int)  # (cvtColor refuses an empty image: a frame where nothing differs)
    return cv2.cvtColor(pixels, cv2.COLOR_BGR2HSV).reshape(-1, 3).astype(int)


def _hsv_on_paper(pixels_bgr: np.ndarray, white: np.ndarray) -> np.ndarray:
    """`_hsv` of pixels (N, 3, BGR) once the anchors' paper (`white`, RGB 0-1) is made PAPER_ALBEDO white."""
    return _hsv(pixels_bgr.astype(np.float32) / np.maximum(np.asarray(white, np.float32)[::-1], 1e-3) * PAPER_ALBEDO)


def _skin_toned_hsv(hsv: np.ndarray, hues: tuple[int, int]) -> np.ndarray:
    low, high = hues
    hue = np.where(hsv[:, 0] >= 90, hsv[:, 0] - 180, hsv[:, 0])  # (red about 0, pink below it)
    return (hue >= low) & (hue <= high) & (hsv[:, 1] >= 45) & (hsv[:, 1] <= 170) & (hsv[:, 2] >= 90)


def hand_regions(view: np.ndarray, white: np.ndarray, mm_per_px: float) -> np.ndarray:
    """Where hands and arms lie (uint8 mask, 1 = hand) in a top-down view of the table (BGR,
    `mm_per_px`), the anchors' paper `white` (RGB 0-1)."""
    differs = colour_distance(view, _wide_table(view, mm_per_px), blur_px=1.0) > HAND_CONTRAST
    skin, pale = np.zeros(view.shape[:2], np.uint8), np.zeros(view.shape[:2], np.uint8)
    hsv = _hsv_on_paper(view[differs], white)
    skin[differs] = _skin_toned_hsv(hsv, HAND_HUES)
    if float(np.max(white)) >= PALE_PAPER:
        pale[differs] = (hsv[:, 2] >= PALE_VALUE) & (hsv[:, 1] <= PALE_SATURATION)
    wide_px = int(HAND_WIDTH_MM / mm_per_px) | 1
    as_wide = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (wide_px, wide_px))
    hands = np.zeros_like(skin)
    skin_palms = _as_wide_as_a_hand(skin, as_wide, HAND_MM2 / mm_per_px ** 2)
    pale_palms = _as_wide_as_a_hand(pale, as_wide, PALE_HAND_MM2 / mm_per_px ** 2, rounded=True)
    for palms, lit_least in ((skin_palms, HAND_LIT), (pale_palms, PALE_LIT)):
        if palms.any():  # (grown apart: a pale palm's chromaticity is not a skin-toned one's)
            hands |= _whole(view, palms, differs, as_wide, lit_least)
    if not hands.any():
        return hands
    rim_px = 2 * int(HAND_RIM_MM / mm_per_px) + 1
    grown = cv2.dilate(hands, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (rim_px, rim_px)))
    return grown & (differs | (hands > 0)).astype(np.uint8)


def _as_wide_as_a_hand(part: np.ndarray, as_wide: np.ndarray, least_px: float, rounded: bool = False) -> np.ndarray:
    """What of `part` (uint8 mask) stays opened by a hand's disc (`as_wide`) in pieces of
    `least_px` or more (and, with `rounded`, not rectangles: `_rounded`)."""
    if np.count_nonzero(part) < least_px:
        return np.zeros_like(part)  # (most frames: the opening is most of the time)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(cv2.morphologyEx(part, cv2.MORPH_OPEN, as_wide),
                                                               connectivity=8)
    kept = [k for k in range(1, count) if stats[k, cv2.CC_STAT_AREA] >= least_px
            and (not rounded or _rounded(labels == k, int(stats[k, cv2.CC_STAT_AREA])))]
    return np.isin(labels, kept).astype(np.uint8)


def _rounded(piece: np.ndarray, area_px: int) -> bool:
    """Whether a piece (bool mask) fills less than ROUNDED_FILL of its least bounding rectangle."""
    (_, _), (w, h), _ = cv2.minAreaRect(cv2.findNonZero(piece.astype(np.uint8)))
    return area_px < ROUNDED_FILL * max(w * h, 1.0)


def _wide_table(view: np.ndarray, mm_per_px: float) -> np.ndarray:
    """The table as a median over HAND_TABLE_WINDOW_MM sees it (BGR, the view's size)."""
    scale = 4  # taken at 4 times the view's pixel (a median over a window this wide is costly)
    small = cv2.resize(view, None, fx=1 / scale, fy=1 / scale, interpolation=cv2.INTER_AREA)
    window_px = int(HAND_TABLE_WINDOW_MM / (scale * mm_per_px)) | 1
    return cv2.resize(cv2.medianBlur(small, window_px), (view.shape[1], view.shape[0]), interpolation=cv2.INTER_LINEAR)


def _whole(view: np.ndarray, palms: np.ndarray, differs: np.ndarray, as_wide: np.ndarray, lit_least: float
           ) -> np.ndarray:
    """The hands whose skin-toned (or pale) parts are `palms`, whole: with what differs from the
    table, is not their shadow (at least `lit_least` as bright as they), shares their chromaticity
    (their lit side is paler, their far side darker) and is as wide as a hand (`as_wide`, the
    opening's disc), where it touches them."""
    bgr = view.astype(np.float32)
    brightness = bgr.sum(axis=2)
    chroma = bgr / np.maximum(brightness, 1.0)[..., None]
    like = np.sqrt(((chroma - np.median(chroma[palms > 0], axis=0)) ** 2).sum(axis=2)) <= HAND_CHROMA
    lit = brightness >= lit_least * float(np.median(brightness[palms > 0]))
    body = cv2.morphologyEx(((differs & like & lit) | (palms > 0)).astype(np.uint8), cv2.MORPH_OPEN, as_wide)
    _, labels = cv2.connectedComponents(body, connectivity=8)
    touching = np.unique(labels[palms > 0])
    return palms | np.isin(labels, touching[touching > 0]).astype(np.uint8)


def skin_top(top_bgr: np.ndarray, wall_bgr: np.ndarray | None) -> bool:
    """Whether a skin-toned top (BGR, under the paper's white balance) is skin: its walls
    (likewise balanced; None where none shows) share its hue. A glossy brick's top is paled and
    shifted towards the lamp's colour by its reflection; its walls keep the plastic's hue."""
    return looks_like_skin(top_bgr) and (wall_bgr is None or _hue_apart_deg(top_bgr, wall_bgr) < SKIN_HUE_APART_DEG)


def _hue_apart_deg(bgr_a: np.ndarray, bgr_b: np.ndarray) -> float:
    """How far apart two colours' hues are, in degrees."""
    pixels = np.clip(np.array([bgr_a, bgr_b], np.float32), 0, 255).astype(np.uint8).reshape(2, 1, 3)
    hue = cv2.cvtColor(pixels, cv2.COLOR_BGR2HSV_FULL).reshape(2, 3)[:, 0].astype(float) * 360.0 / 256.0
    apart = abs(hue[0] - hue[1])
    return float(min(apart, 360.0 - apart))


def looks_like_skin(bgr: np.ndarray) -> bool:
    return bool(skin_toned(np.asarray(bgr, float).reshape(1, 3))[0])


def hand_may_be_in_view(coarse: np.ndarray, table: np.ndarray, differs: np.ndarray, white: np.ndarray) -> bool:
    """Whether the frame may show a hand: what differs from the table (`differs`, the coarse
    view's mask) holds a hand's worth (HAND_MM2) of skin-toned pixels in one piece, under the
    paper's white balance; or the table is skin-toned itself (wood: a hand over it hardly differs
    from it, and the table tells nothing)."""
    if float(np.mean(skin_toned_on_paper(table[::8, ::8].reshape(-1, 3), white))) > SKIN_SHARE:
        return True
    skin = differs.astype(bool)
    if np.count_nonzero(skin) * COARSE_MM ** 2 < HAND_MM2:
        return False
    skin[skin] = skin_toned_on_paper(coarse[skin], white)
    if np.count_nonzero(skin) * COARSE_MM ** 2 < HAND_MM2:
        return False
    _, _, stats, _ = cv2.connectedComponentsWithStats(skin.astype(np.uint8), connectivity=8)
    return bool((stats[1:, cv2.CC_STAT_AREA] * COARSE_MM ** 2 >= HAND_MM2).any())


def mostly_skin(fine: np.ndarray, blob: np.ndarray, white: np.ndarray) -> bool:
    """Whether a candidate as big as a hand is mostly skin-toned once the paper is made white (a
    brick is smaller; and a glossy red brick's paled top is skin-toned too)."""
    inside = fine[blob > 0]
    if len(inside) * FINE_MM ** 2 < HAND_MM2:
        return False
    return bool(np.mean(skin_toned_on_paper(inside, white)) > SKIN_SHARE)
