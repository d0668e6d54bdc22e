"""Strategic objects: who controls each one (more units within 3 fingers of it, base edge to footprint)."""

from __future__ import annotations

from dataclasses import dataclass

from companion.rules.geometry import point_polygon_distance
from companion.rules.knight.squads import alive
from companion.rules.table import Table, TableObject

CONTROL_FINGERS = 3


@dataclass(frozen=True)
class Control:
    object_id: int
    kind: str
    name: str
    controller: str | None  # None: nobody near, or a tie
    counts: dict[str, int]  # player -> units within 3 fingers
    units: dict[str, list[int]]
    why: str

    def to_json(self) -> dict:
        return {"id": self.object_id, "kind": self.kind, "name": self.name, "controller": self.controller,
                "counts": self.counts, "units": self.units, "why": self.why}


def control(table: Table, obj: TableObject) -> Control:
    near: dict[str, list[int]] = {p.name: [] for p in table.players}
    for u in alive(table):
        finger = table.player(u.player).finger_mm if u.player else 20.0
        gap = point_polygon_distance(u.centre, obj.footprint) - u.base_radius_mm
        if gap <= CONTROL_FINGERS * finger:
            near.setdefault(u.player, []).append(u.id)
    counts = {p: len(ids) for p, ids in near.items()}
    best = max(counts.values(), default=0)
    leaders = [p for p, n in counts.items() if n == best and n > 0]
    if len(leaders) == 1:
        controller, why = leaders[0], f"{leaders[0]} has {best} unit(s) within {CONTROL_FINGERS} fingers"
    elif leaders:
        controller, why = None, f"contested: {' and '.join(leaders)} have {best} unit(s) each within {CONTROL_FINGERS} fingers"
    else:
        controller, why = None, f"no unit within {CONTROL_FINGERS} fingers"
    return Control(obj.id, obj.kind, obj.name, controller, counts, near, why)


def control_all(table: Table) -> list[Control]:
    return [control(table, o) for o in table.objects]
