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

from companion.vision.brickfit import GAP_MM, HEIGHTS_MM, PLATE_MM, STUD_MM, TableRect, snap_side

# A brick's moves per step, along and across its axis: coarse, then fine about the best.
COARSE_SHIFTS_MM = np.arange(-3.0, 3.0 + 1e-9, 1.0)
FINE_SHIFTS_MM = np.arange(-0.75, 0.75 + 1e-9, 0.25)
ROUNDS = 3
UNKNOWN = -2  # a point whose colour belongs to no part (a blurred edge): left out of the score
TABLE = -1


@dataclass(frozen=True)
class Placed:
    """One brick as fitted: footprint, height, and how well the map agrees per candidate height."""

    footprint: TableRect
    height_mm: float
    agreement: float  # share of the scored points the whole fit predicts right
    explained: float  # share of this brick's own colour's points that it is predicted to show
    height_cost: dict[float, float]  # per candidate height: points predicted wrong, beyond the best


class Rays:
    """The rays from the camera to points on the table plane (N, 2), as the box tests need them:
    on the ray at height z the point seen is p + z / Cz (foot - p)."""

    def __init__(self, points_mm: np.ndarray, foot_mm: np.ndarray, camera_height_mm: float) -> None:
        # float32: a tenth of a micrometre is plenty, and the boxes' tests are most of the time
        self.points = np.asarray(points_mm, np.float32)
        self.towards_foot = ((np.asarray(foot_mm, float) - points_mm) / camera_height_mm).astype(np.float32)
        self._along: dict[tuple[float, float], tuple[np.ndarray, np.ndarray]] = {}

    def along(self, direction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each point's position along a direction and the ray's drift per mm of height (with no
        zero: a ray exactly parallel to a side is as good as one a hair off)."""
        key = (float(direction[0]), float(direction[1]))
        if key not in self._along:
            d = np.asarray(direction, np.float32)
            drift = self.towards_foot @ d
            drift = np.where(np.abs(drift) < 1e-9, np.float32(1e-9), drift)
            self._along[key] = (self.points @ d, (1.0 / drift).astype(np.float32))
        return self._along[key]

    def entry_heights(self, footprints: list[TableRect], heights_mm: np.ndarray) -> np.ndarray:
        """For boxes on `footprints` (F, all turned alike), box i `heights_mm[i]` tall: the height at
        which each ray enters each box, -1 where it misses it (F, N)."""
        return self.entries(footprints[0].axis, np.array([f.centre for f in footprints]),
                            np.array([f.half_mm for f in footprints]), heights_mm)

    def entries(self, axis: np.ndarray, centres: np.ndarray, halves: np.ndarray, heights_mm: np.ndarray,
                rows: np.ndarray | None = None) -> np.ndarray:
        """`entry_heights` for boxes turned along `axis`, on footprints of centres (F, 2) and half
        sides (F, 2), for every ray or those of `rows`."""
        lo, hi = self._interval(axis, centres, halves, rows)
        top = np.minimum(hi, np.asarray(heights_mm, float)[:, None])
        return np.where(lo <= top, top, -1.0)

    def near(self, axis: np.ndarray, centres: np.ndarray, halves: np.ndarray, heights_mm: np.ndarray,
             camera_height_mm: float, foot_mm: np.ndarray) -> np.ndarray:
        """The rays that may enter any of the boxes (centres (F, 2), halves (F, 2) along `axis` and
        across it, heights (F,)): those within the box bounding every footprint and its top cast
        from the camera, with a millimetre to spare (the others miss them all, whatever rounding)."""
        k = camera_height_mm / (camera_height_mm - np.asarray(heights_mm, float))
        keep = np.ones(len(self.points), bool)
        for j, direction in enumerate((axis, np.array([-axis[1], axis[0]]))):
            c, f, half = centres @ direction, float(np.asarray(foot_mm, float) @ direction), halves[:, j]
            top = f + k * (c - f)
            lo = min(float(np.min(c - half)), float(np.min(top - k * half))) - 1.0
            hi = max(float(np.max(c + half)), float(np.max(top + k * half))) + 1.0
            position = self.along(direction)[0]
            keep &= (position >= lo) & (position <= hi)
        return np.flatnonzero(keep)

    def _interval(self, axis: np.ndarray, centres: np.ndarray, halves: np.ndarray, rows: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Per footprint and ray (or each of `rows`), the heights between which the ray is inside
        the prism (F, N)."""
        centres = np.asarray(centres, np.float32)
        halves = np.asarray(halves, np.float32)
        lo = hi = None
        for k, direction in enumerate((axis, np.array([-axis[1], axis[0]]))):
            position, inverse = self.along(direction)
            if rows is not None:
                position, inverse = position[rows], inverse[rows]
            u0 = position[None, :] - (centres @ direction.astype(np.float32))[:, None]  # (F, N)
            half = halves[:, k:k + 1]
            a, b = (-half - u0) * inverse, (half - u0) * inverse
            first, last = np.minimum(a, b), np.maximum(a, b)
            lo = first if lo is None else np.maximum(lo, first)
            hi = last if hi is None else np.minimum(hi, last)
        return np.maximum(lo, 0.0), hi


def predicted(rays: Rays, boxes: list[tuple[TableRect, float]]) -> np.ndarray:
    """Which box (its index) each ray sees first, or TABLE (N,)."""
    entries = np.array([rays.entry_heights([f], np.array([h]))[0] for f, h in boxes])
    return np.where(entries.max(axis=0) < 0, TABLE, np.argmax(entries, axis=0))


def agreement(points_mm: np.ndarray, labels: np.ndarray, boxes: list[tuple[TableRect, float]], foot_mm: np.ndarray,
              camera_height_mm: float, parts: list[int] | None = None) -> float:
    """Share of the scored points of a colour map (`fit_touching`'s labels) that boxes (footprint,
    height) predict right: box i is part i, or part `parts[i]`."""
    scored = labels != UNKNOWN
    seen = predicted(Rays(points_mm[scored], foot_mm, camera_height_mm), boxes)
    if parts is not None:
        seen = np.where(seen == TABLE, TABLE, np.asarray(parts)[np.clip(seen, 0, None)])
    return float(np.mean(seen == labels[scored]))


def _snap_half(half_mm: float) -> float:
    """Half a side snapped to the nearest brick's (8n - 0.2 mm)."""
    return (snap_side(2 * half_mm)[0] * STUD_MM - GAP_MM) / 2


def fit_touching(points_mm: np.ndarray, labels: np.ndarray, starts: list[TableRect], foot_mm: np.ndarray,
                 camera_height_mm: float, heights_mm: tuple[float, ...] = HEIGHTS_MM) -> list[Placed]:
    """Bricks for parts 0..len(starts)-1 of a colour map (`labels` (N,) per point: a part, TABLE,
    or UNKNOWN), each started from its top face's rectangle (`starts`, cast: a part's top as the
    camera sees it, perhaps cut by a taller neighbour)."""
    heights = np.asarray(heights_mm, float)
    scored = labels != UNKNOWN
    pts, want = points_mm[scored], labels[scored]
    rays = Rays(pts, foot_mm, camera_height_mm)
    mid_h = float(np.median(heights))

    def k(h: float) -> float:
        return camera_height_mm / (camera_height_mm - h)

    def footprint_centres(top_centres_mm: np.ndarray, heights_mm: np.ndarray) -> np.ndarray:
        """The footprints' centres (N, 2) of bricks whose tops, seen from the camera, are centred at
        `top_centres_mm` (N, 2, cast) and which are `heights_mm` (N,) tall."""
        ks = camera_height_mm / (camera_height_mm - np.asarray(heights_mm, float))
        return foot_mm + (top_centres_mm - foot_mm) / ks[:, None]

    def footprint(top_centre: np.ndarray, axis: np.ndarray, halves: tuple[float, float], h: float) -> TableRect:
        """A brick whose top, seen from the camera, is centred at `top_centre` (cast)."""
        return TableRect(footprint_centres(top_centre[None], np.array([h]))[0], axis, halves)

    # Each brick as the centre of its top as the camera sees it (what the map pins down best),
    # its sides (snapped to bricks) and its height: raising it at a fixed top moves its
    # footprint towards the camera's foot, as the wall grows.
    top_centres, sides, tops = [], [], []
    for s in starts:
        f = s.scaled_about(foot_mm, 1 / k(mid_h))
        top_centres.append(s.centre.copy())
        sides.append((f.axis, (_snap_half(f.half_mm[0]), _snap_half(f.half_mm[1]))))
        tops.append(mid_h)

    def current(j: int) -> TableRect:
        return footprint(top_centres[j], sides[j][0], sides[j][1], tops[j])

    def entry(f: TableRect, h: float) -> np.ndarray:
        return rays.entry_heights([f], np.array([h]))[0]

    behind: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # per brick, the others' entries and labels

    def others(i: int) -> tuple[np.ndarray, np.ndarray]:
        """The highest entry of each ray into the bricks other than i, and which brick it is (or
        TABLE); kept while those bricks stay where they are."""
        if i not in behind:
            other_entry = np.full(len(pts), -1.0)
            other_label = np.full(len(pts), TABLE)
            rest = [j for j in range(len(tops)) if j != i]
            if rest:
                entries = np.array([entry(current(j), tops[j]) for j in rest])
                other_entry = entries.max(axis=0)
                other_label = np.where(other_entry < 0, TABLE, np.array(rest)[np.argmax(entries, axis=0)])
            behind[i] = other_entry, other_label
        return behind[i]

    def wrong_for(i: int, top_centres_mm: np.ndarray, halves_mm: np.ndarray, heights_mm: np.ndarray) -> np.ndarray:
        """Points predicted wrong for each option of brick i: its top's centre as seen (C, 2), its
        half sides (C, 2) and its height (C,). Only the rays that may enter one of the options are
        tested: the rest see what the other bricks give them whatever brick i does."""
        axis = sides[i][0]
        centres = footprint_centres(top_centres_mm, heights_mm)
        other_entry, other_label = others(i)
        rows = rays.near(axis, centres, halves_mm, heights_mm, camera_height_mm, foot_mm)
        outside = np.ones(len(pts), bool)
        outside[rows] = False
        fixed = int(np.count_nonzero(other_label[outside] != want[outside]))
        mine = rays.entries(axis, centres, halves_mm, heights_mm, rows)  # (C, rows)
        seen = np.where(mine > other_entry[rows], i, other_label[rows])
        return np.sum(seen != want[rows], axis=1) + fixed

    def best_of(i: int, top_centres_mm: np.ndarray, halves_mm: np.ndarray, heights_mm: np.ndarray) -> None:
        """Brick i set to the option (`wrong_for`'s) that predicts the map best."""
        best = int(np.argmin(wrong_for(i, top_centres_mm, halves_mm, heights_mm)))
        c, h = top_centres_mm[best], float(heights_mm[best])
        halves = (float(halves_mm[best, 0]), float(halves_mm[best, 1]))
        moved = not (np.array_equal(c, top_centres[i]) and halves == sides[i][1] and h == tops[i])
        top_centres[i], sides[i], tops[i] = c, (sides[i][0], halves), h
        if moved:
            for j in [j for j in behind if j != i]:
                del behind[j]

    def as_placed(i: int, heights_mm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Brick i's top and sides as they are, at each of `heights_mm`."""
        n = len(heights_mm)
        return np.repeat(top_centres[i][None], n, axis=0), np.repeat(np.array([sides[i][1]]), n, axis=0), heights_mm

    for _ in range(ROUNDS):
        before = [(c.copy(), sd[1], h) for c, sd, h in zip(top_centres, sides, tops)]
        for i in range(len(tops)):
            axis, across = sides[i][0], np.array([-sides[i][0][1], sides[i][0][0]])
            # how tall, at the top as it is
            best_of(i, *as_placed(i, heights))
            # where the top is, with the height a plate either way (the two are coupled)
            near_heights = np.array([float(h) for h in heights if abs(h - tops[i]) <= PLATE_MM + 1e-6])
            for shifts, hs in ((COARSE_SHIFTS_MM, near_heights), (FINE_SHIFTS_MM, np.array([tops[i]]))):
                du, dv, hh = (g.ravel() for g in np.meshgrid(shifts, shifts, hs, indexing="ij"))
                centres = top_centres[i][None] + du[:, None] * axis[None] + dv[:, None] * across[None]
                best_of(i, centres, np.repeat(np.array([sides[i][1]]), len(hh), axis=0), hh)
            # how big: a stud more or less on either side, the other sides kept where they are
            options = []
            half_a, half_b = sides[i][1]
            for da in (-STUD_MM, 0.0, STUD_MM):
                for db in (-STUD_MM, 0.0, STUD_MM):
                    ha, hb = half_a + da / 2, half_b + db / 2
                    if min(ha, hb) * 2 < STUD_MM - GAP_MM - 1e-6:
                        continue
                    for sa in ((-1, 1) if da else (0,)):
                        for sb in ((-1, 1) if db else (0,)):
                            move = (sa * da / 2 * axis + sb * db / 2 * across) * k(tops[i])
                            options.append((top_centres[i] + move, (ha, hb)))
            best_of(i, np.array([c for c, _ in options]), np.array([sd for _, sd in options]),
                    np.full(len(options), tops[i]))
        if all(np.allclose(c, b[0], atol=1e-9) and sd[1] == b[1] and h == b[2]
               for c, sd, h, b in zip(top_centres, sides, tops, before)):
            break
    footprints = [current(j) for j in range(len(tops))]
    seen = predicted(rays, list(zip(footprints, tops)))
    total = float(np.mean(seen == want))
    placed = []
    for i, (f, h) in enumerate(zip(footprints, tops)):
        curve = wrong_for(i, *as_placed(i, heights))
        explained = float(np.mean(seen[want == i] == i)) if np.any(want == i) else 0.0
        placed.append(Placed(f, h, total, explained,
                             {float(hh): float(c - curve.min()) for hh, c in zip(heights, curve)}))
    return placed


def courses_agreement(points_mm: np.ndarray, labels: np.ndarray, footprint: TableRect, height_mm: float,
                      foot_mm: np.ndarray, camera_height_mm: float, course_mm: float = PLATE_MM) -> float:
    """Share of the scored points of a colour map that one tall box (a tower) predicts right when
    its top and each course of its walls (`course_mm` tall, from the table up) may be any one
    colour: a tower's walls are bands of bricks and plates of any colours. Each course shows the
    colour most of its points have; the map's fit of touching bricks is scored alike
    (`agreement`), so the two read the same points."""
    scored = labels != UNKNOWN
    pts, want = points_mm[scored], labels[scored]
    entry = Rays(pts, foot_mm, camera_height_mm).entry_heights([footprint], np.array([height_mm]))[0]
    top_course = int(np.ceil(height_mm / course_mm)) + 1
    course = np.where(entry < 0, -1, np.where(entry >= height_mm - 1e-6, top_course,
                                              np.floor(entry / course_mm))).astype(np.int64)
    seen = np.full(len(want), TABLE)
    for value in np.unique(course[course >= 0]):
        rows = course == value
        kinds, counts = np.unique(want[rows], return_counts=True)
        seen[rows] = kinds[np.argmax(counts)]
    return float(np.mean(seen == want)) if len(want) else 0.0
