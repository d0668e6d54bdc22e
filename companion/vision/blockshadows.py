"""A box's shadows under the frame's lamps: a second measure of its height, and what is no block.

Where lamps were found (`lamps`, `shade.Lamplight`), a box's shadows are predicted from its
footprint and height and scored against the darkness seen (`shadow_height_cost`): their length
tells its height, a block as tall as a tower must cast one, and what lies in the shadows of the
blocks found and looks like shade is those shadows, not a block.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import cv2
import numpy as np

from companion.vision.brickfit import HEIGHTS_MM, PLATE_MM, BoxFit, TableRect, top_face
from companion.vision.cutout import COARSE_MM, FINE_MM, fill_coarse, fill_fine, top_colour_seen
from companion.vision.foundblock import ALL_HEIGHTS_MM, TALL_FROM_MM, FoundBlock, snapped
from companion.vision.lamps import FoundLamp
from companion.vision.shade import Lamplight, light_over_table, table_light_rgb, tint_of, top_may_be_shade
from companion.vision.tableview import TableView
from companion.vision.touching import Placed

if TYPE_CHECKING:  # the finder's candidate: blocks imports this module
    from companion.vision.blocks import Candidate

SHADOW_SIGMA = 0.2  # how well a shadow's darkness is predicted (the table's texture, the lamp's share)
SAMPLES_PER_CAMERA_PIXEL = 3.0  # cut-out pixels (FINE_MM) that share one camera pixel's noise
SHADOW_BLUR_MM = 1.0  # a shadow's edge: the camera's blur (the lamp's size adds `FoundLamp.softness`)
SHADOW_CLEAR_MM = 1.5  # a box's place is known to about this


def with_its_shadows(c: Candidate, fit: BoxFit, top_pinned: bool = False) -> BoxFit:
    """A box fit whose height also answers to the shadows it casts under the lamps found (each
    lamp's shadow h mm long per mm of slope: a brick's shadow beyond its walls tells its height
    where its walls, as dark as the shade beside them, do not). Unchanged without lamps. Its top
    is taken again from its silhouette at that height, or kept where it is (`top_pinned`: a
    tower placed on its outline, whose silhouette is its top)."""
    cost = shadow_height_cost(c, [fit.top], list(fit.height_cost))
    if cost is None:
        return fit
    heights = np.array(list(fit.height_cost))
    total = np.array(list(fit.height_cost.values())) + cost
    best = int(np.argmin(total))
    return box_at(c.view, fit, float(heights[best]),
                   {float(hh): float(v - total[best]) for hh, v in zip(heights, total)}, top_pinned)


def heights_by_their_shadows(c: Candidate, parts: dict[int, tuple[Placed, BoxFit]]
                              ) -> dict[int, tuple[Placed, BoxFit]]:
    """Touching bricks moved to the height the shadows they cast together under the lamps found
    say: each lit part in turn, its top where it was placed and the other lit parts held at their
    heights, where its shadows rule its height out (SHADOW_RULES_OUT), is set to the likeliest
    height its walls (or the colour map) allow among those the shadows do not rule out: any taller
    one, and a lower one only where the shadows show one of some length (they rule out the lowest
    height too) and its own fit rules out neither it nor any height between by as much. Near the
    camera's foot their walls do not show, and the map tells a height only by what each hides of
    the others: a 28.8 mm brick beside a 9.6 mm one read 6.4 mm and its long shadow a gray plate;
    two 28.8 mm bricks side by side read 35.2 mm, the map near indifferent between them (4 points)
    and their shadows sure. Not lowered where no shadow shows: a shadow missing where the lamps
    found would cast one may be a lamp misplaced, or parts that are no bricks (on a path-traced
    table two 9.6 mm bricks "cast none" and were lowered to 3.2 and 6.4 mm; on a ray-cast one a
    green wall's outline split by colour, its parts lowered, passed for a 10 x 8 brick). A part
    whose top may be the table in shade (`top_may_be_shade`) may be one of their shadows: it is
    table here, and left out after if their shadows cover it (`without_their_shadows`). One its
    shadows set at the low heights' end is taken on among a tower's (`taller_by_its_shadows`)."""
    if not c.deep_lamps:
        return parts
    lit = [i for i, (_, fit) in parts.items()
           if not top_may_be_shade(c.lamplight, top_colour_seen(c.image, c.view, fit.top), c.table_colour)]
    out = dict(parts)
    for i in lit:
        p, fit = out[i]
        held = tuple((out[j][1].top, out[j][0].height_mm) for j in lit if j != i)
        shadows = shadow_height_cost(c, [fit.top], list(fit.height_cost), held)
        if shadows is None:  # nothing of the cut-out beside them is table or shade
            continue
        heights = np.array(list(fit.height_cost))
        own = np.array(list(fit.height_cost.values()))
        allowed = heights_their_shadows_allow(heights, own, shadows, fit.height_mm)
        if not allowed.any() or allowed[heights == fit.height_mm].all():
            continue
        best = int(np.argmin(np.where(allowed, own, np.inf)))
        # (the heights its shadows rule out are no alternatives to it: their likelihood is 0)
        total = np.where(shadows <= SHADOW_RULES_OUT, own + shadows, np.inf)
        height, cost = float(heights[best]), {float(h): float(v - total[best]) for h, v in zip(heights, total)}
        if best == len(heights) - 1 and height == max(HEIGHTS_MM):
            height, cost = taller_by_its_shadows(c, fit.top, cost, held)
        moved = box_at(c.view, fit, height, cost, top_pinned=True)
        out[i] = (replace(p, footprint=moved.footprint, height_mm=moved.height_mm), moved)
    return out


def taller_by_its_shadows(c: Candidate, top: TableRect, cost: dict[float, float],
                           held: tuple[tuple[TableRect, float], ...]) -> tuple[float, dict[float, float]]:
    """A touching part set at the tallest of the low heights (`cost` per height, 0 there) taken
    on among a tower's heights by its shadows alone: (its height, the costs of every height). It
    is then a tower's top over lower courses of other colours, whose fit tells little of how tall
    it is near the camera's foot (a red top over green courses, 76.8 mm high, 140 mm from the
    foot: read 48 mm; its shadow, four times its top's length, says 76.8 sharply)."""
    at = max(cost)
    taller = [h for h in ALL_HEIGHTS_MM if h >= at]
    shadows = shadow_height_cost(c, [top], taller, held)
    if shadows is None:
        return at, cost
    # the two runs of costs meet at the low range's end
    beyond = {float(h): float(v - shadows[0]) for h, v in zip(taller, shadows)}
    height = min(beyond, key=beyond.__getitem__)
    merged = {**cost, **beyond}
    return height, {h: v - merged[height] for h, v in merged.items()}


def heights_their_shadows_allow(heights_mm: np.ndarray, own: np.ndarray, shadows: np.ndarray,
                                 placed_mm: float) -> np.ndarray:
    """Which heights (ascending) a touching brick placed at `placed_mm` may be moved to by its
    shadows (`heights_by_their_shadows`), its own fit's costs and its shadows' given per height:
    those the shadows do not rule out (SHADOW_RULES_OUT), taller than it was placed, or lower where
    a shadow shows (the shadows rule out the lowest height too: path traced, two 9.6 mm bricks
    whose shadows the lamp found would have cast "cast none", 3.2 mm costing 0 and 9.6 mm 298) and
    its own fit rules out neither that height nor any between (it may be unsure of its height over
    a run of them, not between two far apart: a green wall's piece at 38.4 mm or 6.4, lowered, beat
    the wall's own fit)."""
    at = int(np.argmin(np.abs(heights_mm - placed_mm)))
    lower = np.zeros(len(heights_mm), bool)
    if shadows[0] > SHADOW_RULES_OUT:
        lower[:at] = np.maximum.accumulate(own[:at][::-1] > SHADOW_RULES_OUT)[::-1] == 0
    return (shadows <= SHADOW_RULES_OUT) & ((heights_mm >= placed_mm) | lower)


def box_at(view: TableView, fit: BoxFit, height_mm: float, height_cost: dict[float, float],
            top_pinned: bool = False) -> BoxFit:
    """A box fit taken at another height: its top from its silhouette at that height, or kept
    where it was seen (`top_pinned`), its footprint under that top."""
    top = fit.top if top_pinned else top_face(fit.silhouette, view.foot_mm, height_mm, view.camera_height_mm)
    return BoxFit(top=top, silhouette=fit.silhouette, height_mm=height_mm,
                  footprint=top.scaled_about(view.foot_mm, 1 / float(view.k(height_mm))), height_cost=height_cost)


def shadow_height_cost(c: Candidate, tops: list[TableRect], heights: list[float],
                        held: tuple[tuple[TableRect, float], ...] = ()) -> np.ndarray | None:
    """Per height: how badly the shadows that boxes of that height under the fitted tops (one
    box, or a wall's arms) cast under the lamps found predict the cut-out's darkness, in nats, 0
    at the best; read only where no height's box stands and the cut-out is table or shade (not
    another block). `held`: other boxes (top, height) standing beside them (touching bricks),
    whose shadows fall there too. None without lamps whose shadows are dark enough to tell."""
    lamps = c.deep_lamps
    if not lamps:
        return None
    view = c.view

    def filled(points_mm: np.ndarray, into: np.ndarray | None = None) -> np.ndarray:
        return fill_fine(np.zeros(c.blob.shape, np.uint8) if into is None else into, points_mm, c.origin, hull=True)

    boxes = []
    standing = np.zeros(c.blob.shape, np.uint8)
    others = [(top.scaled_about(view.foot_mm, 1 / float(view.k(h))), top, h) for top, h in held]
    for footprint, top, _ in others:
        standing |= filled(np.concatenate([footprint.corners(), top.corners()]))
    for h in heights:
        # Under the fit's top, which its bright face pins (the silhouette's near edge is what a
        # shadow along a near wall moves).
        footprints = [top.scaled_about(view.foot_mm, 1 / float(view.k(h))) for top in tops]
        boxes.append((footprints, h))
        for footprint, top in zip(footprints, tops):
            standing |= filled(np.concatenate([footprint.corners(), top.corners()]))
    # Not within SHADOW_CLEAR_MM of any height's box either: there a box a hair off its place
    # casts slivers of shadow that would outweigh the shadows' lengths.
    grow = int(round(SHADOW_CLEAR_MM / FINE_MM))
    standing = cv2.dilate(standing, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1,) * 2))
    scored = ((standing == 0) & ((c.maybe_shade > 0) | (c.diff <= c.level))).astype(bool)
    if not scored.any():
        return None
    observed = c.darkness[scored]
    # One lamp's shadows of several boxes are one shadow where they overlap: drawn together (and
    # blurred with the penumbra of the height tried).
    theirs = [np.zeros(c.blob.shape, np.uint8) for _ in lamps]
    for lamp, cast in zip(lamps, theirs):
        for footprint, _, h in others:
            filled(lamp.box_shadow(footprint.corners(), h), cast)
    cost = []
    for footprints, h in boxes:
        predicted = np.zeros(c.blob.shape, np.float32)
        for lamp, held_cast in zip(lamps, theirs):
            blur = math.hypot(SHADOW_BLUR_MM, lamp.softness * h) / FINE_MM
            cast = held_cast.copy()
            for footprint in footprints:
                filled(lamp.box_shadow(footprint.corners(), h), cast)
            predicted += lamp.depth * cv2.GaussianBlur(cast.astype(np.float32), (0, 0), blur)
        predicted = np.minimum(predicted, 0.95)
        cost.append(float(np.sum((observed - predicted[scored]) ** 2)))
    nats = np.array(cost) / (2 * SHADOW_SIGMA ** 2 * SAMPLES_PER_CAMERA_PIXEL)
    return nats - nats.min()


