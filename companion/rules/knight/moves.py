"""Where can a unit go with the action points it has left, and what does a path cost.

Moving costs 1 AP per hand or less (with the acting side's finger of grace). Blocks are terrain:
stepping onto a partial-cover block (lower than the unit) costs 1 AP, onto a full-cover one 2 AP per
unit height; stepping down costs nothing. A unit's base cannot overlap a block it has not climbed,
so gaps narrower than the base are closed. The region is found on a grid (Dijkstra over cells x AP
already spent climbing), so walking around a wall and climbing over it are both weighed.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

from companion.rules.geometry import Point, Polygon, point_polygon_distance, segment_meets_polygon
from companion.rules.knight.measure import hands_needed
from companion.rules.knight.squads import group_of
from companion.rules.table import Block, Table, Unit
from companion.setup_file import PlayerSpec

CELL_MM = 10.0


def climb_ap(block: Block, unit: Unit) -> int:
    """1 AP onto partial cover (lower than the unit), 2 AP per unit height onto full cover."""
    if block.height_mm < unit.height_mm:
        return 1
    return 2 * math.ceil(block.height_mm / max(unit.height_mm, 1e-6))


@dataclass(frozen=True)
class PathCost:
    ap: int
    walk_mm: float
    walk_ap: int
    climbs: tuple[tuple[int, int], ...]  # (block id, AP)

    def to_json(self) -> dict:
        return {"ap": self.ap, "walk_mm": round(self.walk_mm, 1), "walk_ap": self.walk_ap,
                "climbs": [{"block": b, "ap": a} for b, a in self.climbs]}

    def to_text(self, ap_left: int) -> str:
        climbs = ", ".join(f"block {b} +{a}" for b, a in self.climbs) or "no climbing"
        return (f"{self.ap} AP ({self.walk_mm:.0f} mm walking = {self.walk_ap} AP; {climbs}); "
                f"{'within' if self.ap <= ap_left else 'over'} the {ap_left} AP left")


def path_cost(table: Table, unit: Unit, path: list[Point], profile: PlayerSpec) -> PathCost:
    """AP for a path of straight legs: walking by hands, plus each block stepped onto."""
    walk = sum(math.dist(a, b) for a, b in zip(path, path[1:]))
    climbs: list[tuple[int, int]] = []
    on = {b.id for b in table.blocks if point_polygon_distance(path[0], b.footprint) == 0}
    for a, b in zip(path, path[1:]):
        for block in table.blocks:
            if block.id not in on and segment_meets_polygon(a, b, block.footprint):
                climbs.append((block.id, climb_ap(block, unit)))
                on.add(block.id)
    walk_ap = hands_needed(walk, profile)
    return PathCost(walk_ap + sum(c for _, c in climbs), walk, walk_ap, tuple(climbs))


@dataclass(frozen=True)
class Region:
    ap: int  # the cost of reaching any point of it (cumulative: all points within this many AP)
    polygons: tuple[Polygon, ...]  # rectangles of grid cells, table mm
    area_mm2: float
    outlines: tuple[Polygon, ...] = ()  # its edge as closed loops (holes too: fill even-odd), smoothed

    def to_json(self) -> dict:
        points = lambda polygons: [[[round(x, 1), round(y, 1)] for x, y in p] for p in polygons]  # noqa: E731
        return {"ap": self.ap, "area_mm2": round(self.area_mm2), "polygons": points(self.polygons),
                "outlines": points(self.outlines)}


def reach(table: Table, unit_id: int, ap: int, profile: PlayerSpec, bounds_mm: tuple[float, float] | None = None,
          cell_mm: float = CELL_MM, squad: bool = False) -> list[Region]:
    """The regions reachable with 1, 2, ... `ap` action points (each contains the previous).

    With `squad`, the unit moves with its whole squad, keeping formation: a displacement counts
    only if every member can make it for that cost; the region is drawn for `unit_id`.
    """
    unit = table.unit(unit_id)
    costs = _costs(table, unit, ap, profile, bounds_mm, cell_mm)
    if squad:
        for other in group_of(table, unit_id):
            if other != unit_id:
                theirs = _costs(table, table.unit(other), ap, profile, bounds_mm, cell_mm)
                costs = {d: max(c, theirs[d]) for d, c in costs.items() if d in theirs}
    regions = []
    for k in range(1, ap + 1):
        cells = {d for d, v in costs.items() if v <= k}
        origin = (unit.centre[0] - cell_mm / 2, unit.centre[1] - cell_mm / 2)
        regions.append(Region(k, _rectangles(cells, origin[0], origin[1], cell_mm), len(cells) * cell_mm * cell_mm,
                              outlines(cells, origin, cell_mm)))
    return regions


def cheapest_ap(table: Table, unit: Unit, displacement_mm: Point, ap_limit: int, profile: PlayerSpec,
                bounds_mm: tuple[float, float] | None = None, cell_mm: float = CELL_MM) -> int | None:
    """The AP of the cheapest path (walking round or climbing over blocks) that moves the unit by
    `displacement_mm`, to the nearest grid cell, its base staying on the table within `bounds_mm`;
    None when it costs more than `ap_limit`."""
    cell = (round(displacement_mm[0] / cell_mm), round(displacement_mm[1] / cell_mm))
    return _costs(table, unit, ap_limit, profile, bounds_mm, cell_mm).get(cell)


def _costs(table: Table, unit: Unit, ap: int, profile: PlayerSpec, bounds_mm: tuple[float, float] | None,
           cell_mm: float) -> dict[tuple[int, int], int]:
    """AP to reach each displacement (in cells, relative to the unit's own centre) within `ap`."""
    if ap < 0:
        raise ValueError("ap: cannot be negative")
    # The grid is centred on the unit, so cell (i, j) is a displacement shared by every unit's grid.
    half = int(math.ceil((ap * profile.hand_mm + profile.finger_mm) / cell_mm))
    x0, y0 = unit.centre[0] - (half + 0.5) * cell_mm, unit.centre[1] - (half + 0.5) * cell_mm
    cols = rows = 2 * half + 1

    def centre(i: int, j: int) -> Point:
        return (x0 + (i + 0.5) * cell_mm, y0 + (j + 0.5) * cell_mm)

    # Which block each cell's base would be on: the highest one the base overlaps.
    terrain: dict[tuple[int, int], Block] = {}
    for block in table.blocks:
        xs = [p[0] for p in block.footprint]
        ys = [p[1] for p in block.footprint]
        i0, i1 = int((min(xs) - unit.base_radius_mm - x0) // cell_mm), int((max(xs) + unit.base_radius_mm - x0) // cell_mm)
        j0, j1 = int((min(ys) - unit.base_radius_mm - y0) // cell_mm), int((max(ys) + unit.base_radius_mm - y0) // cell_mm)
        for i in range(max(i0, 0), min(i1 + 1, cols)):
            for j in range(max(j0, 0), min(j1 + 1, rows)):
                if point_polygon_distance(centre(i, j), block.footprint) < unit.base_radius_mm:
                    if (i, j) not in terrain or terrain[(i, j)].height_mm < block.height_mm:
                        terrain[(i, j)] = block
    start = (half, half)
    best: dict[tuple[int, int, int], float] = {(*start, 0): 0.0}
    queue = [(0.0, start[0], start[1], 0)]
    # 16 directions: grid paths overstate off-axis distances by up to 8% with 8, under 3% with 16.
    # (A blocked band is at least a base diameter wide, so a two-cell step cannot jump one.)
    steps = [(di, dj, cell_mm * math.hypot(di, dj)) for di in range(-2, 3) for dj in range(-2, 3)
             if (di or dj) and math.gcd(abs(di), abs(dj)) == 1]
    while queue:
        walked, i, j, climbed = heapq.heappop(queue)
        if walked > best.get((i, j, climbed), math.inf):
            continue
        here = terrain.get((i, j))
        for di, dj, step in steps:
            ni, nj = i + di, j + dj
            if not (0 <= ni < cols and 0 <= nj < rows):
                continue
            if bounds_mm:  # the base stays on the table
                cx, cy = centre(ni, nj)
                r = unit.base_radius_mm
                if not (r <= cx <= bounds_mm[0] - r and r <= cy <= bounds_mm[1] - r):
                    continue
            there = terrain.get((ni, nj))
            if abs(di) + abs(dj) == 3:  # a long step also passes the cell in between
                mid = terrain.get((i + di // 2 if abs(di) == 2 else i, j + dj // 2 if abs(dj) == 2 else j))
                if mid is not None and mid is not here and mid is not there:
                    continue
            extra = 0
            if there is not None and there is not here and (here is None or there.height_mm > here.height_mm):
                extra = climb_ap(there, unit)
            nc = climbed + extra
            nw = walked + step
            if nc > ap or hands_needed(nw, profile) + nc > ap:
                continue
            key = (ni, nj, nc)
            if nw < best.get(key, math.inf):
                best[key] = nw
                heapq.heappush(queue, (nw, ni, nj, nc))
    cost: dict[tuple[int, int], int] = {}
    for (i, j, climbed), walked in best.items():
        total = hands_needed(walked, profile) + climbed
        key = (i - half, j - half)
        cost[key] = min(cost.get(key, ap + 1), total)
    return cost


def _rectangles(cells: set[tuple[int, int]], x0: float, y0: float, cell: float) -> tuple[Polygon, ...]:
    """Cells merged into row runs, and runs with the same span stacked into rectangles."""
    runs: dict[tuple[int, int], list[int]] = {}
    for j in sorted({j for _, j in cells}):
        row = sorted(i for i, jj in cells if jj == j)
        start = prev = row[0]
        for i in row[1:] + [None]:
            if i is not None and i == prev + 1:
                prev = i
                continue
            runs.setdefault((start, prev), []).append(j)
            if i is not None:
                start = prev = i
    out = []
    for (a, b), js in runs.items():
        js.sort()
        top = bottom = js[0]
        for j in js[1:] + [None]:
            if j is not None and j == bottom + 1:
                bottom = j
                continue
            xa, xb = round(x0 + a * cell, 1), round(x0 + (b + 1) * cell, 1)
            ya, yb = round(y0 + top * cell, 1), round(y0 + (bottom + 1) * cell, 1)
            out.append(((xa, ya), (xb, ya), (xb, yb), (xa, yb)))
            if j is not None:
                top = bottom = j
    return tuple(out)


def outlines(cells: set[tuple[int, int]], origin_mm: Point, cell_mm: float) -> tuple[Polygon, ...]:
    """The edge of a set of grid cells as closed loops in table mm, without the grid's stair steps.

    Marching squares over the cell centres: the edge runs midway between a cell in and a cell out,
    so along a row it is the cells' own border and across a stair it cuts the corner. Points on a
    straight run are dropped, then two rounds of corner cutting (Chaikin) round what is left. Cell
    (i, j) covers origin + [i, i + 1) x [j, j + 1) cells."""
    if not cells:
        return ()
    # Points in half-cell units: cell centre (i, j) is (2i + 1, 2j + 1); the square between the
    # centres (i, j) .. (i + 1, j + 1) has its edges' midpoints at (2i + 2, 2j + 1) and so on.
    nxt: dict[tuple[int, int], tuple[int, int]] = {}
    ii = [i for i, _ in cells]
    jj = [j for _, j in cells]
    for i in range(min(ii) - 1, max(ii) + 1):
        for j in range(min(jj) - 1, max(jj) + 1):
            a, b = (i, j) in cells, (i + 1, j) in cells  # bottom-left, bottom-right
            c, d = (i + 1, j + 1) in cells, (i, j + 1) in cells  # top-right, top-left
            bottom, right = (2 * i + 2, 2 * j + 1), (2 * i + 3, 2 * j + 2)
            top, left = (2 * i + 2, 2 * j + 3), (2 * i + 1, 2 * j + 2)
            # Each segment runs with the inside on its left (counter-clockwise outer loops).
            for start, end in _SQUARE_SEGMENTS[(a, b, c, d)](bottom, right, top, left):
                nxt[start] = end
    loops = []
    while nxt:
        start, point = next(iter(nxt.items()))
        del nxt[start]
        loop = [start]
        while point != start:
            loop.append(point)
            point = nxt.pop(point)
        loops.append(_chaikin(_chaikin(_corners(loop))))
    ox, oy = origin_mm
    half = cell_mm / 2
    return tuple(tuple((round(ox + x * half, 1), round(oy + y * half, 1)) for x, y in loop) for loop in loops)


def _segments(*pairs: str):
    names = ("bottom", "right", "top", "left")

    def make(*points):
        at = dict(zip(names, points))
        return [(at[a], at[b]) for a, b in (p.split("-") for p in pairs)]
    return make


# (bottom-left, bottom-right, top-right, top-left) in the set -> the square's edge segments. Where
# only two opposite corners are in, they stay apart (the base cannot pass between them).
_SQUARE_SEGMENTS = {
    (False, False, False, False): _segments(), (True, True, True, True): _segments(),
    (True, False, False, False): _segments("bottom-left"),
    (False, True, False, False): _segments("right-bottom"),
    (False, False, True, False): _segments("top-right"),
    (False, False, False, True): _segments("left-top"),
    (True, True, False, False): _segments("right-left"),
    (False, True, True, False): _segments("top-bottom"),
    (False, False, True, True): _segments("left-right"),
    (True, False, False, True): _segments("bottom-top"),
    (True, False, True, False): _segments("bottom-left", "top-right"),
    (False, True, False, True): _segments("right-bottom", "left-top"),
    (False, True, True, True): _segments("left-bottom"),
    (True, False, True, True): _segments("bottom-right"),
    (True, True, False, True): _segments("right-top"),
    (True, True, True, False): _segments("top-left"),
}


def _corners(loop: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The loop without the points that lie on a straight line between their neighbours."""
    n = len(loop)
    keep = []
    for k in range(n):
        (ax, ay), (bx, by), (cx, cy) = loop[k - 1], loop[k], loop[(k + 1) % n]
        if (bx - ax) * (cy - by) - (by - ay) * (cx - bx) != 0:
            keep.append(loop[k])
    return keep or loop


def _chaikin(loop: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for k, (ax, ay) in enumerate(loop):
        bx, by = loop[(k + 1) % len(loop)]
        out += [(0.75 * ax + 0.25 * bx, 0.75 * ay + 0.25 * by), (0.25 * ax + 0.75 * bx, 0.25 * ay + 0.75 * by)]
    return out
