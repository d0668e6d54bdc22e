"""A closer look at a frame blurred past what the detector can read: the lens's spread measured on
the anchors, then the frame sharpened with it.

A defocused or shaken webcam spreads every point over a disc or a streak of a few pixels; a 15 mm
marker far from a 1.4 m camera is 10-16 px wide, its modules 2 px, and under a disc of 2 px radius
no threshold reads its bits. The anchors (large, found first) show the spread: their pattern is
known, so each kernel of a small bank (Gaussians, defocus discs, motion streaks) is tried on their
ideal image and the one that explains their pixels best is taken. Deconvolving the frame in
linear light with that kernel (a Wiener filter) then gives the detector back edges it can read.
Only for markers the setup lists and the plain looks did not find; what it reads is checked by the
pattern fit on the frame itself, as every small marker is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from companion.vision.camera import CameraModel
from companion.vision.cards import read_cards, read_outlines, side_range_px
from companion.vision.colours import srgb_to_linear
from companion.vision.markers import (MarkerDetections, detect, detect_raw, marker_bits, mean_side_px,
                                      one_per_place, refine)

SPREAD_SUPERSAMPLE = 4  # sub-pixel samples per axis when drawing an anchor's ideal image
REACH_PX = 5  # the largest kernel's half-width
# A spread this small (RMS radius, px) the detector's own looks read through: a webcam in focus,
# the standard bench level's 0.6 px Gaussian (0.94). Below it no sharpening is tried, so a frame
# whose minis are missing for another reason (a hand over them) pays nothing more.
SHARP_ENOUGH_PX = 1.1
# A spread that explains the anchors no better than this (RMS misfit, a share of their contrast)
# is not the lens's: glare on the paper, white clipped by the exposure (path-traced frames under a
# lamp: 0.13-0.16, against 0.03-0.09 where the kernel is right). Deconvolving with it only rings.
MAX_SPREAD_MISFIT = 0.1
# The Wiener filter's noise to signal power: where the spread passes less than this (a disc's
# zeros), the frame is not amplified. 0.003 rang (misreads of ids no setup listed), 0.03 read half
# as many markers (hard ray-cast frames, seed 0).
WIENER_NOISE_SHARE = 0.01
_SRGB_DECODE = srgb_to_linear(np.arange(256) / 255.0).astype(np.float32)  # 8-bit display values to light


@dataclass(frozen=True, eq=False)
class Spread:
    """The lens's point spread as measured: its kind, size (a Gaussian's sigma, a disc's radius, a
    streak's length, px), direction (a streak's, degrees), the kernel, and how well it explains the
    anchors (RMS misfit as a share of their contrast)."""

    kind: str
    size_px: float
    angle_deg: float
    kernel: np.ndarray
    misfit: float

    @property
    def spread_px(self) -> float:
        """The kernel's RMS radius: one figure to compare kinds by."""
        k = self.kernel
        n = k.shape[0] // 2
        y, x = np.mgrid[-n:n + 1, -n:n + 1]
        return float(math.sqrt((k * (x * x + y * y)).sum()))


def _kernel(kind: str, size_px: float, angle_deg: float = 0.0, ss: int = 8) -> np.ndarray:
    """A kernel (2 REACH_PX + 1 square), supersampled so sub-pixel sizes stay smooth."""
    n = 2 * REACH_PX + 1
    g = (np.arange(n * ss) + 0.5) / ss - REACH_PX - 0.5
    x, y = np.meshgrid(g, g)
    if kind == "disc":
        k = (x * x + y * y <= size_px ** 2).astype(np.float64)
    elif kind == "motion":
        c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
        along, across = x * c + y * s, -x * s + y * c
        k = ((np.abs(along) <= size_px / 2) & (np.abs(across) <= 0.5)).astype(np.float64)
    else:
        k = np.exp(-(x * x + y * y) / (2 * size_px ** 2)) * (x * x + y * y <= (3 * size_px + 0.5) ** 2)
    k = k.reshape(n, ss, n, ss).sum(axis=(1, 3))
    # Trimmed to its support, kept square and centred: deconvolving costs by the kernel's area.
    reach = max(int(np.max(np.abs(np.nonzero(k)[0] - REACH_PX))), int(np.max(np.abs(np.nonzero(k)[1] - REACH_PX))))
    k = k[REACH_PX - reach:REACH_PX + reach + 1, REACH_PX - reach:REACH_PX + reach + 1]
    return (k / k.sum()).astype(np.float32)


@lru_cache(maxsize=1)
def kernel_bank() -> tuple[tuple[str, float, float, np.ndarray], ...]:
    """The spreads tried: Gaussians 0.4-2 px, discs of radius 0.8-3 px, streaks 2-8 px long in
    twelve directions."""
    bank = [("gauss", s, 0.0) for s in np.arange(0.4, 2.01, 0.2)]
    bank += [("disc", r, 0.0) for r in np.arange(0.8, 3.01, 0.2)]
    bank += [("motion", length, a) for length in np.arange(2.0, 8.01, 1.0) for a in np.arange(0.0, 180.0, 15.0)]
    return tuple((kind, round(float(size), 2), float(angle), _kernel(kind, float(size), float(angle)))
                 for kind, size, angle in bank)


