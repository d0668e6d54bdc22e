"""Find ArUco markers and refine their corners to a fraction of a pixel.

OpenCV's detector finds the quads; its corner refinements are biased for the small markers on minis
(NONE and CONTOUR sit ~0.5 px inside the edge; SUBPIX is pulled by the thin white margin), and
0.1 px of a 15 mm marker's side is ~4 mm of height at 1 m, so the refinement carries the height.

- Small markers (under `MODEL_FIT_MAX_SIDE_PX`, every mini's): the printed pattern itself is
  aligned to the image (`fit_pattern`): the marker's cells, blurred and put through the
  camera's response, are warped by its four corners (a homography) and its blur is fitted, until
  they match the pixels; the fit's residual says how far to trust the corners (a misread id does
  not fit and is dropped). Edge lines are the fallback where the alignment wanders.
- Large markers (the anchors): each edge is sampled across its whole length (corners excluded,
  where blur rounds them): along every normal the subpixel crossing of the mid level between the
  black border and the white margin is found, the crossings are undistorted, and a straight line
  is fitted in ideal image coordinates; corners are the intersections of adjacent lines.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from companion.errors import InputError
from companion.vision.camera import CameraModel


@lru_cache(maxsize=None)
def dictionary(name: str) -> cv2.aruco.Dictionary:
    code = getattr(cv2.aruco, name, None)
    if not name.startswith("DICT_") or not isinstance(code, int):
        raise InputError(f"unknown marker dictionary {name!r} (try DICT_4X4_50)")
    return cv2.aruco.getPredefinedDictionary(code)


@lru_cache(maxsize=None)
def marker_bits(dictionary_name: str, marker_id: int) -> np.ndarray:
    """The printed cells including the black border, row 0 at the marker's top: 0 black, 255 white."""
    d = dictionary(dictionary_name)
    cells = d.markerSize + 2
    return cv2.aruco.generateImageMarker(d, int(marker_id), cells, borderBits=1)


FIRST_WINDOWS = (3, 9, 6)  # adaptive threshold windows: smallest, largest, step (px)
ALL_WINDOWS = (3, 23, 4)


def detector_parameters() -> cv2.aruco.DetectorParameters:
    params = cv2.aruco.DetectorParameters()
    # Our own edge refinement replaces OpenCV's; NONE is also the cheapest mode.
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_NONE
    # 15 mm markers at 1.4 m are ~15 px wide: below the default 3% perimeter rate at 1080p.
    params.minMarkerPerimeterRate = 0.012
    # Small markers (2-3 px modules): smaller threshold windows, finer cell sampling, looser
    # polygon and spacing limits; the false ids this lets through are removed by the pattern fit.
    # Threshold windows 3 and 9 px first (`FIRST_WINDOWS`): each window costs ~6 ms of a 1080p
    # frame, and 9 px also reaches an anchor's large modules. While markers are missing, one pass
    # over windows 3-23 px (`ALL_WINDOWS`): one pass over them all finds more than a second pass
    # over the large ones alone, as OpenCV groups a marker's outlines across windows and decodes
    # the best of them.
    params.adaptiveThreshWinSizeMin, params.adaptiveThreshWinSizeMax, params.adaptiveThreshWinSizeStep = FIRST_WINDOWS
    params.perspectiveRemovePixelPerCell = 8
    params.perspectiveRemoveIgnoredMarginPerCell = 0.3
    params.polygonalApproxAccuracyRate = 0.1
    params.minCornerDistanceRate = 0.01
    return params


def _rescue_parameters() -> cv2.aruco.DetectorParameters:
    params = detector_parameters()
    params.minMarkerPerimeterRate = 0.05  # the upscaled patch holds one marker, large
    # Upscaled modules are 8-12 px: windows of 11 and 23 px rescued 14 markers of 16 bench frames
    # where the first pass's six windows (3-23 px) rescued 13, in 60% of the time.
    params.adaptiveThreshWinSizeMin = 11
    params.adaptiveThreshWinSizeMax = 23
    params.adaptiveThreshWinSizeStep = 12
    return params


def _quick_parameters() -> cv2.aruco.DetectorParameters:
    params = detector_parameters()
    # One threshold window instead of four: half the time on a small crop. For a
    # tracker re-finding markers it knows; a miss falls back to the full set.
    params.adaptiveThreshWinSizeMin = 7
    params.adaptiveThreshWinSizeMax = 7
    return params


@lru_cache(maxsize=None)
def make_detector(dictionary_name: str, rescue: bool = False, quick: bool = False,
                  default: bool = False, min_perimeter_rate: float | None = None,
                  window_px: int | None = None, windows: tuple[int, int, int] | None = None
                  ) -> cv2.aruco.ArucoDetector:
    if default:
        params = cv2.aruco.DetectorParameters()
    else:
        params = _rescue_parameters() if rescue else _quick_parameters() if quick else detector_parameters()
    if min_perimeter_rate is not None:
        params.minMarkerPerimeterRate = min_perimeter_rate
    if window_px is not None:
        params.adaptiveThreshWinSizeMin = params.adaptiveThreshWinSizeMax = window_px
    if windows is not None:
        params.adaptiveThreshWinSizeMin, params.adaptiveThreshWinSizeMax, params.adaptiveThreshWinSizeStep = windows
    return cv2.aruco.ArucoDetector(dictionary(dictionary_name), params)


def perimeter_rate_for(min_side_px: float, roi_w: int, roi_h: int) -> float:
    """OpenCV's minMarkerPerimeterRate (relative to the image's larger side) that lets through
    markers down to 70% of `min_side_px` and nothing much smaller: in a small search box the
    default rate would make every speck of wood grain a candidate. Quantized, so detectors are shared."""
    rate = 0.7 * 4 * min_side_px / max(roi_w, roi_h, 1)
    return max(0.012, math.floor(rate * 20) / 20)


RESCUE_SCALE = 4
# Looks tried in turn (unsharp amount, tone curve): the unsharp mask helps most small markers, a
# few decode only without it, and overexposed ones once their mid-tones are darkened.
RESCUE_LOOKS = ((2.0, 1.0), (0.0, 1.0), (2.0, 2.5))
RESCUE_MAX_SIDE_PX = 60.0  # rejected outer contours (the white margin's edge) of 40 px markers are still worth a look
RESCUE_MIN_DARK_SHARE = 0.15  # a marker's black border alone is over a quarter of its area; a grid-mat square has none
RESCUE_MIN_CONTRAST = 0.3  # black at least this far below the white, as a share of the white
# A print's modules span pixels, so neighbouring pixels of its patch agree; sensor noise does not.
# Correlation of a patch with itself one pixel over (the lower of across and down): 0.19-0.99 on
# the patches the second look decoded (hard ray-cast, path-traced and plain frames) and 0.58-0.99
# on the cards `cards` read, -0.2-0.05 on a frame of noise (a dark room's gained-up webcam), whose
# thousands of rejected quads and bright specks each cost a decode or a card's reading (a minute
# a frame) and decoded ids out of the noise.
MIN_NEIGHBOUR_CORRELATION = 0.1


