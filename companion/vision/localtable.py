"""The table as it is under what stands on it, and what on it is known already.

Without an empty-table frame, the table under a block is a median over a window a brick never
fills; minis, their marker cards and the anchors are masked out by what their markers say.
"""

from __future__ import annotations

import cv2
import numpy as np

from companion.setup_file import Setup
from companion.state import MiniState
from companion.vision.colours import PAPER_ALBEDO
from companion.vision.cutout import COARSE_MM
from companion.vision.exposure import PAPER_RING_MODULES
from companion.vision.registration import square_corners_mm
from companion.vision.tableview import TableView

TABLE_WINDOW_MM = 60.0  # the local table: a median over this (a 2x4 brick fills under half of it)
TABLE_SCALE = 4  # the local table is taken at COARSE_MM x this (8 mm a pixel)
TABLE_WINDOW_PX = int(TABLE_WINDOW_MM / (TABLE_SCALE * COARSE_MM)) | 1
CROWDED_SHARE = 0.5  # a median over a window this much covered is pulled towards what covers it


def local_table(view: np.ndarray, exclude: np.ndarray | None = None) -> np.ndarray:
    """The table without what stands on it: a median over TABLE_WINDOW_MM, smoothed; what
    `exclude` marks is painted over from its surroundings first."""
    if exclude is not None and exclude.any():
        grown = cv2.dilate(exclude, np.ones((5, 5), np.uint8))
        view = cv2.inpaint(view, grown, 3, cv2.INPAINT_TELEA)
    return _median_table(_at_table_scale(view), view.shape)


def table_without(view: np.ndarray, exclude: np.ndarray) -> np.ndarray:
    """`local_table` with what `exclude` marks painted over at the table's own scale (TABLE_SCALE
    times coarser: a millisecond, where painting over the coarse view took twenty)."""
    small = _at_table_scale(view)
    covered = cv2.resize(exclude.astype(np.float32), (small.shape[1], small.shape[0]), interpolation=cv2.INTER_AREA) > 0
    if covered.all():
        return local_table(view)
    return _median_table(cv2.inpaint(small, covered.astype(np.uint8), 2, cv2.INPAINT_TELEA), view.shape)


def _at_table_scale(view: np.ndarray) -> np.ndarray:
    """The view TABLE_SCALE times coarser, where the local table is taken."""
    return cv2.resize(view, None, fx=1 / TABLE_SCALE, fy=1 / TABLE_SCALE, interpolation=cv2.INTER_AREA)