def _ideal_anchor(quad: np.ndarray, bits: np.ndarray, origin: np.ndarray, shape: tuple[int, int]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The anchor's print as a perfect camera would see it over a patch (1 white, 0 black, each
    pixel its square's mean), and where that is known (the marker and half a module of margin)."""
    cells = bits.shape[0]
    half = cells / 2
    ss = SPREAD_SUPERSAMPLE
    marker = np.array([[-half, -half], [half, -half], [half, half], [-half, half]], np.float32)
    to_marker = cv2.getPerspectiveTransform((quad - origin).astype(np.float32), marker)
    h, w = shape
    sub = (np.arange(ss) + 0.5) / ss - 0.5
    xs = (np.arange(w)[:, None] + sub[None]).ravel()
    ys = (np.arange(h)[:, None] + sub[None]).ravel()
    grid = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 1, 2)
    uv = cv2.perspectiveTransform(grid, to_marker.astype(np.float64)).reshape(h * ss, w * ss, 2)
    col = np.floor(uv[..., 0] + half).astype(int)
    row = np.floor(uv[..., 1] + half).astype(int)
    inside = (col >= 0) & (col < cells) & (row >= 0) & (row < cells)
    value = np.ones(uv.shape[:2], np.float32)
    value[inside] = bits[row[inside], col[inside]]
    known = (np.abs(uv) <= half + 0.5).all(axis=-1)
    value = value.reshape(h, ss, w, ss).mean(axis=(1, 3))
    known = known.reshape(h, ss, w, ss).all(axis=(1, 3))
    return value, known


def measure_spread(gray: np.ndarray, quads: np.ndarray, ids: np.ndarray, dictionary_name: str) -> Spread | None:
    """The kernel of the bank that best turns the anchors' ideal images into their pixels (in linear
    light, each anchor's black and white levels fitted); None without an anchor large enough."""
    patches = []
    for quad, marker_id in zip(np.asarray(quads, np.float64), ids):
        if mean_side_px(quad) < 24:  # modules under 4 px: the pattern's own blur is not separable from the lens's
            continue
        bits = (marker_bits(dictionary_name, int(marker_id)) > 0).astype(np.float32)
        pad = REACH_PX + 2
        x0, y0 = np.floor(quad.min(axis=0)).astype(int) - pad
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + pad + 1
        if x0 < 0 or y0 < 0 or x1 > gray.shape[1] or y1 > gray.shape[0]:
            continue
        ideal, known = _ideal_anchor(quad, bits, np.array([x0, y0], float), (y1 - y0, x1 - x0))
        # Compared only where every pixel the kernel reaches is known.
        mask = cv2.erode(known.astype(np.uint8), np.ones((2 * REACH_PX + 1,) * 2, np.uint8)) > 0
        if mask.sum() < 100:
            continue
        observed = _SRGB_DECODE[gray[y0:y1, x0:x1]]
        patches.append((ideal, mask, observed[mask]))
    if not patches:
        return None
    best = None
    for kind, size, angle, kernel in kernel_bank():
        total, contrast = 0.0, 0.0
        for ideal, mask, observed in patches:
            model = cv2.filter2D(ideal, -1, kernel, borderType=cv2.BORDER_REPLICATE)[mask]
            design = np.stack([model, np.ones_like(model)], axis=1)
            coef, *_ = np.linalg.lstsq(design, observed, rcond=None)
            residual = observed - design @ coef
            total += float(residual @ residual) / len(residual)
            contrast += max(float(coef[0]), 1e-6) ** 2
        misfit = math.sqrt(total / contrast)
        if best is None or misfit < best.misfit:
            best = Spread(kind, size, angle, kernel, misfit)
    return best


def sharpened(gray: np.ndarray, spread: Spread, noise_share: float = WIENER_NOISE_SHARE) -> np.ndarray:
    """The frame deconvolved with the spread (a Wiener filter in linear light, one pair of Fourier
    transforms), encoded back to 8-bit display values."""
    observed = _SRGB_DECODE[gray]
    h, w = observed.shape
    r = spread.kernel.shape[0] // 2 + 8  # a mirrored border: the transform's wrap-around does not ring in
    size_h, size_w = cv2.getOptimalDFTSize(h + 2 * r), cv2.getOptimalDFTSize(w + 2 * r)
    padded = cv2.copyMakeBorder(observed, r, size_h - h - r, r, size_w - w - r, cv2.BORDER_REFLECT)
    psf = np.zeros((size_h, size_w), np.float32)
    k = spread.kernel
    n = k.shape[0] // 2
    psf[:k.shape[0], :k.shape[1]] = k
    psf = np.roll(psf, (-n, -n), axis=(0, 1))  # centred on the origin
    frame_f = cv2.dft(padded, flags=cv2.DFT_COMPLEX_OUTPUT)
    psf_f = cv2.dft(psf, flags=cv2.DFT_COMPLEX_OUTPUT)
    power = psf_f[..., 0] ** 2 + psf_f[..., 1] ** 2 + noise_share
    estimate_f = cv2.mulSpectrums(frame_f, psf_f, 0, conjB=True) / power[..., None]
    estimate = cv2.idft(estimate_f, flags=cv2.DFT_SCALE | cv2.DFT_REAL_OUTPUT)[r:r + h, r:r + w]
    return np.round(255.0 * np.clip(estimate, 0.0, 1.0) ** (1 / 2.4)).astype(np.uint8)


