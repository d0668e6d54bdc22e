"""Fit a Lego brick (an upright box) to what the camera sees, in the table-plane cast view.

Seen from a camera at height Cz and cast onto the table along the viewing rays, the top face of a
box of height h is its footprint scaled by k = Cz / (Cz - h) about the camera's foot. So:

- the top face is a rectangle of (8n - 0.2) x (8m - 0.2) mm times k, a little larger than the
  footprint and pushed away from the foot;
- every side whose outward normal points towards the foot shows its wall, a strip |D| h / Cz wide
  between the top face's edge (at distance D from the foot) and the footprint's edge;
- the other sides show only the top face's edge against the table.

Each side is measured by profiles across it (colour against distance along its outward normal,
sampled straight from the camera image at sub-pixel steps and averaged along the side), fitted
with blurred steps between flat levels: top | wall | table on the near sides, top | table on the
far ones; while the sides are placed, a near side whose profiles fall as dark as a lamp's shadow
is fitted as top | wall | shadow | table, the shadow the table's colour with less light (read as
wall, it made a brick a brick or two taller). The edges' positions, fitted in three pieces per
side, give each side's line and the four lines the silhouette's rectangle; for each height (plate
steps) the near sides' walls are taken off it to leave the top face, whose size must be a brick's
scaled by k: that, and how well the walls of that height explain the profiles, choose the height.
Pure numpy: the image is reached through a sampling function.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from companion.state import BRICK_MM

STUD_MM = 8.0
PLATE_MM = 3.2
GAP_MM = 0.2  # a brick's side is 8n - 0.2 mm
HEIGHTS_MM = tuple(round(PLATE_MM * i, 1) for i in range(1, 16))  # one plate .. five bricks
TOWER_HEIGHTS_MM = tuple(round(PLATE_MM * i, 1) for i in range(14, 40))  # a tower: 4.7 .. 13 bricks
EDGE_BLUR_PX = 0.8  # an edge's spread in the image (lens, sensor, compression), 1 sigma
SIDE_SIGMA_MM = 0.15  # how well a side's length is measured, for the top face's size as a height cue
U_STEP_MM = 0.25  # profile sampling across a side (~0.35 px)
WALL_SEEN_PX = 0.5  # a near side's wall narrower than this is left out of its profile's fit
T_STEP_MM = 0.9  # profile lines along a side
# The walls' profiles against the top face's size, as evidence for the height: while the sides are
# being placed the walls lead (they say where the silhouette's near edges are); the final choice
# leans on the size (within a placed silhouette it is exact; a one-plate wall under a pixel wide is
# not). Chosen on bench seeds 0-24, checked on 25-49 and on `bench vision --seed 1`.
WALL_WEIGHT_FIT = 1.0
WALL_WEIGHT_HEIGHT = 0.1
WALL_SHADE = (0.2, 1.2)  # a wall's brightness relative to its top's, under any ordinary light
# A lamp's shadow lies on the table beyond a brick's foot on the sides away from it; along a wall
# that faces the camera it reads as more wall (a taller brick) unless the near sides' profiles
# model it: top | wall | shadow | table (`shadow_penalty` says what a shadow may be).
SHADOW_WIDTHS_MM = np.array([0.0, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 8.0, 9.5, 11.0, 13.0])
SHADOW_REACH_MM = float(SHADOW_WIDTHS_MM[-1]) + 1.5  # how much further a near side's profiles reach
SHADOW_TABLE_SAMPLES = 4  # the profile's last samples (1 mm): table beyond any shadow
# A shadow's light (display levels), as a share of the table's beside it, at most: where other
# lamps and the room's light reach, a lamp's shadow keeps more of the table's light (0.5 admitted
# only shadows of under a quarter of it in linear light: the rest read as wall; 0.75 let a
# yellow wall in shade pass for the felt's shadow beside it, a brick a plate taller). Lighter
# shadows are taken in by the wall (a white 9.6 mm brick read 22.4 under a room with 0.47 of the
# light its own); 0.75-0.95 fitted them (ray-cast dev frames' heights better) but took a tower's
# black lower courses on gray tiles for a blue top's shadow (path traced): kept at 0.65.
SHADOW_MOST = 0.65
# ... or this share where it is a level run of the table's colour far below the wall's light
# (`_deep_shadow`): a white brick's shadow on green felt under a room with much light of its own
# keeps 0.7-0.8 of it, and read as more wall (9.6 mm read 22.4). (The shadow's level in the fit
# stays capped at SHADOW_MOST: raised too, a yellow wall's seam at its foot passed for a shadow.)
LIGHT_SHADOW_MOST = 0.85
SHADOW_UNDER_WALL = 0.55  # ... and at most this share of the wall's beside it
SHADOW_CONTRAST = 24.0  # ... and this many 8-bit levels below it (dark walls are not told from shadows)
SHADOW_CHROMA_SLACK = 0.12  # ... and of the table's chromaticity (colour over luma) to this
# A wall whose chromaticity is this far from the table's is told from the table's shadow by colour:
# such a shadow may be lighter than the wall beside it (a blue wall in shade on green felt).
TOLD_BY_COLOUR = 0.3
# ... or, below a top this far from the table's chromaticity, WALL_NEARER_TOP times nearer the top's
# than the table's (green walls in shade on white tiles: tops 0.26-0.28 from it; black ones 0.08-0.1)
TOP_HUE_LEAST = 0.15
WALL_NEARER_TOP = 2.0
SHADOW_RUN_SAMPLES = 4  # ... over a run this long (1 mm), beside a wall as wide (a narrower one's colour is unsure)
# ... and a light shadow far below its wall's light over this much (0.5 mm): a white brick's shadow
# 2-2.5 mm wide under a lamp nearly overhead dips and rises, blurred, with no millimetre of it level
# (a white 9.6 mm brick on felt read 16 mm, a white ring wall's 9.6 mm arm on wood 19.2)
LIGHT_SHADOW_RUN_SAMPLES = 2
SHADOW_FLAT = 0.1  # ... where its light changes by at most this share of the table's a mm
SHADOW_DARKEST = 8.0  # 8-bit luma below which a level's chromaticity is taken as this dark's
SHADOW_PER_HEIGHT_MOST = 1.5  # a shadow's length per mm of height: a lamp at least 34 deg above the table
WALL_UNDER_TOP = 0.8  # a wall with a shadow beyond it has at most this share of its top's light
HEIGHT_RANGE_SHARE = 0.9  # a block's height range holds this share of its height's likelihood
# ... with the fit's costs divided by this: they sum profile samples a blurred pixel apart, which
# are not independent, so as they are they make every range one height (docs/measurements.md, "How sure a
# height is, in the verdict").
HEIGHT_RANGE_COST_SCALE = 30.0
COMMON_SPAN_MM = 3.0  # shortest run of lines that serves every height
NOISE_FLOOR = 3.0  # 8-bit levels: a profile fitted better than this is fitted to its noise

# Samples (..., 2) table mm -> colours (..., C)
Sampler = Callable[[np.ndarray], np.ndarray]


def normal_cdf(x: np.ndarray) -> np.ndarray:
    """Phi(x), to 3e-4 (the tanh form of Page 1977): numpy has no erf, and an edge's blur is not
    known better than that. In single precision (5 times faster in numpy's tanh, and 1e-7 is far
    below the form's own error); returned in double for the least squares that use it."""
    x32 = np.asarray(x, np.float32)
    return (0.5 + 0.5 * np.tanh(np.float32(0.7978845608) * (x32 + np.float32(0.044715) * x32 * x32 * x32))).astype(float)


def snap_side(length_mm: float) -> tuple[int, float]:
    """The stud count of a side and how far the length is from 8n - 0.2 mm."""
    studs = max(1, int(round((length_mm + GAP_MM) / STUD_MM)))
    return studs, length_mm - (studs * STUD_MM - GAP_MM)


def step_fit(profile: np.ndarray, u_mm: np.ndarray, edges_mm: np.ndarray, sigma_mm: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares flat levels between blurred steps, for many edge placements at once.

    profile (N, C) for every placement, or (G, N, C): the placements in G consecutive runs of
    M / G, run g fitted to profile g (G == M: one each), sampled at u_mm (N,); edges_mm (M, E)
    increasing along u. Returns the sum of squared residuals (M,) and the levels (M, E + 1, C),
    level 0 before the first edge.

    The normal equations are summed from the steps themselves (the basis is 1 - A, A - B, ...,
    the last step) and, for one or two edges, solved in closed form: a basis and a batched solve
    per placement cost twice as much, and a profile shared by a run is multiplied once."""
    phi = normal_cdf((u_mm[None, None, :] - edges_mm[:, :, None]) / sigma_mm)  # (M, E, N)
    m, e, n = phi.shape
    p = profile if profile.ndim == 3 else profile[None]
    runs, c = len(p), p.shape[-1]
    per_run = m // runs
    sp = (phi.reshape(runs, per_run * e, n) @ p).reshape(m, e, c)  # sum A p, sum B p
    total = np.repeat(p.sum(axis=1), per_run, axis=0)  # (M, C): sum p
    energy = np.repeat((p * p).sum(axis=(1, 2)), per_run)
    # sum b p for the basis b: 1 - A, A - B, ..., the last step
    rhs = np.concatenate([(total - sp[:, 0])[:, None], sp[:, :-1] - sp[:, 1:], sp[:, -1:]], axis=1)
    s = phi.sum(axis=-1)
    if e == 1:
        s1, s2 = s[:, 0], np.einsum("mn,mn->m", phi[:, 0], phi[:, 0])
        g00, g01, g11 = n - 2 * s1 + s2 + _RIDGE, s1 - s2, s2 + _RIDGE
        r0, r1 = rhs[:, 0], rhs[:, 1]
        inv = (1.0 / (g00 * g11 - g01 * g01))[:, None]
        l0 = (g11[:, None] * r0 - g01[:, None] * r1) * inv
        l1 = (g00[:, None] * r1 - g01[:, None] * r0) * inv
        levels = np.stack([l0, l1], axis=1)
    elif e == 2:
        a, b = phi[:, 0], phi[:, 1]
        sa, sb = s[:, 0], s[:, 1]
        saa, sbb, sab = np.einsum("mn,mn->m", a, a), np.einsum("mn,mn->m", b, b), np.einsum("mn,mn->m", a, b)
        g00, g01, g02 = n - 2 * sa + saa + _RIDGE, sa - saa - sb + sab, sb - sab
        g11, g12, g22 = saa - 2 * sab + sbb + _RIDGE, sab - sbb, sbb + _RIDGE
        r0, r1, r2 = rhs[:, 0], rhs[:, 1], rhs[:, 2]
        # the symmetric matrix's inverse by its cofactors
        c00, c01, c02 = g11 * g22 - g12 * g12, g02 * g12 - g01 * g22, g01 * g12 - g02 * g11
        c11, c12, c22 = g00 * g22 - g02 * g02, g01 * g02 - g00 * g12, g00 * g11 - g01 * g01
        inv = 1.0 / (g00 * c00 + g01 * c01 + g02 * c02)
        c00, c01, c02, c11, c12, c22 = ((x * inv)[:, None] for x in (c00, c01, c02, c11, c12, c22))
        levels = np.stack([c00 * r0 + c01 * r1 + c02 * r2, c01 * r0 + c11 * r1 + c12 * r2,
                           c02 * r0 + c12 * r1 + c22 * r2], axis=1)
    else:
        basis = np.empty((m, e + 1, n))
        basis[:, 0] = 1.0 - phi[:, 0]
        basis[:, 1:e] = phi[:, :-1] - phi[:, 1:]
        basis[:, e] = phi[:, -1]
        levels = np.linalg.solve(basis @ basis.transpose(0, 2, 1) + np.eye(e + 1) * _RIDGE, rhs)
    sse = energy - (levels * rhs).sum(axis=(1, 2))
    return np.maximum(sse, 0.0), levels


_RIDGE = 1e-6  # on the normal equations' diagonal: two edges may coincide


def wall_penalty(levels: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """What it costs (in summed squares, like `step_fit`'s) for a wall's level not to be its top's
    colour, darker or lighter: a wall is the same plastic turned away from the light, so in any
    colour space linear in the light (as luma and colour differences are) it is alpha times the
    top, alpha in WALL_SHADE. A printed line or a strip of table fitted as a "wall" is not.
    levels (M, 3, C) from a two-edge fit, edges (M, 2)."""
    top, wall = levels[:, 0], levels[:, 1]
    alpha = np.clip((wall * top).sum(axis=1) / np.maximum((top * top).sum(axis=1), 1e-6), *WALL_SHADE)
    samples = np.maximum((edges[:, 1] - edges[:, 0]) / U_STEP_MM, 1.0)
    return samples * ((wall - alpha[:, None] * top) ** 2).sum(axis=1)


def shadow_penalty(levels: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """What it costs (as `wall_penalty`) for a shadow's level not to be beta times the table's
    beyond it, beta at most SHADOW_MOST: the table's own colour with less light. A wall's foot or a
    strip of a lighter brick is not. levels (M, 4, C), edges (M, 3) from `with_shadows`."""
    top, wall, shadow, table = levels[:, 0], levels[:, 1], levels[:, 2], levels[:, 3]
    beta = np.clip((shadow * table).sum(axis=1) / np.maximum((table * table).sum(axis=1), 1e-6), 0.0, SHADOW_MOST)
    samples = (edges[:, 2] - edges[:, 1]) / U_STEP_MM
    # Only a shadow darker than the wall (in luma) is told from it, and the wall beside a shadow
    # is turned from the lamp, so darker than its top: a wall in shade is as dark as a shadow, and
    # the part of it beyond a lower brick's wall would pass for one. Unless the wall (wide enough
    # for its colour to be measured) is not the table's colour: then the colours tell them apart.
    table_luma = np.maximum(table[:, 0], SHADOW_DARKEST)[:, None]
    told = wall_told_from_table(wall, top, table) & (edges[:, 1] - edges[:, 0] >= SHADOW_RUN_SAMPLES * U_STEP_MM)
    under_wall = np.where(told, 0.0,
                          np.maximum(shadow[:, 0] - np.minimum(SHADOW_UNDER_WALL * wall[:, 0], wall[:, 0] - SHADOW_CONTRAST), 0.0))
    over = under_wall + np.maximum(wall[:, 0] - WALL_UNDER_TOP * top[:, 0], 0.0)
    # Its chromaticity is the table's (to the light's colour): the fit's least squares weigh a
    # dark wall's colour too little (a dark green or blue course at a tower's foot on wood).
    drift = chroma_apart(shadow, table)
    over = over + np.maximum(drift - SHADOW_CHROMA_SLACK, 0.0) * table_luma[:, 0]
    return samples * (((shadow - beta[:, None] * table) ** 2).sum(axis=1) + over * over)


def wall_told_from_table(wall: np.ndarray, top: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Per level (M, C), whether a wall's colour tells it from the table's in shade: far from the
    table's chromaticity, or, below a top of a hue of its own, clearly nearer the top's (a green
    wall in shade is near gray, yet nearer green than a white table's gray; a black top's hue is
    the room light's tint and tells nothing)."""
    apart = chroma_apart(wall, table)
    return (apart >= TOLD_BY_COLOUR) | ((chroma_apart(top, table) >= TOP_HUE_LEAST)
                                        & (apart >= WALL_NEARER_TOP * chroma_apart(wall, top)))


def chroma_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How far two levels' chromaticities (colour over luma) are, levels (M, C) with luma first."""
    a_luma = np.maximum(a[:, 0], SHADOW_DARKEST)[:, None]
    b_luma = np.maximum(b[:, 0], SHADOW_DARKEST)[:, None]
    return np.linalg.norm(a[:, 1:] / a_luma - b[:, 1:] / b_luma, axis=1)


def with_shadows(edges: np.ndarray, widths_mm: np.ndarray = SHADOW_WIDTHS_MM) -> np.ndarray:
    """A near side's wall edges (M, 2) with a shadow of each width beyond the outer one: (M * S, 3)."""
    out = np.empty((len(edges), len(widths_mm), 3))
    out[:, :, :2] = edges[:, None, :]
    out[:, :, 2] = edges[:, 1:2] + widths_mm[None, :]
    return out.reshape(-1, 3)


def wall_and_shadow_fit(profiles: np.ndarray, u_mm: np.ndarray, walls_mm: np.ndarray, sigma_mm: float,
                        widths_mm: np.ndarray = SHADOW_WIDTHS_MM) -> tuple[np.ndarray, np.ndarray]:
    """`step_fit` of top | wall | shadow | table for every wall placement (H, D, 2: its inner and
    outer edge) and shadow width beyond it (S,), the profile (N, C) shared or one per row (H, N, C).
    The same least squares, its normal equations summed from the three edges' blurred steps (A, B,
    the shadow's end S) rather than from a basis per placement: the shadow widths multiply the
    placements, and a basis each cost ten times the sums. Returns sse (H, D, S), levels (H, D, S, 4, C)."""
    # Where the outer edge is the same for every height (the silhouette's edge placed, the top's
    # moving with the height) the outer steps, and the shadows' beyond them, are made once.
    outer = walls_mm[:1, :, 1] if np.ptp(walls_mm[..., 1], axis=0).max() < 1e-9 else walls_mm[..., 1]
    a = normal_cdf((u_mm - walls_mm[..., 0, None]) / sigma_mm)  # (H, D, N)
    b = normal_cdf((u_mm - outer[..., None]) / sigma_mm)  # (H or 1, D, N)
    e = normal_cdf((u_mm - (outer[..., None, None] + widths_mm[:, None])) / sigma_mm)  # (H or 1, D, S, N)
    p = profiles if profiles.ndim == 3 else profiles[None]  # (H or 1, N, C)
    n = float(len(u_mm))
    sa, sb, se = a.sum(-1)[..., None], b.sum(-1)[..., None], e.sum(-1)
    saa, sbb, see = (a * a).sum(-1)[..., None], (b * b).sum(-1)[..., None], (e * e).sum(-1)
    sab = (a * b).sum(-1)[..., None]
    # (matrix products, not einsum: these sums are most of the work)
    sae = (e @ a[..., None])[..., 0]  # (H, D, S)
    sbe = (e @ b[..., None])[..., 0]  # (H or 1, D, S)
    # basis 1 - A, A - B, B - S, S: their inner products
    shape = (len(walls_mm), walls_mm.shape[1], len(widths_mm))
    sa, saa, sab, sae = (np.broadcast_to(x, shape) for x in (sa, saa, sab, sae))
    g = np.empty(shape + (4, 4))
    g[..., 0, 0] = n - 2 * sa + saa
    g[..., 0, 1] = sa - sb - saa + sab
    g[..., 0, 2] = sb - se - sab + sae
    g[..., 0, 3] = se - sae
    g[..., 1, 1] = saa - 2 * sab + sbb
    g[..., 1, 2] = sab - sae - sbb + sbe
    g[..., 1, 3] = sae - sbe
    g[..., 2, 2] = sbb - 2 * sbe + see
    g[..., 2, 3] = sbe - see
    g[..., 3, 3] = see
    for i, j in ((1, 0), (2, 0), (3, 0), (2, 1), (3, 1), (3, 2)):
        g[..., i, j] = g[..., j, i]
    g += np.eye(4) * _RIDGE
    pa = (a @ p)[:, :, None]  # (H, D, 1, C)
    pb = (b @ p)[:, :, None]
    pe = e @ p[:, None]  # (H or 1, D, S, C)
    total = p.sum(axis=1)[:, None, None]  # (H or 1, 1, 1, C)
    rhs = np.stack(np.broadcast_arrays(total - pa, pa - pb, pb - pe, pe), axis=-2)  # (H, D, S, 4, C)
    levels = np.linalg.solve(g, rhs)
    energy = (p * p).sum(axis=(1, 2))[:, None, None]
    sse = energy - (levels * rhs).sum(axis=(-2, -1))
    return np.maximum(sse, 0.0), levels


@dataclass(frozen=True)
class TableRect:
    """A rectangle on the table plane: centre, unit direction of its first side, half sides (mm)."""

    centre: np.ndarray  # (2,)
    axis: np.ndarray  # (2,) unit
    half_mm: tuple[float, float]  # along axis, across it

    @property
    def across(self) -> np.ndarray:
        return np.array([-self.axis[1], self.axis[0]])

    def corners(self) -> np.ndarray:
        """(4, 2), counter-clockwise."""
        a, b = self.axis * self.half_mm[0], self.across * self.half_mm[1]
        return np.array([self.centre - a - b, self.centre + a - b, self.centre + a + b, self.centre - a + b])

    def sides(self) -> list[tuple[np.ndarray, np.ndarray, float, float]]:
        """(outward normal, direction along, offset of the side from the centre, half length) x 4."""
        a, c = self.axis, self.across
        return [(c, a, self.half_mm[1], self.half_mm[0]), (-c, -a, self.half_mm[1], self.half_mm[0]),
                (a, -c, self.half_mm[0], self.half_mm[1]), (-a, c, self.half_mm[0], self.half_mm[1])]

    @classmethod
    def from_lines(cls, lines: list[tuple[np.ndarray, float]]) -> "TableRect":
        """The rectangle nearest four side lines n . x = d, in the order of `sides()`."""
        corners = []
        for i, j in ((1, 3), (1, 2), (0, 2), (0, 3)):
            a = np.array([lines[i][0], lines[j][0]])
            corners.append(np.linalg.solve(a, np.array([lines[i][1], lines[j][1]])))
        return cls.from_quad(np.array(corners))

    @classmethod
    def from_quad(cls, quad: np.ndarray) -> "TableRect":
        """The rectangle nearest a quad (corners in `corners()` order)."""
        q = np.asarray(quad, float)
        along = (q[1] - q[0]) + (q[2] - q[3])
        across = (q[3] - q[0]) + (q[2] - q[1])
        # average the two directions (the across one turned by -90 degrees)
        d = along / np.linalg.norm(along) + np.array([across[1], -across[0]]) / np.linalg.norm(across)
        axis = d / np.linalg.norm(d)
        perp = np.array([-axis[1], axis[0]])
        centre = q.mean(axis=0)
        half_a = float(np.mean(np.abs((q - centre) @ axis)))
        half_b = float(np.mean(np.abs((q - centre) @ perp)))
        return cls(centre, axis, (half_a, half_b))

    def scaled_about(self, point: np.ndarray, ratio: float) -> "TableRect":
        return TableRect(point + ratio * (self.centre - point), self.axis, (self.half_mm[0] * ratio, self.half_mm[1] * ratio))


@dataclass(frozen=True)
class SideProfile:
    """One side's profiles and what is known of where it sits."""

    normal: np.ndarray
    along: np.ndarray
    foot_distance_mm: float  # D: signed distance of the side line from the foot, > 0: the wall is hidden
    u_mm: np.ndarray  # (N,) across the side, 0 at the side line, > 0 outwards
    t_mm: np.ndarray  # (K,) along the side
    lines: np.ndarray  # (K, N, C) the profiles
    sigma_mm: float  # edge blur on the table plane, across this side
    px_per_mm: float
    blocked: tuple[tuple[float, float], ...] = ()  # runs of t where another part of a wall adjoins
    # A near side whose profiles reach past a deep shadow (`_deep_shadow`), read while the sides
    # are placed; the same side as every other fit reads it, short of that reach.
    short: "SideProfile | None" = None

    @property
    def shadow_reach(self) -> bool:
        return self.short is not None

    @property
    def without_reach(self) -> "SideProfile":
        return self.short if self.short is not None else self

    @property
    def near(self) -> bool:
        return self.foot_distance_mm < 0


def _likelihoods(costs: np.ndarray) -> np.ndarray:
    """exp(-cost), scaled by the least cost's: a height the fit did not take may cost less than
    the one it took (raised where its shadows rule the lower ones out), and exp of more than 709
    overflows: the shares then came out NaN. An infinite cost (ruled out) is a likelihood of 0."""
    finite = costs[np.isfinite(costs)]
    return np.exp(-(costs - (float(finite.min()) if len(finite) else 0.0)))


@dataclass(frozen=True)
class BoxFit:
    top: TableRect  # the top face, cast onto the table plane
    silhouette: TableRect  # the rectangle boxing what the box covers on the table plane
    height_mm: float
    footprint: TableRect
    height_cost: dict[float, float]  # per candidate height, 0 at the best

    @property
    def height_confidence(self) -> float:
        """Share of the height's likelihood within half a brick of the answer (0.5-1 when ambiguous)."""
        hs = np.array(list(self.height_cost))
        w = _likelihoods(np.array(list(self.height_cost.values())))
        return float(w[np.abs(hs - self.height_mm) <= BRICK_MM / 2 + 1e-6].sum() / w.sum())

    @property
    def height_range_mm(self) -> tuple[float, float]:
        """The lowest and highest of the likeliest heights that hold HEIGHT_RANGE_SHARE of the
        height's likelihood, the answer among them: where the top may be, for a verdict that turns
        on it."""
        if not self.height_cost:
            return self.height_mm, self.height_mm
        hs = np.array(list(self.height_cost))
        w = _likelihoods(np.array(list(self.height_cost.values())) / HEIGHT_RANGE_COST_SCALE)
        order = np.argsort(-w, kind="stable")
        held = np.cumsum(w[order]) / w.sum()
        likeliest = hs[order[:int(np.searchsorted(held, HEIGHT_RANGE_SHARE - 1e-9)) + 1]]
        return float(min(likeliest.min(), self.height_mm)), float(max(likeliest.max(), self.height_mm))


def wall_width_mm(foot_distance_mm: float, height_mm: float | np.ndarray, camera_height_mm: float):
    """A near side's wall, cast onto the table: from the footprint's edge at distance |D| from the
    foot to the top face's edge at k |D|."""
    return np.maximum(-foot_distance_mm, 0.0) * np.asarray(height_mm) / (camera_height_mm - np.asarray(height_mm))


def _sample_sides(sample: Sampler, rect: TableRect, foot: np.ndarray, camera_height_mm: float,
                  px_per_mm: Callable[[np.ndarray, np.ndarray], float], max_height_mm: float,
                  from_top: bool = False, adjoining: tuple[TableRect, ...] = ()) -> list[SideProfile]:
    grids, meta = [], []
    for normal, along, offset, half_len in rect.sides():
        line_point = rect.centre + normal * offset
        foot_d = float(normal @ (line_point - foot))
        other_half = rect.half_mm[1] if abs(normal @ rect.axis) < 0.5 else rect.half_mm[0]
        wall_max = float(wall_width_mm(foot_d, max_height_mm, camera_height_mm))
        # Across the wall and onto the top, short of the opposite side.
        if from_top:
            u_in, u_out = min(3.0, max(2 * other_half - 2.0, 1.0)), wall_max + 2.5
        else:
            u_in, u_out = min(wall_max + 3.0, max(2 * other_half - 2.0, 1.0)), 2.5
        u = np.arange(-u_in, u_out + 1e-9, U_STEP_MM)
        core = len(u)
        if foot_d < 0:  # a near side: sampled out past the widest shadow too, kept if it has one
            u = np.arange(-u_in, u_out + SHADOW_REACH_MM + 1e-9, U_STEP_MM)
        # Lines all along; each height uses those clear of the corners (`_span`).
        count = max(3, int(2 * half_len / T_STEP_MM) + 1)
        t = np.linspace(-half_len, half_len, count)
        grids.append(line_point + normal * u[None, :, None] + along * t[:, None, None])
        blocked = [tuple(b for r in adjoining if (b := _adjoining_run(r, line_point, normal, along, float(reach)))
                         is not None) for reach in (u[core - 1], u[-1])]
        meta.append((normal, along, foot_d, u, core, t, px_per_mm(line_point, normal), blocked))
    flat = np.concatenate([g.reshape(-1, 2) for g in grids])
    colours = sample(flat[None])[0]
    out, start = [], 0
    for g, (normal, along, foot_d, u, core, t, ppm, blocked) in zip(grids, meta):
        k, n = g.shape[:2]
        lines = colours[start:start + k * n].reshape(k, n, -1).astype(np.float64)
        start += k * n
        side = SideProfile(normal, along, foot_d, u[:core], t, lines[:, :core], EDGE_BLUR_PX / ppm, ppm, blocked[0])
        # (asked of the lines clear of the other parts of a wall or a touching row, as every fit
        # of the side reads it: those are their tops all along, and averaged in they hid a shadow)
        clear = np.ones(len(t), bool)
        for b0, b1 in blocked[1]:
            clear &= (t < b0) | (t > b1)
        if core < n and clear.any() and _deep_shadow(u, lines[clear]):
            side = SideProfile(normal, along, foot_d, u, t, lines, EDGE_BLUR_PX / ppm, ppm, blocked[1], short=side)
        out.append(side)
    return out


def _deep_shadow(u_mm: np.ndarray, lines: np.ndarray) -> bool:
    """Whether a near side's profiles (reaching past the widest shadow) fall anywhere as dark as
    a shadow that `shadow_penalty` tells from a wall may be: below SHADOW_MOST of the table at
    their far end (LIGHT_SHADOW_MOST for a level run of the table's colour) and far enough below
    their top (the brightest inside the silhouette). Elsewhere no shadow is looked for and the
    reach past it is dropped: a light shade is fitted as table or wall, as before, and the reach
    would only run into other things on the table. A shadow no darker than its wall is looked for
    where the colours tell them apart: a wall (the darkest) not of the table's colour, and a level
    run of the table's colour in shade."""
    mean = lines.mean(axis=0)
    luma = mean[:, 0]
    table_level = mean[-SHADOW_TABLE_SAMPLES:].mean(axis=0)[None]
    table = float(table_level[0, 0])
    top_level = mean[u_mm <= 0][int(np.argmax(luma[u_mm <= 0]))][None]  # the brightest inside
    top = float(top_level[0, 0])
    darkest = float(luma.min())
    if darkest > LIGHT_SHADOW_MOST * table:
        return False
    under_wall = darkest <= SHADOW_UNDER_WALL * WALL_UNDER_TOP * top - SHADOW_CONTRAST
    if darkest > SHADOW_MOST * table:
        # A light shadow: far below the wall's light, and a level run of the table's colour (a
        # short one: being far below the wall already tells it from a dark wall's blurred step).
        return under_wall and _level_shade(u_mm, mean, table, table_level, LIGHT_SHADOW_MOST, LIGHT_SHADOW_RUN_SAMPLES)
    if under_wall:
        return True
    if not wall_told_from_table(mean[int(np.argmin(luma))][None], top_level, table_level)[0]:
        return False
    return _level_shade(u_mm, mean, table, table_level, SHADOW_MOST)


def _level_shade(u_mm: np.ndarray, mean: np.ndarray, table: float, table_level: np.ndarray, most: float,
                 samples: int = SHADOW_RUN_SAMPLES) -> bool:
    """Whether a profile (N, C, luma first) holds a run `samples` long of the table's
    colour in shade (at most `most` of its luma `table`): level, not the blurred step from a dark
    wall to the table (it passes through the shadow's light and, last, the table's colour)."""
    luma = mean[:, 0]
    flat = np.abs(np.gradient(luma, u_mm)) <= SHADOW_FLAT * table
    shade = flat & (luma <= most * table) & (chroma_apart(mean, table_level) <= SHADOW_CHROMA_SLACK)
    run = np.convolve(shade.astype(float), np.ones(samples), mode="valid")
    return bool(np.any(run >= samples))


ADJOIN_MARGIN_MM = 2.0  # another part's wall and blur reach this far past its top face


def _adjoining_run(other: TableRect, line_point: np.ndarray, normal: np.ndarray, along: np.ndarray,
                   u_out: float) -> tuple[float, float] | None:
    """The run of t along a side whose profiles (out to u_out) cross another part of the same
    wall (its top face's rectangle), or None when it does not reach past the side."""
    rel = other.corners() - line_point
    across, t = rel @ normal, rel @ along
    if across.max() <= ADJOIN_MARGIN_MM / 2 or across.min() >= u_out + ADJOIN_MARGIN_MM:
        return None
    return float(t.min()) - ADJOIN_MARGIN_MM, float(t.max()) + ADJOIN_MARGIN_MM


def _clear_of(lo: np.ndarray, hi: np.ndarray, blocked: tuple[tuple[float, float], ...]
              ) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the longest part of [lo, hi] outside every blocked run (the middle when none is)."""
    lo, hi = lo.copy(), hi.copy()
    for r in range(len(lo)):
        pieces = [(float(lo[r]), float(hi[r]))]
        for b0, b1 in blocked:
            pieces = [q for a0, a1 in pieces for q in ((a0, min(a1, b0)), (max(a0, b1), a1)) if q[1] > q[0]]
        if pieces:
            lo[r], hi[r] = max(pieces, key=lambda q: q[1] - q[0])
        else:
            lo[r] = hi[r] = (lo[r] + hi[r]) / 2
    return lo, hi


def _edges(side: SideProfile, deltas: np.ndarray, widths: np.ndarray, from_top: bool) -> np.ndarray:
    """Edge placements (len(widths) * len(deltas), E). On a far side the silhouette (the top
    face's edge) at delta; on a near side the wall's two edges, the outer one at delta (or, when
    the side line is the top face's, the inner one)."""
    if not side.near:
        return np.broadcast_to(deltas[None, :, None], (len(widths), len(deltas), 1)).reshape(-1, 1)
    shift = np.broadcast_to(deltas[None, :], (len(widths), len(deltas)))
    inner = shift if from_top else shift - widths[:, None]
    return np.stack([inner, inner + widths[:, None]], axis=-1).reshape(-1, 2)


def _spans(rect: TableRect, side: SideProfile, foot: np.ndarray, heights: np.ndarray, camera_height_mm: float,
           from_top: bool, margin_mm: float = 1.0, faces: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Where along a side (t, from its middle) a profile crosses only this side's edges, for a box
    of each height: within the top face's side and, on a near side, the footprint's too (beyond
    them lie the slanted vertical edges and the next side's wall). (H, 2): from, to. `faces`: the
    top faces for these heights when they are known (`top_faces`)."""
    if from_top:
        centres = np.repeat(rect.centre[None, :], len(heights), axis=0)
        halves = np.repeat(np.array(rect.half_mm)[None, :], len(heights), axis=0)
    else:
        centres, halves = faces if faces is not None else top_faces(rect, foot, heights, camera_height_mm)
    along_axis = abs(float(side.along @ rect.axis)) > 0.5
    half = halves[:, 0] if along_axis else halves[:, 1]
    centre = (centres - rect.centre) @ side.along
    lo, hi = centre - half + margin_mm, centre + half - margin_mm
    if side.near:
        ratio = (camera_height_mm - heights) / camera_height_mm  # the footprint: the top face uncast
        foot_centre = (foot + ratio[:, None] * (centres - foot) - rect.centre) @ side.along
        lo = np.maximum(lo, foot_centre - half * ratio + margin_mm)
        hi = np.minimum(hi, foot_centre + half * ratio - margin_mm)
    if side.blocked:
        lo, hi = _clear_of(lo, hi, side.blocked)
    return np.stack([lo, hi], axis=1)


def _runs(side: SideProfile, spans: np.ndarray, least: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The runs of profile lines inside spans (H, 2) (at least `least` lines, centred on the span
    when it is shorter): first and end indices (H,), (H,)."""
    t = side.t_mm
    i0, i1 = np.searchsorted(t, spans[:, 0]), np.searchsorted(t, spans[:, 1], side="right")
    short = i1 - i0 < least
    if short.any():
        mid = np.clip(np.searchsorted(t, spans[:, 0] / 2 + spans[:, 1] / 2), 0, len(t))
        j0 = np.clip(mid - least // 2, 0, max(len(t) - least, 0))
        i0 = np.where(short, j0, i0)
        i1 = np.where(short, np.minimum(j0 + least, len(t)), i1)
    return i0, i1


def _lines_in(side: SideProfile, span: tuple[float, float], least: int = 3) -> tuple[int, int]:
    """The run of profile lines inside one span."""
    i0, i1 = _runs(side, np.array([span], float), least)
    return int(i0[0]), int(i1[0])


def _side_costs(side: SideProfile, rect: TableRect, foot: np.ndarray, heights: np.ndarray, camera_height_mm: float,
                deltas: np.ndarray, from_top: bool = False, faces: tuple[np.ndarray, np.ndarray] | None = None,
                shadows: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per height: a chi-square-like cost (0 at this side's best), the silhouette's shift and, on a
    near side, the width of the shadow beyond its wall (`with_shadows`).

    The lines are those clear of the corners for every height (for each its own when too few are
    common to all); the cost is a line's mean squared residual (the spread of the lines about
    their mean, plus the mean's misfit), comparable across runs."""
    if not shadows:
        side = side.without_reach
    lines = side.lines
    spans = _spans(rect, side, foot, heights, camera_height_mm, from_top, faces=faces)
    if side.blocked and np.all(spans[:, 1] - spans[:, 0] <= 1e-9):
        return (np.zeros(len(heights)),) * 3  # all along another part: no evidence here
    common = (float(spans[:, 0].max()), float(spans[:, 1].min()))
    if common[1] - common[0] >= COMMON_SPAN_MM:
        # The same lines for every height: a run chosen per height would favour the heights
        # whose run leaves out the noisier lines near the corners.
        first, end = (np.repeat(i, len(heights)) for i in _runs(side, np.array([common])))
    else:
        first, end = _runs(side, spans)
    csum = np.concatenate([np.zeros((1,) + lines.shape[1:]), np.cumsum(lines, axis=0)])
    csq = np.concatenate([[0.0], np.cumsum((lines * lines).sum(axis=(1, 2)))])
    counts = (end - first).astype(float)
    means = (csum[end] - csum[first]) / counts[:, None, None]  # (H, N, C)
    spread = (csq[end] - csq[first]) / counts - (means * means).sum(axis=(1, 2))
    shared = bool((first == first[0]).all() and (end == end[0]).all())
    shadow_mm = np.zeros((len(heights), len(deltas)))
    widths = (-side.foot_distance_mm * heights / camera_height_mm if from_top
              else wall_width_mm(side.foot_distance_mm, heights, camera_height_mm))
    # A wall narrower than a fraction of a pixel is not seen: two edges that close, with free
    # levels, fit the blur's shape instead (a side seen nearly edge-on wanted the tallest box).
    seen = side.near & (np.abs(widths) * side.px_per_mm >= WALL_SEEN_PX)
    sse = np.empty((len(heights), len(deltas)))
    if shared and not seen.all():  # the top's edge alone: the same fit for every height
        sse[~seen] = step_fit(means[0], side.u_mm, deltas[:, None], side.sigma_mm)[0]
    elif not seen.all():
        alone = int(np.count_nonzero(~seen))
        sse[~seen] = step_fit(means[~seen], side.u_mm, np.tile(deltas[:, None], (alone, 1)),
                              side.sigma_mm)[0].reshape(alone, len(deltas))
    if seen.any():
        edges = _edges(side, deltas, widths[seen], from_top)
        walled = means[0] if shared else means[seen]
        if side.shadow_reach:
            sse[seen], shadow_mm[seen] = _shadowed_side(side, walled, edges, heights[seen], len(deltas))
        else:
            fitted, levels = step_fit(walled, side.u_mm, edges, side.sigma_mm)
            sse[seen] = (fitted + wall_penalty(levels, edges)).reshape(-1, len(deltas))
    sse = sse + spread[:, None]
    best = np.argmin(sse, axis=1)
    rows = np.arange(len(heights))
    per_h = sse[rows, best]
    # Samples are U_STEP apart but a pixel spans 1/px_per_mm: that many samples share one noise value.
    independent = max(len(side.u_mm) * U_STEP_MM * side.px_per_mm, 2.0)
    # The noise per sample, from the residual over the profile short of the table that a near
    # side's reach past a shadow adds (flat, nearly free of residual, it would make the side's
    # evidence look surer than the far sides' and the top's size).
    core = len(side.without_reach.u_mm)
    variance = max(float(per_h.min()) / (core * lines.shape[2]), NOISE_FLOOR ** 2)
    chi = (per_h - per_h.min()) / variance * independent / len(side.u_mm) / 2
    if side.near and not seen.any():
        # Seen edge-on at every height, the side is the top's edge alone: which of its lines are
        # clear of the corners changes with the height, not what they show.
        chi = np.zeros(len(heights))
    return chi, deltas[best], shadow_mm[rows, best]


def _shadowed_side(side: SideProfile, profiles: np.ndarray, edges: np.ndarray, heights: np.ndarray, n_deltas: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """A near side reaching past a deep shadow: per height and placement of its wall (`edges`,
    (H * D, 2)), the misfit of the best shadow beyond it and that shadow's width (H, D) each."""
    walls = edges.reshape(len(heights), n_deltas, 2)
    sse, levels = wall_and_shadow_fit(profiles, side.u_mm, walls, side.sigma_mm)
    n_shadows = len(SHADOW_WIDTHS_MM)
    edges3, levels = with_shadows(edges), levels.reshape(-1, 4, levels.shape[-1])
    sse = sse.reshape(-1) + wall_penalty(levels, edges3) + shadow_penalty(levels, edges3)
    # A shadow is told from more wall only with table beyond it, and it is no longer than a lamp
    # above the table casts from a box this tall (a low brick "with a long shadow" is a tower's
    # lower courses, or any wall darker than its top).
    reach = np.repeat(heights * SHADOW_PER_HEIGHT_MOST, n_deltas * n_shadows)
    told = (edges3[:, 2] <= side.u_mm[-1] - 1.0) & (edges3[:, 2] - edges3[:, 1] <= reach)
    sse = np.where(told | (edges3[:, 2] <= edges3[:, 1]), sse, np.inf).reshape(len(heights), n_deltas, n_shadows)
    which = np.argmin(sse, axis=2)
    return np.take_along_axis(sse, which[..., None], axis=2)[..., 0], SHADOW_WIDTHS_MM[which]


def _refine_line(side: SideProfile, span: tuple[float, float], delta0: float, width_mm: float, from_top: bool,
                 shadow_mm: float = 0.0, pieces: int = 3) -> tuple[float, float, float]:
    """Where the silhouette's line along this side lies: (its offset from the side's line at the
    side's middle, its turn counter-clockwise in radians, the turn's weight), from the edge's
    position in `pieces` runs of clean lines along the side."""
    step = 0.1
    deltas = delta0 + np.arange(-0.3, 0.3 + 1e-9, step)
    edges = _edges(side, deltas, np.array([width_mm]), from_top)
    shadowed = side.near and shadow_mm > 0
    if shadowed:
        edges = with_shadows(edges, np.array([shadow_mm]))
    else:
        side = side.without_reach
    i0, i1 = _lines_in(side, span)
    chunks = np.array_split(np.arange(i0, i1), min(pieces, i1 - i0))
    profiles = np.stack([side.lines[c].mean(axis=0) for c in chunks])  # (P, N, C)
    tiled = np.tile(edges, (len(chunks), 1))
    sse, levels = step_fit(profiles, side.u_mm, tiled, side.sigma_mm)
    if side.near:
        sse = sse + wall_penalty(levels, tiled)
    if shadowed:
        sse = sse + shadow_penalty(levels, tiled)
    ts, ds = [], []
    for chunk, row in zip(chunks, sse.reshape(len(chunks), len(deltas))):
        i = int(np.argmin(row))
        d = deltas[i]
        if 0 < i < len(row) - 1:  # parabola through the minimum
            denom = row[i - 1] - 2 * row[i] + row[i + 1]
            if denom > 0:
                d += step * 0.5 * (row[i - 1] - row[i + 1]) / denom
        ts.append(float(side.t_mm[chunk].mean()))
        ds.append(float(d))
    ts_a, ds_a = np.array(ts), np.array(ds)
    if len(ts_a) >= 2 and np.ptp(ts_a) > 1e-6:  # the least-squares line through the pieces
        tc = ts_a - ts_a.mean()
        slope = float(tc @ (ds_a - ds_a.mean()) / (tc @ tc))
        intercept = float(ds_a.mean()) - slope * float(ts_a.mean())
        weight = float(np.ptp(ts_a)) ** 3
    else:
        slope, intercept, weight = 0.0, float(ds_a.mean()), 0.0
    # Points c + n (o + intercept + slope t) + e t: the side turned by atan(slope) towards n, which
    # is counter-clockwise for every side of `TableRect.sides()`. A turn is known to ~1 / length^1.5.
    outer = width_mm if (from_top and side.near) else 0.0
    return float(intercept) + outer, math.atan(float(slope)), weight


def _moved(rect: TableRect, placed: list[tuple[float, float, float]]) -> TableRect:
    """The rectangle with each side moved by its offset (order of `TableRect.sides()`), turned by the
    sides' weighted turn: a long side's turn is worth more than a stud-wide one's."""
    weights = np.array([p[2] for p in placed])
    turn = float(np.dot(weights, [p[1] for p in placed]) / weights.sum()) if weights.sum() > 0 else 0.0
    plus_a, minus_a = rect.half_mm[0] + placed[2][0], rect.half_mm[0] + placed[3][0]
    plus_b, minus_b = rect.half_mm[1] + placed[0][0], rect.half_mm[1] + placed[1][0]
    centre = rect.centre + rect.axis * (plus_a - minus_a) / 2 + rect.across * (plus_b - minus_b) / 2
    c, s = math.cos(turn), math.sin(turn)
    axis = np.array([c * rect.axis[0] - s * rect.axis[1], s * rect.axis[0] + c * rect.axis[1]])
    return TableRect(centre, axis, ((plus_a + minus_a) / 2, (plus_b + minus_b) / 2))


def top_faces(silhouette: TableRect, foot_mm: np.ndarray, heights_mm: np.ndarray, camera_height_mm: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """The top face (cast) inside a box's silhouette rectangle for each height: the near sides move
    in by their walls. (centres (H, 2), half sides (H, 2)); a height whose walls would eat the
    whole rectangle leaves a sliver (half side 0.05 mm)."""
    heights = np.asarray(heights_mm, float)
    centres = np.repeat(silhouette.centre[None, :], len(heights), axis=0)
    halves = np.empty((len(heights), 2))
    for i, (axis, half) in enumerate(((silhouette.axis, silhouette.half_mm[0]),
                                      (silhouette.across, silhouette.half_mm[1]))):
        plus = wall_width_mm(float(axis @ (silhouette.centre + axis * half - foot_mm)), heights, camera_height_mm)
        minus = wall_width_mm(float(-axis @ (silhouette.centre - axis * half - foot_mm)), heights, camera_height_mm)
        centres -= axis[None, :] * ((plus - minus) / 2)[:, None]
        halves[:, i] = np.maximum(half - (plus + minus) / 2, 0.05)
    return centres, halves


def top_face(silhouette: TableRect, foot_mm: np.ndarray, height_mm: float, camera_height_mm: float) -> TableRect:
    centres, halves = top_faces(silhouette, foot_mm, np.array([height_mm]), camera_height_mm)
    return TableRect(centres[0], silhouette.axis, (float(halves[0, 0]), float(halves[0, 1])))


def _assess(sample: Sampler, rect: TableRect, foot: np.ndarray, camera_height_mm: float, px_per_mm, heights: np.ndarray,
            deltas: np.ndarray, from_top: bool = False, wall_weight: float = 1.0, adjoining: tuple[TableRect, ...] = (),
            side_sigma_mm: float = SIDE_SIGMA_MM, shadows: bool = False):
    # Profiles reach across the widest wall among the heights asked about (and no further).
    sides = _sample_sides(sample, rect, foot, camera_height_mm, px_per_mm, float(heights.max()) + PLATE_MM, from_top,
                          adjoining)
    faces = None if from_top else top_faces(rect, foot, heights, camera_height_mm)
    fits = [_side_costs(s, rect, foot, heights, camera_height_mm, deltas, from_top, faces, shadows) for s in sides]
    cost = np.sum([f[0] for f in fits], axis=0) * wall_weight
    if faces is not None:
        cost = cost + _size_cost(heights, camera_height_mm, faces[1], side_sigma_mm)
    return sides, fits, cost


def fit_box(sample: Sampler, start: TableRect, foot_mm: np.ndarray, camera_height_mm: float,
            px_per_mm: Callable[[np.ndarray, np.ndarray], float], heights_mm: tuple[float, ...] = HEIGHTS_MM,
            start_is_top: bool = False, adjoining: tuple[TableRect, ...] = (),
            side_sigma_mm: float = SIDE_SIGMA_MM) -> BoxFit | None:
    """Fit a brick whose silhouette on the table plane, boxed in a rectangle, is near `start`
    (or whose top face is, with `start_is_top`). `adjoining`: the top faces of other parts of the
    same wall (an L, a U, a ring): profiles that cross them are left out. `side_sigma_mm`: how
    well the top face's sides are measured (a top the camera clipped blooms past its edges)."""
    heights = np.asarray(heights_mm, float)
    foot = np.asarray(foot_mm, float)
    wide, narrow = np.arange(-1.6, 1.6 + 1e-9, 0.2), np.arange(-0.4, 0.4 + 1e-9, 0.1)

    def refine(rect: TableRect, sides, fits, cost, candidates: np.ndarray, from_top: bool) -> TableRect | None:
        """Move each side to where its profile puts the edges for the best height."""
        best = int(np.argmin(cost))
        h = float(candidates[best])
        placed = []
        for s, f in zip(sides, fits):
            # A wall measured from the top face's edge: D is the top's, the footprint's is D / k.
            d_foot = s.foot_distance_mm * (camera_height_mm - h) / camera_height_mm if from_top else s.foot_distance_mm
            width = float(wall_width_mm(d_foot, h, camera_height_mm))
            span = _spans(rect, s, foot, np.array([h]), camera_height_mm, from_top)[0]
            if s.blocked and span[1] - span[0] <= 1e-9:
                # All along another part of the wall (a brick touching it): the side stays where
                # the start put it (the colours' boundary), the silhouette's wall added.
                placed.append((width if (from_top and s.near) else 0.0, 0.0, 0.0))
                continue
            placed.append(_refine_line(s, (float(span[0]), float(span[1])), float(f[1][best]), width, from_top,
                                       float(f[2][best])))
        new = _moved(rect, placed)
        slack = max((float(wall_width_mm(s.foot_distance_mm, h, camera_height_mm)) for s in sides), default=0.0)
        return new if _sane(new, rect, slack if from_top else 0.0) else None

    # One pass over every height from the start places the sides for the height the walls favour;
    # a second, from that silhouette, chooses the height (the walls weighed lightly against the
    # top face's size). Only when that is more than a plate off are the sides placed again for it
    # and the height chosen again. (A pass re-placing the sides at the same height in between
    # changed no figure of `bench vision --seed 1` and cost a fifth of the time.)
    sides, fits, cost = _assess(sample, start, foot, camera_height_mm, px_per_mm, heights, wide, start_is_top,
                                WALL_WEIGHT_FIT, adjoining, shadows=True)
    rect = refine(start, sides, fits, cost, heights, start_is_top)
    placed_for = float(heights[int(np.argmin(cost))])
    for attempt in range(2):
        if rect is None:
            return None
        sides, fits, cost = _assess(sample, rect, foot, camera_height_mm, px_per_mm, heights, narrow,
                                    wall_weight=WALL_WEIGHT_HEIGHT, adjoining=adjoining, side_sigma_mm=side_sigma_mm)
        settled = float(heights[int(np.argmin(cost))])
        if attempt == 1 or abs(settled - placed_for) <= PLATE_MM + 1e-6:
            break  # a plate moves a wall by a few tenths of a mm: the edges stand
        only = np.array([settled])
        sides, fits, cost = _assess(sample, rect, foot, camera_height_mm, px_per_mm, only, narrow, adjoining=adjoining,
                                    side_sigma_mm=side_sigma_mm, shadows=True)
        rect = refine(rect, sides, fits, cost, only, False)
        placed_for = settled
    best = int(np.argmin(cost))
    h = float(heights[best])
    top = top_face(rect, foot, h, camera_height_mm)
    return BoxFit(top=top, silhouette=rect, height_mm=h,
                  footprint=top.scaled_about(foot, (camera_height_mm - h) / camera_height_mm),
                  height_cost={float(hh): float(c - cost[best]) for hh, c in zip(heights, cost)})


def _size_cost(heights: np.ndarray, camera_height_mm: float, halves: np.ndarray,
               side_sigma_mm: float = SIDE_SIGMA_MM) -> np.ndarray:
    """How far the top face's size is from a brick's (sides 8n - 0.2 mm), for each height, from
    the top faces' half sides (H, 2) that `top_faces` gives."""
    k = (camera_height_mm / (camera_height_mm - heights))[:, None]
    length = 2 * halves / k
    studs = np.maximum(1, np.round((length + GAP_MM) / STUD_MM))
    return (((length - (studs * STUD_MM - GAP_MM)) * k / side_sigma_mm) ** 2 / 2).sum(axis=1)


def _sane(new: TableRect, old: TableRect, slack_mm: float) -> bool:
    """A fit that runs away (a side jumping to another edge) is not a brick."""
    return (min(new.half_mm) > 2.0 and float(np.linalg.norm(new.centre - old.centre)) < 6.0 + slack_mm
            and all(abs(a - b) < 4.0 + slack_mm for a, b in zip(new.half_mm, old.half_mm)))
