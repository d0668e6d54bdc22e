"""A candidate's top face: the brightest uniform part of its cut-out, lit from above.

Where one stands out it starts the box fit; a lit wall joined to it, or its own shadow on a table
of the same hue, is cut away first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import cv2
import numpy as np

from companion.vision.colourparts import chroma_tolerance, chromaticity
from companion.vision.colours import channel_sum_sqrt
from companion.vision.cutout import (FINE_MM, STUD_GAP_DISC, hull_fill, largest_piece, pixels_mm, rect_mm,
                                     small_holes_filled)
from companion.vision.foundblock import brick_sized
from companion.vision.shade import light_over_table, table_light_rgb, tint_of

if TYPE_CHECKING:  # the finder's candidate: blocks imports this module
    from companion.vision.blocks import Candidate

TOP_SHARE_LEAST = 0.3  # `top_face_of`: a lit face this much of the outline is the top ...
TOP_SHARE_RECTANGLE = 0.15  # ... or this much, filling its rectangle, with no other hue beside it
TOP_LIT_SHARE = 0.5  # ... or, this much of it lit, this much of what of the outline may not be the table in shade
HULL_FILLED = 0.9  # `without_a_lit_wall`: a top's hull fills its rectangle this much (a top and its lit wall: 0.69)
# ... two parts whose colours are this many of the steadier one's spreads apart (a top and its
# wall on the bench tables: 3.05-20; a strip of a camouflage mat, a green top's edge: 2.1, 2.4)
FACES_APART = 3.0
SPLIT_PART_LEAST_PX = 200  # `without_a_lit_wall`: a part of a top face this small (50 mm2) is no top
RECTANGLE_FILLED = 0.85  # ... to this share of its least rectangle (`fills_its_rectangle`)
OTHER_HUE_MM2 = 12.0  # `_another_hue`: a stud and a half of another colour
TABLE_LIT_TINT = 0.05  # `table_lit`: a face this near the table's tint, and lighter, may be the table
STUD_HOLE_MM2 = 40.0  # a hole in a lit top this small is a stud's shade or two (a stud: 18 mm2), not a yard
STUD_NOTCH_MM = 3.5  # ... and a notch in its edge this wide (`top_face_of`: a 1-wide brick's studs reach its edges)
_STUD_NOTCH_DISC = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (int(STUD_NOTCH_MM / FINE_MM),) * 2)


def top_face_of(fine: np.ndarray, blob: np.ndarray, table: np.ndarray | None = None,
                shade: np.ndarray | None = None) -> np.ndarray | None:
    """The top face: lit from above, the brightest uniform part of a block, cut halfway between the
    top's brightness and the walls', kept to the top's colour (a lighter table is not it). None
    when no such part stands out from the rest (black bricks, noise). With `table` (the table's
    colour under the outline), a smaller top will do on an outline of one brick; with `shade`
    too, one that is most of what of the outline may not be the table in shade."""
    smooth = cv2.GaussianBlur(fine, (0, 0), 1.0).astype(np.float32)
    value = np.maximum(np.maximum(smooth[..., 0], smooth[..., 1]), smooth[..., 2])
    core = cv2.erode(blob, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7)))
    if np.count_nonzero(core) < 12:
        return None
    inside = value[core > 0]
    top_level, low_level = float(np.percentile(inside, 85)), float(np.percentile(inside, 10))
    bright = (value >= top_level) & (core > 0)
    lit = lit_part((blob > 0) & near_colour(smooth, np.median(smooth[bright], axis=0)), value, top_level, low_level)
    if lit is None:
        return None
    # The studs' shaded sides are holes in the lit face (on a black top, whose lit level is a few
    # levels above its walls', so is the noise): part of the top all the same (a row of them down
    # a wall's top cut its arms lengthwise into slivers 2-5 mm wide).
    top = small_holes_filled(lit, STUD_HOLE_MM2)
    # Most of the top face or nothing: a ragged piece of it would start the fit astray. A tall
    # narrow brick's top is less than its walls and its shadow (a 1x4 brick 28.8 mm high under a
    # lamp: a quarter of its outline): whole when it fills its rectangle, asked for one brick's
    # outline (`table` given), and no other hue than the top's and the table's is in the outline
    # (touching bricks, a tower's courses: one top among them is no start for them all). On a
    # 1-wide brick the studs reach to within 1.5 mm of the top's edges, and their shaded sides
    # notch the edge instead of holing the face: the face fills its rectangle with the notches
    # closed (a path-traced green 1x6 brick 28.8 mm high, its glared top notched five times down
    # one side, filled 0.82 of it and was lost).
    # A tall brick seen from afar under a low lamp: its wall in shade and its long shadow may be
    # five sixths of its outline (`shade` given: where it may be the table in shade); its lit top is
    # then most of the rest (a gray 1x4 brick 28.8 mm high 640 mm from the foot: 0.87 of it).
    share = np.count_nonzero(top) / max(np.count_nonzero(blob), 1)
    if share >= TOP_SHARE_LEAST:
        return top
    if table is None:
        return None
    smaller_will_do = ((share >= TOP_SHARE_RECTANGLE
                        and fills_its_rectangle(cv2.morphologyEx(top, cv2.MORPH_CLOSE, _STUD_NOTCH_DISC)))
                       or (shade is not None and _most_of_what_is_no_shade(top, blob, shade)))
    return top if smaller_will_do and not _another_hue(smooth, blob, top, table) else None


def _most_of_what_is_no_shade(top: np.ndarray, blob: np.ndarray, shade: np.ndarray) -> bool:
    """Whether a top face is lit (TOP_LIT_SHARE of it no shade) and that share of what of its
    outline is no shade. (A black brick may be shade all over, its lit end wall with it; a
    touching neighbour's lit top is no shade either.)"""
    lit = np.count_nonzero((top > 0) & (shade == 0))
    return (lit >= TOP_LIT_SHARE * np.count_nonzero(top)
            and lit >= TOP_LIT_SHARE * np.count_nonzero((blob > 0) & (shade == 0)))


def without_a_lit_wall(c: Candidate, top: np.ndarray) -> np.ndarray:
    """A top face that does not fill its rectangle, less the wall it took in: a wall turned to a
    lamp is lit as brightly as the top (a tall brick seen steeply under a low lamp: top and wall
    one hexagon, its least rectangle turned 28 degrees from the brick's). The face split in two
    by colour (a lit wall's shade or tint still differs from the top's), the part farther from
    the camera's foot (a wall seen stands between its top and the foot) is the top where it fills
    its rectangle; else the face as it was."""
    if hull_fill(top) >= HULL_FILLED:
        return top
    smooth = cv2.GaussianBlur(c.fine, (0, 0), 1.0).astype(np.float32)
    ys, xs = np.nonzero(top)
    if len(xs) < 2 * SPLIT_PART_LEAST_PX:
        return top
    colours = smooth[ys, xs]
    # Two colours by k-means, started from the brighter and the darker half (the same split every
    # run: no random seeds).
    brightness = colours.sum(axis=1)
    start = (brightness > np.median(brightness)).astype(np.int32)[:, None]
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    _, labels, _ = cv2.kmeans(colours, 2, start, criteria, 1, cv2.KMEANS_USE_INITIAL_LABELS)
    labels = labels[:, 0]
    if min(np.count_nonzero(labels == 0), np.count_nonzero(labels == 1)) < SPLIT_PART_LEAST_PX:
        return top
    parts = [colours[labels == j] for j in (0, 1)]
    centres = [np.median(part, axis=0) for part in parts]
    spreads = [float(np.median(np.linalg.norm(part - centre, axis=1))) for part, centre in zip(parts, centres)]
    if float(np.linalg.norm(centres[0] - centres[1])) < FACES_APART * max(min(spreads), 1.0):
        return top  # one face's noise or texture, not two faces
    points = (np.stack([xs, ys], axis=1) + 0.5) * FINE_MM + np.asarray(c.origin)
    from_foot = np.linalg.norm(points - c.view.foot_mm, axis=1)
    far = int(np.argmax([from_foot[labels == j].mean() for j in (0, 1)]))
    part = np.zeros_like(top)
    part[ys[labels == far], xs[labels == far]] = 1
    part = largest_piece(part)
    if part is None:
        return top
    part = small_holes_filled(part, STUD_HOLE_MM2)
    if hull_fill(part) < HULL_FILLED or not brick_sized(rect_mm(part, c.origin)):
        return top
    return part


OWN_SHADOW_LEAST_MM2 = 20.0  # `without_its_shadow`: the least of a top's shade that is cut off it
OWN_SHADOW_ALIGNED = 0.7  # ... the cosine between its offset from the rest and a lamp's shadows' way


def without_its_shadow(c: Candidate, top: np.ndarray) -> np.ndarray:
    """A top face less the brick's own shadow it took in beyond an edge: where the table is as
    dark as a gray top (a gray brick on gray tiles, the shadow a lamp casts from it past its far
    end), the top standing out took in the shadow too, and the fit from it was a stud long. Cut
    off: the part of the top that may be the table in shade (`maybe_shade`, the table's own tint
    darker: a gray top's is not), where it lies off the rest the way a lamp found casts its
    shadows, and the rest is a brick's whole top (fills its rectangle). Else the face as it was."""
    if c.lamplight is None or not c.lamplight.lamps:
        return top
    # (opened: single pixels of a gray top pass for shade too)
    shade = largest_piece(cv2.morphologyEx(((top > 0) & (c.maybe_shade > 0)).astype(np.uint8), cv2.MORPH_OPEN,
                                            STUD_GAP_DISC))
    if shade is None or np.count_nonzero(shade) * FINE_MM ** 2 < OWN_SHADOW_LEAST_MM2:
        return top
    shade = shade > 0
    rest = largest_piece((top > 0) & ~shade)
    if rest is None:
        return top
    rest = small_holes_filled(rest, STUD_HOLE_MM2)
    if not fills_its_rectangle(rest) or not brick_sized(rect_mm(rest, c.origin)):
        return top
    shade_mm, rest_mm = (pixels_mm(*np.nonzero(mask)[::-1], c.origin).mean(axis=0) for mask in (shade, rest))
    offset = shade_mm - rest_mm
    for lamp in c.lamplight.lamps:
        way = rest_mm - np.asarray(lamp.position_mm[:2], float)  # shadows fall away from the lamp's foot
        cosine = float(offset @ way) / max(float(np.linalg.norm(offset) * np.linalg.norm(way)), 1e-9)
        if cosine >= OWN_SHADOW_ALIGNED:
            return rest
    return top


def fills_its_rectangle(mask: np.ndarray) -> bool:
    """Whether a mask fills the least rectangle about it to RECTANGLE_FILLED (a brick's whole top)."""
    ys, xs = np.nonzero(mask)
    (_, _), (w, h), _ = cv2.minAreaRect(np.stack([xs, ys], axis=1).astype(np.float32))
    return len(xs) >= RECTANGLE_FILLED * (w + 1) * (h + 1)


def _another_hue(smooth: np.ndarray, blob: np.ndarray, top: np.ndarray, table: np.ndarray) -> bool:
    """Whether an outline holds OTHER_HUE_MM2 or more of a chromaticity other than its top's (its
    walls are the top's colour in shade) and the table's under it (its shadow, however deep), away
    from the top's blurred edge: a touching brick or a tower's course. `table`: the table's colours
    under the cut-out, smoothed here as `smooth` was."""
    hue, tolerance = chromaticity(smooth), chroma_tolerance(smooth)

    def apart(colour: np.ndarray) -> np.ndarray:
        return np.linalg.norm(hue - chromaticity(colour), axis=-1) > tolerance

    top_colour = np.median(smooth[top > 0], axis=0)
    away = (blob > 0) & (cv2.dilate(top, np.ones((5, 5), np.uint8)) == 0)
    other = away & apart(top_colour) & apart(cv2.GaussianBlur(table, (0, 0), 1.0).astype(np.float32))
    return np.count_nonzero(other) * FINE_MM ** 2 >= OTHER_HUE_MM2


def table_lit(c: Candidate, face: np.ndarray) -> bool:
    """Whether a lit face (mask) is the table's own colour, lighter than the table's estimate
    there: a patch of table between a mini's shadow and a grout line, where the shadow darkened
    the estimate (its light over the table's within TABLE_LIT_TINT of one tint)."""
    ratio = light_over_table(np.median(c.fine[face > 0], axis=0).astype(np.float64),
                         table_light_rgb(np.median(c.table_fine[face > 0], axis=0).astype(np.float64)))
    return float(ratio.mean()) > 1.0 and float(np.linalg.norm(tint_of(ratio))) < TABLE_LIT_TINT


def lit_part(face: np.ndarray, value: np.ndarray, high: float, low: float) -> np.ndarray | None:
    """A face (bool mask) cut halfway between its lit level `high` and its walls' `low` (brightest
    channel), unless no wall stands out (under the lens, or a plate), opened against blurred edge
    pixels: its largest piece (uint8 mask); None if nothing is left."""
    if high >= 1.15 * low + 4:
        face = face & (value >= (high + low) / 2)
    return largest_piece(face)


def near_colour(smooth: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Pixels of a face's colour (BGR): within a quarter of its brightest channel (14 levels at least)."""
    off = cv2.subtract(smooth, np.full_like(smooth, colour))
    return channel_sum_sqrt(cv2.multiply(off, off)) <= max(14.0, 0.25 * float(colour.max()))
