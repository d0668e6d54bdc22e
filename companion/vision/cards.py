"""A listed marker read from its paper card, where glare or an exposure left OpenCV too little
contrast to find its black border.

Under a lamp a glossy print's black shows the lamp (160-200 grey levels against a white of 250),
and an exposure set for a dark table lifts a matte print's black to within 15-25 levels of its
white: the adaptive thresholds then never close the border's square, so no candidate reaches the
decoder. The paper card stays what it was, the brightest square around. So: bright squares of a
marker card's size, each unwarped to the marker's grid (for a few widths of white margin), every
module averaged (a few dozen pixels: the noise drops below a faint pattern's contrast), and the
module means compared with the patterns of the markers still missing, in all four turns. What
matches is checked, as every small marker is, by the pattern fit on the frame: the best few
readings are each fitted, and the one taken is the pattern that explains its fitted place clearly
better than every other id's pattern, fitted too (`_arbitrated`).
The same reading serves the square outlines OpenCV found and could not decode (`read_outlines`):
a print with no card of its own in view (a mini's body touching it, a trimmed margin) whose
lifted black broke its border.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import cv2
import numpy as np

from companion.vision.markers import (ALL_WINDOWS, MIN_NEIGHBOUR_CORRELATION, MarkerDetections, dictionary,
                                      fit_pattern, inside_quads, intersect_lines, make_detector, marker_bits,
                                      mean_side_px, neighbour_correlation, pattern_mean_squares,
                                      side_lengths_px)

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
# Every card's best readings are then fitted (the pattern fit on the frame moves the corners to
# where that pattern sits) and compared with their rivals, the dictionary's ids read most like
# the fitted place (not only the ids wanted: a print no roster lists must not read as the listed
# id nearest to it), by how well each pattern explains the pixels (`pattern_mean_squares`): at
# the reading's fitted place, and the closest rivals fitted at their own. A strict reading is
# vetoed only by a fitted rival explaining the place as well (a blurred 16 px print of id 28 met
# the thresholds as id 37, 4 bits apart in a turn); one short of the thresholds must also lead
# every rival at its own place. On a print whose black glare or an exposure lifted to 15-40
# levels under its white, the module means of a hand-cut grid mislead (the right id may rank
# third of three); fitted, it leads. On 400 readings short of the thresholds on path-traced,
# ray-cast and plain hard frames with every absent id listed, the 16 right ones led by 1.2-9 at
# their place and 1.22-8.6 against fitted rivals; of the wrong ones that fit closely with paper
# around them, none led a fitted rival by more than 1.09 (at their place, up to 1.22). A print
# two ids fit alike (ids 9 and 14, 6 bits apart: 1.14) is read as neither.
FITTED_READINGS = 3  # a card's best readings, each fitted
MIN_FITTED_SCORE = 0.9  # a reading correlating less is not worth a fit (the right ones: 0.98-1.45)
RIVAL_IDS = 8  # the dictionary's ids read most like a fitted place, whose patterns are compared there
RIVAL_FITS = 2  # the closest of them, fitted from there in their turn
MIN_PATTERN_LEAD = 1.2  # every rival's mean square at the reading's fitted place, over the reading's
MIN_FIT_LEAD = 1.2  # every rival's and other reading's at its own fitted place, over the reading's
MIN_SETTLED_LEAD = 1.1  # short of the thresholds, the least lead at the place, however the rivals' fits went
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
    return _best_reads(gray, [quad for quad, _ in cards], patterns, sides_px, [whole for _, whole in cards])


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
    # black border, however trimmed: the half module there is as bright as its white cells. And
    # its readings must lead every rival as those short of the thresholds do (a printed mat's
    # faint square met them as an absent id, 1.13 ahead of the next pattern, no rival fitting).
    ids, quads = _best_reads(gray, cards, patterns, sides_px, [False] * len(cards))
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
    grid, _ = _unwarped(gray, corners, _square(1, cells + 1) * MODULE_PX - 0.5, size)
    inner = grid[MODULE_PX:-MODULE_PX, MODULE_PX:-MODULE_PX].reshape(cells, MODULE_PX, cells, MODULE_PX)
    means = inner[:, _MIDDLE, :, _MIDDLE].mean(axis=(1, 3))
    white, black = float(means[bits].mean()), float(means[~bits].mean())
    half = MODULE_PX // 2
    ring = np.zeros((size, size), bool)
    ring[half:-half, half:-half] = True
    ring[MODULE_PX:-MODULE_PX, MODULE_PX:-MODULE_PX] = False
    return (float(grid[ring].mean()) - black) / max(white - black, 1e-6)


def _best_reads(gray: np.ndarray, cards: list[np.ndarray], patterns: "_Patterns", sides_px: tuple[float, float],
                vouched: list[bool] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each wanted id's best reading among the cards whose marker would be `sides_px` wide: ids
    (N,) and marker corners (N, 4, 2). A card not `vouched` for (cut out of a larger blob) is
    read as if short of the strict thresholds."""
    lo, hi = sides_px
    best: dict[int, tuple[float, np.ndarray]] = {}  # id -> (score, corners): the best card of each
    h, w = gray.shape
    for k, card in enumerate(cards):
        x0, y0 = np.maximum(np.floor(card.min(axis=0)).astype(int) - 2, 0)
        x1, y1 = np.minimum(np.ceil(card.max(axis=0)).astype(int) + 3, (w, h))
        if x1 - x0 < 3 or y1 - y0 < 3 or neighbour_correlation(gray[y0:y1, x0:x1]) < MIN_NEIGHBOUR_CORRELATION:
            continue  # a speck of sensor noise, no paper
        match = _best_match(gray, card, patterns, vouched is None or vouched[k])
        if match is not None and lo <= mean_side_px(match.corners) <= hi \
                and match.score > best.get(match.marker_id, (-1.0,))[0]:
            best[match.marker_id] = (match.score, match.corners)
    if not best:
        return np.zeros(0, int), np.zeros((0, 4, 2))
    return np.array(list(best), int), np.array([corners for _, corners in best.values()], np.float64)