# Shadows this many nats worse than at the likeliest height rule a touching brick's height out
# (`heights_by_their_shadows`): a 28.8 mm brick's at 6.4 mm cost 1394 (ray-cast walls/towers/
# touching table 10), a 1x2 brick's own shadow, within its taller neighbour's, 31 at its height.
SHADOW_RULES_OUT = 100.0
SHADOW_PART_SHARE = 0.6  # a part this much inside the others' shadows, and shade-like, is one of them


def without_their_shadows(c: Candidate, parts: list[FoundBlock]) -> list[FoundBlock]:
    """Touching bricks split by colour, without the parts that are the others' shadows under the
    lamps found: a part whose top may be the table in shade and whose footprint lies in the
    shadows the lit parts cast (on a gray mat a brick's shadow is a gray or black "plate")."""
    if c.lamplight is None:
        return parts
    shade_like = [top_may_be_shade(c.lamplight, b.top_bgr, c.table_colour) for b in parts]
    lit = [(TableRect.from_quad(b.footprint_mm), b.height_mm) for b, dark in zip(parts, shade_like) if not dark]
    if not lit or all(not dark for dark in shade_like):
        return parts
    cast = shade_cast_by(c, lit)
    assert cast is not None
    # Where its top is seen, not its footprint: a shadow fitted as a tall box has its footprint
    # moved off the shade, onto the brick that casts it.
    return _outside_shadows(parts, shade_like, cast,
                            lambda b: fill_fine(np.zeros_like(c.blob), b.fit.top.corners(), c.origin))


