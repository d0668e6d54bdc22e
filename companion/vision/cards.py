"""A listed marker read from its paper card, where glare or an exposure left OpenCV too little
contrast to find its black border.

Under a lamp a glossy print's black shows the lamp (160-200 grey levels against a white of 250),
and an exposure set for a dark table lifts a matte print's black to within 15-25 levels of its
white: the adaptive thresholds then never close the border's square, so no candidate reaches the
decoder. The paper card stays what it was, the brightest square around. So: bright squares of a
marker card's size, each unwarped to the marker's grid (for a few widths of white margin), every
module averaged (a few dozen pixels: the noise drops below a faint pattern's contrast), and the
module means compared with the patterns of the markers still missing, in all four turns. What
matches is checked, as every small marker is, by the pattern fit on the frame; short of the
thresholds, the best few readings are each fitted on the frame and the one taken is the pattern
that explains its fitted place clearly better than every other id's pattern (`_arbitrated`).
The same reading serves the square outlines OpenCV found and could not decode (`read_outlines`):
a print with no card of its own in view (a mini's body touching it, a trimmed margin) whose
lifted black broke its border.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from companion.vision.markers import (ALL_WINDOWS, MarkerDetections, dictionary, fit_pattern, inside_quads,
                                      intersect_lines, make_detector, marker_bits, mean_side_px,
                                      pattern_mean_squares, side_lengths_px)

MARGINS_MODULES = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)  # white paper around the black border: trimmed to generous
MODULE_PX = 8  # the unwarped grid's pixels per module (every margin tried a whole number of them)
CORE = 0.5  # the middle share of a module, whose spread is the noise (its edges mix with the neighbours')
_MIDDLE = slice(int(MODULE_PX * (1 - CORE) / 2), int(MODULE_PX * (1 + CORE) / 2))  # those pixels of a module
BRIGHTER_THAN_AROUND = 12  # grey levels a card's paper stands above the local mean
PAPER_SHARE = 0.7  # a card's paper is at least this share of the frame's white
SIDES_SHARE = 0.8  # a card's outline is mostly its four sides
# A card is square: seen up to 35 degrees off the vertical, in perspective, with a neighbour's
# rim on its outline, its sides differ by up to half (1.4 lost two path-traced hard-level cards);
# a 1x2 brick's top is twice as long as wide, a 1x4's four times (read as prints before).
MAX_ASPECT = 1.6
# A card matches a marker's pattern when the module means correlate with it this well: the
# inner bits closely (a bright brick top or a sheet of paper has a darker rim, its blurred edge,
# but no inner pattern), the whole pattern less so (on a small blurred print the black border,
# beside the white margin, is paler than the inner black: 220-236 against 180-200 under a lamp's
# reflection). The sum of both chooses among margins and turns.
MIN_PATTERN_CORRELATION = 0.5
MIN_INNER_CORRELATION = 0.75
MIN_CONTRAST_NOISE = 2.0  # white and black modules' means apart by this many times the pixels' spread in a module
# Short of those, a card's best readings are each fitted (the pattern fit on the frame moves the
# corners to where that pattern sits) and compared with their rivals, the dictionary's ids read
# most like the fitted place (not only the ids wanted: a print no roster lists must not read as
# the listed id nearest to it), by how well each pattern explains the pixels
# (`pattern_mean_squares`): at the reading's fitted place, and each rival fitted at its own. On
# a print whose black glare or an exposure lifted to 15-40 levels under its white, the module
# means of a hand-cut grid mislead (the right id may rank third of three); fitted, it leads. On
# 400 such readings of path-traced, ray-cast and plain hard frames with every absent id listed,
# the 16 right ones lead by 1.2-9 at their place and 1.22-8.6 against fitted rivals; of the
# wrong ones that fit closely and have paper around them, none leads a fitted rival by more than
# 1.09 (at their place, up to 1.22). A print two ids fit alike (ids 9 and 14, 6 bits apart:
# 1.14) is read as neither.
FITTED_READINGS = 3  # a card's best readings short of the thresholds, each fitted
MIN_FITTED_SCORE = 0.9  # a reading correlating less is not worth a fit (the right ones: 0.98-1.45)
RIVAL_IDS = 8  # the dictionary's ids read most like a fitted place, whose patterns are compared there
RIVAL_FITS = 2  # the closest of them, fitted from there in their turn
MAX_FIT_RESIDUAL = 0.2  # the reading's own fit, of its contrast (right ones: 0.03-0.20)
MIN_PATTERN_LEAD = 1.2  # every rival's mean square at the reading's fitted place, over the reading's
MIN_FIT_LEAD = 1.2  # every rival's and other reading's at its own fitted place, over the reading's
SIDE_RANGE = (0.6, 1.6)  # a card's marker side against the markers found (perspective, heights)


def side_range_px(found: MarkerDetections) -> tuple[float, float]:
    """The sides (px) a missing marker may have, from those found (the roster's are alike)."""
    sides = np.array([mean_side_px(q) for q in found.corners_px])
    return SIDE_RANGE[0] * float(np.min(sides)), SIDE_RANGE[1] * float(np.median(sides))


def read_cards(gray: np.ndarray, wanted: frozenset[int], dictionary_name: str, sides_px: tuple[float, float],
               read: MarkerDetections) -> tuple[np.ndarray, np.ndarray]:
    """The wanted markers read from bright card-sized squares whose marker would be `sides_px` wide,
    none over the centre of a marker already `read`: ids (N,) and marker corners (N, 4, 2) in
    pixels (the card's corners moved in by the margin that fit best; refine them)."""
    if not wanted:
        return np.zeros(0, int), np.zeros((0, 4, 2))
    lo, hi = sides_px
    patterns = _Patterns.of(dictionary_name, wanted)
    cards = _bright_quads(gray, lo, hi * (patterns.cells + 2 * MARGINS_MODULES[-1]) / patterns.cells,
                          read.corners_px.mean(axis=1))
    return _best_reads(gray, cards, patterns, sides_px)


OUTLINE_SIDE_SHARE = 0.6  # an outline read is no smaller than this share of the median marker read


def read_outlines(gray: np.ndarray, wanted: frozenset[int], dictionary_name: str, sides_px: tuple[float, float],
                  read: MarkerDetections) -> tuple[np.ndarray, np.ndarray]:
    """`read_cards` for the square outlines OpenCV found and could not decode, at every threshold
    window, and the boxes of dark blobs of a black square's size (`_dark_squares`): a print whose
    black a lamp or an exposure lifted to a pale grey breaks its border in places, and on a mini's
    body a trimmed print shows no card of its own; the outline of its black square, or of the
    square and its margin, or its dark cells, are still there. Each is read both as a card and as
    the black square itself (grown by a module of margin). None within a marker already `read`
    (an anchor's large modules make squares of a print's size) or around one."""
    if not wanted or not len(read):
        return np.zeros(0, int), np.zeros((0, 4, 2))
    # Outlines come in every size (a mini's paint, its neighbours' cards): none much smaller than
    # the typical marker read (the roster's are alike; a 7.5 px square by a card read as a
    # knocked-over print of an absent id).
    typical = float(np.median([mean_side_px(q) for q in read.corners_px]))
    lo, hi = max(sides_px[0], OUTLINE_SIDE_SHARE * typical), sides_px[1]
    sides_px = (lo, hi)
    patterns = _Patterns.of(dictionary_name, wanted)
    cells = patterns.cells
    _, _, rejected = make_detector(dictionary_name, windows=ALL_WINDOWS).detectMarkers(gray)
    outlines = [np.asarray(outline, np.float64).reshape(4, 2) for outline in rejected] + _dark_squares(gray, lo, hi)
    cards: list[np.ndarray] = []
    for quad in outlines:
        side = mean_side_px(quad)
        if not lo <= side <= hi * (cells + 2 * MARGINS_MODULES[-1]) / cells or _aspect(quad) > MAX_ASPECT:
            continue
        centre = quad.mean(axis=0)
        if inside_quads(read.corners_px.mean(axis=1), quad).any() or inside_quads(centre, read.corners_px).any():
            continue
        cards += [quad, centre + (quad - centre) * (cells + 2) / cells]
    # An outline is no card: no bright paper vouches for it, and a table's squares and a mini's
    # paint correlate with some pattern among a roster's ids in four turns (with every absent id
    # listed, five false reads in 40 ray-cast and plain hard frames). A print has paper around its
    # black border, however trimmed: the half module there is as bright as its white cells.
    ids, quads = _best_reads(gray, cards, patterns, sides_px)
    papered = [k for k in range(len(ids)) if MARGIN_WHITE[0] <= margin_whiteness(gray, quads[k], dictionary_name,
                                                                                  int(ids[k])) <= MARGIN_WHITE[1]]
    return ids[papered], quads[papered]


DARK_BELOW_AROUND = 7  # grey levels a print's black stands under the local mean
SQUARE_SHARE = 0.6  # a dark blob's box no narrower than this share of its length: a square, perhaps broken


def _dark_squares(gray: np.ndarray, min_side_px: float, max_side_px: float) -> list[np.ndarray]:
    """The boxes (4, 2) of dark blobs of a marker's black square's size: where glare breaks a
    print's border on a side or two, OpenCV finds no square outline, but its black cells and what
    is left of the border still make one blob about the square's size."""
    # A window about the smallest marker's side: wider, a print's black joins a dark body beside it.
    window = int(min_side_px) | 1
    dark = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, max(window, 3),
                                 DARK_BELOW_AROUND)
    contours, _ = cv2.findContours(dark, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    boxes = []
    for contour in contours:
        if len(contour) < 4 or cv2.contourArea(contour) < (SQUARE_SHARE * min_side_px) ** 2 / 2:
            continue
        rect = cv2.minAreaRect(contour.astype(np.float32))
        long, short = max(rect[1]), min(rect[1])
        if min_side_px <= long <= max_side_px and short >= SQUARE_SHARE * long:
            boxes.append(cv2.boxPoints(rect).astype(np.float64))
    return boxes


# The half module of margin around a print's border, between its black (0) and its white cells (1):
# 0.96-1.03 on the path-traced prints read this way; -0.3-0.15 for a table's squares and paint read
# as prints, 1.85 where the "white" cells were no white (the margin is brighter than inner white
# cells a blur darkens on small prints, hence the room above 1).
MARGIN_WHITE = (0.7, 1.4)


def margin_whiteness(gray: np.ndarray, corners: np.ndarray, dictionary_name: str, marker_id: int) -> float:
    """How white the half module around a marker's black border is: (its mean - the black cells')
    / (the white cells' - the black cells'), each cell's middle only, on the marker unwarped to
    MODULE_PX a module (corners in the marker's own order)."""
    bits = marker_bits(dictionary_name, marker_id) > 0
    cells = bits.shape[0]
    size = (cells + 2) * MODULE_PX
    square = np.array([[1, 1], [cells + 1, 1], [cells + 1, cells + 1], [1, cells + 1]], np.float32) * MODULE_PX - 0.5
    warp = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), square)
    grid = cv2.warpPerspective(gray, warp, (size, size), flags=cv2.INTER_LINEAR).astype(np.float64)
    inner = grid[MODULE_PX:-MODULE_PX, MODULE_PX:-MODULE_PX].reshape(cells, MODULE_PX, cells, MODULE_PX)
    means = inner[:, _MIDDLE, :, _MIDDLE].mean(axis=(1, 3))
    white, black = float(means[bits].mean()), float(means[~bits].mean())
    half = MODULE_PX // 2
    ring = np.zeros((size, size), bool)
    ring[half:-half, half:-half] = True
    ring[MODULE_PX:-MODULE_PX, MODULE_PX:-MODULE_PX] = False
    return (float(grid[ring].mean()) - black) / max(white - black, 1e-6)


