"""Contienda Arcana on a real table: hex cells, deployment, movement, charges, flanks, odds, damage.

Read from shared/rules/contienda.md. Pure Python. Pointy-top hexes in the table frame: the centre
of hex (q, r) is origin + (w (q + r/2), w (sqrt(3)/2) r), w the size across flats. A point belongs
to the hex found by the inverse and cube rounding; a point exactly on an edge goes to the hex with
the larger (q, then r) coordinate, so the answer never depends on float noise.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import product

from companion.errors import InputError
from companion.rules.geometry import point_in_polygon
from companion.rules.table import Table, Unit

Hex = tuple[int, int]
DIRECTIONS: tuple[Hex, ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
DEFAULT_SIZE_MM = 25.4
DEPLOY_BAND = 5
AP_PER_ROUND = 3
DEFAULT_MOBILITY = 4  # hexes per movement action when the roster does not say (the seed's common value)
MOSTLY = 0.5  # a hex "mostly covered" by a block


@dataclass(frozen=True)
class HexGrid:
    size_mm: float = DEFAULT_SIZE_MM  # across flats
    origin_mm: tuple[float, float] = (0.0, 0.0)
    columns: int = 30
    rows: int = 30

    @classmethod
    def from_setup(cls, section: dict) -> "HexGrid":
        """The grid of a setup's [hex] table (InputError listing every bad key)."""
        problems: list[str] = []
        grid = read_hex(section, lambda key, message: problems.append(f"{key}: {message}"))
        if problems:
            raise InputError("; ".join(problems))
        return grid

    def grid_json(self, width_mm: float, depth_mm: float) -> dict:
        """The grid over a table of this size, for drawing: {size_mm, origin_mm, hexes [[q, r, corners]]}."""
        hexes = [[q, r, [[round(x, 1), round(y, 1)] for x, y in corners]]
                 for (q, r), corners in self.hexes_over(width_mm, depth_mm)]
        return {"size_mm": self.size_mm, "origin_mm": list(self.origin_mm), "hexes": hexes}

    def hexes_over(self, width_mm: float, depth_mm: float) -> list[tuple[Hex, tuple[tuple[float, float], ...]]]:
        """Every hex that touches a table of this size, with its corners."""
        corners = [self.hex_at(x, y) for x, y in ((0, 0), (width_mm, 0), (0, depth_mm), (width_mm, depth_mm))]
        qs, rs = [h[0] for h in corners], [h[1] for h in corners]
        out = []
        for r in range(min(rs) - 1, max(rs) + 2):
            for q in range(min(qs) - 1 - (max(rs) - min(rs)), max(qs) + 2):
                pts = self.corners((q, r))
                if all(x < 0 for x, _ in pts) or all(x > width_mm for x, _ in pts) or all(y < 0 for _, y in pts) \
                        or all(y > depth_mm for _, y in pts):
                    continue
                out.append(((q, r), pts))
        return out

    def centre(self, h: Hex) -> tuple[float, float]:
        q, r = h
        w = self.size_mm
        return self.origin_mm[0] + w * (q + r / 2), self.origin_mm[1] + w * math.sqrt(3) / 2 * r

    def hex_at(self, x: float, y: float) -> Hex:
        w = self.size_mm
        r = (y - self.origin_mm[1]) / (w * math.sqrt(3) / 2)
        q = (x - self.origin_mm[0]) / w - r / 2
        return cube_round(q, r)

    def corners(self, h: Hex) -> tuple[tuple[float, float], ...]:
        cx, cy = self.centre(h)
        radius = self.size_mm / math.sqrt(3)  # centre to corner of a pointy-top hex
        return tuple((cx + radius * math.cos(math.radians(60 * k + 30)), cy + radius * math.sin(math.radians(60 * k + 30)))
                     for k in range(6))

    def on_map(self, h: Hex) -> bool:
        q, r = h
        col = q + (r - (r & 1)) // 2  # offset column of a pointy-top row
        return 0 <= r < self.rows and 0 <= col < self.columns


