"""Where the table's top-down view differs from the table: the regions the block finder fits.

A region is a candidate when it is compact, not cut by the table's own edge band nor rising from
beside the table (a box, a shelf); a brick that differs only faintly is found from the faint
outline around what of it passes the level.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.setup_file import TableSpec
from companion.vision.cutout import COARSE_MM, MIN_AREA_MM2
from companion.vision.foundblock import MAX_SIDE_MM, TALL_FROM_MM, FoundBlock

EDGE_BAND_MM = 20.0  # the table's own edge (and the floor beyond) is not searched
BESIDE_NEAR_MM = 6.0  # pieces this close to what rises from beside the table belong to it
# A candidate that differs from the table only this much of the level (`faint_candidates`).
FAINT_SHARE = 0.6
# Of the ring around a faint candidate, at most this share is its colour (within half the level,
# two of the mat's median differences): a brick is set apart from the mat on every side, a patch of
# the mat's own pattern runs on into more of it.
FAINT_RING_ALIKE = 0.2
FAINT_AROUND_GROWTH = 1.5  # `faint_outlines_around`: a faint outline this many times the strong pixels in it
FAINT_AROUND_HOLDS = 0.8  # ... whose brick holds this much of the one block its strong piece was fitted as
# A candidate at COARSE_MM: its box (x, y, w, h px), its region (bool, the box's shape) and the
# colour distance from the table that counts for it.
CandidateRegion = tuple[tuple[int, int, int, int], np.ndarray, float]


def edges_facing(camera_mm: np.ndarray, table: TableSpec) -> tuple[bool, bool, bool, bool]:
    """The table's edges (x = 0, x = width, y = 0, y = depth) with the camera beyond them.

    Whatever stands on the table is seen on the table plane at or beyond its own footprint, away
    from the point under the camera; so a candidate running out of the table's window across an
    edge facing the camera rises from beside the table (a box, a shelf), not from on it."""
    x, y = float(camera_mm[0]), float(camera_mm[1])
    return x < 0.0, x > table.width_mm, y < 0.0, y > table.depth_mm


def without_edge_band(mask: np.ndarray) -> np.ndarray:
    """A coarse mask with the table's own edge band (EDGE_BAND_MM) cleared, in place."""
    edge = int(math.ceil(EDGE_BAND_MM / COARSE_MM))
    mask[:edge], mask[-edge:], mask[:, :edge], mask[:, -edge:] = 0, 0, 0, 0
    return mask


def faint_candidates(closed: np.ndarray, diff: np.ndarray, level: float, mask: np.ndarray, clear: np.ndarray,
                      faint: tuple[int, np.ndarray, np.ndarray]) -> list[CandidateRegion]:
    """Candidates (box, region, their level) that differ from the table by FAINT_SHARE of the
    level and, in a few pixels, by the level itself, apart from `mask`'s: a black brick whose top
    carries the lamp's sheen on a textured gray mat differs from it barely more than the mat's own
    pattern (a mat's level is 4 of its median differences), in too few pixels for the opening to
    keep. Each must be a brick's size at least and set apart from the ring 2-6 mm around it
    (FAINT_RING_ALIKE): where the local table blurs two colours of a mat's pattern together, a
    patch of one differs from it as faintly, and runs on into its own colour."""
    low = FAINT_SHARE * level
    strong = (diff > level) & (clear > 0)
    count, labels, stats = faint  # (`faint_parts` at `low`)
    # (one that touches a candidate already is that candidate's blurred rim, or its shadow)
    seeded = (np.bincount(labels[strong], minlength=count) > 0) & ~(np.bincount(labels[mask > 0], minlength=count) > 0)
    found: list[CandidateRegion] = []
    for label in np.flatnonzero(seeded[1:]) + 1:
        x, y, w, h, area = (int(v) for v in stats[label])
        if area * COARSE_MM ** 2 < MIN_AREA_MM2 or max(w, h) * COARSE_MM > MAX_SIDE_MM:
            continue
        r = 3  # px: the ring's outer edge, 6 mm
        x0, y0, x1, y1 = max(x - r, 0), max(y - r, 0), min(x + w + r, diff.shape[1]), min(y + h + r, diff.shape[0])
        inside = (labels[y0:y1, x0:x1] == label).astype(np.uint8)
        ring = (cv2.dilate(inside, np.ones((2 * r + 1,) * 2, np.uint8)) > 0) & (cv2.dilate(inside, np.ones((3, 3), np.uint8)) == 0)
        ring &= clear[y0:y1, x0:x1] > 0
        crop = closed[y0:y1, x0:x1].astype(np.float32)
        colour = np.median(crop[inside > 0], axis=0)
        if not ring.any() or np.mean(np.linalg.norm(crop[ring] - colour, axis=1) < level / 2) > FAINT_RING_ALIKE:
            continue
        found.append(((x, y, w, h), labels[y:y + h, x:x + w] == label, low))
    return found