def _best_reads(gray: np.ndarray, cards: list[np.ndarray], patterns: "_Patterns", sides_px: tuple[float, float]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Each wanted id's best reading among the cards whose marker would be `sides_px` wide: ids
    (N,) and marker corners (N, 4, 2)."""
    lo, hi = sides_px
    best: dict[int, tuple[float, np.ndarray]] = {}  # id -> (score, corners): the best card of each
    for card in cards:
        match = _best_match(gray, card, patterns)
        if match is not None and lo <= mean_side_px(match.corners) <= hi \
                and match.score > best.get(match.marker_id, (-1.0,))[0]:
            best[match.marker_id] = (match.score, match.corners)
    if not best:
        return np.zeros(0, int), np.zeros((0, 4, 2))
    return np.array(list(best), int), np.array([corners for _, corners in best.values()], np.float64)


def _bright_quads(gray: np.ndarray, min_side_px: float, max_side_px: float, taken_px: np.ndarray) -> list[np.ndarray]:
    """Outlines of bright convex quads (paper above its surroundings) of a card's size, corners
    clockwise on the image, away from the markers already read."""
    window = int(2 * max_side_px) | 1
    bright = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, max(window, 3),
                                   -BRIGHTER_THAN_AROUND)
    # Paper is near the frame's white; the bright specks of a table's texture are not (tens of
    # thousands of outlines on felt, most of the time taken).
    paper = float(np.percentile(gray[::4, ::4], 99.5)) * PAPER_SHARE
    bright[gray < paper] = 0
    contours, _ = cv2.findContours(bright, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    quads = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if not min_side_px ** 2 <= area <= max_side_px ** 2:
            continue
        corners = _four_sides(contour)
        if corners is None:
            continue
        quad = _sides_fitted(contour.reshape(-1, 2).astype(np.float64), corners)
        if quad is None or _aspect(quad) > MAX_ASPECT:
            continue
        if len(taken_px) and inside_quads(taken_px, quad).any():
            continue
        quads.append(quad)
    return quads


def _aspect(quad: np.ndarray) -> float:
    sides = side_lengths_px(quad)
    return float(sides.max() / max(sides.min(), 1e-9))


def _four_sides(contour: np.ndarray) -> np.ndarray | None:
    """Rough corners (4, 2) of a blob whose outline is mostly four straight sides: the four longest
    edges of its simplified outline, met in turn (a mini's glossy rim or a highlight beside the
    card adds short edges of its own)."""
    poly = cv2.approxPolyDP(contour, 0.02 * cv2.arcLength(contour, True), True).reshape(-1, 2).astype(np.float64)
    if len(poly) < 4:
        return None
    edges = np.roll(poly, -1, axis=0) - poly
    lengths = np.hypot(edges[:, 0], edges[:, 1])
    longest = np.sort(np.argsort(lengths)[-4:])
    if lengths[longest].sum() < SIDES_SHARE * lengths.sum():
        return None
    # Corner k ends side k-1 and starts side k.
    corners = np.array([intersect_lines((poly[a], edges[a] / lengths[a]), (poly[b], edges[b] / lengths[b]))
                        for a, b in zip(np.roll(longest, 1), longest)])
    if not np.isfinite(corners).all() or not cv2.isContourConvex(corners.astype(np.float32)):
        return None
    return corners


def _sides_fitted(points: np.ndarray, corners: np.ndarray) -> np.ndarray | None:
    """The quad's corners from lines fitted to its outline's four sides (corners' neighbourhoods
    left out): the outline's pixels lie half a pixel inside the paper's edge, so it is moved out."""
    lines = []
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        ab = b - a
        length = float(np.hypot(*ab))
        if length < 4:
            return None
        t = (points - a) @ ab / length ** 2
        d = np.abs(ab[0] * (points[:, 1] - a[1]) - ab[1] * (points[:, 0] - a[0])) / length
        side = points[(t > 0.15) & (t < 0.85) & (d < 2.0)]
        if len(side) < 3:
            return None
        vx, vy, x0, y0 = cv2.fitLine(side.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], float), np.array([vx, vy], float)))
    centre = corners.mean(axis=0)
    quad = np.array([intersect_lines(lines[k - 1], lines[k]) for k in range(4)])
    if not np.isfinite(quad).all():
        return None
    quad = centre + (quad - centre) * (1 + 0.5 / max(mean_side_px(quad) / 2, 1.0))
    # clockwise on the image (y down), as OpenCV gives a marker's corners
    (ux, uy), (vx, vy) = quad[1] - quad[0], quad[2] - quad[1]
    turning = ux * vy - uy * vx
    return quad if turning > 0 else quad[::-1].copy()


@dataclass(frozen=True, eq=False)
class _Patterns:
    """The wanted markers' cells in their four turns, as rows (K, cells * cells; 1 white, 0
    black): each row's id and turn, and the rows centred to unit length, whole and inner part."""

    ids: np.ndarray
    turns: np.ndarray
    white: np.ndarray
    whole: np.ndarray
    inner: np.ndarray
    cells: int
    dictionary_name: str

    @classmethod
    @lru_cache(maxsize=64)
    def of(cls, dictionary_name: str, ids: frozenset[int]) -> "_Patterns":
        rows, row_ids, row_turns = [], [], []
        for marker_id in sorted(ids):
            for k in range(4):
                rows.append(np.rot90(marker_bits(dictionary_name, marker_id) > 0, k).astype(np.float64))
                row_ids.append(marker_id)
                row_turns.append(k)
        cells = rows[0].shape[0]
        white = np.array([r.ravel() for r in rows])
        inner = np.array([r[1:-1, 1:-1].ravel() for r in rows])
        return cls(np.array(row_ids), np.array(row_turns), white, _unit(white), _unit(inner), cells, dictionary_name)


