"""The table in shade: a lamp's shadow told from dark plastic, in linear light.

A shadow takes light from every channel alike (its tint stays the table's, log light), a black
brick takes it to its own floor; a frame's lamps, found from the minis' shadows, say where shadows
fall and how deep they are (`Lamplight`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from companion.vision.colours import albedo_of_light, srgb_to_linear
from companion.vision.cutout import COARSE_MM, FINE_MM, MIN_AREA_MM2, PART_DISC
from companion.vision.lamps import FoundLamp

SHADE_DARKEST = 0.85  # `table_in_shade`: a shadow leaves no channel more of the table's light
SHADE_MARGIN = 0.15  # ... and is nearer the table's tint than a black brick's by this (log light)
SHADE_TINT = 0.3  # ... and, pixel by pixel, within this of the table's tint (log light): no coloured wall
SHADOW_OVER_BLACK = 2.0  # `black_bricks_shadow`: a shadow beside black plastic has this many times its light
BLACK_BESIDE_LEAST = 0.3  # ... over this share of the least brick's top
PENUMBRA_DARKEST = 0.95  # `with_penumbra`: the soft edge of a shade, joined to it, up to this share of the light
PENUMBRA_LEAVES = 0.75  # ... and it leaves this share of what the shade alone leaves of a candidate
SHADE_FLOOR_SHARE = 0.5  # `top_may_be_shade`: a top below this share of the deepest shade's light is no shade


@dataclass(frozen=True, eq=False)
class Lamplight:
    """A frame's lamps (found from the minis' shadows) and what tells their shadows: the coarse
    view's darkness against the table (`lamps.darkness`) and where nothing known stands."""

    lamps: tuple[FoundLamp, ...]
    dark: np.ndarray  # at COARSE_MM
    clear: np.ndarray  # uint8 at COARSE_MM, 0 where minis, cards, anchors (and their shadows) are
    shade_tint: np.ndarray | None = None  # the minis' deep shadows' tint against the table (`frames_shade_tint`)

    @cached_property
    def deep(self) -> tuple[FoundLamp, ...]:
        """The lamps whose shadows are dark enough to tell a height or a shadow by."""
        return tuple(lamp for lamp in self.lamps if lamp.depth >= SHADOW_DEPTH_LEAST)


_LINEAR_OF_BYTE = srgb_to_linear(np.arange(256) / 255.0).astype(np.float32)


def linear_light(bgr: np.ndarray) -> np.ndarray:
    """8-bit display values (any dtype) to linear light: a table lookup for whole bytes (a
    candidate's every pixel), the sRGB curve otherwise (medians)."""
    values = np.asarray(bgr)
    if values.dtype == np.uint8:
        return _LINEAR_OF_BYTE[values]
    return srgb_to_linear(values.astype(np.float32) / 255.0)


def table_in_shade(pixels_bgr: np.ndarray, table_bgr: np.ndarray, paper_rgb: np.ndarray) -> bool:
    """Whether a candidate's pixels are rather the table under them in shade than a black brick
    on it (`shaded`, on their medians)."""
    return bool(shaded(np.median(pixels_bgr.reshape(-1, 3), axis=0), np.median(table_bgr.reshape(-1, 3), axis=0),
                       paper_rgb))


def only_shade(coarse: np.ndarray, table: np.ndarray, region: np.ndarray, paper_rgb: np.ndarray) -> bool:
    """Whether a coarse candidate is the table in shade (`table_in_shade`) with nothing lit in it
    as broad as a brick (a brick whose shadow joins a mini's is fitted)."""
    if not table_in_shade(coarse[region], table[region], paper_rgb):
        return False
    lit = (region & ~shaded(coarse, table, paper_rgb)).astype(np.uint8)
    lit = cv2.morphologyEx(lit, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))  # 6 mm: no penumbra's ring
    return np.count_nonzero(lit) * COARSE_MM ** 2 < MIN_AREA_MM2


