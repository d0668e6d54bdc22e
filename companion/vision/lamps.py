"""The lamps over the table, found from the minis' shadows, and the shadows they cast.

Every mini is an object of known place and height (its marker), so where a lamp is, each mini's
tile casts a shadow at a place that follows: a lamp at P throws the shadow of a point at height z
over table point x to x + (x - P_xy) z / (P_z - z). On a table of no hue a shadow and a gray or
black brick look alike pixel by pixel; the minis together tell where the shadows fall, so the
block search can leave the minis' shadows out as it leaves out the minis themselves.

A lamp is searched as the slope its shadows have at the table's centre (mm of shadow a mm of
height, up to that of a lamp 38 degrees above the table; where none is found, down to 18
degrees) and its height (a lamp 0.8 m up to one
as far as the sun), and kept when the minis' shadows it predicts are darker than the table just
past them, most of them clearly. A lamp kept is then placed on its shadows' edges (each tile's
square dark inside, the table lit just past it), and its shadows' darkness and softness are
measured there: the blocks' own shadows are predicted with them (`blocks`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache

import cv2
import numpy as np

from companion.state import MiniState
from companion.vision.brickfit import normal_cdf
from companion.vision.colours import srgb_to_linear
from companion.vision.registration import square_corners_mm

SLOPE_MAX = 1.25  # a lamp 38.7 degrees above the table ...
SLOPE_STEP = 0.1
# ... and where none is found there, a lower one (a desk lamp beside the table, down to 18.4
# degrees up) on a coarser grid: its shadows are long, and wide at the tip. (Only then: the
# search costs 14 ms more on a frame without lamps, and would cost 40 on every lamp-lit one.)
LOW_SLOPE_MAX = 3.0
LOW_SLOPE_STEP = 0.25
FAR_LAMP_MM = 1e5  # a lamp this high is as far as the sun for a table's shadows (a far window)
LAMP_HEIGHTS_MM = (800.0, 1100.0, 1500.0, 2200.0, 3500.0, FAR_LAMP_MM)
MIN_SHADOW_MM = 3.0  # a mini's shadow must fall this far past its own tile to tell anything
EDGE_INSET_MM = 3.0  # a short shadow is read this far inside its far edge (`find_lamps`)
DARK_SHADOW = 0.12  # a shadow sample darker than the table by this share of its light
DARK_SHARE = 0.6  # share of the minis whose predicted shadows must be dark
DARK_MEAN = 0.15  # ... and on average over them
LEAST_MINIS = 2  # minis whose shadows show a lamp (a lamp above the camera hides most behind their minis)
LAMPS_MAX = 3
SOFTNESS = (0.0, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3)  # tried for a lamp's shadows' blur (`FoundLamp.softness`)
LAMPS_APART = 0.25  # slopes at the centre closer than this are one lamp
SHADOW_MARGIN_MM = 4.0  # a masked shadow's margin (penumbra, the lamp's place found to a step)
REFINE_REACH = 0.3  # the slope refined this far about the search's answer ...
REFINE_STEP = 0.02  # ... at these steps
# A tile's shadow, read on a grid of points inside its square (fractions of its side from the
# centre, along its own sides) against points just outside its edges, those ahead of it and aside
# (behind it lies the body's shadow): each edge pins the shadow between points 0.1 side apart.
_INSIDE = np.array([(a, b) for a in np.linspace(-0.4, 0.4, 5) for b in np.linspace(-0.4, 0.4, 5)])
_OUTSIDE = np.array([p for t in (-0.3, 0.0, 0.3) for p in ((0.6, t), (-0.6, t), (t, 0.6), (t, -0.6))])


@dataclass(frozen=True)
class FoundLamp:
    position_mm: tuple[float, float, float]  # in the table frame (far: a direction)
    minis: int  # minis whose predicted shadows were looked at
    dark_share: float  # of them, the share darker than the table by DARK_SHADOW
    depth: float = 0.0  # the shadows' darkness (`darkness`) where they are dark: a shadow's is about this
    softness: float = 0.0  # a shadow's edge's blur (sigma, mm) per mm of height of what casts it: the lamp's size

    def shadow_of(self, xy_mm: np.ndarray, z_mm: np.ndarray) -> np.ndarray:
        """Where points at heights `z_mm` over table points `xy_mm` (..., 2) cast their shadows."""
        p = np.asarray(self.position_mm, float)
        z = np.asarray(z_mm, float)[..., None]
        return xy_mm + (xy_mm - p[:2]) * z / np.maximum(p[2] - z, 1.0)

    def as_far(self, at_mm: np.ndarray) -> "FoundLamp":
        """The far lamp (its shadows' slope the same all over the table) with this one's slope at
        `at_mm`."""
        p, at = np.asarray(self.position_mm, float), np.asarray(at_mm, float)
        far = at - (at - p[:2]) / max(p[2], 1.0) * FAR_LAMP_MM
        return replace(self, position_mm=(float(far[0]), float(far[1]), FAR_LAMP_MM))

    def box_shadow(self, corners_mm: np.ndarray, height_mm: float) -> np.ndarray:
        """The outline (M, 2) of the shadow a box on a footprint (4, 2) casts on the table, the
        footprint included: the hull of its corners and its top corners' shadows."""
        ends = self.shadow_of(np.asarray(corners_mm, float), np.full(len(corners_mm), height_mm))
        points = np.concatenate([corners_mm, ends]).astype(np.float32)
        return cv2.convexHull(points).reshape(-1, 2).astype(float)


_LINEAR_OF_BYTE = srgb_to_linear(np.arange(256, dtype=np.float32) / 255.0)


def _light(bgr: np.ndarray) -> np.ndarray:
    """Linear light summed over the channels (a lookup for whole bytes)."""
    if bgr.dtype == np.uint8:
        return _LINEAR_OF_BYTE[bgr[..., 0]] + _LINEAR_OF_BYTE[bgr[..., 1]] + _LINEAR_OF_BYTE[bgr[..., 2]]
    return srgb_to_linear(bgr.astype(np.float32) / 255.0).sum(axis=-1)


def darkness(coarse_bgr: np.ndarray, table_bgr: np.ndarray) -> np.ndarray:
    """How much darker each pixel is than the table under it, as a share of the table's light."""
    return np.clip(1.0 - _light(coarse_bgr) / np.maximum(_light(table_bgr), 1e-3), 0.0, 1.0)


def find_lamps(dark: np.ndarray, clear: np.ndarray, minis: list[tuple[MiniState, float]], centre_mm: np.ndarray,
               mm_per_px: float, bare_dark: Callable[[], np.ndarray] | None = None) -> list[FoundLamp]:
    """The lamps whose shadows of the minis' tiles (each a mini and its tile's side, mm) show in
    `dark` (`darkness`, a top-down view at `mm_per_px` from the table's corner), looked at only
    where `clear` (nothing known stands there). Searched on a grid of slopes SLOPE_STEP apart up
    to SLOPE_MAX, then a quarter of that around the best; where none is found, a low lamp's.
    `bare_dark`: the darkness against a truer table estimate, asked for once a lamp is found (it
    costs): a lamp is kept where its shadows are dark there too."""
    @cache
    def bare_smooth() -> np.ndarray | None:  # (made once, when first asked for)
        return None if bare_dark is None else _smoothed(bare_dark())
    return (_lamps_searched(dark, clear, minis, centre_mm, mm_per_px, SLOPE_MAX, SLOPE_STEP, bare_smooth)
            or _lamps_searched(dark, clear, minis, centre_mm, mm_per_px, LOW_SLOPE_MAX, LOW_SLOPE_STEP, bare_smooth))


def _smoothed(dark: np.ndarray) -> np.ndarray:
    """The darkness's median over 10 mm: a tile's shadow is read at single points of it (a printed
    line, a grain do not darken it)."""
    return cv2.medianBlur(np.round(dark * 255).astype(np.uint8), 5).astype(np.float32) / 255.0


def _lamps_searched(dark: np.ndarray, clear: np.ndarray, minis: list[tuple[MiniState, float]], centre_mm: np.ndarray,
                    mm_per_px: float, slope_max: float, step: float, bare_smooth: Callable[[], np.ndarray | None]
                    ) -> list[FoundLamp]:
    """`find_lamps` on a grid of slopes `step` apart up to `slope_max`."""
    minis = [(m, side) for m, side in minis if m.z_mm * slope_max > side * 0.71 + MIN_SHADOW_MM]
    if len(minis) < LEAST_MINIS:
        return []
    xy = np.array([[m.x_mm, m.y_mm] for m, _ in minis])
    z = np.array([m.z_mm for m, _ in minis])
    side = np.array([s for _, s in minis])
    heading = np.radians([m.heading_deg for m, _ in minis])
    tile_axes = np.stack([np.stack([np.cos(heading), np.sin(heading)], -1),
                          np.stack([np.sin(heading), -np.cos(heading)], -1)], axis=1)  # (N, 2 axes, 2)
    smooth = _smoothed(dark)
    found: list[FoundLamp] = []
    taken: list[tuple[np.ndarray, np.ndarray]] = []  # each found lamp: its slope at the centre, its shadows

    def scores(slopes: np.ndarray, step: float):
        """Each lamp (slope at the centre x LAMP_HEIGHTS_MM) with its score, its count of minis
        looked at and the share dark, and where it puts the shadows."""
        lamps = np.concatenate([np.concatenate([centre_mm[None] - slopes * h, np.full((len(slopes), 1), h)], axis=1)
                                for h in LAMP_HEIGHTS_MM])
        near_taken = np.zeros(len(slopes), bool)
        for slope, _ in taken:
            near_taken |= np.linalg.norm(slopes - slope, axis=1) < LAMPS_APART
        ok, mean, share, count, depth, centres = _evidence(smooth, clear, xy, z, side, lamps, mm_per_px, taken,
                                                           np.tile(near_taken, len(LAMP_HEIGHTS_MM)))
        # The middle of a plateau: a tile's shadow is wide, so neighbouring slopes see it too.
        n = int(round(math.sqrt(len(slopes))))
        grid = np.where(ok, mean * share, 0.0).reshape(len(LAMP_HEIGHTS_MM), n, n).astype(np.float32)
        reach = max(3, int(round(0.1 / step)) * 2 + 1)
        plateau = np.stack([cv2.blur(g, (reach, reach), borderType=cv2.BORDER_CONSTANT) for g in grid]).ravel()
        return np.where(ok, plateau, -1.0), lamps, count, share, depth, centres

    coarse = _slope_grid(slope_max, step)
    around = _slope_grid(2 * step, step / 4)
    for _ in range(LAMPS_MAX):
        score, lamps, *_ = scores(coarse, step)
        best = int(np.argmax(score))
        if score[best] < 0:
            break
        slope = _slope_at(lamps[best], centre_mm)
        score, lamps, count, share, depth, centres = scores(slope + around, step / 4)
        best = int(np.argmax(score))
        if score[best] < 0:
            break
        truer = bare_smooth()
        if truer is not None and not _evidence(truer, clear, xy, z, side, lamps[best:best + 1], mm_per_px, taken)[0][0]:
            break  # shade that a median among white things made (a castle's yard), not a lamp's shadows
        lamp = _refined(dark, clear, xy, z, side, tile_axes, lamps[best], centre_mm, mm_per_px)
        taken.append((_slope_at(lamps[best], centre_mm), centres[best]))
        if any(np.linalg.norm(_slope_at(lamp, centre_mm) - _slope_at(f.position_mm, centre_mm)) < LAMPS_APART
               for f in found):
            # Placed on its shadows' edges, it is a lamp found already (found again from another
            # start, moved onto the same shadows: its shadows would be counted twice).
            continue
        softness, soft_depth = _softness(dark, clear, xy, z, side, tile_axes, np.asarray(lamp), mm_per_px)
        found.append(FoundLamp(lamp, int(count[best]), float(share[best]),
                               float(depth[best]) if soft_depth is None else soft_depth, softness))
    return found


def _slope_at(position_mm: tuple[float, float, float] | np.ndarray, at_mm: np.ndarray) -> np.ndarray:
    """A lamp's shadows' slope at a table point (mm of shadow a mm of height, along x and y)."""
    p = np.asarray(position_mm, float)
    return (np.asarray(at_mm, float) - p[:2]) / p[2]


def _evidence(smooth: np.ndarray, clear: np.ndarray, xy: np.ndarray, z: np.ndarray, side: np.ndarray,
              lamps: np.ndarray, mm_per_px: float, taken: list[tuple[np.ndarray, np.ndarray]],
              excluded: np.ndarray | None = None):
    """What the minis' tile shadows say of lamps at `lamps` (L, 3) in the darkness `smooth`: per
    lamp whether they show it (enough of them dark, on average dark enough), their mean darkness
    past the table just beyond them, the share dark, the count looked at, their depth, and where
    it puts the shadows (L, N, 2). `taken`: lamps found already (slope, shadows), whose shadows
    are not read again; `excluded` (L,): lamps not to be looked at."""
    offset = (xy[None] - lamps[:, None, :2]) * (z[None, :, None] / np.maximum(lamps[:, None, 2:] - z[None, :, None], 1.0))
    centres = xy[None] + offset  # (H, N, 2)
    length = np.linalg.norm(offset, axis=-1)
    along = offset / np.maximum(length[..., None], 1e-6)
    across = np.stack([-along[..., 1], along[..., 0]], axis=-1)
    third = 0.25 * side[None, :, None]
    # The tile's shadow is dark at its middle and a quarter of a side from it, along the shadow
    # and across (a lamp a little off puts one of those in the light), and just past it the
    # table is lit again (a lamp whose shadows fall short, on the bodies' shadows, sees
    # shade there too).
    middle = [_cells(clear, q, mm_per_px) for q in (centres, centres + third * along, centres + third * across,
                                                    centres - third * across)]
    by_middle = (length > side[None] * 0.71 + MIN_SHADOW_MM) & middle[0][0]
    # A lamp high above casts a tile's shadow not much longer than the tile: its middle lies
    # under the mini. Its far part is read then, EDGE_INSET_MM inside its far edge (the tile's
    # square reaches half a side along any direction), where that is in view.
    edge = centres + along * (0.5 * side[None, :, None] - EDGE_INSET_MM)
    far = [_cells(clear, q, mm_per_px) for q in (edge, edge + third * across, edge - third * across)]
    by_edge = ~by_middle & (length > MIN_SHADOW_MM) & np.all([seen for seen, _ in far], axis=0)
    usable = by_middle | by_edge
    read = np.where(by_edge[..., None], edge, centres)
    for _, shadows in taken:  # another lamp shows shadows of its own, not one found's again
        usable &= _from_segment(read, xy, shadows) > side[None] * 0.8
    if excluded is not None:
        usable[excluded] = False
    inside = np.where(by_edge, np.min([_read(smooth, *q) for q in far], axis=0),
                      np.min([_read(smooth, *q) for q in middle], axis=0))
    beyond = centres + along * (side[None, :, None] * 0.71 + MIN_SHADOW_MM)
    sample = np.where(usable, inside - _look(smooth, clear, beyond, mm_per_px), 0.0)
    count = usable.sum(axis=1)
    dark_minis = ((sample >= DARK_SHADOW) & usable).sum(axis=1)
    share = dark_minis / np.maximum(count, 1)
    mean = sample.sum(axis=1) / np.maximum(count, 1)
    depth = np.where((sample >= DARK_SHADOW) & usable, inside, 0.0).sum(axis=1) / np.maximum(dark_minis, 1)
    ok = (dark_minis >= LEAST_MINIS) & (share >= DARK_SHARE) & (mean >= DARK_MEAN)
    return ok, mean, share, count, depth, centres


def _slope_grid(reach: float, step: float) -> np.ndarray:
    """Slopes (S, 2) on a square grid `step` apart, `reach` either way of zero."""
    axis = np.arange(-reach, reach + 1e-9, step)
    return np.stack([g.ravel() for g in np.meshgrid(axis, axis)], axis=1)


def _refined(dark: np.ndarray, clear: np.ndarray, xy: np.ndarray, z: np.ndarray, side: np.ndarray,
             tile_axes: np.ndarray, lamp: np.ndarray, centre_mm: np.ndarray, mm_per_px: float
             ) -> tuple[float, float, float]:
    """A lamp the search found, its slope and height refined so that the minis' tile shadows'
    squares sit on the dark: the search reads a few points of each and takes the middle of a
    plateau of answers, which a tile's shadow run on by its body's shadow lengthens (found 30%
    long). Slopes REFINE_REACH about the search's at every height, then REFINE_STEP about the
    best; the search's lamp when too few minis' shadows are in view."""
    slope0 = _slope_at(lamp, centre_mm)
    coarse = slope0 + _slope_grid(REFINE_REACH, 2.5 * REFINE_STEP)
    heights = np.repeat(LAMP_HEIGHTS_MM, len(coarse))
    places = np.concatenate([centre_mm[None] - coarse * h for h in LAMP_HEIGHTS_MM])
    score = _tile_shadows(dark, clear, xy, z, side, tile_axes, places, heights, mm_per_px)
    best = int(np.argmax(score))
    if not np.isfinite(score[best]):
        return float(lamp[0]), float(lamp[1]), float(lamp[2])
    height = float(heights[best])
    fine = (centre_mm - places[best]) / height + _slope_grid(3 * REFINE_STEP, REFINE_STEP)
    places = centre_mm[None] - fine * height
    score = _tile_shadows(dark, clear, xy, z, side, tile_axes, places, np.full(len(places), height), mm_per_px)
    best = int(np.argmax(score))
    return float(places[best, 0]), float(places[best, 1]), height


def _softness(dark: np.ndarray, clear: np.ndarray, xy: np.ndarray, z: np.ndarray, side: np.ndarray,
              tile_axes: np.ndarray, lamp: np.ndarray, mm_per_px: float) -> tuple[float, float | None]:
    """How soft a lamp's shadows are (`FoundLamp.softness`) and how dark at their middle: each
    mini's tile shadow predicted as its square blurred by the softness times the tile's height
    (a large lamp near the table blurs a tall thing's shadow more), its darkness fitted by least
    squares, the softness that fits the points read best. (0, None) when too few minis' shadows
    are in view."""
    cells_in, cells_out, seen_in, seen_out = _tile_points(clear, xy, z, side, tile_axes, lamp[None, :2],
                                                          lamp[None, 2], mm_per_px)
    usable = _in_view(seen_in, seen_out)[0]
    if usable.sum() < LEAST_MINIS:
        return 0.0, None
    observed = np.concatenate([_read(dark, *cells_in), _read(dark, *cells_out)], axis=2)[0][usable]
    weight = np.concatenate([seen_in, seen_out], axis=2)[0][usable]
    fractions = np.concatenate([_INSIDE, _OUTSIDE])  # (P, 2) along the tile's sides
    inset = (0.5 - np.abs(fractions))[None] * side[usable, None, None]  # (N, P, 2) mm inside each pair of edges
    best: tuple[float, float, float] | None = None
    for softness in SOFTNESS:
        # the coarse view's own blur (a pixel) under the lamp's
        sigma = np.hypot(softness * z[usable], 0.5 * mm_per_px)[:, None, None]
        cover = normal_cdf(inset / sigma).prod(axis=-1)  # (N, P)
        depth = float((weight * cover * observed).sum() / max(float((weight * cover * cover).sum()), 1e-9))
        misfit = float((weight * (observed - depth * cover) ** 2).sum())
        if best is None or misfit < best[0]:
            best = (misfit, softness, depth)
    assert best is not None
    return best[1], best[2]


def _tile_shadows(dark: np.ndarray, clear: np.ndarray, xy: np.ndarray, z: np.ndarray, side: np.ndarray,
                  tile_axes: np.ndarray, places: np.ndarray, heights: np.ndarray, mm_per_px: float) -> np.ndarray:
    """For lamps at `places` (S, 2) and `heights` (S,): how much darker the minis' tile shadows'
    squares are than just outside them, on average over the minis whose shadows are in view
    (-inf when under LEAST_MINIS are)."""
    cells_in, cells_out, seen_in, seen_out = _tile_points(clear, xy, z, side, tile_axes, places, heights, mm_per_px)
    usable = _in_view(seen_in, seen_out)
    inside = (_read(dark, *cells_in) * seen_in).sum(-1) / np.maximum(seen_in.sum(-1), 1)
    outside = (_read(dark, *cells_out) * seen_out).sum(-1) / np.maximum(seen_out.sum(-1), 1)
    count = usable.sum(axis=1)
    score = np.where(usable, inside - outside, 0.0).sum(axis=1) / np.maximum(count, 1)
    return np.where(count >= LEAST_MINIS, score, -np.inf)


def _tile_points(clear: np.ndarray, xy: np.ndarray, z: np.ndarray, side: np.ndarray, tile_axes: np.ndarray,
                 places: np.ndarray, heights: np.ndarray, mm_per_px: float
                 ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], np.ndarray, np.ndarray]:
    """Where lamps at `places` (S, 2) and `heights` (S,) put the points read of each mini's tile
    shadow (`_INSIDE`, `_OUTSIDE`: their cells, `_cells`, (S, N, P) each), and which of them are
    read (1 in view, 0 under something known or, outside, behind the square: the body's shadow
    lies there)."""
    offset = (xy[None] - places[:, None]) * (z[None, :, None] / np.maximum(heights[:, None, None] - z[None, :, None], 1.0))
    tips = xy[None] + offset  # (S, N, 2)
    along = offset / np.maximum(np.linalg.norm(offset, axis=-1, keepdims=True), 1e-6)

    def points(fractions: np.ndarray) -> np.ndarray:
        """Points at fractions of the tile's side along its own two sides from its shadow's centre."""
        return tips[:, :, None] + side[None, :, None, None] * (
            fractions[None, None, :, :1] * tile_axes[None, :, None, 0] + fractions[None, None, :, 1:] * tile_axes[None, :, None, 1])

    inside_pts, outside_pts = points(_INSIDE), points(_OUTSIDE)
    ahead = ((outside_pts - tips[:, :, None]) * along[:, :, None]).sum(-1) >= -0.05 * side[None, :, None]
    cells_in, cells_out = _cells(clear, inside_pts, mm_per_px), _cells(clear, outside_pts, mm_per_px)
    return cells_in, cells_out, _read(None, *cells_in), _read(None, *cells_out) * ahead


