"""The block a mini stands on, mostly hidden under the mini.

A mini whose marker says it stands above the table (its marker's height less the roster's marker
height) stands on a top at that height. The plane at that height, seen through the camera and
mapped back to true (x, y), shows the block's top as its own rectangle, unscaled; the walls that
face the camera fall outside it, towards the camera's foot. The mini hides the middle: a column as
wide as its base from its stand up to its marker, and the marker's tile on top, cast away from the
foot by their parallax. The top is the rectangle of brick sides (whole studs) holding the base's
centre that takes in most of the pixels of one colour seen around the mini and the fewest others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from companion.vision.brickfit import GAP_MM, PLATE_MM, STUD_MM, TableRect
from companion.vision.registration import square_corners_mm
from companion.vision.tableview import TableView

STAND_FROM_MM = 5.0  # a stand lower than this is the table (the rules' own line; vision does not import them)
ROSTER_SIGMA_MM = 1.5  # a mini's marker height measured with a ruler by a player (the roster's)
REACH_MM = 56  # the window's half side: a 4 x 6 brick's half diagonal and a stud beyond
STEP_MM = 1.0  # the window's pixel
OCCLUDER_MARGIN_MM = 2.0  # past the mini's column and tile: their blurred edges
RING_MM = 10.0  # the top's colour is read this far round what hides it
SIDES_STUDS = tuple(range(1, 9))  # a side of one to eight studs (a 2 x 8 brick, a 6 x 8 plate)
CENTRE_INSIDE_MM = 2.0  # the base's centre this far inside the top at least (it would tip over)
ANGLE_STEP_DEG = 3.0
AREA_COST = 0.02  # per mm2 of top: of two tops that explain the pixels alike, the smaller ...
# ... and per mm its centre is off the base's: where the mini hides a top's far end, the top is
# taken centred under it. (Without it the top ended where the seen part did: 40 ray-cast blocks
# under minis were found 0.5 of the time at 0, 0.625 at 1 mm2 a mm, 0.7 at 3 and at 6.)
CENTRE_COST = 3.0
LEAST_TOP_MM2 = 20.0  # a top with less seen than this beside the mini is not told
MODES = 5  # colours seen round a mini that may be its block's top
# A pixel of a top's hue, darker (the mini's shadow on the top, or its walls): no count either
# way. (Counted against it at half a pixel's weight, the top under a mini was found 0.675 and
# 0.708 of the time on the ray-cast and path-traced benches' standing minis, against 0.75, 0.75.)
KIN_WEIGHT = 0.0
TOP_SPREAD = 18.0  # 8-bit levels: colours seen round a mini this near are one (`_named`'s least spread of a top)
# Where a top's walls stand (`fit_top`): a pixel of the table seen there costs this much, one of
# the top's hue, not the table in shade, is worth this much (its wall) where the top has this much
# hue at least (channels' spread over their sum).
WALLS_ON_TABLE_COST = 2.0
WALL_SEEN_VALUE = 1.0
WALL_HUE_LEAST = 0.15
# A top the mini hides whole (`hidden_top`) is somewhere within what it hides: a pixel seen inside
# the rectangle taken for it costs this many hidden ones (the top would have been seen there);
# and there is none where this share of what a one-stud top's walls would show is the table.
HIDDEN_SEEN_COST = 4.0
HIDDEN_WALLS_TABLE = 0.5


@dataclass(frozen=True)
class TopUnder:
    """A block's top found under a standing mini: in true (x, y) at its height."""

    top: TableRect
    height_mm: float
    colour_bgr: np.ndarray  # the colour its pixels were told by
    samples_bgr: np.ndarray  # (N, 3) the top's pixels seen beside the mini
    explained: float  # share of the seen pixels round it the rectangle labels right
    seen_mm2: float  # how much of its top was seen


def stand_height_mm(z_mm: float, marker_height_mm: float) -> float | None:
    """The top a mini stands on, snapped to whole plates; None on the table."""
    stand = z_mm - marker_height_mm
    if not math.isfinite(stand) or stand < STAND_FROM_MM:
        return None
    return max(1, round(stand / PLATE_MM)) * PLATE_MM


