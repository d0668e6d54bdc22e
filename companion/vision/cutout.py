"""The top-down grids blocks are sought and fitted on, and masks in them as table millimetres.

Candidates are found on the table resampled from straight above at COARSE_MM a pixel; each one is
cut out at FINE_MM. Pixel (0, 0) of either is centred half a pixel in from its origin (table mm).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.vision.brickfit import TableRect
from companion.vision.tableview import TableView

COARSE_MM = 2.0  # candidate search: mm per pixel of the top-down view
FINE_MM = 0.5  # a candidate's cut-out
MIN_AREA_MM2 = 100.0  # a 1x2 plate seen from above is 7.8 x 15.8 mm
PART_DISC = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))  # 3.5 mm


def map_points(labels: np.ndarray, origin_mm: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """A fine window's colour map as `touching` takes it: every other point (1 mm apart: the map's
    edges are blurred over a pixel anyway), table mm (N, 2), and its labels (N,)."""
    ys, xs = np.mgrid[0:labels.shape[0]:2, 0:labels.shape[1]:2]
    return pixels_mm(xs.ravel(), ys.ravel(), origin_mm), labels[ys, xs].ravel()


def pixels_mm(xs: np.ndarray, ys: np.ndarray, origin_mm: tuple[float, float]) -> np.ndarray:
    """Table mm (N, 2) of a fine window's pixel centres (columns, rows)."""
    return (np.stack([xs, ys], axis=1) + 0.5) * FINE_MM + np.asarray(origin_mm)


def coarse_at(coarse: np.ndarray, points_mm: np.ndarray, origin_mm: tuple[float, float] | np.ndarray = (0.0, 0.0),
               interpolation: int = cv2.INTER_LINEAR) -> np.ndarray:
    """A map at COARSE_MM a pixel whose pixel (0, 0) is centred at `origin_mm` + half a pixel (the
    table estimate, a mask) at table points (..., 2): (..., channels) of the map's type."""
    q = ((np.asarray(points_mm, np.float64) - np.asarray(origin_mm, np.float64)) / COARSE_MM - 0.5).astype(np.float32)
    return cv2.remap(coarse, np.ascontiguousarray(q[..., 0]), np.ascontiguousarray(q[..., 1]), interpolation,
                     borderMode=cv2.BORDER_REPLICATE)


def crop_resized(coarse: np.ndarray, x0_mm: float, y0_mm: float, w_px: int, h_px: int) -> np.ndarray:
    """The coarse view under a fine window, resampled to it."""
    xs = ((x0_mm + (np.arange(w_px) + 0.5) * FINE_MM) / COARSE_MM - 0.5).astype(np.float32)
    ys = ((y0_mm + (np.arange(h_px) + 0.5) * FINE_MM) / COARSE_MM - 0.5).astype(np.float32)
    mx, my = np.meshgrid(xs, ys)
    return cv2.remap(coarse, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def filled_blob(mask: np.ndarray, least_mm2: float = MIN_AREA_MM2) -> np.ndarray | None:
    """The largest blob, holes filled (a white brick on a white mat shows little but its walls), or
    None when it is smaller than `least_mm2` (any brick, seen whole)."""
    pieces = filled_blobs(mask, least_mm2)
    return pieces[0] if pieces else None


def filled_blobs(mask: np.ndarray, least_mm2: float = MIN_AREA_MM2) -> list[np.ndarray]:
    """Every blob of at least `least_mm2`, holes filled, the largest first."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = []
    for outline in sorted(contours, key=cv2.contourArea, reverse=True):
        if cv2.contourArea(outline) * FINE_MM ** 2 < least_mm2:
            break
        filled = np.zeros_like(mask)
        cv2.drawContours(filled, [outline], -1, 1, -1)
        out.append(filled)
    return out


def hull_fill(mask: np.ndarray) -> float:
    """How much of the least rectangle about a mask its convex hull fills: a face's shape, blind
    to the bites its studs' shade takes from its edges."""
    ys, xs = np.nonzero(mask)
    points = np.stack([xs, ys], axis=1).astype(np.float32)
    (_, _), (w, h), _ = cv2.minAreaRect(points)
    return float(cv2.contourArea(cv2.convexHull(points))) / max(w * h, 1.0)


def small_holes_filled(mask: np.ndarray, most_mm2: float) -> np.ndarray:
    """A mask (uint8) with its holes of at most `most_mm2` filled (a castle's yard stays open)."""
    count, labels, stats, _ = cv2.connectedComponentsWithStats((mask == 0).astype(np.uint8), connectivity=4)
    h, w = mask.shape
    x, y, width, height, area = stats.T
    small = ((x > 0) & (y > 0) & (x + width < w) & (y + height < h) & (area * FINE_MM ** 2 <= most_mm2))
    small[0] = False  # label 0: the mask itself
    return (mask.astype(bool) | small[labels]).astype(np.uint8)


def largest_piece(mask: np.ndarray) -> np.ndarray | None:
    """A mask opened against blurred edge pixels, its largest piece (uint8); None if nothing is left."""
    opened = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(opened, connectivity=4)
    if count < 2:
        return None
    return (labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))).astype(np.uint8)


