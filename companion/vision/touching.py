"""Touching bricks of different colours, fitted together on their colour map (render and compare).

Bricks that touch hide one another: the taller one's walls cover part of its neighbour's top, so
no brick's outline can be fitted on its own. Here every brick is a hypothesis (a footprint of
8n - 0.2 mm sides and a height), and the hypotheses together predict which brick each point of
the table-plane view shows: the ray from the camera to that point enters the box whose top it
meets highest. The prediction is compared with the colour map (which part of the candidate each
point's colour belongs to, or the table); each brick in turn is moved, resized and raised to the
placement that agrees best, the others held, until nothing moves. Only the colour regions are
used, not their shading: it holds under any light that leaves the colours apart.

Pure numpy: the colour map comes in as labels on a grid of table points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from companion.vision.boxfit import GAP_MM, HEIGHTS_MM, STUD_MM, Rect

# A brick's moves per step, along and across its axis: coarse, then fine about the best.
COARSE_SHIFTS_MM = np.arange(-3.0, 3.0 + 1e-9, 1.0)
FINE_SHIFTS_MM = np.arange(-0.75, 0.75 + 1e-9, 0.25)
ROUNDS = 3
UNKNOWN = -2  # a point whose colour belongs to no part (a blurred edge): left out of the score
TABLE = -1


@dataclass(frozen=True)
class Placed:
    """One brick as fitted: footprint, height, and how well the map agrees per candidate height."""

    footprint: Rect
    height_mm: float
    agreement: float  # share of the scored points the whole fit predicts right
    explained: float  # share of this brick's own colour's points that it is predicted to show
    height_cost: dict[float, float]  # per candidate height: points predicted wrong, beyond the best


class Rays:
    """The rays from the camera to points on the table plane (N, 2), as the box tests need them:
    on the ray at height z the point seen is p + z / Cz (foot - p)."""

    def __init__(self, points_mm: np.ndarray, foot_mm: np.ndarray, camera_height_mm: float) -> None:
        self.points = np.asarray(points_mm, float)
        self.towards_foot = (np.asarray(foot_mm, float) - self.points) / camera_height_mm
        self._along: dict[tuple[float, float], tuple[np.ndarray, np.ndarray]] = {}

    def along(self, direction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each point's position along a direction and the ray's drift per mm of height (with no
        zero: a ray exactly parallel to a side is as good as one a hair off)."""
        key = (float(direction[0]), float(direction[1]))
        if key not in self._along:
            drift = self.towards_foot @ direction
            drift = np.where(np.abs(drift) < 1e-9, 1e-9, drift)
            self._along[key] = (self.points @ direction, 1.0 / drift)
        return self._along[key]

    def entry_heights(self, footprints: list[Rect], heights_mm: np.ndarray) -> np.ndarray:
        """For boxes on `footprints` (F, all turned alike) of each height (H,): the height at which
        each ray enters the box, -1 where it misses it (F, H, N)."""
        axis = footprints[0].axis
        centres = np.array([f.centre for f in footprints])
        halves = np.array([f.half_mm for f in footprints])
        lo = hi = None
        for k, direction in enumerate((axis, np.array([-axis[1], axis[0]]))):
            position, inverse = self.along(direction)
            u0 = position[None, :] - (centres @ direction)[:, None]  # (F, N)
            half = halves[:, k:k + 1]
            a, b = (-half - u0) * inverse, (half - u0) * inverse
            first, last = np.minimum(a, b), np.maximum(a, b)
            lo = first if lo is None else np.maximum(lo, first)
            hi = last if hi is None else np.minimum(hi, last)
        lo = np.maximum(lo, 0.0)
        top = np.minimum(hi[:, None, :], np.asarray(heights_mm, float)[None, :, None])  # (F, H, N)
        return np.where(lo[:, None, :] <= top, top, -1.0)


def agreement(points_mm: np.ndarray, labels: np.ndarray, boxes: list[tuple[Rect, float]], foot_mm: np.ndarray,
              camera_height_mm: float) -> float:
    """Share of the scored points of a colour map (`fit_touching`'s labels) that boxes (footprint,
    height; box i is part i) predict right."""
    scored = labels != UNKNOWN
    rays = Rays(points_mm[scored], foot_mm, camera_height_mm)
    entries = np.array([rays.entry_heights([f], np.array([h]))[0, 0] for f, h in boxes])
    seen = np.where(entries.max(axis=0) < 0, TABLE, np.argmax(entries, axis=0))
    return float(np.mean(seen == labels[scored]))


def _snap_half(half_mm: float) -> float:
    studs = max(1, int(round((2 * half_mm + GAP_MM) / STUD_MM)))
    return (studs * STUD_MM - GAP_MM) / 2