def _unit(rows: np.ndarray) -> np.ndarray:
    centred = rows - rows.mean(axis=-1, keepdims=True)
    return centred / np.maximum(np.linalg.norm(centred, axis=-1, keepdims=True), 1e-9)


@dataclass(frozen=True, eq=False)
class _Match:
    """A wanted id's best reading of one card: the correlation sum, whether it passed the strict
    thresholds, and the marker corners at its margin and turn."""

    score: float
    marker_id: int
    strict: bool
    corners: np.ndarray


def _best_match(gray: np.ndarray, card: np.ndarray, patterns: _Patterns) -> _Match | None:
    """The wanted pattern the card's modules match: the best strict match (its module means
    correlate with the pattern, as a whole and in the inner bits, and its black and white modules
    stand apart from the noise within the modules); else the reading the pattern fits single out
    (`_arbitrated`)."""
    cells = patterns.cells
    of_id: dict[int, _Match] = {}  # each id's best reading, strict ones first
    for margin in MARGINS_MODULES:
        size = int(round((cells + 2 * margin) * MODULE_PX))
        # The paper's edge onto the grid's outer edge (pixel centres at integers: it is at -0.5).
        square = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32) - 0.5
        warp = cv2.getPerspectiveTransform(card.astype(np.float32), square)
        grid = cv2.warpPerspective(gray, warp, (size, size), flags=cv2.INTER_LINEAR).astype(np.float64)
        start = int(round(margin * MODULE_PX))
        modules = grid[start:start + cells * MODULE_PX, start:start + cells * MODULE_PX] \
            .reshape(cells, MODULE_PX, cells, MODULE_PX)
        # Whole modules are compared (a grid a quarter module off mixes in its neighbours and
        # correlates less: that chooses the margin); their middles tell the noise.
        means = modules.mean(axis=(1, 3))
        cores = modules[:, _MIDDLE, :, _MIDDLE]
        noise = float(np.sqrt(((cores - cores.mean(axis=(1, 3))[:, None, :, None]) ** 2).mean()))
        flat = means.ravel()
        whites = patterns.white @ flat / patterns.white.sum(axis=1)
        blacks = (1 - patterns.white) @ flat / (1 - patterns.white).sum(axis=1)
        score = patterns.whole @ _unit(flat)
        inner = patterns.inner @ _unit(means[1:-1, 1:-1].ravel())
        strict = (score >= MIN_PATTERN_CORRELATION) & (inner >= MIN_INNER_CORRELATION) \
            & (whites - blacks >= MIN_CONTRAST_NOISE * max(noise, 1.0))
        both = score + inner
        corners_grid = np.array([[margin, margin], [margin + cells, margin], [margin + cells, margin + cells],
                                 [margin, margin + cells]]) * MODULE_PX - 0.5
        corners = cv2.perspectiveTransform(corners_grid.reshape(-1, 1, 2), np.linalg.inv(warp)).reshape(4, 2)
        for row in range(len(both)):
            marker_id = int(patterns.ids[row])
            held = of_id.get(marker_id)
            if held is None or (bool(strict[row]), both[row]) > (held.strict, held.score):
                # The pattern turned k times anticlockwise: the marker's first corner is the grid's k-th before.
                of_id[marker_id] = _Match(float(both[row]), marker_id, bool(strict[row]),
                                          np.roll(corners, int(patterns.turns[row]), axis=0))
    ranked = sorted(of_id.values(), key=lambda m: (m.strict, m.score), reverse=True)
    if not ranked or ranked[0].strict:
        return ranked[0] if ranked else None
    return _arbitrated(gray, ranked, patterns)


