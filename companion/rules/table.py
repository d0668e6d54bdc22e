"""The rules' view of a table: units (roster + where the camera saw them), blocks and objects.

Built from a table state (the `locate` JSON) and the setup. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from companion.errors import InputError
from companion.rules.geometry import Point, Polygon, circle_polygon
from companion.setup_file import PlayerSpec, Setup
from companion.state import KNOCKED_OVER_DEG, TableState

ON_TABLE_BELOW_MM = 5.0  # a standing level under this counts as the table itself


@dataclass(frozen=True)
class Unit:
    id: int
    name: str
    player: str
    faction: str
    unit_class: str
    centre: Point  # base centre, table mm
    heading_deg: float
    base_radius_mm: float
    height_mm: float  # model height above what it stands on
    standing_mm: float  # top of what it stands on (0: the table)
    tilt_deg: float = 0.0
    status: str = "seen"

    @property
    def knocked_over(self) -> bool:
        return self.tilt_deg > KNOCKED_OVER_DEG


@dataclass(frozen=True)
class Block:
    id: int
    footprint: Polygon
    height_mm: float  # top above the table
    color: str = ""
    height_range_mm: tuple[float, float] | None = None  # where its top may be, as the camera saw it
    hidden_under: int | None = None  # the unit that hides it whole: its footprint is a guess


@dataclass(frozen=True)
class TableObject:
    id: int
    kind: str
    name: str
    centre: Point
    radius_mm: float

    @property
    def footprint(self) -> Polygon:
        return circle_polygon(self.centre, self.radius_mm)


@dataclass(frozen=True)
class Table:
    units: tuple[Unit, ...]
    blocks: tuple[Block, ...]
    objects: tuple[TableObject, ...]
    players: tuple[PlayerSpec, ...]
    unlisted: tuple[int, ...] = ()  # ids the state placed that the setup's roster does not list
    setup_path: str = ""
    off_table: tuple[tuple[int, Point, float], ...] = ()  # (id, centre, mm beyond the edge): not in play
    blocks_seen: bool = True  # False: the camera had not looked for blocks yet (`blocks` says nothing)

    @cached_property
    def _by_id(self) -> dict[int, Unit]:
        return {u.id: u for u in self.units}

    def unit(self, unit_id: int) -> Unit:
        try:
            return self._by_id[unit_id]
        except KeyError:
            if unit_id in self.unlisted:
                raise InputError(f"unit {unit_id}: on the table, but the setup {self.setup_path or '(no file)'} "
                                 f"lists no mini with id {unit_id} (add it under [[minis]])") from None
            off = next((o for o in self.off_table if o[0] == unit_id), None)
            if off is not None:
                (x, y), beyond = off[1], off[2]
                raise InputError(f"unit {unit_id}: off the table, seen at ({x:.0f}, {y:.0f}) mm, {beyond:.0f} mm "
                                 f"beyond its edge (the table of {self.setup_path or 'the setup'}); "
                                 f"put it back on the table to play it") from None
            raise InputError(f"unit {unit_id}: not on the table (units seen: {sorted(self._by_id)})") from None

    def player(self, name: str) -> PlayerSpec:
        for p in self.players:
            if p.name == name:
                return p
        raise InputError(f"player {name!r}: not in the setup (players: {[p.name for p in self.players]})")

    @classmethod
    def from_state(cls, state: TableState, setup: Setup) -> "Table":
        units, unlisted, off_table = [], [], []
        for m in state.minis:
            spec = setup.mini(m.id)
            if spec is None:
                unlisted.append(m.id)
                continue
            if setup.table.off_table(m.x_mm, m.y_mm, spec.base_mm):
                off_table.append((m.id, (m.x_mm, m.y_mm), setup.table.beyond_mm(m.x_mm, m.y_mm)))
                continue
            standing = m.z_mm - spec.marker_height
            units.append(Unit(id=m.id, name=spec.name, player=spec.player or m.player, faction=spec.faction,
                              unit_class=spec.unit_class, centre=(m.x_mm, m.y_mm), heading_deg=m.heading_deg,
                              base_radius_mm=spec.base_mm / 2, height_mm=spec.height_mm,
                              standing_mm=0.0 if standing < ON_TABLE_BELOW_MM else standing,
                              tilt_deg=m.tilt_deg or 0.0, status=m.status))
        blocks = tuple(Block(b.id, tuple(b.footprint_mm), b.height_mm, b.color, b.height_range_mm, b.hidden_under)
                       for b in state.blocks)
        specs = {o.id: o for o in setup.objects}
        objects = tuple(TableObject(o.id, specs[o.id].kind, specs[o.id].name, (o.x_mm, o.y_mm), specs[o.id].radius_mm)
                        for o in state.objects if o.id in specs)
        players = setup.players or tuple(PlayerSpec(name) for name in sorted({u.player for u in units if u.player}))
        return cls(tuple(units), blocks, objects, players, tuple(unlisted), setup.path, tuple(off_table),
                   state.blocks_seen)