def cube_round(q: float, r: float) -> Hex:
    s = -q - r
    eps = 1e-9  # ties on an edge round up, consistently
    rq, rr, rs = math.floor(q + 0.5 + eps), math.floor(r + 0.5 + eps), math.floor(s + 0.5 + eps)
    dq, dr, ds = abs(rq - q), abs(rr - r), abs(rs - s)
    if dq > dr and dq > ds:
        rq = -rr - rs
    elif dr > ds:
        rr = -rq - rs
    return int(rq), int(rr)


def distance(a: Hex, b: Hex) -> int:
    dq, dr = a[0] - b[0], a[1] - b[1]
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def neighbours(h: Hex) -> list[Hex]:
    return [(h[0] + dq, h[1] + dr) for dq, dr in DIRECTIONS]


def line(a: Hex, b: Hex) -> list[Hex]:
    n = distance(a, b)
    if n == 0:
        return [a]
    out = []
    for k in range(n + 1):
        t = k / n
        out.append(cube_round(a[0] + (b[0] - a[0]) * t + 1e-6, a[1] + (b[1] - a[1]) * t + 1e-6))
    return out


def ring(centre: Hex, radius: int) -> list[Hex]:
    if radius == 0:
        return [centre]
    h = (centre[0] + DIRECTIONS[4][0] * radius, centre[1] + DIRECTIONS[4][1] * radius)
    out = []
    for d in range(6):
        for _ in range(radius):
            out.append(h)
            h = (h[0] + DIRECTIONS[d][0], h[1] + DIRECTIONS[d][1])
    return out


# --- the table in hexes ------------------------------------------------------------------------------

def cells(table: Table, grid: HexGrid) -> dict[int, Hex]:
    """The hex of every unit: the one holding its base centre."""
    return {u.id: grid.hex_at(*u.centre) for u in table.units}


def deployment_problems(table: Table, grid: HexGrid, sides: tuple[str, str]) -> list[str]:
    """Units outside their side's band: the first player's is the 5 rows at r = 0, the second's the last 5."""
    where = cells(table, grid)
    out = []
    for u in table.units:
        r = where[u.id][1]
        if u.player == sides[0] and not 0 <= r < DEPLOY_BAND:
            out.append(f"unit {u.id} ({u.player}) is deployed in row {r}, outside rows 0-{DEPLOY_BAND - 1}")
        elif u.player == sides[1] and not grid.rows - DEPLOY_BAND <= r < grid.rows:
            out.append(f"unit {u.id} ({u.player}) is deployed in row {r}, outside rows "
                       f"{grid.rows - DEPLOY_BAND}-{grid.rows - 1}")
    return out


def terrain(table: Table, grid: HexGrid, h: Hex, unit: Unit) -> str:
    """open | difficult (a lower block covers most of it) | impossible (one at least as tall)."""
    cx, cy = grid.centre(h)
    samples = [(cx, cy)] + [(cx + grid.size_mm * f * math.cos(math.radians(a)), cy + grid.size_mm * f * math.sin(math.radians(a)))
                            for f in (0.22, 0.42) for a in range(0, 360, 30)]
    worst = "open"
    for block in table.blocks:
        covered = sum(point_in_polygon(p, block.footprint) for p in samples) / len(samples)
        if covered > MOSTLY:
            if block.height_mm >= unit.height_mm:
                return "impossible"
            worst = "difficult"
    return worst


@dataclass(frozen=True)
class Reach:
    hexes: tuple[tuple[int, int, int], ...]  # (q, r, AP)
    provoking: tuple[Hex, ...]  # reachable only by leaving a hex next to an enemy (counter-strike)


