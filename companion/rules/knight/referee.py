"""What the camera rules on by itself: fortifications placed, sealed units, knocked-over units."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

from companion.rules.geometry import Point, Polygon, point_in_polygon, point_polygon_distance
from companion.rules.knight.measure import within_for_acting_side
from companion.rules.knight.squads import alive
from companion.rules.table import Block, Table, Unit
from companion.state import BRICK_MM

FORTIFY_FINGERS = 3
SAME_BLOCK_MM = 8.0  # footprint centres closer than this are the same block (camera noise)
SEAL_CELL_MM = 4.0
SEAL_SEARCH_MM = 300.0  # walls further than this from the unit do not box it in


@dataclass(frozen=True)
class Fortification:
    block: int
    bricks: int  # AP it costs: 1 per block placed (stacking counts per brick height)
    in_reach: bool
    nearest_unit: int | None
    gap_mm: float
    why: str


def _centre(block: Block) -> tuple[float, float]:
    xs, ys = zip(*block.footprint)
    return sum(xs) / len(xs), sum(ys) / len(ys)


def fortifications(before: Table, after: Table, player: str) -> list[Fortification]:
    """Blocks that appeared (or grew) between two states, each checked against the 3-finger rule."""
    profile = after.player(player)
    out = []
    for block in after.blocks:
        old = next((b for b in before.blocks if math.dist(_centre(b), _centre(block)) < SAME_BLOCK_MM), None)
        if block.hidden_under is not None and any(point_in_polygon(_centre(block), b.footprint) for b in before.blocks):
            continue  # a unit climbed onto a block seen before and hides it now: its footprint is a guess
        grown = block.height_mm - (old.height_mm if old else 0.0)
        if grown < BRICK_MM / 3 - 0.5:  # less than a plate: the same block, seen again
            continue
        bricks = max(1, round(grown / BRICK_MM))
        units = [u for u in alive(after) if u.player == player]
        gaps = [(point_polygon_distance(u.centre, block.footprint) - u.base_radius_mm, u.id) for u in units]
        gap, nearest = min(gaps) if gaps else (math.inf, None)
        ok = nearest is not None and within_for_acting_side(gap, FORTIFY_FINGERS * profile.finger_mm, profile)
        why = (f"block {block.id}: {bricks} brick(s), {max(gap, 0):.0f} mm from unit {nearest}"
               + (f" (within {FORTIFY_FINGERS} fingers)" if ok else f": out of reach, more than {FORTIFY_FINGERS} fingers"))
        out.append(Fortification(block.id, bricks, ok, nearest, round(max(gap, 0.0), 1), why))
    return out


def sealed(table: Table, unit: Unit, cell_mm: float = SEAL_CELL_MM) -> bool:
    """Sarcophagus: blocks around the unit leave no gap its base can get out through."""
    footprints = tuple(tuple((float(x), float(y)) for x, y in b.footprint) for b in table.blocks)
    return _sealed((float(unit.centre[0]), float(unit.centre[1])), unit.base_radius_mm, footprints, cell_mm)


@lru_cache(maxsize=512)  # asked again at every frame for units that have not moved, among blocks that have not
def _sealed(centre: Point, radius_mm: float, footprints: tuple[Polygon, ...], cell_mm: float) -> bool:
    near = [fp for fp in footprints if not point_in_polygon(centre, fp)
            and point_polygon_distance(centre, fp) < SEAL_SEARCH_MM]
    if not near:
        return False
    xs = [p[0] for fp in near for p in fp] + [centre[0]]
    ys = [p[1] for fp in near for p in fp] + [centre[1]]
    margin = radius_mm + 2 * cell_mm
    x0, y0, x1, y1 = min(xs) - margin, min(ys) - margin, max(xs) + margin, max(ys) + margin
    cols, rows = int((x1 - x0) // cell_mm) + 1, int((y1 - y0) // cell_mm) + 1

    r = radius_mm
    boxes = [(min(p[0] for p in fp) - r, min(p[1] for p in fp) - r, max(p[0] for p in fp) + r, max(p[1] for p in fp) + r, fp)
             for fp in near]

    def free(i: int, j: int) -> bool:
        # Only the blocks whose box (grown by the base) holds the cell can reach it: a wall of a
        # castle's ring is near a few cells of the yard, not all of them.
        x, y = x0 + (i + 0.5) * cell_mm, y0 + (j + 0.5) * cell_mm
        return all(point_polygon_distance((x, y), fp) >= r for bx0, by0, bx1, by1, fp in boxes
                   if bx0 <= x <= bx1 and by0 <= y <= by1)

    start = (int((centre[0] - x0) // cell_mm), int((centre[1] - y0) // cell_mm))
    seen = {start}
    queue = deque([start])
    while queue:
        i, j = queue.popleft()
        if i in (0, cols - 1) or j in (0, rows - 1):
            return False  # reached open table beyond every block
        for ni, nj in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
            if (ni, nj) not in seen and free(ni, nj):
                seen.add((ni, nj))
                queue.append((ni, nj))
    return True


def knocked_over(table: Table) -> list[Unit]:
    """Markers tilted more than 45 degrees: knocked over by artillery, dead where they lie."""
    return [u for u in table.units if u.knocked_over]