@dataclass(frozen=True, eq=False)
class _Fitted:
    """A reading fitted on the frame: its mean square there, and how clearly its pattern leads."""

    match: _Match
    mean_square: float
    lead: float  # the closest other id's mean square at the same place, over this one's
    own_best: bool  # no other turn of its own pattern explains the place better
    residual: float
    corners_in_crop: np.ndarray
    rivals: tuple[tuple[int, int], ...]  # the closest other ids there, and their turns


def _closest_ids(gray: np.ndarray, corners: np.ndarray, patterns: _Patterns, other_than: int) -> list[int]:
    """The RIVAL_IDS ids whose patterns (any turn) the marker at `corners` reads most like, by
    module means, other than `other_than`."""
    cells = patterns.cells
    size = cells * MODULE_PX
    square = np.array([[0, 0], [size, 0], [size, size], [0, size]], np.float32) - 0.5
    warp = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), square)
    grid = cv2.warpPerspective(gray, warp, (size, size), flags=cv2.INTER_LINEAR).astype(np.float64)
    means = grid.reshape(cells, MODULE_PX, cells, MODULE_PX).mean(axis=(1, 3))
    score = patterns.whole @ _unit(means.ravel()) + patterns.inner @ _unit(means[1:-1, 1:-1].ravel())
    ranked: list[int] = []
    for row in np.argsort(-score):
        marker_id = int(patterns.ids[row])
        if marker_id != other_than and marker_id not in ranked:
            ranked.append(marker_id)
            if len(ranked) == RIVAL_IDS:
                break
    return ranked