def shaded(seen_bgr: np.ndarray, table_bgr: np.ndarray, paper_rgb: np.ndarray, tint_max: float = math.inf) -> np.ndarray:
    """Per colour (..., 3) BGR seen over the table's (..., 3): whether it is the table in shade
    rather than a black brick. In light, a shadow is every channel of the table the same share
    darker (give or take a bluer sky lighting it than the lamp); black plastic is gray, so its
    share of each channel is the inverse of the table's albedo under the paper's white balance.
    On a table of no hue the two look alike, and it stays a brick. `tint_max`: how far from the
    table's own tint a shade may be at all (a pixel may be a coloured brick's wall too)."""
    under = table_light_rgb(table_bgr)
    ratio = light_over_table(seen_bgr, under)
    brick = 1.0 / np.maximum(albedo_of_light(under, paper_rgb), 1e-3)
    ratio_tint = tint_of(ratio)
    own = np.linalg.norm(ratio_tint, axis=-1)
    return ((ratio.max(axis=-1) <= SHADE_DARKEST) & (own <= tint_max)
            & (own + SHADE_MARGIN < np.linalg.norm(ratio_tint - tint_of(brick), axis=-1)))


def could_be_shade(seen_bgr: np.ndarray, table_bgr: np.ndarray, darkest: float = SHADE_DARKEST) -> np.ndarray:
    """Per colour (..., 3) BGR seen over the table's: whether it may be the table in shade (no
    channel more than `darkest` of the table's light, the table's tint to SHADE_TINT), whether
    or not a black brick would look the same (`shaded` tells the two apart where it can)."""
    return _shade_within(seen_bgr, table_bgr, (darkest,))[0]


def _shade_within(seen_bgr: np.ndarray, table_bgr: np.ndarray, darkest: tuple[float, ...]) -> list[np.ndarray]:
    """`could_be_shade` for each of several `darkest`, the light's ratio and tint taken once."""
    ratio = light_over_table(seen_bgr, table_light_rgb(table_bgr))
    brightest, tinted = ratio.max(axis=-1), np.linalg.norm(tint_of(ratio), axis=-1) <= SHADE_TINT
    return [(brightest <= d) & tinted for d in darkest]


def top_may_be_shade(lamplight: Lamplight | None, top_bgr: np.ndarray, table_bgr: np.ndarray) -> bool:
    """Whether a fitted top may be the table in shade (`could_be_shade`, or tinted as the minis'
    shadows are: `tinted_as_the_shade`), unless it is far darker than the deepest shade the lamps
    found cast (all of them at once): a black brick's top keeps 1-3% of a light table's light, the
    table in a lamp's shadow keeps the room's other light."""
    if not could_be_shade(top_bgr, table_bgr) and not tinted_as_the_shade(lamplight, top_bgr, table_bgr):
        return False
    if lamplight is None or not lamplight.lamps:
        return True
    return bool(lit_as_shade(lamplight, top_bgr, table_bgr))


def lit_as_shade(lamplight: Lamplight, seen_bgr: np.ndarray, table_bgr: np.ndarray) -> np.ndarray:
    """Per colour (..., 3) BGR seen over the table's: whether it keeps at least SHADE_FLOOR_SHARE of
    the light the deepest shade the lamps found cast leaves (all of them at once), as shade does.
    Each lamp's shade keeps its share of what the others leave: the depths, measured at the minis'
    feet (darkened by their contact shade), may add up to one or more, and the room's light is
    still there."""
    deepest = math.prod(1.0 - lamp.depth for lamp in lamplight.lamps)
    return light_over_table(seen_bgr, table_light_rgb(table_bgr)).max(axis=-1) >= SHADE_FLOOR_SHARE * deepest


SHADE_TINT_LEAST_PX = 30  # coarse pixels of the minis' deep shadows that measure a frame's shade tint