def _outside_shadows(blocks: list[FoundBlock], shade_like: list[bool], cast: np.ndarray,
                     own: Callable[[FoundBlock], np.ndarray]) -> list[FoundBlock]:
    """`blocks` without the shade-like ones whose own place (drawn by `own` into a mask like
    `cast`'s) lies SHADOW_PART_SHARE inside `cast`, the others' shadows."""
    kept = []
    for b, dark in zip(blocks, shade_like):
        if dark:
            mask = own(b)
            if np.count_nonzero(mask & cast) >= SHADOW_PART_SHARE * max(np.count_nonzero(mask), 1):
                continue
        kept.append(b)
    return kept


def without_cast_shadows(lamplight: Lamplight | None, blocks: list[FoundBlock], table: np.ndarray) -> list[FoundBlock]:
    """The blocks found, without those that are another's shadow under the lamps found (as
    `without_their_shadows` within one candidate, across candidates: a brick's shadow apart from
    it, or cut from it, is a black or gray "plate" on a gray mat). `table`: at COARSE_MM."""
    if lamplight is None or len(blocks) < 2:
        return blocks
    shade_like = [top_may_be_shade(lamplight, b.top_bgr, table_under(b, table)) for b in blocks]
    if not any(shade_like) or all(shade_like):
        return blocks
    cast = np.zeros(table.shape[:2], np.uint8)
    for b in (b for b, dark in zip(blocks, shade_like) if not dark):
        for lamp in lamplight.deep:
            fill_coarse(cast, lamp.box_shadow(b.footprint_mm, b.height_mm))
    grow = int(math.ceil(CAST_SHADE_MARGIN_MM / COARSE_MM))
    cast = cv2.dilate(cast, np.ones((2 * grow + 1,) * 2, np.uint8))
    return _outside_shadows(blocks, shade_like, cast, lambda b: fill_coarse(np.zeros_like(cast), b.footprint_mm))