def _arbitrated(gray: np.ndarray, ranked: list[_Match], patterns: _Patterns) -> _Match | None:
    """Among a card's best readings short of the thresholds, the one whose pattern, fitted on the
    frame, explains the place clearly better than every other id's pattern there, and than the
    other readings' fits do theirs (module means on a hand-cut grid mislead on a faint print)."""
    contenders = [m for m in ranked[:FITTED_READINGS] if m.score >= MIN_FITTED_SCORE]
    if not contenders:
        return None
    everyone = _Patterns.of(patterns.dictionary_name,
                            frozenset(range(int(dictionary(patterns.dictionary_name).bytesList.shape[0]))))
    # The fits read a float crop around the card (every reading lies within it).
    corners_all = np.concatenate([m.corners for m in contenders])
    reach = 2 * max(mean_side_px(m.corners) for m in contenders)
    h, w = gray.shape
    x0, y0 = np.maximum(np.floor(corners_all.min(axis=0) - reach).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(corners_all.max(axis=0) + reach).astype(int) + 1, (w, h))
    crop = gray[y0:y1, x0:x1].astype(np.float32)
    origin = np.array([x0, y0], np.float64)

    def mean_square(corners_px: np.ndarray, blur_px: float, marker_id: int) -> float:
        squares = pattern_mean_squares(crop, corners_px, blur_px, patterns.dictionary_name, [marker_id])
        return np.inf if squares is None else max(float(squares[0, 0]), 1e-9)

    fitted: list[_Fitted] = []
    for match in contenders:
        fit = fit_pattern(crop, match.corners - origin, patterns.dictionary_name, match.marker_id)
        if fit is None:
            continue
        # Rivals from the whole dictionary, not only the ids wanted: a print the roster does not
        # list (a new recruit, the other side's) must not read as the listed id nearest to it.
        ids = [match.marker_id] + _closest_ids(gray, fit.corners_px + origin, everyone, match.marker_id)
        squares = pattern_mean_squares(crop, fit.corners_px, fit.blur_px, patterns.dictionary_name, ids)
        if squares is None:
            continue
        own = max(float(squares[0, 0]), 1e-9)
        order = np.argsort(squares[1:].min(axis=1))  # the rivals, closest first
        rivals = tuple((ids[1 + k], int(np.argmin(squares[1 + k]))) for k in order[:RIVAL_FITS])
        fitted.append(_Fitted(replace(match, corners=fit.corners_px + origin), own,
                              float(squares[1:].min()) / own if len(ids) > 1 else np.inf,
                              own <= float(squares[0].min()), fit.residual, fit.corners_px, rivals))
    if not fitted:
        return None
    fitted.sort(key=lambda f: f.mean_square)
    best = fitted[0]
    if len(fitted) > 1 and fitted[1].mean_square < MIN_FIT_LEAD * best.mean_square:
        return None
    if best.residual > MAX_FIT_RESIDUAL or not best.own_best or best.lead < MIN_PATTERN_LEAD:
        return None
    # A pattern fitted moves to where it fits best, so at its own place it leads a rival it
    # would not lead at the rival's: the closest rivals are fitted too, from its place at their
    # turn (a print of id 14 fitted as id 9 led 14 by 1.29 there; 14 fitted to 0.14, 9 to 0.15).
    tried = {f.match.marker_id for f in fitted}
    for rival_id, turn in best.rivals:
        if rival_id in tried:
            continue
        rival = fit_pattern(crop, np.roll(best.corners_in_crop, -turn, axis=0), patterns.dictionary_name, rival_id)
        if rival is not None and mean_square(rival.corners_px, rival.blur_px, rival_id) \
                < MIN_FIT_LEAD * best.mean_square:
            return None
    corners = best.match.corners
    if not MARGIN_WHITE[0] <= margin_whiteness(gray, corners, patterns.dictionary_name, best.match.marker_id) \
            <= MARGIN_WHITE[1]:
        return None
    return best.match