def _median_table(small: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The local table from the view at its scale (`_at_table_scale`): a median over
    TABLE_WINDOW_MM, smoothed, brought back to the view's `shape`."""
    med = cv2.GaussianBlur(cv2.medianBlur(small, TABLE_WINDOW_PX), (0, 0), 1.0)
    return cv2.resize(med, (shape[1], shape[0]), interpolation=cv2.INTER_LINEAR)


def crowded(mask: np.ndarray) -> bool:
    """Whether what was found covers over CROWDED_SHARE of some TABLE_WINDOW_MM window."""
    small = cv2.resize(mask.astype(np.float32), None, fx=1 / TABLE_SCALE, fy=1 / TABLE_SCALE,
                       interpolation=cv2.INTER_AREA)
    return float(cv2.blur(small, (TABLE_WINDOW_PX, TABLE_WINDOW_PX)).max()) > CROWDED_SHARE


def tile_side_mm(marker_mm: float) -> float:
    """A printed marker's tile: its black square (six modules in DICT_4X4) and one module of white
    around it."""
    return marker_mm * 8 / 6


TILE_MARGIN_MM = 2.0  # a tile's square masked this far round it (its edge's blur, a pixel of the view)


def mask_known(mask: np.ndarray, setup: Setup, minis: tuple[MiniState, ...], view: TableView,
               origin_mm: tuple[float, float], mm_per_px: float, tiles: bool = False) -> None:
    """Zero out minis and marked objects (base, body up to the marker, with their parallax) and
    anchors in a top-down view whose pixel (0, 0) is centred at origin + half a pixel. `tiles`: a
    mini's top is its tile's square (TILE_MARGIN_MM round it), not a circle round its corners: the
    lamps' search reads the shadows that fall just past a tile (a short one's far part lies
    between the two)."""
    h_px, w_px = mask.shape[:2]
    lo = np.asarray(origin_mm, float)
    hi = lo + np.array([w_px, h_px]) * mm_per_px

    def px(p: np.ndarray) -> tuple[int, int]:
        q = (p - lo) / mm_per_px - 0.5
        return int(round(q[0])), int(round(q[1]))

    objects = {o.id: o for o in setup.objects}
    for m in minis:
        spec = setup.mini(m.id)
        if spec is None and m.id in objects:  # a marker card on the table: its tile, not the area it stands for
            tile = square_corners_mm(m.x_mm, m.y_mm, tile_side_mm(objects[m.id].marker_mm) + 10, m.heading_deg)[:, :2]
            for corners in (tile, view.cast(tile, m.z_mm)):
                cv2.fillConvexPoly(mask, np.array([px(c) for c in corners], np.int32), 0)
            continue
        r_mm = spec.base_mm / 2 + 3.0 if spec is not None else 15.0
        # The marker's tile on top: its corners reach half a diagonal (one module of margin).
        tile_mm = tile_side_mm(spec.marker_mm if spec is not None else 25.0) * 0.71 + 2.0
        base = np.array([m.x_mm, m.y_mm])
        top = view.cast(base[None], m.z_mm)[0]
        r_top_mm = max(r_mm, tile_mm) * float(view.k(m.z_mm)) + 3.0
        if np.any(np.minimum(base, top) - r_top_mm > hi) or np.any(np.maximum(base, top) + r_top_mm < lo):
            continue  # nowhere near this view
        r_top = int(round(r_top_mm / mm_per_px))
        cv2.circle(mask, px(base), int(round(r_mm / mm_per_px)), 0, -1)
        if tiles:
            side = tile_side_mm(spec.marker_mm if spec is not None else 25.0) + 2 * TILE_MARGIN_MM
            square = view.cast(square_corners_mm(m.x_mm, m.y_mm, side, m.heading_deg)[:, :2], m.z_mm)
            cv2.fillConvexPoly(mask, np.array([px(c) for c in square], np.int32), 0)
            cv2.line(mask, px(base), px(top), 0, 2 * int(round(r_mm / mm_per_px)))
            continue
        cv2.circle(mask, px(top), r_top, 0, -1)
        cv2.line(mask, px(base), px(top), 0, 2 * r_top)
    for a in setup.anchors:
        corners = square_corners_mm(a.x_mm, a.y_mm, tile_side_mm(a.size_mm) + 6, a.rotation_deg)[:, :2]
        if np.any(corners.min(axis=0) > hi) or np.any(corners.max(axis=0) < lo):
            continue
        cv2.fillConvexPoly(mask, np.array([px(c) for c in corners], np.int32), 0)


def paper_white(coarse: np.ndarray, table: np.ndarray, setup: Setup) -> tuple[np.ndarray, float]:
    """The anchors' white margin (RGB 0-1) and the table's brightness there: the colour reference."""
    samples, lights = [], []
    for a in setup.anchors:
        inner, outer = (square_corners_mm(a.x_mm, a.y_mm, a.size_mm * modules / 6, a.rotation_deg)[:, :2] / COARSE_MM
                        - 0.5 for modules in PAPER_RING_MODULES)
        # the ring drawn in its own bounding box (a whole-table mask per anchor cost 1 ms)
        x0, y0 = np.maximum(np.floor(outer.min(axis=0)).astype(int) - 1, 0)
        x1, y1 = np.minimum(np.ceil(outer.max(axis=0)).astype(int) + 2, (coarse.shape[1], coarse.shape[0]))
        if x1 <= x0 or y1 <= y0:
            continue
        ring = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(ring, (outer - (x0, y0)).round().astype(np.int32), 1)
        cv2.fillConvexPoly(ring, (inner - (x0, y0)).round().astype(np.int32), 0)
        if ring.sum() > 6:
            samples.append(np.median(coarse[y0:y1, x0:x1][ring > 0], axis=0)[::-1] / 255.0)
            lights.append(float(table[y0:y1, x0:x1][ring > 0].astype(np.float64).mean()) / 255.0)
    if not samples:
        return np.array([PAPER_ALBEDO] * 3), 1.0
    return np.mean(samples, axis=0), float(np.mean(lights))
