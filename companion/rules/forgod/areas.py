"""Movement and attack areas per unit type: data (areas.toml), overridable per setup."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any, Callable

from companion.rules.forgod.board import Board, Square

UNIT_TYPES = ("infantry", "cavalry", "archery", "siege", "level7", "war_machine", "beast", "power", "special")
_KEYS = {"move", "attack", "far", "anywhere"}
Offset = tuple[int, int]  # (columns to the side, rows towards the enemy)


@dataclass(frozen=True)
class Area:
    move: frozenset[Offset] = frozenset()
    attack: frozenset[Offset] = frozenset()
    far: frozenset[Offset] = frozenset()
    anywhere: bool = False

    def squares(self, board: Board, start: Square, side: int, zone: str) -> set[Square]:
        """The board squares of one zone (move, attack, far) from `start` for a card of `side`."""
        if self.anywhere:
            return {(c, r) for c in range(board.columns) for r in range(board.rows)} - {start}
        turn = board.forward(side)  # the second player's patterns are turned round
        out = set()
        for dc, df in getattr(self, zone):
            c, r = start[0] + dc * turn, start[1] + df * turn
            if 0 <= c < board.columns and 0 <= r < board.rows:
                out.add((c, r))
        return out

    def charge_reach(self, board: Board, start: Square, side: int) -> set[Square]:
        """What a charge can strike: the attack area from any square up to twice the tactical move away."""
        if self.anywhere:
            return self.squares(board, start, side, "attack")
        turn = board.forward(side)
        landings = {start} | {(start[0] + k * dc * turn, start[1] + k * df * turn) for dc, df in self.move for k in (1, 2)}
        out: set[Square] = set()
        for spot in landings:
            if 0 <= spot[0] < board.columns and 0 <= spot[1] < board.rows:
                out |= self.squares(board, spot, side, "attack")
        return out - {start}


def _offsets(value: Any, where: str, problem: Callable[[str, str], None]) -> frozenset[Offset]:
    ok = isinstance(value, list) and all(
        isinstance(o, list) and len(o) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in o)
        for o in value)
    if not ok:
        problem(where, "must be a list of [columns, rows] pairs of whole numbers, e.g. [[0, 1], [1, 0]]")
        return frozenset()
    return frozenset((o[0], o[1]) for o in value)


def read_area(table: Any, where: str, problem: Callable[[str, str], None], base: Area | None = None) -> Area:
    """One type's table; keys it leaves out keep `base`'s."""
    base = base or Area()
    if not isinstance(table, dict):
        problem(where, "must be a table with move, attack, far or anywhere")
        return base
    for key in table:
        if key not in _KEYS:
            problem(f"{where}.{key}", "unknown key (move, attack, far, anywhere)")
    anywhere = table.get("anywhere", base.anywhere)
    if not isinstance(anywhere, bool):
        problem(f"{where}.anywhere", f"must be true or false, got {anywhere!r}")
        anywhere = base.anywhere
    return Area(*(_offsets(table[k], f"{where}.{k}", problem) if k in table else getattr(base, k)
                  for k in ("move", "attack", "far")), anywhere=anywhere)


@cache
def default_areas() -> dict[str, Area]:
    data = tomllib.loads(files("companion.rules.forgod").joinpath("areas.toml").read_text(encoding="utf-8"))

    def broken(key: str, message: str) -> None:
        raise RuntimeError(f"areas.toml: {key}: {message}")  # shipped data: a bug, not a player's mistake

    return {t: read_area(data[t], t, broken) for t in UNIT_TYPES}


def read_areas(overrides: Any, where: str, problem: Callable[[str, str], None]) -> dict[str, Area]:
    areas = dict(default_areas())
    if overrides is None:
        return areas
    if not isinstance(overrides, dict):
        problem(where, "must be a table of unit types ([forgod.areas.infantry] ...)")
        return areas
    for unit_type, table in overrides.items():
        if unit_type not in UNIT_TYPES:
            problem(f"{where}.{unit_type}", f"unknown unit type (one of {', '.join(UNIT_TYPES)})")
            continue
        areas[unit_type] = read_area(table, f"{where}.{unit_type}", problem, areas[unit_type])
    return areas
