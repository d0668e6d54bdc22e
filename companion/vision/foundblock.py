"""A block as the finder reports it: footprint, height and colour, with its fit and how sure each is."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from companion.vision.brickfit import GAP_MM, HEIGHTS_MM, STUD_MM, TOWER_HEIGHTS_MM, BoxFit, TableRect, snap_side
from companion.vision.colours import TopReading

SNAP_MM = 1.2  # a fitted side this close to 8n - 0.2 mm is that brick's side
TALL_FROM_MM = 38.4  # a low fit this tall is tried again among every height up to a tower's
ALL_HEIGHTS_MM = HEIGHTS_MM + TOWER_HEIGHTS_MM[2:]
MAX_SIDE_MM = 400.0  # longer than a wall of bricks in a row on a game table: an arm, a book


@dataclass(frozen=True)
class FoundBlock:
    """One block found in a frame, in table mm, with its fit and the reasons for its confidence (the
    table state keeps its values as a `BlockState`; the rules see it as a `rules.table.Block`)."""

    footprint_mm: np.ndarray  # (N, 2) counter-clockwise: a brick's four corners, or a wall's outline
    height_mm: float
    color: str
    silhouette_fit: float  # how well the fitted box explains the candidate's outline (`_silhouette_fit`)
    height_confidence: float  # 0.5-1: share of the height's likelihood within half a brick
    colour_confidence: float
    studs: tuple[int, int] | None  # (long, short) when both sides snapped to brick sizes
    fit: BoxFit
    top_bgr: np.ndarray  # the top face's colour in the frame it was found in
    reading: TopReading | None = None  # what its colour was named from (a wall's arms: its longest's)
    hidden_under: int | None = None  # the mini that hides it whole (its extent a guess: `hidden_top`)

    @property
    def confidence(self) -> float:
        return float(min(self.silhouette_fit, self.height_confidence, 0.5 + 0.5 * self.colour_confidence))

    @property
    def height_range_mm(self) -> tuple[float, float]:
        """Where its top may be, from its fit's height likelihood (`BoxFit.height_range_mm`)."""
        low, high = self.fit.height_range_mm
        return min(low, self.height_mm), max(high, self.height_mm)


def snapped(footprint: TableRect, bloom_mm: float = 0.0) -> tuple[TableRect, tuple[int, int] | None]:
    """The footprint with sides of 8n - 0.2 mm where the fit is that close to one, or, failing
    that, longer than the brick's side below by up to `bloom_mm` more (a clipped top blooms past
    its edges, and the box under it with it)."""
    halves, studs = [], []
    for half in footprint.half_mm:
        n, off = snap_side(2 * half)
        near = abs(off) <= SNAP_MM
        if not near and bloom_mm > 0.0:
            n = max(1, int((2 * half + GAP_MM + SNAP_MM) // STUD_MM))  # the longest brick side at most SNAP_MM past it
            near = 2 * half - (n * STUD_MM - GAP_MM) <= SNAP_MM + bloom_mm
        if near:
            halves.append((n * STUD_MM - GAP_MM) / 2)
            studs.append(n)
        else:
            halves.append(half)
    rect = TableRect(footprint.centre, footprint.axis, (halves[0], halves[1]))
    return rect, (max(studs), min(studs)) if len(studs) == 2 else None


def brick_sized(start: TableRect) -> bool:
    """Could a fit start from this rectangle: no longer than a wall of bricks in a row, no
    narrower than a stud (less a blurred edge)?"""
    return max(start.half_mm) * 2 <= MAX_SIDE_MM and min(start.half_mm) * 2 >= STUD_MM - 3