def _seen_at(view: TableView, points_mm: np.ndarray, height_mm: float, plane_mm: float) -> np.ndarray:
    """Points at a height, where they are seen in the plane at `plane_mm` (true x, y)."""
    foot = view.foot_mm
    return foot + (np.asarray(points_mm, float) - foot) * (float(view.k(height_mm)) / float(view.k(plane_mm)))


def occluded(view: TableView, plane_mm: float, base_xy_mm: np.ndarray, base_mm: float, top_mm: float,
             tile_mm: float, heading_deg: float, shape: tuple[int, int], origin_mm: np.ndarray) -> np.ndarray:
    """Where a mini hides the plane at `plane_mm` in the window (uint8, 1 hidden): its column (its
    base's width, from the plane up to `top_mm`) and its marker's tile at `top_mm`."""
    mask = np.zeros(shape, np.uint8)

    def px(points: np.ndarray) -> np.ndarray:
        return np.round((np.asarray(points, float) - origin_mm) / STEP_MM * 4 - 2).astype(np.int32)

    low = np.asarray(base_xy_mm, float)  # (the base stands on that plane)
    high = _seen_at(view, base_xy_mm[None], top_mm, plane_mm)[0]
    radius = (base_mm / 2 + OCCLUDER_MARGIN_MM) * float(view.k(top_mm)) / float(view.k(plane_mm))
    thickness = max(1, int(round(2 * radius / STEP_MM)))
    ends = px(np.array([low, high]))
    cv2.line(mask, tuple(int(v) for v in ends[0]), tuple(int(v) for v in ends[1]), 1, thickness, cv2.LINE_8, 2)
    for end in ends:
        cv2.circle(mask, tuple(int(v) for v in end), int(round(radius / STEP_MM * 4)), 1, -1, cv2.LINE_8, 2)
    tile = square_corners_mm(float(base_xy_mm[0]), float(base_xy_mm[1]), tile_mm + 2 * OCCLUDER_MARGIN_MM,
                             heading_deg)[:, :2]
    cv2.fillConvexPoly(mask, px(_seen_at(view, tile, top_mm, plane_mm)), 1, cv2.LINE_8, 2)
    return mask