def reach(table: Table, grid: HexGrid, unit_id: int, ap: int, mobility: int = DEFAULT_MOBILITY) -> Reach:
    """Hexes the unit can end on with `ap` movement actions of `mobility` hexes each (Dijkstra)."""
    unit = table.unit(unit_id)
    where = cells(table, grid)
    start = where[unit.id]
    allies = {where[u.id] for u in table.units if u.player == unit.player and u.id != unit.id}
    enemies = {where[u.id] for u in table.units if u.player != unit.player}
    threatened = {n for e in enemies for n in neighbours(e)}
    budget = ap * mobility
    best: dict[tuple[Hex, bool], int] = {(start, False): 0}
    queue = [(0, False, start)]
    while queue:
        spent, provoked, h = heapq.heappop(queue)
        if spent > best.get((h, provoked), math.inf):
            continue
        for n in neighbours(h):
            if not grid.on_map(n) or n in enemies:
                continue
            kind = terrain(table, grid, n, unit)
            if kind == "impossible":
                continue
            step = 2 if kind == "difficult" or n in allies else 1
            total = spent + step
            if total > budget:
                continue
            p = provoked or (h in threatened)
            if total < best.get((n, p), math.inf):
                best[(n, p)] = total
                heapq.heappush(queue, (total, p, n))
    hexes = []
    provoking = []
    for (h, provoked), spent in best.items():
        if h == start or h in allies:
            continue  # allies may be crossed, never ended on
        ap_needed = max(1, math.ceil(spent / mobility))
        clean = best.get((h, False))
        if provoked and clean is not None and clean <= spent:
            continue
        if not provoked or clean is None:
            hexes.append((h[0], h[1], ap_needed))
            if provoked:
                provoking.append(h)
    return Reach(tuple(sorted(set(hexes))), tuple(sorted(set(provoking))))


@dataclass(frozen=True)
class ChargeLane:
    direction: Hex
    path: tuple[Hex, ...]  # the two hexes crossed, the last one where the charge ends
    targets: tuple[int, ...]  # enemies next to its end

    def to_json(self) -> dict:
        return {"direction": list(self.direction), "path": [list(h) for h in self.path], "targets": list(self.targets)}


def charge_lanes(table: Table, grid: HexGrid, unit_id: int) -> list[ChargeLane]:
    """Straight 2-hex charges along one hex direction, unbroken, ending next to an enemy."""
    unit = table.unit(unit_id)
    where = cells(table, grid)
    start = where[unit.id]
    occupied = {h for i, h in where.items() if i != unit.id}
    enemies = {where[u.id]: u.id for u in table.units if u.player != unit.player}
    lanes = []
    for dq, dr in DIRECTIONS:
        path = [(start[0] + dq * k, start[1] + dr * k) for k in (1, 2)]
        if any(not grid.on_map(h) or h in occupied or terrain(table, grid, h, unit) != "open" for h in path):
            continue
        targets = [enemies[n] for n in neighbours(path[-1]) if n in enemies]
        if targets:
            lanes.append(ChargeLane((dq, dr), tuple(path), tuple(sorted(targets))))
    return lanes


def flanked(table: Table, grid: HexGrid, target_id: int) -> bool:
    """Two enemies of the target stand in opposite hexes around it: melee attackers gain advantage."""
    target = table.unit(target_id)
    where = cells(table, grid)
    h = where[target.id]
    foes = {where[u.id] for u in table.units if u.player != target.player}
    return any((h[0] + DIRECTIONS[i][0], h[1] + DIRECTIONS[i][1]) in foes
               and (h[0] + DIRECTIONS[i + 3][0], h[1] + DIRECTIONS[i + 3][1]) in foes for i in range(3))


# --- rolls ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bands:
    full: Fraction  # 10+
    partial: Fraction  # 7-9
    miss: Fraction  # 6-

    def to_json(self) -> dict:
        return {k: float(getattr(self, k)) for k in ("full", "partial", "miss")} | {
            "fractions": {k: f"{getattr(self, k).numerator}/{getattr(self, k).denominator}" for k in ("full", "partial", "miss")}}


def odds(mod: int, advantage: int = 0, disadvantage: int = 0, attack_number: int = 1) -> Bands:
    """2d6 + mod; advantage keeps the best 2 of 3d6, disadvantage the worst 2 (one of each cancels);
    the k-th attack in a turn has -(k - 1)."""
    if attack_number < 1:
        raise InputError("--attack-number: 1 for the first attack of the turn")
    edge = (1 if advantage else 0) - (1 if disadvantage else 0)
    mod = mod - (attack_number - 1)
    counts = {"full": 0, "partial": 0, "miss": 0}
    dice = 3 if edge else 2
    for roll in product(range(1, 7), repeat=dice):
        kept = sorted(roll)[1:] if edge > 0 else sorted(roll)[:2] if edge < 0 else roll
        total = sum(kept) + mod
        counts["full" if total >= 10 else "partial" if total >= 7 else "miss"] += 1
    n = 6 ** dice
    return Bands(Fraction(counts["full"], n), Fraction(counts["partial"], n), Fraction(counts["miss"], n))