def table_under(block: FoundBlock, table: np.ndarray) -> np.ndarray:
    """The table's colour (a COARSE_MM map) under a block's footprint's middle."""
    rows, cols = table.shape[:2]
    col, row = (np.mean(block.footprint_mm, axis=0) / COARSE_MM).astype(int)
    return table[min(max(row, 0), rows - 1), min(max(col, 0), cols - 1)]


# A top that keeps the table's own tint this closely (log light, `tint_of`) and LIGHT_SHADE_LEAST or
# more of its light in every channel, but less than all of it, is the table in a light shadow: a
# weak lamp's (a sixth of the light) on green felt, the room's own on white tiles. (On the dev
# frames ten such tops were false blocks, tints 0.007-0.075; the true blocks darker than the
# table kept 0.118 or more.)
LIGHT_SHADE_TINT = 0.1
LIGHT_SHADE_LEAST = 0.5


def not_the_table_in_light_shade(blocks: list[FoundBlock], table: np.ndarray) -> list[FoundBlock]:
    """The blocks found, without those whose top is the table under them in a light shadow
    (LIGHT_SHADE_TINT, LIGHT_SHADE_LEAST). `table`: at COARSE_MM."""
    kept = []
    for b in blocks:
        ratio = light_over_table(np.asarray(b.top_bgr, np.float64), table_light_rgb(np.asarray(table_under(b, table), np.float64)))
        light_shade = (LIGHT_SHADE_LEAST <= float(ratio.min()) and float(ratio.max()) < 1.0
                       and float(np.linalg.norm(tint_of(ratio))) < LIGHT_SHADE_TINT)
        if not light_shade:
            kept.append(b)
    return kept