def _bright_quads(gray: np.ndarray, min_side_px: float, max_side_px: float, taken_px: np.ndarray
                  ) -> list[tuple[np.ndarray, bool]]:
    """Outlines of bright convex quads (paper above its surroundings) of a card's size, corners
    clockwise on the image, away from the markers already read; each with whether it was a blob
    of its own (else cut out of a larger one, `_opened_card`)."""
    window = int(2 * max_side_px) | 1
    bright = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, max(window, 3),
                                   -BRIGHTER_THAN_AROUND)
    # Paper is near the frame's white; the bright specks of a table's texture are not (tens of
    # thousands of outlines on felt, most of the time taken).
    paper = float(np.percentile(gray[::4, ::4], 99.5)) * PAPER_SHARE
    bright[gray < paper] = 0
    contours, _ = cv2.findContours(bright, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    # A card whose outline is not four sides may carry what touches it: a mini's pale rim, a mat's
    # bright patch, joined by a few pixels. Opened by a fraction of the smallest card, those stubs
    # fall away and the card's straight sides stay as they were.
    stubs = [cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (max(3, int(min_side_px * share) | 1),) * 2)
             for share in STUB_SHARES]
    quads = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if not min_side_px ** 2 <= area <= max_side_px ** 2:
            continue
        quad = _card_quad(contour)
        whole = quad is not None
        if quad is None:
            quad = _opened_card(contour, stubs, min_side_px)
        if quad is None:
            continue
        if len(taken_px) and inside_quads(taken_px, quad).any():
            continue
        quads.append((quad, whole))
    return quads


# The openings' widths, of the smallest marker's side, narrowest first: a rim's stub or a mat's
# speck goes at the first, a crescent of a mini's pale rim only at the last (a card is wider still).
# A printed mat's squares, joined by faint lines, open into squares too: what is cut out of a
# larger blob vouches for less than a card of its own (a mat square met the strict thresholds as
# an absent id, its rivals' fits failing), so its readings must lead as those short of them do.
STUB_SHARES = (0.4, 0.7, 1.0)


def _opened_card(contour: np.ndarray, stubs: list[np.ndarray], min_side_px: float) -> np.ndarray | None:
    """The one card left of a blob opened by the narrowest of `stubs` that leaves one; else None."""
    x, y, w, h = cv2.boundingRect(contour)
    blob = np.zeros((h + 2, w + 2), np.uint8)
    cv2.drawContours(blob, [contour - (x - 1, y - 1)], -1, 255, cv2.FILLED)
    for stub in stubs:
        parts, _ = cv2.findContours(cv2.morphologyEx(blob, cv2.MORPH_OPEN, stub), cv2.RETR_EXTERNAL,
                                    cv2.CHAIN_APPROX_NONE)
        cards = [q for part in parts
                 if cv2.contourArea(part) >= min_side_px ** 2 and (q := _card_quad(part)) is not None]
        if len(cards) == 1:
            return cards[0] + (x - 1, y - 1)
    return None


def _card_quad(contour: np.ndarray) -> np.ndarray | None:
    """A card's corners from its blob's outline: four straight sides, squarish; else None."""
    corners = _four_sides(contour)
    if corners is None:
        return None
    quad = _sides_fitted(contour.reshape(-1, 2).astype(np.float64), corners)
    return None if quad is None or _aspect(quad) > MAX_ASPECT else quad


def _square(start: float, end: float) -> np.ndarray:
    """A square's corners (4, 2), clockwise on the image from (start, start) to (end, end)."""
    return np.array([[start, start], [end, start], [end, end], [start, end]], np.float32)