def rect_mm(mask: np.ndarray, origin_mm: tuple[float, float]) -> TableRect:
    ys, xs = np.nonzero(mask)
    pts = (np.stack([xs, ys], axis=1).astype(np.float32) + 0.5) * FINE_MM + np.asarray(origin_mm, np.float32)
    (cx, cy), (w, h), angle = cv2.minAreaRect(pts)
    # minAreaRect's box is the pixel centres' hull: half a pixel short on each side
    w, h = w + FINE_MM, h + FINE_MM
    a = math.radians(angle)
    axis = np.array([math.cos(a), math.sin(a)])
    if h > w:
        axis, (w, h) = np.array([-axis[1], axis[0]]), (h, w)
    return TableRect(np.array([cx, cy], float), axis, (w / 2, h / 2))


def fill_fine(mask: np.ndarray, points_mm: np.ndarray, origin_mm: tuple[float, float], hull: bool = False
               ) -> np.ndarray:
    """`mask` (a cut-out at FINE_MM from `origin_mm`) with a convex polygon of table points (N, 2)
    set to 1 (their hull's, with `hull`), to a quarter of a pixel."""
    px = (np.asarray(points_mm, float) - np.asarray(origin_mm, float)) / FINE_MM - 0.5
    if hull:
        px = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2)
    cv2.fillConvexPoly(mask, np.round(px * 4).astype(np.int32), 1, cv2.LINE_8, 2)
    return mask


def fill_coarse(mask: np.ndarray, points_mm: np.ndarray, hull: bool = False) -> np.ndarray:
    """`mask` (the table's view at COARSE_MM) with a convex polygon of table points (N, 2) set to
    1 (their hull's, with `hull`), to the nearest pixel."""
    px = np.asarray(points_mm)
    if hull:
        px = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2)
    cv2.fillConvexPoly(mask, np.round(px / COARSE_MM - 0.5).astype(np.int32), 1)
    return mask


def top_points(top: TableRect, inset_mm: float = 1.0) -> np.ndarray:
    """Table points (35, 2) on a 7 x 5 grid over a (cast) top face's inside, inset_mm in from its edges."""
    halves = [max(h - inset_mm, 0.3) for h in top.half_mm]
    ga = np.linspace(-halves[0], halves[0], 7)
    gb = np.linspace(-halves[1], halves[1], 5)
    return (top.centre + ga[:, None, None] * top.axis + gb[None, :, None] * top.across).reshape(-1, 2)


def top_samples(image: np.ndarray, view: TableView, top: TableRect, inset_mm: float = 1.0) -> np.ndarray:
    """Colours (35, 3) BGR on the top face's `top_points`."""
    return view.sample(image, top_points(top, inset_mm)).reshape(-1, 3)


def top_colour_seen(image: np.ndarray, view: TableView, top: TableRect) -> np.ndarray:
    """The median colour (BGR) of the top face's inside."""
    return np.median(top_samples(image, view, top), axis=0)


STUD_GAP_DISC = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))  # 2.5 mm: a stud's shaded rim, a glint