def _in_view(seen_in: np.ndarray, seen_out: np.ndarray) -> np.ndarray:
    """Whose tile shadows can be read (S, N): a tile's shadow near its mini lies partly under the
    mini's own mask, so its points in view are read (asking for most of the square in view
    favours lamps that cast it too far)."""
    return (seen_in.sum(axis=-1) >= 4) & (seen_out.sum(axis=-1) >= 2)


def _look(dark: np.ndarray | None, clear: np.ndarray, points_mm: np.ndarray, mm_per_px: float) -> np.ndarray:
    """`dark` at table points (..., 2) (None: 1); 0 off the view or where something known stands."""
    return _read(dark, *_cells(clear, points_mm, mm_per_px))


def _cells(clear: np.ndarray, points_mm: np.ndarray, mm_per_px: float) -> tuple[np.ndarray, np.ndarray]:
    """Which table points (..., 2) are in view and clear, and their cells' flat indices (0 off
    the view): taken once, read for several maps (half the time of clipped rows and columns
    indexed for each)."""
    cols = np.floor(points_mm[..., 0] / mm_per_px)
    rows = np.floor(points_mm[..., 1] / mm_per_px)
    h, w = clear.shape
    inside = (cols >= 0) & (cols < w) & (rows >= 0) & (rows < h)
    flat = np.where(inside, rows * w + cols, 0).astype(np.intp)
    return inside & (clear.ravel().take(flat) > 0), flat