def _colour_modes(pixels: np.ndarray, count: int = 3) -> list[np.ndarray]:
    """The most common colours of some pixels (N, 3): the densest cells of a coarse colour
    histogram, each the mean of the pixels in it and its neighbours."""
    cells = np.clip(pixels // 24, 0, 10).astype(np.int64)
    keys = cells[:, 0] * 121 + cells[:, 1] * 11 + cells[:, 2]
    order = np.argsort(-np.bincount(keys, minlength=11 ** 3))
    modes: list[np.ndarray] = []
    for key in order[:count * 4]:
        cell = np.array([key // 121, (key // 11) % 11, key % 11])
        near = np.abs(cells - cell).max(axis=1) <= 1
        if not near.any():
            break
        mode = pixels[near].mean(axis=0)
        if all(np.linalg.norm(mode - m) > TOP_SPREAD for m in modes):
            modes.append(mode)
        if len(modes) == count:
            break
    return modes


@dataclass(frozen=True, eq=False)
class _Rectangles:
    """Every rectangle `_best_rectangle` weighs in a window of n x n pixels, as flat indices into
    its integral image ((n + 1) x (n + 1)): corners, studs, centre offsets (mm) and prior cost."""

    corners: np.ndarray  # (4, R): y1 x1, y0 x1, y1 x0, y0 x0
    studs: np.ndarray  # (R, 2) along the turned x and y
    offset_mm: np.ndarray  # (R, 2) the centre from the window's centre
    prior: np.ndarray  # (R,) AREA_COST and CENTRE_COST
    box: np.ndarray  # (4, R): x0, y0, x1, y1 in the turned window's pixels


@lru_cache(maxsize=4)
def _rectangles(n: int) -> _Rectangles:
    half, inside = n // 2, int(CENTRE_INSIDE_MM / STEP_MM)
    parts: list[tuple[np.ndarray, ...]] = []
    for a in SIDES_STUDS:
        for b in SIDES_STUDS:
            la, lb = int(round(a * STUD_MM / STEP_MM)), int(round(b * STUD_MM / STEP_MM))
            # x0 in [half - la + inside, half - inside]: the window's centre that far inside
            x0 = np.arange(max(half - la + inside, 0), min(half - inside, n - la) + 1)
            y0 = np.arange(max(half - lb + inside, 0), min(half - inside, n - lb) + 1)
            if not len(x0) or not len(y0):
                continue
            ys, xs = (v.ravel() for v in np.meshgrid(y0, x0, indexing="ij"))
            offset = np.stack([xs + la / 2 - half, ys + lb / 2 - half], axis=1) * STEP_MM
            area = (a * STUD_MM - GAP_MM) * (b * STUD_MM - GAP_MM)
            prior = AREA_COST * area + CENTRE_COST * np.abs(offset).sum(axis=1)
            flat = np.stack([(ys + lb) * (n + 1) + xs + la, ys * (n + 1) + xs + la, (ys + lb) * (n + 1) + xs,
                             ys * (n + 1) + xs])
            parts.append((flat, np.tile([a, b], (len(xs), 1)), offset, prior, np.stack([xs, ys, xs + la, ys + lb])))
    return _Rectangles(*(np.concatenate(p, axis=-1 if i in (0, 4) else 0) for i, p in enumerate(zip(*parts))))


def _box_sums(sums: np.ndarray, n: int, x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """Sums over boxes [x0, x1) x [y0, y1) of an n x n image from its integral image (flat), the
    boxes clipped to the image (empty ones sum to 0)."""
    x0, x1 = np.clip(x0, 0, n), np.clip(x1, 0, n)
    y0, y1 = np.clip(y0, 0, n), np.clip(y1, 0, n)
    x1, y1 = np.maximum(x1, x0), np.maximum(y1, y0)
    w = n + 1
    return sums[y1 * w + x1] - sums[y0 * w + x1] - sums[y1 * w + x0] + sums[y0 * w + x0]


def _best_rectangle(weights: np.ndarray, beyond: np.ndarray | None = None, walls_px: np.ndarray | None = None
                    ) -> tuple[float, float, int, int, float, float]:
    """The rectangle of whole-stud sides holding the window's centre (CENTRE_INSIDE_MM in) with
    the largest sum of `weights` less its prior cost (AREA_COST, CENTRE_COST): (score, angle_deg,
    studs along the angle and across it, centre offset x and y in mm from the window's centre,
    along and across the angle). With `beyond` (values, n x n) and `walls_px` (the walls' reach
    in window pixels, towards the camera's foot): and the values where the rectangle moved by
    that reach lies beyond it (where its walls stand)."""
    n = weights.shape[0]
    half = n // 2
    rects = _rectangles(n)
    best = (-math.inf, 0.0, 0, 0, 0.0, 0.0)

    def at(angle: float) -> None:
        nonlocal best
        # (cv2 puts pixel centres at whole coordinates: the window's centre is at half - 0.5)
        turn = cv2.getRotationMatrix2D((half - 0.5, half - 0.5), angle, 1.0)
        turned = cv2.warpAffine(weights, turn, (n, n), flags=cv2.INTER_NEAREST, borderValue=0)
        sums = cv2.integral(turned, sdepth=cv2.CV_64F).ravel()
        c = rects.corners
        score = sums[c[0]] - sums[c[1]] - sums[c[2]] + sums[c[3]] - rects.prior
        if beyond is not None and walls_px is not None:
            values = cv2.integral(cv2.warpAffine(beyond, turn, (n, n), flags=cv2.INTER_NEAREST, borderValue=0),
                                  sdepth=cv2.CV_64F).ravel()
            dx, dy = (int(round(v)) for v in turn[:, :2] @ walls_px)
            x0, y0, x1, y1 = rects.box
            moved = _box_sums(values, n, x0 + dx, y0 + dy, x1 + dx, y1 + dy)
            overlap = _box_sums(values, n, np.maximum(x0, x0 + dx), np.maximum(y0, y0 + dy), np.minimum(x1, x1 + dx),
                                np.minimum(y1, y1 + dy))
            score = score + (moved - overlap)
        k = int(np.argmax(score))
        if float(score[k]) > best[0]:
            a, b = (int(v) for v in rects.studs[k])
            best = (float(score[k]), angle, a, b, float(rects.offset_mm[k, 0]), float(rects.offset_mm[k, 1]))

    for angle in np.arange(0.0, 90.0, ANGLE_STEP_DEG):
        at(float(angle))
    coarse = best[1]
    for angle in coarse + np.arange(-1.0, 1.01, 0.5) * ANGLE_STEP_DEG / 2:
        if angle != coarse:
            at(float(angle))
    return best


def hidden_top(base_xy_mm: np.ndarray, stand_mm: float, visible: np.ndarray, table_seen: np.ndarray,
               walls_mm: np.ndarray) -> TopUnder | None:
    """The top a mini standing at `stand_mm` hides whole (`fit_top` saw too little of it): the
    largest rectangle of whole-stud sides holding its base's centre within what the mini hides
    (`visible`: uint8, 1 seen, in the window round the base: `plane_points`). Its extent is a
    guess, the most the camera cannot rule out. None where the mini hides no such rectangle, or
    where the table is seen (`table_seen`, bool) where the walls of even a one-stud top under the
    base would stand (a mini held up over the bare table): a wall's foot is `walls_mm` (the
    base's offset from the camera's foot times stand / camera height) from its top's edge
    towards the camera's foot, in this plane."""
    n = visible.shape[0]
    base = np.asarray(base_xy_mm, float)
    origin = base - REACH_MM
    least = TableRect(base, np.array([1.0, 0.0]), ((STUD_MM - GAP_MM) / 2,) * 2).corners()
    swept = np.vstack([least, least - np.asarray(walls_mm, float)])
    walls = _window_mask(swept, origin, n) & ~_window_mask(least, origin, n) & (visible > 0)
    if np.count_nonzero(walls) * STEP_MM ** 2 >= LEAST_TOP_MM2 and np.mean(table_seen[walls]) >= HIDDEN_WALLS_TABLE:
        return None
    score, angle, a, b, cx, cy = _best_rectangle(np.where(visible > 0, -HIDDEN_SEEN_COST, 1.0).astype(np.float32))
    if score <= 0:
        return None
    return TopUnder(_found_rectangle(base, angle, a, b, cx, cy), stand_mm, np.full(3, np.nan), np.empty((0, 3)), 0.0, 0.0)


def _found_rectangle(base_mm: np.ndarray, angle_deg: float, studs_along: int, studs_across: int, cx_mm: float,
                     cy_mm: float) -> TableRect:
    """The rectangle `_best_rectangle` answers, round a base's centre. (The window's rows are y;
    what it turned onto its x axis lay along (cos, sin).)"""
    turn = math.radians(angle_deg)
    axis = np.array([math.cos(turn), math.sin(turn)])
    across = np.array([-math.sin(turn), math.cos(turn)])
    return TableRect(base_mm + axis * cx_mm + across * cy_mm, axis,
                     ((studs_along * STUD_MM - GAP_MM) / 2, (studs_across * STUD_MM - GAP_MM) / 2))


def _window_mask(points_mm: np.ndarray, origin_mm: np.ndarray, n: int) -> np.ndarray:
    """Where the convex hull of table points lies in an n x n window at 1 mm a pixel from `origin_mm` (bool)."""
    mask = np.zeros((n, n), np.uint8)
    hull = cv2.convexHull(np.round((np.asarray(points_mm, float) - origin_mm) / STEP_MM * 4 - 2).astype(np.int32))
    cv2.fillConvexPoly(mask, hull, 1, cv2.LINE_8, 2)
    return mask > 0


def plane_points(centre_mm: np.ndarray) -> np.ndarray:
    """The window's pixel centres (n, n, 2): true (x, y) round a base's centre, REACH_MM each way."""
    g = np.arange(-REACH_MM, REACH_MM, STEP_MM) + STEP_MM / 2
    return np.stack(np.meshgrid(g + centre_mm[0], g + centre_mm[1]), axis=-1)


def fit_top(base_xy_mm: np.ndarray, stand_mm: float, colours: np.ndarray, visible: np.ndarray, differs: np.ndarray,
            lit: np.ndarray, may_be_top: Callable[[np.ndarray], bool], labels: Callable[[np.ndarray], np.ndarray],
            darker_kin: Callable[[np.ndarray, np.ndarray], bool], walls_mm: np.ndarray | None = None
            ) -> TopUnder | None:
    """The top a mini at `base_xy_mm` stands on, at `stand_mm`, from the window of that plane
    round it (`plane_points`): the colours seen there (n, n, 3 BGR), what the mini does not hide
    (`occluded`: uint8, 1 seen), where the colour differs from the table's (bool), where it is
    not the table in shade (bool); whether a colour may be a block's top, the pixels of a top's
    colour (`labels`: 1 its colour, 0 its darker kin: shade on it, its walls; -1 neither) and
    whether a colour is a darker kin of another. With `walls_mm` (the base's offset from the
    camera's foot times stand / camera height): where a top's walls would stand, the table seen
    costs WALLS_ON_TABLE_COST a pixel and its hue seen (a hued top's) is worth WALL_SEEN_VALUE (a
    wall the lamp lights as its top is no part of it; a card may hide all but the walls). None
    where too little of a top is seen beside the mini."""
    base = np.asarray(base_xy_mm, float)
    n = colours.shape[0]
    origin = base - REACH_MM
    seen = visible > 0
    differs = differs & seen
    hidden = (~seen).astype(np.uint8)
    ring = cv2.dilate(hidden, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (int(2 * RING_MM) + 1,) * 2)) > 0
    near = differs & ring
    if np.count_nonzero(near) * STEP_MM ** 2 < LEAST_TOP_MM2:
        return None
    # The top's colour among those seen round the mini, the table in shade left out (the mini's
    # and the block's shadows may be most of what is seen) unless that leaves too little: a
    # black brick may look like deep shade. A block's top faces the lamps: a colour that is a
    # darker kin of another is its walls or shade on it.
    near_lit = near & lit
    pixels = colours[near_lit] if np.count_nonzero(near_lit) * STEP_MM ** 2 >= LEAST_TOP_MM2 else colours[near]
    modes = [m for m in _colour_modes(pixels, MODES) if may_be_top(m)]
    modes = [m for m in modes if not any(darker_kin(o, m) for o in modes if o is not m)]
    # Its walls stand between its edges and their feet, towards the camera's foot: its hue seen
    # there says that is its walls (where the card hides its top, they may be all that is seen);
    # the table seen there (not of its hue: a wall in shade may be as dark as the table), that the
    # top is too large.
    walls_px = None if walls_mm is None else -np.asarray(walls_mm, float) / STEP_MM
    fits = []
    for mode in modes:
        raw = labels(mode)
        label = np.where(differs, raw, -1)
        # (a gray, white or black top's darker kin is any darker gray: the table's shade, a tiled
        # mat's grout; its walls are not told by their colour)
        walls_told = float(mode.max() - mode.min()) / max(float(mode.sum()), 1.0) >= WALL_HUE_LEAST
        beyond = np.where(seen & lit & (label >= 0) & walls_told, WALL_SEEN_VALUE,
                          np.where(seen & ~differs & (raw != 0), -WALLS_ON_TABLE_COST, 0.0)).astype(np.float32)
        # (the mini's shadow on its top, in its top's hue, counts against it less)
        weights = np.where(seen, np.where(label == 0, KIN_WEIGHT, label), 0).astype(np.float32)
        fits.append((_best_rectangle(weights, beyond, walls_px), mode, label > 0))
    if not fits:
        return None
    (score, angle, a, b, cx, cy), mode, its_colour = max(fits, key=lambda f: f[0][0])
    if score <= 0:
        return None
    rect = _found_rectangle(base, angle, a, b, cx, cy)
    inside = _window_mask(rect.corners(), origin, n).astype(np.uint8)
    seen_top = (inside > 0) & its_colour
    seen_mm2 = float(np.count_nonzero(seen_top)) * STEP_MM ** 2
    if seen_mm2 < LEAST_TOP_MM2:
        return None
    judged = (cv2.dilate(inside, np.ones((7, 7), np.uint8)) > 0) & seen
    right = np.where(inside > 0, its_colour, ~its_colour)[judged]
    return TopUnder(rect, stand_mm, mode, colours[seen_top], float(np.mean(right)) if right.size else 0.0, seen_mm2)