def faint_parts(diff: np.ndarray, low: float, clear: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """The connected parts (count, labels, stats) of where the coarse view differs from the table
    by `low` or more, opened against single pixels, clear of the window's edge band."""
    faint = without_edge_band(cv2.morphologyEx(((diff > low) & (clear > 0)).astype(np.uint8), cv2.MORPH_OPEN,
                                                np.ones((3, 3), np.uint8)))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(faint, connectivity=8)
    return count, labels, stats


def faint_outlines_around(faint: tuple[int, np.ndarray, np.ndarray], strong_in_faint: np.ndarray,
                           box: tuple[int, int, int, int], region: np.ndarray, low: float) -> list[CandidateRegion]:
    """Candidates (box, region, `low`) of the faint outlines (`faint_parts` at FAINT_SHARE of the
    level) around a strong candidate (`box`, `region`, at COARSE_MM), holding no other strong
    pixel (`strong_in_faint`: each faint part's), FAINT_AROUND_GROWTH times the strong pixels in them at least (else their
    blurred rim) and a brick's size. On a busy table (gravel, paving) a gray brick differs from it
    barely more than the table from itself, and only a part of it passes the level: a 140 mm2
    piece that fits no brick (path traced, a gray 1 x 4 brick 28.8 mm high on gravel, lost), or a
    2 x 1 brick 19.2 mm high (a gray 1 x 4 plate 6.4 mm high on paving). The outline need not be
    set apart from the ring around it (`faint_candidates`), for the piece in it was: a gray brick
    on gray gravel is the gravel's colour on average. What it gives stands only as a brick lower
    than a tower (`bricks_only`)."""
    count, labels, stats = faint
    x0, y0, w0, h0 = box
    held = np.bincount(labels[y0:y0 + h0, x0:x0 + w0][region], minlength=count)
    others = strong_in_faint > held
    found: list[CandidateRegion] = []
    for label in np.flatnonzero((held[1:] > 0) & ~others[1:]) + 1:
        x, y, w, h, area = (int(v) for v in stats[label])
        if (area * COARSE_MM ** 2 < MIN_AREA_MM2 or max(w, h) * COARSE_MM > MAX_SIDE_MM
                or area < FAINT_AROUND_GROWTH * held[label]):
            continue
        found.append(((x, y, w, h), labels[y:y + h, x:x + w] == label, low))
    return found


def bricks_only(blocks: list[FoundBlock]) -> list[FoundBlock]:
    """The blocks a faint outline gives that are bricks (both sides a brick's) lower than a tower:
    a faint outline is no evidence of more (unrestricted, a black brick with its shadow stood as a
    tower 86.4 mm high, and a gray brick as a box a plate low, 20 x 11 mm)."""
    return [b for b in blocks if b.studs is not None and b.height_mm < TALL_FROM_MM]


def holds_more_than(larger: FoundBlock, first: FoundBlock) -> bool:
    """Whether a box is larger than another (a box too) and holds FAINT_AROUND_HOLDS of its
    footprint."""
    if len(first.footprint_mm) != 4:
        return False
    a, b = (np.asarray(x.footprint_mm, np.float32) for x in (larger, first))
    inside, _ = cv2.intersectConvexConvex(a, b)
    first_mm2 = cv2.contourArea(b)
    return cv2.contourArea(a) > first_mm2 and inside >= FAINT_AROUND_HOLDS * first_mm2


def rising_from_beside(mask: np.ndarray, unbanded: np.ndarray, labels: np.ndarray, count: int,
                        edges: tuple[bool, bool, bool, bool]) -> np.ndarray:
    """For each candidate label, whether it is (or touches) what runs on, through the edge band,
    out of the window across an edge facing the camera. The mask is opened: a touch is 3 pixels
    wide at least. A big box's face matches the local table estimate (a median over a window it
    fills), so its outline breaks into pieces; the ones a few mm off the touching outline go too."""
    out = np.zeros(count, bool)
    if not any(edges):
        return out
    n_raw, raw = cv2.connectedComponents(unbanded, connectivity=8)
    border = np.zeros(n_raw, np.int64)
    for facing, line in zip(edges, (raw[:, 0], raw[:, -1], raw[0, :], raw[-1, :])):
        if facing:
            border += np.bincount(line, minlength=n_raw)
    border[0] = 0
    if not border.any():
        return out
    near = int(math.ceil(BESIDE_NEAR_MM / COARSE_MM))
    beside = cv2.dilate((border[raw] > 0).astype(np.uint8), np.ones((2 * near + 1, 2 * near + 1), np.uint8))
    touched = np.bincount(labels[(mask > 0) & (beside > 0)], minlength=count)
    return (touched > 0) & (np.arange(count) > 0)


def compact_enough(region: np.ndarray) -> bool:
    """Could this coarse blob be a brick's, or a wall's: at least 6 mm across and filling half its
    rectangle, or 6 mm thick all along (an L, a U, a castle's ring), not a printed line, not what
    is left around a masked mini?"""
    ys, xs = np.nonzero(region)
    (_, _), (w, h), _ = cv2.minAreaRect(np.stack([xs, ys], axis=1).astype(np.float32))
    if min(w, h) + 1 < 6.0 / COARSE_MM:
        return False
    if len(xs) >= 0.5 * (w + 1) * (h + 1):
        return True
    thick = cv2.erode(np.pad(region.astype(np.uint8), 1), np.ones((3, 3), np.uint8))  # 6 mm wide where it survives
    return np.count_nonzero(thick) >= 0.3 * len(xs)