def frames_shade_tint(coarse: np.ndarray, table: np.ndarray, shadows: np.ndarray, dark: np.ndarray,
                      lamps: list[FoundLamp]) -> np.ndarray | None:
    """The tint (`tint_of`) of the table in the minis' deep shadows (darker than half the lamps'
    depth) against the table lit: where the lamp is warm and the room's other light cooler (a
    window, a sky), a shadow is bluer than the table, and no `could_be_shade` (the table's own
    tint). None where too little of such shade shows."""
    deepest = max(lamp.depth for lamp in lamps)
    deep = (shadows > 0) & (dark >= 0.5 * deepest)
    if np.count_nonzero(deep) < SHADE_TINT_LEAST_PX:
        return None
    ratio = light_over_table(coarse[deep].astype(np.float64), table_light_rgb(table[deep].astype(np.float64)))
    return np.median(tint_of(ratio), axis=0)


def tinted_as_the_shade(lamplight: Lamplight | None, seen_bgr: np.ndarray, table_bgr: np.ndarray) -> np.ndarray:
    """Per colour (..., 3) BGR seen over the table's: whether it may be the table in the frame's
    shade: no channel over SHADE_DARKEST of the table's light, its tint within SHADE_TINT of the
    way from the table's (a penumbra) to the minis' deep shadows' (`frames_shade_tint`)."""
    seen = np.asarray(seen_bgr, np.float64)
    if lamplight is None or lamplight.shade_tint is None:
        return np.zeros(seen.shape[:-1], bool)
    ratio = light_over_table(seen, table_light_rgb(np.asarray(table_bgr, np.float64)))
    t, end = tint_of(ratio), lamplight.shade_tint
    along = np.clip(t @ end / max(float(end @ end), 1e-9), 0.0, 1.0)
    return (ratio.max(axis=-1) <= SHADE_DARKEST) & (np.linalg.norm(t - along[..., None] * end, axis=-1) <= SHADE_TINT)


def with_penumbra(smooth: np.ndarray, table_fine: np.ndarray, blob: np.ndarray) -> np.ndarray:
    """`could_be_shade` per pixel, grown into the shade's soft edges (a little darker than the
    table, joined to what is clearly shade): a lamp's penumbra, left in a candidate's outline,
    widens it. Not where that takes in a broad part of what is left (a gray top a little darker
    than the table is no penumbra)."""
    strict, loose = (m.astype(np.uint8) for m in _shade_within(smooth, table_fine, (SHADE_DARKEST, PENUMBRA_DARKEST)))
    count, labels = cv2.connectedComponents(loose, connectivity=8)
    joined = np.zeros(count, bool)
    joined[np.unique(labels[strict > 0])] = True
    joined[0] = False
    grown = joined[labels].astype(np.uint8)
    left_strict = np.count_nonzero((blob > 0) & (strict == 0))
    if np.count_nonzero((blob > 0) & (grown == 0)) < PENUMBRA_LEAVES * left_strict:
        return strict
    return grown


def table_light_rgb(table_bgr: np.ndarray) -> np.ndarray:
    """The table's light, RGB (..., 3), the tone curve undone (kept off zero)."""
    return np.maximum(linear_light(table_bgr)[..., ::-1], 1e-3)


def light_over_table(seen_bgr: np.ndarray, under: np.ndarray) -> np.ndarray:
    """Each channel's light seen over the table's (`table_light_rgb`), RGB (..., 3)."""
    return np.maximum(linear_light(seen_bgr)[..., ::-1] / under, 1e-3)


def tint_of(ratio: np.ndarray) -> np.ndarray:
    """A ratio of lights without its brightness (log, mean removed)."""
    logs = np.log(ratio)
    return logs - logs.mean(axis=-1, keepdims=True)


