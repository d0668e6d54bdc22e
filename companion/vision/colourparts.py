"""A candidate's cut-out split by colour: bricks of different colours that touch, a top and its walls.

Pixels are grouped by chromaticity (shares of the channels' sum, blind to shade) against the
noise a camera pixel of that brightness carries; neutral colours (white, gray, black) are split
by lightness instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.cutout import FINE_MM, MIN_AREA_MM2, PART_DISC, filled_blob
from companion.vision.shade import linear_light
from companion.vision.touching import TABLE, UNKNOWN

CHROMA_APART = 12.0  # chromaticity (per cent of the channels' sum): closer is one colour (JPEG keeps colour at a quarter of the pixels)
MAX_PARTS = 4
# A finer split's margin, a share of CHROMA_APART: red and orange tops under a warm lamp are ~11
# apart, each spread by 2-3 (path traced), and the usual margin and noise (~14) join them.
FINER_APART = 0.5
MIN_PART_SHARE = 0.05  # of a candidate's pixels, the least a colour of its own has


def chromaticity(bgr: np.ndarray) -> np.ndarray:
    """Each channel's share of the sum, in per cent (..., 3): a brick's walls are its top's colour
    in shade, and shade scales every channel alike (in linear light, and through any power-law
    tone curve), so its walls and top share their chromaticity."""
    values = np.asarray(bgr, np.float32)
    return 100.0 * values / np.maximum(values.sum(axis=-1, keepdims=True), 1.0)


def chroma_tolerance(bgr: np.ndarray) -> float | np.ndarray:
    """How far a colour's chromaticity wanders with noise: further for a dark one (a black brick's
    channels are a few levels each). Of one colour (3,), or of each pixel of an image."""
    return CHROMA_APART + chroma_noise(np.sum(bgr, axis=-1, dtype=np.float64))


def chroma_noise(channel_sum: float | np.ndarray) -> float | np.ndarray:
    """What noise adds to the chromaticity of a colour whose channels sum to this (8-bit)."""
    return 800.0 / (channel_sum + 1.0)


@dataclass(frozen=True)
class ColourParts:
    """A candidate split by colour: each part's core (what a brick's narrowest side fits in), and
    every point of the candidate labelled with its part (UNKNOWN: a colour of no part, or of two
    parts of one colour that touch; TABLE: not the candidate)."""

    cores: list[np.ndarray]  # masks, largest first
    labels: np.ndarray  # int32 map, the fine window's shape


def _clusters(points: np.ndarray, k: int, rounds: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """k-means++ from a fixed seed: the same frame always splits the same way (OpenCV's k-means
    seeds from a global random state that any earlier call moves). Labels (N,), centres (k, D)."""
    pts = np.asarray(points, np.float64)
    rng = np.random.default_rng(0)
    centres = [pts[int(rng.integers(len(pts)))]]
    nearest = np.sum((pts - centres[0]) ** 2, axis=1)
    for _ in range(1, k):
        total = float(nearest.sum())
        pick = int(rng.choice(len(pts), p=nearest / total)) if total > 0 else int(rng.integers(len(pts)))
        centres.append(pts[pick])
        nearest = np.minimum(nearest, np.sum((pts - centres[-1]) ** 2, axis=1))
    c = np.array(centres)

    def nearest_centre(c: np.ndarray) -> np.ndarray:
        # |p - c|^2 with |p|^2 left out (the same for every centre): a matrix product, not (N, k, D)
        return np.argmin((c * c).sum(axis=1)[None] - 2.0 * (pts @ c.T), axis=1)

    for _ in range(rounds):
        labels = nearest_centre(c)
        counts = np.bincount(labels, minlength=k)[:, None]
        sums = np.stack([np.bincount(labels, weights=pts[:, d], minlength=k) for d in range(pts.shape[1])], axis=1)
        moved = np.where(counts > 0, sums / np.maximum(counts, 1), c)
        if np.allclose(moved, c, atol=1e-3):
            break
        c = moved
    return nearest_centre(c), c


def colour_parts(fine: np.ndarray, blob: np.ndarray, seen: np.ndarray, margin_share: float = 1.0,
                 shade_core: Callable[[np.ndarray], bool] | None = None) -> ColourParts | None:
    """A candidate's parts of one colour each: the pixels of `seen` (what differs from the table,
    near the candidate `blob`) clustered by chromaticity (a brick's walls are its top's colour in
    shade), clusters nearer than noise moves them merged, a neutral one split by brightness
    (`_split_by_lightness`: white beside black), each cluster's pieces that a brick's narrowest
    side fits in. None when the candidate is one colour. `margin_share` < 1: a finer split (the
    margin between colours narrowed, each pair judged by the darker one's noise). `shade_core`:
    whether a core is the table in shade, where the table's hue tells (two cores of one neutral
    colour joined share their points only where neither is)."""
    smooth = cv2.GaussianBlur(fine, (0, 0), 1.0)
    inside = np.flatnonzero(blob.ravel())
    if len(inside) < 50:
        return None
    pixels = chromaticity(smooth.reshape(-1, 3)[inside])
    step = max(1, len(pixels) // 4000)
    k = min(MAX_PARTS + 2, len(pixels[::step]))  # spare clusters for blurred edges and highlights
    assigned, centres = _clusters(pixels[::step], k)
    # Clusters closer than noise moves them are one colour (a brick's top and its shaded walls):
    # the largest first, each smaller one joining the largest within reach. (Chained, the blends
    # along the edge between a red and a yellow brick would make the two one colour.)
    apart = chroma_tolerance(np.median(smooth.reshape(-1, 3)[inside], axis=0))
    sizes = np.bincount(assigned, minlength=len(centres))
    if margin_share < 1.0:
        # A finer split narrows the margin, not the noise: the darker colour of a pair sets it
        # whole (a white brick's wall in shade wanders as far as any dark colour).
        sums = smooth.reshape(-1, 3)[inside][::step].astype(np.float64).sum(axis=1)
        light = [float(np.median(sums[assigned == i])) if sizes[i] else 0.0 for i in range(len(centres))]

    def within(i: int, j: int) -> bool:
        gap = float(np.linalg.norm(centres[i] - centres[j]))
        if margin_share >= 1.0:
            return gap < apart
        return gap < margin_share * CHROMA_APART + chroma_noise(min(light[i], light[j]))

    groups: list[list[int]] = []
    for i in np.argsort(-sizes):
        reach = [g for g in groups if within(int(i), g[0])]
        if reach:
            reach[0].append(int(i))
        else:
            groups.append([int(i)])
    # Each colour is its largest cluster's; a colour of a few pixels (a blend along an edge, a
    # highlight) is none, and its pixels go to the nearest colour.
    groups = [g for g in groups if sizes[g].sum() >= MIN_PART_SHARE * sizes.sum()]
    if len(groups) < 2:
        return None
    representatives = centres[[g[0] for g in groups]]
    near = cv2.dilate(blob, np.ones((7, 7), np.uint8)) & seen
    points = np.flatnonzero(near.ravel())
    hue = chromaticity(smooth.reshape(-1, 3)[points])
    grouped = np.full(blob.size, -1, np.int32)
    grouped[points] = np.argmin(np.linalg.norm(hue[:, None, :] - representatives[None], axis=2), axis=1)
    count_groups = _split_by_lightness(grouped, points, smooth.reshape(-1, 3)[points], representatives,
                                       blob.ravel()[points] > 0, len(inside))
    grouped = grouped.reshape(blob.shape)
    cores: list[np.ndarray] = []
    core_group: list[int] = []
    for gi in range(count_groups):
        # A narrower disc than a whole brick's: a one-stud brick beside a taller one shows only
        # part of its top.
        piece = cv2.morphologyEx(((grouped == gi) & (blob > 0)).astype(np.uint8), cv2.MORPH_OPEN, PART_DISC)
        count, comp, stats, _ = cv2.connectedComponentsWithStats(piece, connectivity=4)
        for c in range(1, count):
            if stats[c, cv2.CC_STAT_AREA] * FINE_MM ** 2 >= MIN_AREA_MM2 / 2:
                core = filled_blob((comp == c).astype(np.uint8), MIN_AREA_MM2 / 2)
                if core is not None:
                    cores.append(core)
                    core_group.append(gi)
    order = sorted(range(len(cores)), key=lambda i: -int(cores[i].sum()))
    cores, core_group = [cores[i] for i in order], [core_group[i] for i in order]
    labels = np.where(near > 0, UNKNOWN, TABLE).astype(np.int32)
    # A colour no brick has (a shadow on the table, the table blended into an edge) is not brick:
    # scored as table, so that no brick grows into it unpunished.
    # On a finer split, a colour with no core that the usual margin joins to a part's is that part
    # in other light (a tall brick's wall over its neighbour): unknown, not table. (The usual
    # split's colours are all that margin apart: no such colour.)
    coreless = [gi for gi in range(count_groups) if gi not in core_group]
    if margin_share < 1.0:
        cored = [representatives[g] for g in set(core_group) if g < len(representatives)]
        coreless = [gi for gi in coreless if gi >= len(representatives)
                    or not any(np.linalg.norm(representatives[gi] - r) < apart for r in cored)]
    labels[np.isin(grouped, coreless)] = TABLE
    for gi in range(count_groups):
        # A colour's points go to its core when they touch only that one; slivers a few pixels
        # wide (a bright brick's edge blurred into the table reads as gray) go to none.
        solid = cv2.morphologyEx((grouped == gi).astype(np.uint8), cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
        count, comp = cv2.connectedComponents(solid, connectivity=8)
        owners: dict[int, list[int]] = {}
        for i, (core, g) in enumerate(zip(cores, core_group)):
            if g != gi:
                continue
            for c in np.unique(comp[core > 0]):
                owners.setdefault(int(c), []).append(i)
        neutral = gi >= len(representatives) or _neutral(representatives[gi])  # (a lightness split's dark half is)
        for c, mine in owners.items():
            if c == 0:
                continue
            if len(mine) == 1:
                labels[comp == c] = mine[0]
                continue
            light = [float(linear_light(np.median(fine[cores[i] > 0], axis=0).astype(np.float64)).sum()) for i in mine]
            if (not neutral or max(light) < CORES_LIGHT_APART * min(light)
                    or (shade_core is not None and any(shade_core(cores[i]) for i in mine))):
                continue  # (one brick's parts, a wall's arms, a brick and its shadow on a table of a hue: unknown)
            # A black brick and its shadow on a mat of no hue, one neutral colour, their cores
            # far apart in light: each point to the nearer core.
            away = np.array([cv2.distanceTransform((cores[i] == 0).astype(np.uint8), cv2.DIST_L2, 3) for i in mine])
            rows = comp == c
            labels[rows] = np.asarray(mine)[np.argmin(away[:, rows], axis=0)]
    return ColourParts(cores, labels)


# Two cores of one neutral colour this many times apart in linear light are a black brick and its
# shadow on a mat of no hue (ray-cast, a black top and the shadow beside it on a gray grid mat:
# 3.3 apart); a wall's arms of one colour are lit alike.
CORES_LIGHT_APART = 2.0
NEUTRAL_CHROMA = 4.0  # chromaticity (per cent) this close to equal shares: white, gray or black
LIGHTER_APART = 5.0  # two neutral colours this many times apart in brightness are two (white and black: ~6 on the display)


def _neutral(chroma: np.ndarray) -> bool:
    """Whether a chromaticity (per cent, 3) is white, gray or black (NEUTRAL_CHROMA)."""
    return bool(np.abs(np.asarray(chroma) - 100.0 / 3).max() < NEUTRAL_CHROMA)


def _split_by_lightness(grouped: np.ndarray, points: np.ndarray, colours: np.ndarray, representatives: np.ndarray,
                        in_blob: np.ndarray, candidate_size: int) -> int:
    """White, gray and black share a chromaticity: a neutral colour group whose pixels fall in two
    brightnesses LIGHTER_APART or more apart (a white brick beside a black one, about six times
    apart on the display; a brick's wall in shade under a glossy top the lamp blew to white is up to
    four, path traced) is split in two, the darker a new group, in place in `grouped` (flat, the
    group of each point; `points` their indices, `colours` their BGR). Returns the number of groups."""
    count = len(representatives)
    for gi in range(len(representatives)):
        if not _neutral(representatives[gi]):
            continue
        mine = grouped[points] == gi
        if np.count_nonzero(mine & in_blob) < 2 * MIN_PART_SHARE * candidate_size:
            continue
        bright = np.log(colours[mine].astype(np.float64).sum(axis=1) + 3.0)
        labels, centres = _clusters(bright[:, None], 2)
        dark = int(np.argmin(centres[:, 0]))
        apart = abs(float(centres[1, 0] - centres[0, 0]))
        shares = np.bincount(labels[in_blob[mine]], minlength=2)
        if apart < math.log(LIGHTER_APART) or shares.min() < MIN_PART_SHARE * candidate_size:
            continue
        index = points[mine][labels == dark]
        grouped[index] = count
        count += 1
    return count