DECODED_REACH = 1.35  # a decoded marker's quad grown to take in its white margin (8 / 6 of its side)


def _grown(quad: np.ndarray, ratio: float) -> np.ndarray:
    centre = quad.mean(axis=0)
    return centre + ratio * (quad - centre)


def inside_quads(points: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(N, K): whether each point (N, 2) lies inside (or on) each convex quad (K, 4, 2), either winding."""
    points, quads = np.asarray(points, np.float64).reshape(-1, 2), np.asarray(quads, np.float64).reshape(-1, 4, 2)
    edges = np.roll(quads, -1, axis=1) - quads  # (K, 4, 2)
    rel = points[:, None, None, :] - quads[None]  # (N, K, 4, 2)
    cross = edges[..., 0] * rel[..., 1] - edges[..., 1] * rel[..., 0]  # (N, K, 4)
    return (cross >= 0).all(axis=2) | (cross <= 0).all(axis=2)


def _inside_any(points: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """For each point (N, 2): whether it lies inside any of these convex quads (K, 4, 2)."""
    return inside_quads(points, quads).any(axis=1)


def neighbour_correlation(patch: np.ndarray) -> float:
    """How alike neighbouring pixels are: the correlation of a patch with itself shifted by one
    pixel, across and down, the lower of the two (~0 for noise, near 1 for blurred shapes)."""
    values = patch.astype(np.float64)
    values -= values.mean()
    variance = float((values * values).mean())
    if variance <= 0.0:
        return 0.0
    across = float((values[:, 1:] * values[:, :-1]).mean())
    down = float((values[1:] * values[:-1]).mean())
    return min(across, down) / variance


def rescue_rejected(gray: np.ndarray, rejected, dictionary_name: str, known_ids: set[int],
                    within: list[tuple[int, int, int, int]] | None = None,
                    expected_side_px: float | None = None,
                    decoded: list[np.ndarray] | None = None) -> tuple[list[int], list[np.ndarray]]:
    """Second look at quads OpenCV could not decode: small dark ones are cut out, upscaled x4 and
    sharpened (an unsharp mask undoes some of the blur that mixes 2 px modules), then decoded again.
    On hard bench scenes this took recall from 90% to 97%. `expected_side_px` (a tracker looking
    for a marker it knows) skips quads of another size: the edges of a hand make many."""
    ids_out: list[int] = []
    quads_out: list[np.ndarray] = []
    h, w = gray.shape[:2]
    if len(rejected) == 0:
        return ids_out, quads_out
    # The first tests for all quads at once: a frame of wood grain or of markers rejects hundreds.
    quads = np.asarray(rejected, np.float64).reshape(-1, 4, 2)
    sides = np.linalg.norm(quads - np.roll(quads, 1, axis=1), axis=2)
    keep = (sides.max(axis=1) <= RESCUE_MAX_SIDE_PX) & (sides.min(axis=1) >= 5)
    if expected_side_px is not None:
        keep &= (sides.mean(axis=1) >= 0.6 * expected_side_px) & (sides.mean(axis=1) <= 1.6 * expected_side_px)
    if within is not None:
        centres = quads.mean(axis=1)
        keep &= np.array([any(b[0] <= cx < b[2] and b[1] <= cy < b[3] for b in within) for cx, cy in centres], bool)
    # OpenCV also rejects outlines within a marker it did decode (its margin's, its pattern's dark
    # patches): most of a board's candidates, no second look there.
    if decoded:
        keep &= ~_inside_any(quads.mean(axis=1), np.array([_grown(q, DECODED_REACH) for q in decoded]))
    rescued: list[np.ndarray] = []
    for quad in quads[keep]:
        if rescued and _inside_any(quad.mean(axis=0)[None], np.array(rescued))[0]:
            continue
        x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - 5, 0)
        x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + 6, (w, h))
        patch = gray[y0:y1, x0:x1]
        if patch.size == 0:
            continue
        inside = cv2.fillConvexPoly(np.zeros(patch.shape, np.uint8), np.round(quad - (x0, y0)).astype(np.int32), 1) > 0
        if not inside.any() or inside.all():
            continue
        # Dark against the marker's own white (its margin, the brightest around it), not against
        # the table around the quad: on dark felt an overexposed marker's black is as bright as
        # the felt. A quad with no contrast of its own (a grid-mat square) has nothing dark.
        white = float(np.percentile(patch, 95))
        black = float(np.percentile(patch[inside], 5))
        if white - black < RESCUE_MIN_CONTRAST * max(white, 1.0):
            continue
        dark = patch[inside] < 0.5 * (white + black)
        if dark.mean() < RESCUE_MIN_DARK_SHARE or neighbour_correlation(patch) < MIN_NEIGHBOUR_CORRELATION:
            continue
        up = cv2.resize(patch, None, fx=RESCUE_SCALE, fy=RESCUE_SCALE, interpolation=cv2.INTER_CUBIC).astype(np.float32)
        blurred = cv2.GaussianBlur(up, (0, 0), RESCUE_SCALE * 0.8)
        for amount, curve in RESCUE_LOOKS:
            sharp = np.clip(up + amount * (up - blurred), 0, 255)
            if curve != 1.0:
                # Black modules shrink where the white is clipped (an overexposed print, a bright
                # tone curve): stretching the marker's own range and darkening the mid-tones
                # gives them back their width.
                sharp = 255.0 * np.clip((sharp - black) / max(white - black, 1.0), 0, 1) ** curve
            corners, ids, _ = make_detector(dictionary_name, rescue=True).detectMarkers(sharp.astype(np.uint8))
            if ids is not None and len(ids):  # OpenCV 5.1 gives an empty array where 5.0 gave None
                break
        if ids is None or not len(ids):
            continue
        for c, marker_id in zip(corners, np.asarray(ids).ravel()):
            if int(marker_id) in known_ids:
                continue
            # Pixel centres: upscaled u is original (u + 0.5) / scale - 0.5.
            ids_out.append(int(marker_id))
            quads_out.append((np.asarray(c, np.float64).reshape(4, 2) + 0.5) / RESCUE_SCALE - 0.5 + (x0, y0))
            known_ids.add(int(marker_id))
            rescued.append(_grown(quads_out[-1], DECODED_REACH))
    return ids_out, quads_out


@dataclass(frozen=True, eq=False)
class MarkerDetections:
    """Parallel arrays, one row per detected marker (supervision-style)."""

    ids: np.ndarray  # (N,) int
    corners_px: np.ndarray  # (N, 4, 2) distorted pixels, OpenCV order TL TR BR BL of the printed marker
    corners_norm: np.ndarray  # (N, 4, 2) ideal normalized image coordinates (undistorted)
    edge_rms_px: np.ndarray  # (N,) RMS distance of edge samples from their fitted lines
    refined: np.ndarray = field(default=None)  # (N,) bool: sub-pixel refinement succeeded
    raw_px: np.ndarray = field(default=None)  # (N, 4, 2) OpenCV's corners before refinement
    # (N,) how dark the pattern fit found what lies beyond half a module of white margin: 0 white
    # paper (a full margin), 1 as dark as the black (a print trimmed on dark felt); 0 unfitted.
    margin_dark: np.ndarray = field(default=None)
    # (N,) the pattern fit's RMS residual as a share of the marker's contrast (noise, JPEG, what
    # the model misses); NaN where no pattern was fitted.
    fit_residual: np.ndarray = field(default=None)

    def __post_init__(self) -> None:
        n = len(self.ids)
        if self.corners_px.shape != (n, 4, 2) or self.corners_norm.shape != (n, 4, 2):
            raise ValueError("MarkerDetections: corners must be (N, 4, 2)")
        if self.refined is None:
            object.__setattr__(self, "refined", np.ones(n, bool))
        if self.raw_px is None:
            object.__setattr__(self, "raw_px", self.corners_px.copy())
        if self.margin_dark is None:
            object.__setattr__(self, "margin_dark", np.zeros(n))
        if self.fit_residual is None:
            object.__setattr__(self, "fit_residual", np.full(n, np.nan))

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index) -> "MarkerDetections":
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            # One row as views (the live tracker takes a row per marker it remembers, every frame;
            # eight fancy-indexed copies cost ten times as much). Nothing writes into them.
            row = int(index) + len(self) if index < 0 else int(index)
            if not 0 <= row < len(self):
                raise IndexError(f"MarkerDetections: row {index} of {len(self)}")
            index = slice(row, row + 1)
        else:
            index = np.atleast_1d(np.arange(len(self))[index])
        return MarkerDetections(self.ids[index], self.corners_px[index], self.corners_norm[index],
                                self.edge_rms_px[index], self.refined[index], self.raw_px[index],
                                self.margin_dark[index], self.fit_residual[index])

    @staticmethod
    def empty() -> "MarkerDetections":
        # One shared instance (`_EMPTY_DETECTIONS`): nothing writes into a detection's arrays, and
        # the live tracker asks for an empty set most frames.
        return _EMPTY_DETECTIONS

    @classmethod
    def concat(cls, parts: list["MarkerDetections"]) -> "MarkerDetections":
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]  # nothing writes into a detection's arrays: no copy needed (the tracker concatenates every frame)
        return cls(np.concatenate([p.ids for p in parts]), np.concatenate([p.corners_px for p in parts]),
                   np.concatenate([p.corners_norm for p in parts]), np.concatenate([p.edge_rms_px for p in parts]),
                   np.concatenate([p.refined for p in parts]), np.concatenate([p.raw_px for p in parts]),
                   np.concatenate([p.margin_dark for p in parts]), np.concatenate([p.fit_residual for p in parts]))


_EMPTY_DETECTIONS = MarkerDetections(np.zeros(0, int), np.zeros((0, 4, 2)), np.zeros((0, 4, 2)), np.zeros(0),
                                     np.zeros(0, bool), np.zeros((0, 4, 2)), np.zeros(0), np.zeros(0))
for _array in vars(_EMPTY_DETECTIONS).values():
    _array.flags.writeable = False  # (shared: a write would be a bug)

CLEARLY_WORSE_FIT = 1.5  # a pattern residual this many times another's, on the same print, is a misread


def one_per_place(det: MarkerDetections) -> MarkerDetections:
    """One marker where two ids were read on top of each other (a centre inside another's quad)
    and one pattern fits clearly better: cards are opaque, so the other is a misread (a trimmed
    print's inner pattern decoded as another id, a card and what touches it as a larger one). An
    unfitted one fits worst. Where both fit alike, or neither was fitted (large markers get edge
    lines), both stay (the locator has more to go on)."""
    if len(det) < 2:
        return det
    inside = inside_quads(det.corners_px.mean(axis=1), det.corners_px)
    on_one_print = inside | inside.T  # either's centre within the other's quad
    residual = np.where(np.isnan(det.fit_residual), np.inf, det.fit_residual)
    order = sorted(range(len(det)), key=lambda i: residual[i])
    kept: list[int] = []
    for i in order:
        if not any(det.ids[i] != det.ids[j] and on_one_print[i, j] and np.isfinite(residual[j])
                   and residual[i] >= CLEARLY_WORSE_FIT * residual[j] for j in kept):
            kept.append(i)
    return det if len(kept) == len(det) else det[np.array(sorted(kept))]


def side_lengths_px(quad: np.ndarray) -> np.ndarray:
    """The lengths of a quad's four sides, in pixels."""
    quad = np.asarray(quad, np.float64)
    sides = quad - quad[[3, 0, 1, 2]]
    return np.sqrt((sides * sides).sum(axis=1))


def mean_side_px(quad: np.ndarray) -> float:
    """Mean length of a quad's four sides, in pixels: a marker's apparent size. (In plain Python,
    the same sums in the same order as `side_lengths_px(quad).mean()`: the live tracker asks for
    it a few times a marker a frame, and numpy's reductions cost microseconds each on 4 points.)"""
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = np.asarray(quad, np.float64).tolist()
    total = 0.0
    for x0, y0, x1, y1 in ((dx, dy, ax, ay), (ax, ay, bx, by), (bx, by, cx, cy), (cx, cy, dx, dy)):
        ex, ey = x1 - x0, y1 - y0
        total += math.sqrt(ex * ex + ey * ey)
    return total / 4


def to_gray(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return image
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def detect_raw(gray: np.ndarray, dictionary_name: str, offset_px: tuple[int, int] = (0, 0),
               rescue: bool = True, quick: bool = False,
               rescue_within: list[tuple[int, int, int, int]] | None = None,
               min_side_px: float | None = None,
               rescue_side_px: float | None = None, window_px: int | None = None,
               rescued: set[int] | None = None, expected: frozenset[int] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Marker quads: ids (N,) and corners (N, 4, 2) in full-frame pixels.

    `rescue_within` (boxes in the coordinates of `gray`) limits the second look to candidates
    there, of about `rescue_side_px`: a tracker looking for one lost marker need not rescue the whole
    search box, nor look for the large oblique markers of photographs. `window_px`: one adaptive
    threshold window of this size instead of the parameter set's. `rescued` collects the ids only
    the second look found. `expected`: the ids a setup lists; once the first pass has found them
    all, the further looks (every threshold window, large markers, rescue) are not taken, so a
    marker of no setup that only they would find goes unreported in such a frame."""
    rate = perimeter_rate_for(min_side_px, gray.shape[1], gray.shape[0]) if min_side_px else None
    detector = make_detector(dictionary_name, quick=quick, min_perimeter_rate=rate, window_px=window_px)
    corners, ids, rejected = detector.detectMarkers(gray)
    id_list = [] if ids is None else [int(i) for i in np.asarray(ids).ravel()]
    quads = [np.asarray(c, np.float64).reshape(4, 2) for c in corners] if id_list else []
    if expected is not None and expected <= set(id_list):
        rescue = False
    elif rescue and not quick and window_px is None:
        # Markers still missing: every threshold window (blurred, small or unevenly lit ones).
        more_corners, more_ids, rejected = make_detector(
            dictionary_name, min_perimeter_rate=rate, windows=ALL_WINDOWS).detectMarkers(gray)
        _add_new(id_list, quads, more_corners, more_ids)
    if rescue and rescue_within is None:
        _add_new(id_list, quads, *_large_markers(gray, dictionary_name))
    if rescue and rejected is not None and len(rejected):
        _take_rescued(id_list, quads, *rescue_rejected(gray, rejected, dictionary_name, set(id_list), rescue_within,
                                                       rescue_side_px, quads), rescued)
    if rescue and not quick and window_px is None and expected is not None and not expected <= set(id_list):
        # Markers the setup lists still missing: the frame with its mid-tones darkened, then also
        # its local contrast equalised. White paper clipped by an auto-exposure set for a dark
        # table (felt, wood) eats into the black modules until OpenCV cannot read the bits, and a
        # glossy print's glare lifts its black to a pale grey; so treated, they read again. Not
        # for frames of no setup: there is no telling when to stop, and it costs a pass.
        # Only the ids still missing are taken from it: darkened, grid lines and paint decode as
        # markers more often.
        for darkened in _darkened_looks(gray):
            wanted = expected - set(id_list)
            if not wanted:
                break
            more_corners, more_ids, rejected_dark = make_detector(
                dictionary_name, min_perimeter_rate=rate, windows=ALL_WINDOWS).detectMarkers(darkened)
            if more_ids is not None:
                keep = [k for k, i in enumerate(np.asarray(more_ids).ravel()) if int(i) in wanted]
                _add_new(id_list, quads, [more_corners[k] for k in keep], np.asarray(more_ids).ravel()[keep])
            if expected <= set(id_list):
                break
            _take_rescued(id_list, quads, *rescue_rejected(darkened, rejected_dark, dictionary_name, set(id_list),
                                                           rescue_within, rescue_side_px, quads), rescued, wanted)
    if not id_list:
        return np.zeros(0, int), np.zeros((0, 4, 2))
    return np.array(id_list, int), np.array(quads).reshape(-1, 4, 2) + np.asarray(offset_px, float)


def _take_rescued(id_list: list[int], quads: list[np.ndarray], more_ids: list[int], more_quads: list[np.ndarray],
                  rescued: set[int] | None, wanted: set[int] | None = None) -> None:
    """Add what a rescue found (only the `wanted` ids, if given), noting the ids in `rescued`."""
    for marker_id, quad in zip(more_ids, more_quads):
        if wanted is None or (marker_id in wanted and marker_id not in id_list):
            id_list.append(marker_id)
            quads.append(quad)
            if rescued is not None:
                rescued.add(marker_id)


def _power_lut(power: float) -> np.ndarray:
    """An 8-bit table raising display values (0-1) to a power: above 1 it darkens the greys."""
    return np.round(255 * (np.arange(256) / 255.0) ** power).astype(np.uint8)


_DARKEN_LUT = _power_lut(3)
# An exposure set for dark felt lifts a print's black to mid grey (45-60% of its clipped white):
# cubed it is still a grey the bits do not separate from; to the eighth power it is black again.
_DARKEN_MORE_LUT = _power_lut(8)


@lru_cache(maxsize=1)
def _local_contrast() -> cv2.CLAHE:
    return cv2.createCLAHE(clipLimit=4.0, tileGridSize=(16, 16))


def _darkened_looks(gray: np.ndarray):
    """The frame darkened, then (if markers are still missing) equalised and darkened, then
    darkened much more: each finds markers the others miss."""
    yield cv2.LUT(gray, _DARKEN_LUT)
    yield cv2.LUT(_local_contrast().apply(gray), _DARKEN_LUT)
    yield cv2.LUT(gray, _DARKEN_MORE_LUT)


def _add_new(id_list: list[int], quads: list[np.ndarray], corners, ids) -> None:
    """Add the markers of another pass that are not where one already is (by centre: a photo may
    hold one id twice)."""
    for c, marker_id in zip(corners, [] if ids is None else np.asarray(ids).ravel()):
        quad = np.asarray(c, np.float64).reshape(4, 2)
        if not any(np.linalg.norm(q.mean(axis=0) - quad.mean(axis=0)) < 3 for q in quads):
            id_list.append(int(marker_id))
            quads.append(quad)


LARGE_PASS_HALVED_ABOVE_PX = 1280


def _large_markers(gray: np.ndarray, dictionary_name: str) -> tuple[list[np.ndarray], np.ndarray | list]:
    """OpenCV's default parameters find some large, oblique markers in real photos that the
    small-marker set misses (NASA AprilTag photos: 3 of 52). In a frame wider than 1280 px this
    pass looks at half resolution (17 -> 5 ms at 1080p): what it alone finds is large, and the
    markers small enough to be lost there are the first pass's. Corners in full-frame pixels."""
    scale = 2 if gray.shape[1] > LARGE_PASS_HALVED_ABOVE_PX else 1
    small = gray if scale == 1 else cv2.resize(gray, None, fx=1 / scale, fy=1 / scale, interpolation=cv2.INTER_AREA)
    corners, ids, _ = make_detector(dictionary_name, default=True).detectMarkers(small)
    if ids is None:
        return [], []
    # pixel centres: u at full resolution is (u_small + 0.5) * scale - 0.5
    return ([(np.asarray(c, np.float64).reshape(4, 2) + 0.5) * scale - 0.5 for c in corners],
            np.asarray(ids).ravel())


def detect(gray: np.ndarray, camera: CameraModel, dictionary_name: str,
           roi: tuple[int, int, int, int] | None = None, precise: bool = True, rescue: bool = True,
           quick: bool = False, rescued: set[int] | None = None,
           expected: frozenset[int] | None = None) -> MarkerDetections:
    """Detect and refine markers in the whole frame, or only inside roi = (x0, y0, x1, y1).

    `precise=False` leaves small markers with OpenCV's corners (refined=False): good for the centre
    and heading of a marker in motion, not for its height; a tracker refines it once it stops.
    `rescue=False` skips the second look at undecodable quads and `quick=True` thresholds at one
    window size: a tracker's searches for markers it knows, with the full way as the fallback.
    `expected`: see `detect_raw`."""
    if roi is None:
        ids, quads = detect_raw(gray, dictionary_name, rescue=rescue, quick=quick, rescued=rescued, expected=expected)
    else:
        x0, y0, x1, y1 = roi
        ids, quads = detect_raw(gray[y0:y1, x0:x1], dictionary_name, (x0, y0), rescue=rescue, quick=quick,
                                rescued=rescued, expected=expected)
    failed: list[np.ndarray] = []
    found = refine(gray, camera, ids, quads, dictionary_name, failed, precise)
    if failed:  # a misread id: give its quad the closer look rejected candidates get
        more_ids, more_quads = rescue_rejected(gray, failed, dictionary_name, {int(i) for i in found.ids},
                                               decoded=list(found.raw_px) if len(found) else None)
        if rescued is not None:
            rescued.update(more_ids)
        if more_ids:
            found = MarkerDetections.concat([found, refine(gray, camera, np.array(more_ids), np.array(more_quads),
                                                           dictionary_name)])
    return found


def refine(gray: np.ndarray, camera: CameraModel, ids: np.ndarray, quads: np.ndarray,
           dictionary_name: str, failed: list[np.ndarray] | None = None, precise: bool = True) -> MarkerDetections:
    """Sub-pixel corners: edge lines for big markers, pattern alignment for small ones.

    Small markers whose pattern does not fit are dropped (their quads go to `failed`)."""
    if len(ids) == 0:
        return MarkerDetections.empty()
    cells = dictionary(dictionary_name).markerSize + 2
    gray_f = _FloatView(gray)
    kept_ids, px_out, norm_out, rms_out, ok_out, raw_out, dark_out, resid_out = [], [], [], [], [], [], [], []
    for marker_id, quad in zip(ids, quads):
        side_px = mean_side_px(quad)
        dark, resid = 0.0, float("nan")
        if side_px >= MODEL_FIT_MAX_SIDE_PX:
            # In motion (not precise) one pass of the edge lines: from OpenCV's corners it lands where
            # the second would (the live benches' states the same to 0.1 um), at half the cost.
            corners_px, corners_norm, rms, ok = refine_quad(gray_f, camera, quad, cells, iterations=2 if precise else 1)
        elif not precise:
            corners_px, corners_norm, rms, ok = quad, camera.normalize(quad), float("nan"), False
        else:
            rms = float("nan")
            fit = fit_pattern(gray_f, quad, dictionary_name, int(marker_id))
            if fit is None or fit.residual > CLOSE_FIT_RESIDUAL:
                # A print trimmed to half a module on a dark table: its border merges with the
                # table and OpenCV's square may be the inner cells (a 16 px print read at 12.6 px,
                # 50 mm under the table). The fit started from the square one border wider.
                centre = quad.mean(axis=0)
                wider = fit_pattern(gray_f, centre + (quad - centre) * cells / (cells - 2), dictionary_name,
                                    int(marker_id))
                if wider is not None and wider.residual <= CLOSE_FIT_RESIDUAL \
                        and (fit is None or wider.residual < fit.residual):
                    fit = wider  # only a close fit: from a wider start a poor one finds a card's edge
            if fit is None or fit.residual > MODEL_FIT_MAX_RESIDUAL:
                # The alignment can wander on real photos; edge lines are the fallback, if the
                # pattern still matches at their corners (a misread id never does).
                lines_px, _, rms, lines_ok = refine_quad(gray_f, camera, quad, cells)
                fit = fit_pattern(gray_f, lines_px, dictionary_name, int(marker_id), iterations=0) if lines_ok else None
            refined = fit is not None and fit.residual <= MODEL_FIT_MAX_RESIDUAL
            if not refined:  # last: OpenCV's own corners, kept unrefined if the pattern matches there
                fit = fit_pattern(gray_f, quad, dictionary_name, int(marker_id), iterations=0)
            if fit is None or fit.residual > MODEL_FIT_MAX_RESIDUAL:
                if failed is not None:  # not this marker after all: a misread id or a quad cut by something in front
                    failed.append(quad)
                continue
            corners_px, corners_norm, ok, dark, resid = (fit.corners_px, camera.normalize(fit.corners_px), refined,
                                                         fit.surround_dark, fit.residual)
        kept_ids.append(int(marker_id))
        raw_out.append(quad)
        px_out.append(corners_px)
        norm_out.append(corners_norm)
        rms_out.append(rms)
        ok_out.append(ok)
        dark_out.append(dark)
        resid_out.append(resid)
    if not kept_ids:
        return MarkerDetections.empty()
    return MarkerDetections(np.array(kept_ids, int), np.array(px_out), np.array(norm_out), np.array(rms_out),
                            np.array(ok_out), np.array(raw_out, np.float64), np.array(dark_out), np.array(resid_out))


class _FloatView:
    """Float32 crops of a grey image on demand: refining a few markers must not convert a whole frame."""

    def __init__(self, gray: np.ndarray) -> None:
        self.gray = gray
        self.shape = gray.shape

    def __getitem__(self, index) -> np.ndarray:
        return self.gray[index].astype(np.float32)


def refine_quad(gray_f, camera: CameraModel, quad: np.ndarray, cells: int,
                iterations: int = 2) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """Edge-fitted corners of one marker: (pixels (4, 2), normalized (4, 2), rms px, ok)."""
    quad = np.asarray(quad, dtype=np.float64)
    fallback = (quad, camera.normalize(quad), float("nan"), False)
    current = quad
    rms = float("nan")
    for _ in range(iterations):
        fits = _fit_edges(gray_f, camera, current, cells)
        if fits is None:
            return fallback
        lines = [line for line, _ in fits]
        corners_norm = np.array([intersect_lines(lines[k - 1], lines[k]) for k in range(4)])
        if not np.all(np.isfinite(corners_norm)):
            return fallback
        new_px = camera.denormalize(corners_norm)
        if np.abs(new_px - quad).max() > 3.0:  # refinement wandered off: keep OpenCV's quad
            return fallback
        current = new_px
        rms = float(np.sqrt(np.mean(np.square(np.concatenate([r for _, r in fits])))))
    return current, corners_norm, rms, True


def _fit_edges(gray_f, camera: CameraModel, quad: np.ndarray, cells: int):
    """Fit the lines of the four sides (side k: corner k -> k+1) in normalized coordinates:
    [((point, direction), residuals px)] * 4, or None if a side has too little contrast.
    All four sides are sampled in one remap: per side the work is the same, per call it is not."""
    ends = np.roll(quad, -1, axis=0)
    edges = ends - quad
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    if lengths.min() < 6:
        return None
    along = edges / lengths[:, None]
    normals = np.stack([along[:, 1], -along[:, 0]], axis=1)
    outward = np.einsum("ij,ij->i", normals, (quad + ends) / 2 - quad.mean(axis=0)) < 0
    normals[outward] *= -1  # outward, towards the white margin
    module = lengths.mean() / cells
    reach = max(min(0.75 * module, 3.5), 1.2)
    n_along = max(int(lengths.max() * 0.76 / 0.7), 6)
    t = np.linspace(0.12, 0.88, n_along)
    s = np.linspace(-reach, reach, int(np.ceil(2 * reach / 0.2)) + 1)
    base = quad[:, None, :] + (t[None, :, None] * edges[:, None, :])  # (4, n_along, 2)
    coords = base[:, :, None, :] + s[None, None, :, None] * normals[:, None, None, :]  # (4, n_along, n_s, 2)
    h, w = gray_f.shape[:2]
    # Every sample lies within `reach` of the quad's sides (min over the samples is a slow strided reduction).
    x0, y0 = np.maximum(np.floor(quad.min(axis=0) - reach).astype(int) - 1, 0)
    x1, y1 = np.minimum(np.ceil(quad.max(axis=0) + reach).astype(int) + 2, (w, h))
    crop = gray_f[y0:y1, x0:x1]
    maps = (coords.reshape(4 * n_along, len(s), 2) - (x0, y0)).astype(np.float32)
    profile = cv2.remap(crop, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    m = max(2, len(s) // 5)
    inner = profile[:, :m].mean(axis=1)
    outer = profile[:, -m:].mean(axis=1)
    contrast = outer - inner
    mid = (inner + outer) / 2
    per_side = median_rows(contrast.reshape(4, n_along))
    good = contrast > np.maximum(12.0, 0.25 * np.repeat(per_side, n_along))
    # First crossing of the mid level from the black side, interpolated linearly.
    above = profile >= mid[:, None]
    idx = np.argmax(above, axis=1)
    rows = np.arange(len(idx))
    valid = good & (idx > 0) & above[rows, idx]
    idx = np.clip(idx, 1, len(s) - 1)
    p0 = profile[rows, idx - 1]
    p1 = profile[rows, idx]
    frac = np.clip((mid - p0) / np.maximum(p1 - p0, 1e-6), 0, 1)
    offset = s[idx - 1] + frac * (s[idx] - s[idx - 1])
    points = base.reshape(-1, 2) + offset[:, None] * np.repeat(normals, n_along, axis=0)
    side = np.repeat(np.arange(4), n_along)
    counts = np.bincount(side[valid], minlength=4)
    if (good.reshape(4, n_along).sum(axis=1) < 4).any() or (counts < 4).any():
        return None
    norm_all = camera.normalize(points[valid])
    scale = camera.focal_px
    fits = []
    for norm_pts in np.split(norm_all, np.cumsum(counts)[:3]):
        line, resid = _fit_line(norm_pts)
        keep = np.abs(resid) * scale < max(0.5, 3 * 1.4826 * float(median_rows(np.abs(resid)[None])[0]) * scale)
        if keep.sum() >= 4 and not keep.all():
            line, resid = _fit_line(norm_pts[keep])
        fits.append((line, resid * scale))
    return fits


def _fit_line(points: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Total least squares: the principal axis of the points, from the 2x2 scatter in closed form."""
    centre = points.mean(axis=0)
    d = points - centre
    sxx, syy, sxy = d[:, 0] @ d[:, 0], d[:, 1] @ d[:, 1], d[:, 0] @ d[:, 1]
    angle = 0.5 * math.atan2(2 * sxy, sxx - syy)
    direction = np.array([math.cos(angle), math.sin(angle)])
    normal = np.array([-direction[1], direction[0]])
    return (centre, direction), d @ normal


def median_rows(values: np.ndarray) -> np.ndarray:
    """Per-row (upper) median of a 2-D array: a partition, 20 times cheaper than np.median (whose
    first call in a process also costs ~6 ms)."""
    k = values.shape[1] // 2
    return np.partition(values, k, axis=1)[:, k]


def intersect_lines(l1, l2) -> np.ndarray:
    """Where two lines (point, direction) meet; NaN where they are parallel."""
    (p1, d1), (p2, d2) = l1, l2
    m = np.array([d1, -d2]).T
    if abs(np.linalg.det(m)) < 1e-12:
        return np.array([np.nan, np.nan])
    ts = np.linalg.solve(m, p2 - p1)
    return p1 + ts[0] * d1


# --- model alignment for small markers --------------------------------------------------------------

CLOSE_FIT_RESIDUAL = 0.15  # a pattern fit this close (of the contrast) is not tried again from a wider square
MODEL_FIT_MAX_SIDE_PX = 40.0  # above this, edge lines are long and clean enough
# A true marker fits its pattern to <= 0.05 of its contrast on bench frames (183 detections) and
# to <= 0.36 on the real photographs of shared/realdata (uneven light, sharpening, ink spread,
# oblique tags); a wrongly decoded or mis-cut quad fits to 0.94 or worse.
MODEL_FIT_MAX_RESIDUAL = 0.5
# The white margin the model assumes, in modules: players trim prints to fit a small head, so only
# half a module is taken as sure; the surroundings beyond it are a level of their own (white paper
# again for a full margin, felt or wood for a trimmed one), compared for a quarter module.
MODEL_MARGIN = 0.5
MODEL_FIT_OUTSIDE = 0.25
# The blur is a fitted parameter: on a quad that is not the pattern it can run off to thousands of
# pixels, and each step's Gaussian then takes seconds (83 s for one tutorial photo). Real edges
# are sharper than this; a marker blurred more is not one to refine.
MODEL_FIT_BLUR_PX = (0.2, 3.0)
BLUR_QUANTUM_PX = 0.02  # the blur's step: far below what moves a corner
SHAPE_EXTRA_PX = 1.0  # the spread's shape term: the pattern blurred this much more, subtracted
SHAPE_TERMS = 3  # channels of the model texture: the blurred pattern, the spread's shape term, the surroundings
_TEX_PX_PER_MODULE = 8


def _least_squares(basis: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Coefficients (k, m) of the best fit of target (N,) by each row's m centred columns (k, m, N)."""
    gram = (basis @ basis.transpose(0, 2, 1)).astype(np.float64)
    gram += np.eye(gram.shape[1]) * (1e-9 + 1e-6 * np.trace(gram, axis1=1, axis2=2))[:, None, None]
    return np.linalg.solve(gram, (basis @ target).astype(np.float64)[..., None])[..., 0]


@lru_cache(maxsize=256)
def _pattern_textures(dictionary_name: str, marker_id: int, margin_modules: float) -> tuple[np.ndarray, np.ndarray]:
    """Indicator textures, `_TEX_PX_PER_MODULE` texels per module, one module of surroundings around
    the white margin: (white: 1 on white cells and the margin, outside: 1 beyond the margin)."""
    bits = marker_bits(dictionary_name, marker_id) > 0
    r = _TEX_PX_PER_MODULE
    cells = cv2.resize(bits.astype(np.uint8), None, fx=r, fy=r, interpolation=cv2.INTER_NEAREST) > 0
    margin = int(round(margin_modules * r))
    white = np.pad(np.pad(cells, margin, constant_values=True), r, constant_values=False)
    outside = np.pad(np.zeros(np.array(cells.shape) + 2 * margin, bool), r, constant_values=True)
    return white.astype(np.float32), outside.astype(np.float32)


class _PatternModel:
    """The marker's known pattern, blurred and put through the camera's response, over the image
    patch around a quad: what `fit_pattern` aligns. Parameters are the four corners (a
    homography, in patch pixels) and the blur sigma; the grey levels (black, white, the
    surroundings beyond the margin's sure part) and the response terms are solved linearly at
    every step. Only the marker, its margin and a thin ring beyond it are compared (further out is
    unknown: body, tile edge, table)."""

    def __init__(self, patch: np.ndarray, origin: np.ndarray, flat_mask: np.ndarray, module_px: float,
                 dictionary_name: str, marker_id: int, margin_modules: float) -> None:
        cells = marker_bits(dictionary_name, marker_id).shape[0]
        half = cells / 2
        white_tex, self.outside_tex = _pattern_textures(dictionary_name, marker_id, margin_modules)
        self.off = half + margin_modules + 1
        self.tex_corners = _tex_corners(half, self.off)
        self.tex_src = self.tex_corners.astype(np.float32)
        self.module_px = module_px
        self.origin = origin
        target = patch.ravel()[flat_mask]
        self.target_c = target - float(target.mean())
        self.target_c32 = self.target_c.astype(np.float32)
        self.surround_white = white_tex + self.outside_tex  # the surroundings are taken as white
        self.pixels_h = np.stack([(flat_mask % patch.shape[1]).astype(np.float64),
                                  (flat_mask // patch.shape[1]).astype(np.float64), np.ones(len(flat_mask))])
        self._blur_cache: dict[float, np.ndarray] = {}

    def with_pattern(self, dictionary_name: str, marker_id: int, margin_modules: float) -> "_PatternModel":
        """The same pixels and geometry, another marker's pattern (the same cells and margin)."""
        other = copy.copy(self)
        white_tex, outside_tex = _pattern_textures(dictionary_name, marker_id, margin_modules)
        other.surround_white = white_tex + outside_tex
        other._blur_cache = {}
        return other

    @classmethod
    def around(cls, gray_f, quad: np.ndarray, dictionary_name: str, marker_id: int,
               margin_modules: float) -> "_PatternModel | None":
        """The model over the pixels whose centres fall inside the marker or the inner part of its
        margin; None when too few do (a quad at the image's edge)."""
        cells = marker_bits(dictionary_name, marker_id).shape[0]
        half = cells / 2
        off = half + margin_modules + 1
        module_px = mean_side_px(quad) / cells
        pad = int(np.ceil(module_px * (margin_modules + 0.8))) + 2
        h, w = gray_f.shape
        x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - pad, 0)
        x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + pad + 1, (w, h))
        patch = gray_f[y0:y1, x0:x1].astype(np.float64)
        if patch.size < 16:
            return None
        origin = np.array([x0, y0], float)
        r = _TEX_PX_PER_MODULE
        h_init = cv2.getPerspectiveTransform((quad - origin).astype(np.float32),
                                             ((_tex_corners(half, off) + 0.5) / r - off).astype(np.float32))
        ys, xs = np.mgrid[0:patch.shape[0], 0:patch.shape[1]]
        pts = cv2.perspectiveTransform(np.stack([xs, ys], -1).reshape(-1, 1, 2).astype(np.float64),
                                       h_init).reshape(-1, 2)
        limit = half + margin_modules + MODEL_FIT_OUTSIDE
        mask = (np.abs(pts) <= limit).all(axis=1).reshape(patch.shape)
        if mask.sum() < 30:
            return None
        flat_mask = np.flatnonzero(mask)  # np.take on flat indices: cheaper than a boolean mask, ~40 times a fit
        return cls(patch, origin, flat_mask, module_px, dictionary_name, marker_id, margin_modules)

    def blurred(self, sigma: float) -> np.ndarray:
        sigma = round(sigma / BLUR_QUANTUM_PX) * BLUR_QUANTUM_PX  # nearby blurs share one texture
        if sigma not in self._blur_cache:
            if len(self._blur_cache) > 4:
                self._blur_cache.pop(next(iter(self._blur_cache)))
            r = _TEX_PX_PER_MODULE
            tex_sigma = np.sqrt(sigma ** 2 + 1 / 12) * r / self.module_px  # optics + pixel box, in texels
            t = cv2.GaussianBlur(self.surround_white, (0, 0), tex_sigma)
            # The spread's second shape term: the pattern blurred by a pixel more, subtracted. A
            # webcam's sharpening adds it (halos), a defocus disc's flat top takes it away.
            wider = cv2.GaussianBlur(t, (0, 0), SHAPE_EXTRA_PX * r / self.module_px)  # Gaussians compose
            around = cv2.GaussianBlur(self.outside_tex, (0, 0), tex_sigma)
            self._blur_cache[sigma] = np.dstack([t, t - wider, around])
        return self._blur_cache[sigma]

    def render(self, corner_sets: np.ndarray, sigma: float) -> np.ndarray:
        """The model at the mask's pixels for several corner sets at once (k, N): each pixel's
        texture point through the inverse homography, all sampled in one remap (what
        warpPerspective does, without a call and a full patch per set)."""
        maps = np.array([cv2.getPerspectiveTransform(self.tex_src, c.astype(np.float32)) for c in corner_sets])
        q = np.linalg.inv(maps) @ self.pixels_h  # (k, 3, N)
        with np.errstate(divide="ignore", invalid="ignore"):  # a degenerate set: non-finite, never taken
            uv = (q[:, :2] / q[:, 2:3]).astype(np.float32)  # (k, 2, N)
        sampled = cv2.remap(self.blurred(float(np.clip(sigma, *MODEL_FIT_BLUR_PX))), uv[:, 0], uv[:, 1],
                            cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return sampled.reshape(len(corner_sets), -1, SHAPE_TERMS)

    @staticmethod
    def bases(model: np.ndarray) -> np.ndarray:
        """The centred columns (k, 4, N) the grey levels are fitted with, per row of samples."""
        t = model[..., 0]
        basis = np.empty((model.shape[0], SHAPE_TERMS + 1, model.shape[1]), np.float32)
        basis[:, 0] = t
        basis[:, 1] = t * (1 - t)
        basis[:, 2:] = model[..., 1:].transpose(0, 2, 1)
        basis -= basis.mean(axis=2, keepdims=True)
        return basis

    def residuals(self, model: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row of model samples (k, N, 3: the blurred pattern t, its shape term, the surroundings): the
        least-squares grey levels of target ~ black + gain * t + bend * t (1 - t) + the shape
        terms' share, in closed form: (residuals (k, N), coefficients (k, 4), gain first).

        A camera blurs linear light and then applies its tone curve (sRGB, a gamma), so a display
        value is a curve of the blurred pattern: with a model linear in t every edge is placed on
        its dark side and a marker fits 2-3% small (its height several mm low). The bend is the
        curve's first shape term; the spread's lets it be sharpened or flat-topped. All enter
        linearly: they cost a small solve, not parameters of the search."""
        basis = self.bases(model)
        coef = _least_squares(basis, self.target_c32)
        # |bend| <= gain keeps the tone curve monotone; beyond it (clipped white, a quad that is
        # not this marker) the bend is held at the bound and the rest solved again.
        bent = np.abs(coef[:, 1]) > np.abs(coef[:, 0])
        if bent.any():
            sign = np.sign(coef[bent, 1] * coef[bent, 0])[:, None]
            held = basis[bent, 0] + sign * basis[bent, 1]
            sub = _least_squares(np.concatenate([held[:, None], basis[bent, 2:]], axis=1), self.target_c32)
            coef[bent] = np.concatenate([sub[:, :1], sub[:, :1] * sign, sub[:, 1:]], axis=1)
        return (coef[:, None, :].astype(np.float32) @ basis)[:, 0].astype(np.float64) - self.target_c, coef

    def jacobian(self, probe_model: np.ndarray, coef: np.ndarray, step: float) -> np.ndarray:
        """d residual / d corner (N, 8) by the probes, for the levels held at the base set's and
        then projected off their span (Kaufman's variable projection): one solve, not nine."""
        basis = self.bases(probe_model)  # row 0: the base set
        predicted = (coef.astype(np.float32)[None, None, :] @ basis)[:, 0].astype(np.float64)  # (9, N)
        raw = ((predicted[1:] - predicted[0]) / step).T  # (N, 8)
        b0 = basis[0].astype(np.float64)  # (4, N)
        gram = b0 @ b0.T
        gram += np.eye(len(gram)) * (1e-9 + 1e-6 * np.trace(gram))
        return raw - b0.T @ np.linalg.solve(gram, b0 @ raw)

    def residual(self, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(residuals (N,), coefficients (4,)) of one parameter set: 8 corner values, then sigma."""
        res, coef = self.residuals(self.render(params[None, :8].reshape(1, 4, 2), float(params[8])))
        return res[0], coef[0]


def _tex_corners(half: float, off: float) -> np.ndarray:
    """The marker's corners in its texture's texels."""
    r = _TEX_PX_PER_MODULE
    return (np.array([[-half, -half], [half, -half], [half, half], [-half, half]]) + off) * r - 0.5


def _gauss_newton(model: _PatternModel, params: np.ndarray, iterations: int
                  ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray] | None:
    """Damped Gauss-Newton with a numerical Jacobian from `params` (corners in patch pixels, then
    sigma): (params, residuals, cost, coefficients), or None when the pattern has no contrast."""
    res, coef = model.residual(params)
    cost = float(res @ res)
    if not math.isfinite(cost) or coef[0] < 15:
        return None  # no contrast, or a quad so skewed that the patch reaches its vanishing line
    damping = 1e-3
    step = 0.05  # px for a corner, px of blur for sigma
    probes = np.concatenate([np.zeros((1, 8)), np.eye(8)]).reshape(9, 4, 2) * step  # the base set first
    for _ in range(iterations):
        # Numerical Jacobian: the 8 corner probes in one render, the blur probe in another.
        corners = params[:8].reshape(4, 2)
        # (The base set is rendered in the batch too: differences within one way of sampling.)
        sigma_res, _ = model.residual(params + np.eye(9)[8] * step)
        jac = np.concatenate([model.jacobian(model.render(corners + probes, float(params[8])), coef, step),
                              ((sigma_res - res) / step)[:, None]], axis=1)
        if not np.isfinite(jac).all():
            break  # a probe the homography cannot map (a 6 px quad collapsing to a line): no step from here
        jtj = jac.T @ jac
        grad = jac.T @ res
        improved = False
        for _ in range(6):
            delta = -np.linalg.solve(jtj + damping * np.diag(np.diag(jtj) + 1e-9), grad)
            if not np.isfinite(delta).all():
                break
            candidate = params + delta
            candidate[8] = np.clip(candidate[8], *MODEL_FIT_BLUR_PX)
            new_res, new_coef = model.residual(candidate)
            new_cost = float(new_res @ new_res)
            if new_cost < cost:
                params, res, cost, coef = candidate, new_res, new_cost, new_coef
                damping = max(damping / 4, 1e-7)
                improved = True
                break
            damping *= 8
        if not improved or np.abs(delta[:8]).max() < 2e-2:  # at the floor of the corners' 0.01-0.05 px noise
            break
    return params, res, cost, coef


@dataclass(frozen=True, eq=False)
class PatternFit:
    """A marker's pattern aligned to the image (`fit_pattern`)."""

    corners_px: np.ndarray  # (4, 2), the marker's own corner order
    residual: float  # RMS residual as a share of the black-white contrast
    surround_dark: float  # beyond the margin's sure half module: 0 white, 1 black
    blur_px: float  # the fitted blur's sigma


def fit_pattern(gray_f, quad: np.ndarray, dictionary_name: str, marker_id: int,
                margin_modules: float = MODEL_MARGIN, iterations: int = 3) -> PatternFit | None:
    """Align the known, blurred marker pattern to the image (`_PatternModel`); None where there is
    no contrast or the corners jump away (a wrongly decoded or mis-cut quad cannot fit its pattern)."""
    quad = np.asarray(quad, np.float64)
    model = _PatternModel.around(gray_f, quad, dictionary_name, marker_id, margin_modules)
    if model is None:
        return None
    fitted = _gauss_newton(model, np.concatenate([(quad - model.origin).ravel(), [0.8]]), iterations)
    if fitted is None:
        return None
    params, res, cost, coef = fitted
    corners = params[:8].reshape(4, 2) + model.origin
    if np.abs(corners - quad).max() > max(2.5, 0.15 * mean_side_px(quad)):  # a jump further than this found something else
        return None
    gain = max(float(coef[0]), 1e-6)
    return PatternFit(corners, float(np.sqrt(cost / len(res))) / gain, float(np.clip(-coef[3] / gain, 0.0, 1.0)),
                      float(np.clip(params[8], *MODEL_FIT_BLUR_PX)))


def pattern_mean_squares(gray_f, corners: np.ndarray, blur_px: float, dictionary_name: str,
                         marker_ids: list[int]) -> np.ndarray | None:
    """How well each of these markers' patterns, in each of its four turns, explains the pixels of
    one place (corners as fitted, the first id's corner order; turn k starts at corner k): the
    mean squared residual (grey levels squared), ids by turns, the grey levels solved for each
    (the pattern fit's model, no corner moved). Where the corners were fitted for a faint print,
    the pattern read is the one clearly closer than every other; None at the image's edge."""
    corners = np.asarray(corners, np.float64)
    base = _PatternModel.around(gray_f, corners, dictionary_name, marker_ids[0], MODEL_MARGIN)
    if base is None:
        return None
    turns = np.array([np.roll(corners, -k, axis=0) for k in range(4)]) - base.origin
    squares = np.empty((len(marker_ids), 4))
    for row, marker_id in enumerate(marker_ids):
        model = base.with_pattern(dictionary_name, marker_id, MODEL_MARGIN)
        res, _ = model.residuals(model.render(turns, blur_px))
        squares[row] = (res ** 2).mean(axis=1)
    return squares