def _read(dark: np.ndarray | None, seen: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """`_look` at cells `_cells` gave."""
    return seen.astype(float) if dark is None else np.where(seen, dark.ravel().take(flat), 0.0)


def _from_segment(points: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Distances of points (H, N, 2) from the segments start[n] -> end[n] (N, 2 each)."""
    along = end - start
    t = np.clip(((points - start[None]) * along[None]).sum(-1) / np.maximum((along * along).sum(-1), 1e-9)[None], 0, 1)
    return np.linalg.norm(points - (start[None] + t[..., None] * along[None]), axis=-1)


def mask_shadows(mask: np.ndarray, lamps: list[FoundLamp], minis: list[tuple[MiniState, float, float]],
                 mm_per_px: float) -> None:
    """Zero the minis' shadows (each a mini, its tile's side and its base, mm) in a top-down view
    from the table's corner: the tile's square where it falls, and the body's band down to it."""
    for lamp in lamps:
        for m, side, base in minis:
            foot = np.array([m.x_mm, m.y_mm])
            tip = lamp.shadow_of(foot, m.z_mm)
            corners = square_corners_mm(float(tip[0]), float(tip[1]), side + 2 * SHADOW_MARGIN_MM, m.heading_deg)[:, :2]
            cv2.fillConvexPoly(mask, np.round(corners / mm_per_px - 0.5).astype(np.int32), 0)
            width = int(round((0.6 * base + 2 * SHADOW_MARGIN_MM) / mm_per_px))
            a, b = np.round(foot / mm_per_px - 0.5).astype(int), np.round(tip / mm_per_px - 0.5).astype(int)
            cv2.line(mask, (int(a[0]), int(a[1])), (int(b[0]), int(b[1])), 0, max(width, 1))