RESULT_TABLES = {
    # (full, partial, miss) damage relative to the weapon's base damage; None: nothing
    "attack": (2, 0, None),
    "charge": (3, 1, None),  # a missed charge also costs one action next turn
    "counter": (0, -2, None),
}


def damage(base: int, band: str, kind: str = "attack", magic: bool = False, protection: int = 0,
           magic_protection: int = 0, resistant: bool = False, vulnerable: bool = False, immune: bool = False,
           extra: int = 0) -> tuple[int, list[str]]:
    """The damage pipeline, with each step's reason: table -> effects -> protection -> resist/vuln/immune."""
    table_row = RESULT_TABLES[kind]
    steps = []
    pick = {"full": table_row[0], "partial": table_row[1], "miss": table_row[2]}[band]
    if pick is None:
        return 0, [f"{band}: no damage"]
    amount = max(0, base + pick)
    steps.append(f"{kind} {band}: base {base} {pick:+d} = {amount}")
    if extra:
        amount += extra
        steps.append(f"special effects {extra:+d} = {amount}")
    armour = magic_protection if magic else protection + magic_protection
    if armour:
        amount = max(0, amount - armour)
        steps.append(f"protection -{armour}" + (" (magic ignores regular protection)" if magic else "") + f" = {amount}")
    if immune:
        return 0, steps + ["immune: 0"]
    if resistant and vulnerable:
        steps.append("resistant and vulnerable cancel")
    elif resistant:
        amount //= 2
        steps.append(f"resistant: half, rounded down = {amount}")
    elif vulnerable:
        amount *= 2
        steps.append(f"vulnerable: double = {amount}")
    return amount, steps


@dataclass(frozen=True)
class Morale:
    """2d6 + mod: 10+ holds, 7-9 at disadvantage, 6- flees."""

    holds: Fraction
    disadvantage: Fraction
    flees: Fraction

    def to_json(self) -> dict:
        return {"holds": float(self.holds), "disadvantage": float(self.disadvantage), "flees": float(self.flees)}


def morale(mod: int = 0) -> Morale:
    b = odds(mod)
    return Morale(b.full, b.partial, b.miss)


from companion.rules.registry import Problem, RuleSystem  # noqa: E402  (the descriptor, after what it describes)


def read_hex(section: dict, problem: Problem) -> HexGrid:
    """The [hex] table: pointy-top hexes `size_mm` across flats from the origin, columns x rows."""
    def number(key: str, default: float, positive: bool = False) -> float:
        value = section.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            problem(f"hex.{key}", f"must be a number, got {value!r}")
            return default
        if positive and value <= 0:
            problem(f"hex.{key}", f"must be positive, got {value!r}")
            return default
        return float(value)

    def count(key: str) -> int:
        value = section.get(key, 30)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problem(f"hex.{key}", f"must be a whole number of 1 or more, got {value!r}")
            return 30
        return value

    if section.get("orientation", "pointy") != "pointy":
        problem("hex.orientation", f"only \"pointy\" (pointy-top hexes) is supported, got {section['orientation']!r}")
    return HexGrid(number("size_mm", DEFAULT_SIZE_MM, positive=True),
                   (number("origin_x_mm", 0.0), number("origin_y_mm", 0.0)), count("columns"), count("rows"))


def grid_of(setup) -> HexGrid:
    """The setup's hex grid: its rules value under Contienda, else read from its [hex] table (the hex
    commands also answer on a setup that names no rule system)."""
    return setup.rules if isinstance(setup.rules, HexGrid) else HexGrid.from_setup(setup.sections.get("hex", {}))


SYSTEM = RuleSystem("contienda", "Contienda Arcana", section="hex",
                    section_keys=frozenset({"size_mm", "origin_x_mm", "origin_y_mm", "orientation", "columns", "rows"}),
                    read_setup=lambda setup, problem: read_hex(setup.sections.get("hex", {}), problem))