SHADOW_SEEN_LEAST_MM2 = 100.0  # a tall block's shadow beyond itself, in view, that can tell it is not there
SHADOW_DARK_SHARE = 0.5  # ... dark at least this share of the lamp's shadows' darkness (its median) ...
SHADOW_PALE_SHARE = 0.25  # ... or this share, where another lamp's shadow of it is dark


def no_shadow_of_its_own(lamplight: Lamplight | None, block: FoundBlock, pale_counts: bool = True) -> bool:
    """Whether a block as tall as a tower, under the lamps found, would cast a shadow beyond
    itself where the table is lit: a lit brick with its own shadow reaching towards the camera's
    foot, or a shadow with a lit table beyond, is a tower's outline too (its walls in shade look
    like a gray mat in shade), but a tower casts a shadow as long as it is tall (its far half dark
    too: `darkness_share`). Under one lamp a tall tower's shadow may be pale (a broad lamp's
    penumbra grows with the height: a yellow tower 102.4 mm high cast a third of the darkness its
    lamp's short shadows have): pale counts where another lamp's shadow of it is dark, unless not
    `pale_counts`."""
    if lamplight is None or block.height_mm < TALL_FROM_MM:
        return False
    dark, clear = lamplight.dark, lamplight.clear
    standing = fill_coarse(np.zeros(dark.shape, np.uint8), np.concatenate([block.footprint_mm, block.fit.top.corners()]),
                            hull=True)
    grow = int(math.ceil(CAST_SHADE_MARGIN_MM / COARSE_MM))
    standing = cv2.dilate(standing, np.ones((2 * grow + 1,) * 2, np.uint8))
    # A lamp found from the minis' short shadows is sure of its slope where they stand (the table's
    # middle, by and large), less of how far it is, which sets the slope at a far corner (a point
    # 1100 mm up found for a far lamp threw a corner's tower shadow twice the truth's): a shadow
    # seen where that lamp or the far one of the same slope at the middle casts it is its own.
    middle = np.array(dark.shape[1::-1], float) * COARSE_MM / 2

    corners = np.asarray(block.footprint_mm, float)
    centre = corners.mean(axis=0)

    def darkness_share(lamp: FoundLamp) -> float:
        """The shadow's darkness where this lamp casts it, as a share of the lamp's shadows' (inf
        where too little of it is in view to tell): all of it, and its far half, the lesser (a
        shadow as long as the box is tall reaches its tip; a box read too tall casts a shadow
        that ends halfway: a brick 28.8 mm high fitted 41.6 mm, its shadow 0.36 as dark as the
        lamp's, its far half 0.13)."""
        cast = fill_coarse(np.zeros(dark.shape, np.uint8), lamp.box_shadow(block.footprint_mm, block.height_mm))
        seen = (cast > 0) & (standing == 0) & (clear > 0)
        if np.count_nonzero(seen) * COARSE_MM ** 2 < SHADOW_SEEN_LEAST_MM2:
            return math.inf
        rows, cols = np.nonzero(seen)
        # how far past the box's own edge each point lies, along the shadow (its length: `reach`)
        reach = lamp.shadow_of(centre[None], np.array([block.height_mm]))[0] - centre
        length = float(np.hypot(*reach))
        along = reach / max(length, 1e-9)
        edge = float(np.max((corners - centre) @ along))
        past = ((np.stack([cols, rows], axis=1) + 0.5) * COARSE_MM - centre) @ along - edge
        # short of its penumbra at the tip (a short shadow's far half is all penumbra)
        penumbra = 2 * math.hypot(SHADOW_BLUR_MM, lamp.softness * block.height_mm)
        far = (past > length / 2) & (past < length - penumbra)
        share = float(np.median(dark[rows, cols])) / lamp.depth
        if np.count_nonzero(far) * COARSE_MM ** 2 < SHADOW_SEEN_LEAST_MM2:
            return share
        return min(share, float(np.median(dark[rows[far], cols[far]])) / lamp.depth)

    shares = [max(darkness_share(lamp), darkness_share(lamp.as_far(middle))) for lamp in lamplight.deep]
    least = SHADOW_PALE_SHARE if pale_counts else SHADOW_DARK_SHARE
    return bool(shares) and (min(shares) < least or max(shares) < SHADOW_DARK_SHARE)