def fit_touching(points_mm: np.ndarray, labels: np.ndarray, starts: list[Rect], foot_mm: np.ndarray,
                 camera_height_mm: float, heights_mm: tuple[float, ...] = HEIGHTS_MM) -> list[Placed]:
    """Bricks for parts 0..len(starts)-1 of a colour map (`labels` (N,) per point: a part, TABLE,
    or UNKNOWN), each started from its top face's rectangle (`starts`, cast: a part's top as the
    camera sees it, perhaps cut by a taller neighbour)."""
    heights = np.asarray(heights_mm, float)
    scored = labels != UNKNOWN
    pts, want = points_mm[scored], labels[scored]
    rays = Rays(pts, foot_mm, camera_height_mm)
    mid_h = float(np.median(heights))
    footprints, tops = [], []
    for s in starts:
        # The top uncast at a middle height, sides snapped to bricks; each part at its own.
        k = camera_height_mm / (camera_height_mm - mid_h)
        f = s.scaled_about(foot_mm, 1 / k)
        footprints.append(Rect(f.centre, f.axis, (_snap_half(f.half_mm[0]), _snap_half(f.half_mm[1]))))
        tops.append(mid_h)

    def entry(f: Rect, h: float) -> np.ndarray:
        return rays.entry_heights([f], np.array([h]))[0, 0]

    def agreement(fps: list[Rect], hs: list[float]) -> float:
        entries = np.array([entry(f, h) for f, h in zip(fps, hs)])
        seen = np.where(entries.max(axis=0) < 0, TABLE, np.argmax(entries, axis=0))
        return float(np.mean(seen == want))

    def wrong_for(i: int, candidates: list[Rect], hs: np.ndarray) -> np.ndarray:
        """Points predicted wrong for each candidate footprint x height of brick i (C, H)."""
        other_entry = np.full(len(pts), -1.0)
        other_label = np.full(len(pts), TABLE)
        rest = [(j, f, h) for j, (f, h) in enumerate(zip(footprints, tops)) if j != i]
        if rest:
            entries = np.array([entry(f, h) for _, f, h in rest])
            other_entry = entries.max(axis=0)
            idx = np.argmax(entries, axis=0)
            other_label = np.where(other_entry < 0, TABLE, np.array([j for j, _, _ in rest])[idx])
        mine = rays.entry_heights(candidates, hs)  # (C, H, N)
        seen = np.where(mine > other_entry, i, other_label)
        return np.sum(seen != want, axis=2)

    for _ in range(ROUNDS):
        moved = False
        for i in range(len(footprints)):
            f = footprints[i]
            # where: moves along and across the axis at the current size and height
            best = f
            for shifts in (COARSE_SHIFTS_MM, FINE_SHIFTS_MM):  # 1 mm steps, then a quarter
                shifted = [Rect(best.centre + du * f.axis + dv * f.across, f.axis, f.half_mm)
                           for du in shifts for dv in shifts]
                costs = wrong_for(i, shifted, np.array([tops[i]]))[:, 0]
                best = shifted[int(np.argmin(costs))]
            # how big and how tall: a stud more or less on either side, kept where it was
            sized = []
            for da in (-STUD_MM, 0.0, STUD_MM):
                for db in (-STUD_MM, 0.0, STUD_MM):
                    ha, hb = best.half_mm[0] + da / 2, best.half_mm[1] + db / 2
                    if min(ha, hb) * 2 < STUD_MM - GAP_MM - 1e-6:
                        continue
                    for sa in ((-1, 1) if da else (0,)):
                        for sb in ((-1, 1) if db else (0,)):
                            centre = best.centre + sa * da / 2 * best.axis + sb * db / 2 * best.across
                            sized.append(Rect(centre, best.axis, (ha, hb)))
            # the size at the current height, then the height at that size
            new_f = sized[int(np.argmin(wrong_for(i, sized, np.array([tops[i]]))[:, 0]))]
            new_h = float(heights[int(np.argmin(wrong_for(i, [new_f], heights)[0]))])
            if not (np.allclose(new_f.centre, f.centre, atol=1e-6) and new_f.half_mm == f.half_mm
                    and new_h == tops[i]):
                moved = True
            footprints[i], tops[i] = new_f, new_h
        if not moved:
            break
    total = agreement(footprints, tops)
    placed = []
    for i, (f, h) in enumerate(zip(footprints, tops)):
        curve = wrong_for(i, [f], heights)[0]
        entries = np.array([entry(g, t) for g, t in zip(footprints, tops)])
        seen = np.where(entries.max(axis=0) < 0, TABLE, np.argmax(entries, axis=0))
        explained = float(np.mean(seen[want == i] == i)) if np.any(want == i) else 0.0
        placed.append(Placed(f, h, total, explained,
                             {float(hh): float(c - curve.min()) for hh, c in zip(heights, curve)}))
    return placed