def _unwarped(gray: np.ndarray, corners: np.ndarray, grid_corners: np.ndarray, size: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """The image under a quad laid onto a size x size grid, `corners` (4, 2) going to
    `grid_corners` (bilinear, float64), and the homography that does it."""
    warp = cv2.getPerspectiveTransform(np.asarray(corners, np.float32), np.asarray(grid_corners, np.float32))
    return cv2.warpPerspective(gray, warp, (size, size), flags=cv2.INTER_LINEAR).astype(np.float64), warp


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


def _correlations(patterns: "_Patterns", means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How a marker's module means (cells, cells) correlate with each pattern row: as a whole,
    and in the inner bits."""
    return patterns.whole @ _unit(means.ravel()), patterns.inner @ _unit(means[1:-1, 1:-1].ravel())


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


def _best_match(gray: np.ndarray, card: np.ndarray, patterns: _Patterns, strict_allowed: bool = True
                ) -> _Match | None:
    """The wanted pattern the card's modules match: the best strict match (its module means
    correlate with the pattern, as a whole and in the inner bits, and its black and white modules
    stand apart from the noise within the modules); else the reading the pattern fits single out
    (`_arbitrated`)."""
    cells = patterns.cells
    of_id: dict[int, _Match] = {}  # each id's best reading, strict ones first
    for margin in MARGINS_MODULES:
        size = int(round((cells + 2 * margin) * MODULE_PX))
        # The paper's edge onto the grid's outer edge (pixel centres at integers: it is at -0.5).
        grid, warp = _unwarped(gray, card, _square(0, size) - 0.5, size)
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
        score, inner = _correlations(patterns, means)
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
    # Strict or not, a reading is the id whose fitted pattern explains the card clearly best: a
    # blurred 16 px print of id 28 met the strict thresholds as id 37 (4 bits apart in a turn).
    if not strict_allowed:
        ranked = sorted((replace(m, strict=False) for m in ranked), key=lambda m: m.score, reverse=True)
    return _arbitrated(gray, ranked, patterns) if ranked else None


@dataclass(frozen=True, eq=False)
class _Fitted:
    """A reading fitted on the frame: its mean square there, and how clearly its pattern leads."""

    match: _Match
    mean_square: float
    own_best: bool  # no other turn of its own pattern explains the place better
    corners_in_crop: np.ndarray
    rivals: tuple[tuple[int, int, float], ...]  # the other ids there, closest first: id, turn, lead

    @property
    def lead(self) -> float:
        """The closest other id's mean square at the same place, over this one's."""
        return self.rivals[0][2] if self.rivals else np.inf


def _closest_ids(gray: np.ndarray, corners: np.ndarray, patterns: _Patterns, other_than: int) -> list[int]:
    """The RIVAL_IDS ids whose patterns (any turn) the marker at `corners` reads most like, by
    module means, other than `other_than`."""
    cells = patterns.cells
    size = cells * MODULE_PX
    grid, _ = _unwarped(gray, corners, _square(0, size) - 0.5, size)
    score = sum(_correlations(patterns, grid.reshape(cells, MODULE_PX, cells, MODULE_PX).mean(axis=(1, 3))))
    ranked: list[int] = []
    for row in np.argsort(-score):
        marker_id = int(patterns.ids[row])
        if marker_id != other_than and marker_id not in ranked:
            ranked.append(marker_id)
            if len(ranked) == RIVAL_IDS:
                break
    return ranked


def _arbitrated(gray: np.ndarray, ranked: list[_Match], patterns: _Patterns) -> _Match | None:
    """Among a card's best readings, the one whose pattern, fitted on the frame, explains the place
    clearly better than the other readings' fits do theirs and than the closest rivals' fitted at
    their own place, and (short of the thresholds) than every rival's pattern at its place."""
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
        rivals = tuple((ids[1 + k], int(np.argmin(squares[1 + k])), float(squares[1 + k].min()) / own) for k in order)
        fitted.append(_Fitted(replace(match, corners=fit.corners_px + origin), own,
                              own <= float(squares[0].min()), fit.corners_px, rivals))
    if not fitted:
        return None
    fitted.sort(key=lambda f: f.mean_square)
    best = fitted[0]
    if len(fitted) > 1 and fitted[1].mean_square < MIN_FIT_LEAD * best.mean_square:
        return None
    if not best.own_best or (not best.match.strict and best.lead < MIN_SETTLED_LEAD):
        return None
    # A pattern fitted moves to where it fits best, so at its own place it leads a rival it
    # would not lead at the rival's: the closest rivals are fitted too, from its place at their
    # turn (a print of id 14 fitted as id 9 led 14 by 1.29 there; 14 fitted to 0.14, 9 to 0.15),
    # and one that explains the place as well vetoes any reading. A strict reading's modules
    # already single it out; one short of the thresholds must also lead each rival, at its own
    # place or fitted at the rival's (a fit that fails settles nothing: a printed mat's faint
    # square read as an absent id 1.13 ahead of rivals whose fits all failed).
    tried = {f.match.marker_id for f in fitted}
    for rank, (rival_id, turn, lead) in enumerate(best.rivals):
        short = not best.match.strict and lead < MIN_PATTERN_LEAD
        if rival_id in tried:
            continue  # fitted as a reading of its own, and led by MIN_FIT_LEAD above
        if rank >= RIVAL_FITS:
            if short:
                return None
            continue
        rival = fit_pattern(crop, np.roll(best.corners_in_crop, -turn, axis=0), patterns.dictionary_name, rival_id)
        if rival is None:
            if short:
                return None
            continue
        if mean_square(rival.corners_px, rival.blur_px, rival_id) < MIN_FIT_LEAD * best.mean_square:
            return None
    return best.match