def low_instead(view: TableView, block: FoundBlock) -> FoundBlock | None:
    """A tall box that casts no shadow of its own, taken at the low height its fit answers too:
    a least cost among the low heights well inside their range (two plates below its end; a
    tower's cost falls all the way to it). None for a wall's outline, or without such a height.
    (A path-traced green 9.6 mm brick beside the lens, its top sheened, fitted 41.6 mm tall, its
    costs' low minimum at 9.6: every tall box dropped on the benches' frames had its low
    minimum at 32-35.2 mm.)"""
    low = {h: cost for h, cost in block.fit.height_cost.items() if h < TALL_FROM_MM}
    if len(block.footprint_mm) != 4 or not low:
        return None
    height = min(low, key=low.get)
    if height > max(low) - 2 * PLATE_MM + 1e-6:
        return None
    # Under the top it was seen by (its silhouette is a tall box's: at the low height it would be
    # a footprint too wide).
    again = box_at(view, block.fit, height, {h: cost - low[height] for h, cost in low.items()}, top_pinned=True)
    footprint, studs = snapped(again.footprint)
    return replace(block, footprint_mm=footprint.corners(), height_mm=height, studs=studs, fit=again,
                   height_confidence=again.height_confidence)


CAST_SHADE_MARGIN_MM = 3.0  # a box's shadow's penumbra, and its lamp found to a step


def shade_cast_by(c: Candidate, boxes: list[tuple[TableRect, float]]) -> np.ndarray | None:
    """Where boxes (footprint, height) cast their shadows under the lamps found, in the
    candidate's cut-out, and it may be the table in shade there (uint8); None with no lamps."""
    if c.lamplight is None:
        return None
    cast = np.zeros_like(c.blob)
    for footprint, height in boxes:
        for lamp in c.lamplight.lamps:
            fill_fine(cast, lamp.box_shadow(footprint.corners(), height), c.origin)
    grow = int(round(CAST_SHADE_MARGIN_MM / FINE_MM))
    return cv2.dilate(cast, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1,) * 2)) & c.maybe_shade_closed