def broad_shade(maybe: np.ndarray, fine: np.ndarray, table_fine: np.ndarray, blob: np.ndarray,
                 most: float, lamplight: "Lamplight | None" = None) -> np.ndarray:
    """Of a candidate's pixels that may be the table in shade (`maybe`), those to leave out of it
    (uint8): only broad shade (a wall's blurred foot mixes its colour with the table's), none when
    over `most` of the candidate or when what stands beside it is dark too (a black brick that
    the test takes for shade all over is kept whole; but see `black_bricks_shadow`)."""
    shade = shade_part(maybe, blob)
    if np.count_nonzero(shade) > most * np.count_nonzero(blob) or dark_beside(fine, table_fine, blob, shade, lamplight):
        shade[:] = 0
    return shade


def shade_part(maybe: np.ndarray, blob: np.ndarray) -> np.ndarray:
    """What may be shade of a candidate, in parts a wall's blurred foot is narrower than (uint8)."""
    return cv2.morphologyEx((maybe & (blob > 0)).astype(np.uint8), cv2.MORPH_OPEN, PART_DISC)


def dark_beside(fine: np.ndarray, table_fine: np.ndarray, blob: np.ndarray, shade: np.ndarray,
                lamplight: "Lamplight | None" = None) -> bool:
    """Whether what stands beside a candidate's shade is darker than the table in every channel
    (a black brick, whose own dark pixels the shade test may take for shade): then nothing of it
    is taken for shade. Where the lamps were found, only what is darker than their deepest shade
    (`lit_as_shade`) is: a blue brick is darker than beige tiles in every channel too."""
    lit = (blob > 0) & (shade == 0)
    if not lit.any():
        return True
    beside, table = np.median(fine[lit], axis=0), np.median(table_fine[lit], axis=0)
    if lamplight is not None and lamplight.lamps:
        return not bool(lit_as_shade(lamplight, beside, table))
    return bool(np.all(linear_light(beside) <= SHADE_DARKEST * linear_light(table)))


def hue_of(table_bgr: np.ndarray, paper_rgb: np.ndarray) -> float:
    """How far a table's colour is from gray under the paper's white balance (its tint's length,
    log light; as `shaded` weighs it): green felt and wood 1.2-1.3, gray tiles 0.3."""
    return float(np.linalg.norm(tint_of(np.maximum(albedo_of_light(table_light_rgb(table_bgr), paper_rgb), 1e-3))))


def black_bricks_shadow(fine: np.ndarray, blob: np.ndarray, maybe: np.ndarray, lamplight: "Lamplight | None" = None,
                        table_fine: np.ndarray | None = None) -> np.ndarray | None:
    """Where a candidate may be black plastic beside its shadow, that shadow to leave out of it
    (uint8), less the brick's blurred edges in it (darker than the shadow); None where it is not.
    Black beside its shadow: beside what may be shade, a part a brick's top could fill with under
    half the shade's light (black has a tenth of a mat's light, a lamp's shadow keeps the room's;
    a black brick taken for shade all over leaves only its lighter edges, a white brick its lit
    top; a dark green brick's walls pass too). With `lamplight` (and the table under it), what keeps
    the light the lamps' deepest shade leaves (`lit_as_shade`) is shade however dark."""
    shade = shade_part(maybe, blob)
    if not shade.any():
        return None
    light = linear_light(fine).sum(axis=-1)
    shadow_light = np.median(light[shade > 0])
    dark = light * SHADOW_OVER_BLACK <= shadow_light
    black = (blob > 0) & (shade == 0) & dark
    if np.count_nonzero(black) * FINE_MM ** 2 < BLACK_BESIDE_LEAST * MIN_AREA_MM2:
        return None
    if lamplight is not None and lamplight.lamps and table_fine is not None:
        # Where the lamps were found, shade keeps the light their deepest shade leaves
        # (`lit_as_shade`): a tall brick's short dark shadow beside its long faint one is shade.
        dark &= ~lit_as_shade(lamplight, fine, table_fine)
    return shade & ~dark


SHADOW_DEPTH_LEAST = 0.15  # a lamp whose shadows are fainter tells no height
