"""Squads: units of one player within 2 fingers (the owner's) of each other, transitively."""

from __future__ import annotations

from functools import lru_cache

from companion.rules.knight.measure import edge_distance_mm
from companion.rules.table import Table, Unit

SQUAD_FINGERS = 2


def alive(table: Table) -> list[Unit]:
    return [u for u in table.units if not u.knocked_over]


def squads(table: Table) -> list[list[int]]:
    """Every group (a squad, or a single) as sorted unit ids; squads of 2+ first, then singles."""
    return [list(g) for g in _squads(table)]


@lru_cache(maxsize=64)  # a Table is an immutable value: one computation serves every question about it
def _squads(table: Table) -> tuple[tuple[int, ...], ...]:
    units = alive(table)
    parent = {u.id: u.id for u in units}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(units):
        finger = table.player(a.player).finger_mm if a.player else 20.0
        for b in units[i + 1:]:
            # "Regardless of your wishes": no tolerance here.
            if a.player == b.player and edge_distance_mm(a, b) <= SQUAD_FINGERS * finger:
                parent[find(a.id)] = find(b.id)
    groups: dict[int, list[int]] = {}
    for u in units:
        groups.setdefault(find(u.id), []).append(u.id)
    out = [tuple(sorted(g)) for g in groups.values()]
    return tuple(sorted(out, key=lambda g: (len(g) == 1, g[0])))


def group_of(table: Table, unit_id: int) -> list[int]:
    """The unit's squad, or just the unit when it is a single."""
    return list(next(g for g in _squads(table) if unit_id in g))