def lens_spread(gray: np.ndarray, found: MarkerDetections, anchor_ids: frozenset[int],
                dictionary_name: str) -> Spread | None:
    """The spread the anchors in `found` show, if the frame is blurred enough for a sharpened look
    to read more and the spread explains them; else None."""
    rows = [i for i, marker_id in enumerate(found.ids) if int(marker_id) in anchor_ids]
    if not rows:
        return None
    spread = measure_spread(gray, found.corners_px[rows], found.ids[rows], dictionary_name)
    if spread is None or spread.spread_px < SHARP_ENOUGH_PX or spread.misfit > MAX_SPREAD_MISFIT:
        return None
    return spread


def read_sharpened(gray: np.ndarray, spread: Spread, wanted: frozenset[int], dictionary_name: str,
                   found: MarkerDetections | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Quads (ids (N,), corners (N, 4, 2) in `gray`'s pixels) of the `wanted` markers read on `gray`
    sharpened with the spread, none where the same id of `found` already is (another id there is
    kept as a rival, a darkened look's misread of a blurred print: `one_per_place` chooses)."""
    ids, quads = detect_raw(sharpened(gray, spread), dictionary_name, expected=wanted)
    have = found if found is not None else MarkerDetections.empty()
    centres = have.corners_px.mean(axis=1)
    keep = [k for k, (marker_id, quad) in enumerate(zip(ids, quads)) if int(marker_id) in wanted
            and not (np.linalg.norm(centres[have.ids == marker_id] - quad.mean(axis=0), axis=1) < 3).any()]
    return ids[keep], quads[keep].reshape(-1, 4, 2)


@dataclass(frozen=True, eq=False)
class ListedLook:
    """A whole frame's markers, the spread its anchors showed (None: sharp enough), and the ids only
    the sharpened frame read."""

    detections: MarkerDetections
    spread: Spread | None
    sharpened_ids: frozenset[int]


def detect_listed(gray: np.ndarray, camera: CameraModel, dictionary_name: str, listed: frozenset[int] | None,
                  anchor_ids: frozenset[int], rescued: set[int] | None = None) -> ListedLook:
    """A whole frame's markers (`markers.detect`, told which to expect), then the listed ones no
    look read, on the frame sharpened with the anchors' spread, and then from their paper cards
    (`cards`: glare, a lifted black); each of those checked by the pattern fit on the frame itself
    (one that does not fit its pattern there is dropped)."""
    found = detect(gray, camera, dictionary_name, rescued=rescued, expected=listed)
    wanted = frozenset(listed - set(found.ids.tolist())) if listed is not None else frozenset()
    spread = lens_spread(gray, found, anchor_ids, dictionary_name) if wanted else None
    sharp = MarkerDetections.empty()
    if spread is not None:
        ids, quads = read_sharpened(gray, spread, wanted, dictionary_name, found)
        sharp = refine(gray, camera, ids, quads, dictionary_name) if len(ids) else sharp
    wanted -= set(sharp.ids.tolist())
    read = MarkerDetections.concat([found, sharp])
    read = MarkerDetections.concat([read, read_from_paper(gray, camera, dictionary_name, wanted, read)])
    return ListedLook(one_per_place(read), spread, frozenset(sharp.ids.tolist()))


def read_from_paper(gray: np.ndarray, camera: CameraModel, dictionary_name: str, wanted: frozenset[int],
                    read: MarkerDetections) -> MarkerDetections:
    """The wanted markers read from their paper cards, then from the outlines OpenCV could not
    decode (`cards`), away from the markers already `read`; each refined on the frame."""
    more_read = MarkerDetections.empty()
    # The cards first (bright paper vouches for a print), then the outlines OpenCV could not decode.
    for read_more in (read_cards, read_outlines):
        if not wanted or not len(read):
            break
        ids, quads = read_more(gray, wanted, dictionary_name, side_range_px(read), read)
        more = refine(gray, camera, ids, quads, dictionary_name) if len(ids) else MarkerDetections.empty()
        wanted -= set(more.ids.tolist())
        read = MarkerDetections.concat([read, more])
        more_read = MarkerDetections.concat([more_read, more])
    return more_read
