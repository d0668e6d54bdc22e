"""The setup file (TOML): table, markers, anchors, camera, ruleset, players, roster, objects.

The schema is a contract shared with other tools (see DESIGN.md). Loading validates everything and
reports *every* problem at once, each naming the file and the key, so a player fixes the file in
one pass. Optional keys take the defaults documented on the dataclasses below.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from companion.errors import SetupError

OFF_TABLE_MM = 10.0  # a base whose edge lies further than this beyond the table's edge is not on it

DICTIONARIES = (
    "DICT_4X4_50", "DICT_4X4_100", "DICT_4X4_250", "DICT_4X4_1000",
    "DICT_5X5_50", "DICT_5X5_100", "DICT_5X5_250", "DICT_5X5_1000",
    "DICT_6X6_50", "DICT_6X6_100", "DICT_6X6_250", "DICT_6X6_1000",
    "DICT_7X7_50", "DICT_7X7_100", "DICT_7X7_250", "DICT_7X7_1000",
    "DICT_ARUCO_ORIGINAL", "DICT_APRILTAG_16h5", "DICT_APRILTAG_25h9",
    "DICT_APRILTAG_36h10", "DICT_APRILTAG_36h11",
)
# How many markers each dictionary holds (ids 0 .. n-1): a roster id past it can never be seen.
DICTIONARY_SIZES = {name: int(name.rsplit("_", 1)[1]) for name in DICTIONARIES if name.startswith("DICT_") and "X" in name}
DICTIONARY_SIZES.update({"DICT_ARUCO_ORIGINAL": 1024, "DICT_APRILTAG_16h5": 30, "DICT_APRILTAG_25h9": 35,
                         "DICT_APRILTAG_36h10": 2320, "DICT_APRILTAG_36h11": 587})
OBJECT_KINDS = ("castle", "obelisk", "garden", "mine", "crystal", "catapult")
ADULT_HAND_MM, ADULT_FINGER_MM = 178.0, 20.0
PERSON_HAND_MM, PERSON_FINGER_MM = (50.0, 300.0), (5.0, 40.0)  # beyond these it is a mismeasurement
CHILD_HAND_MM, CHILD_FINGER_MM = 152.0, 16.0


@dataclass(frozen=True)
class TableSpec:
    width_mm: float = 1200.0  # along x, towards anchor 1
    depth_mm: float = 800.0  # along y, towards anchor 3

    def beyond_mm(self, x_mm: float, y_mm: float) -> float:
        """How far a point lies beyond the table's edge (0 on the table)."""
        return max(0.0, -x_mm, x_mm - self.width_mm, -y_mm, y_mm - self.depth_mm)

    def off_table(self, x_mm: float, y_mm: float, base_mm: float) -> bool:
        """Whether a base of `base_mm` centred here stands beside the table, not on it: its edge
        more than OFF_TABLE_MM beyond the table's (the camera and the rules both ask this)."""
        return self.beyond_mm(x_mm, y_mm) > base_mm / 2 + OFF_TABLE_MM


@dataclass(frozen=True)
class AnchorSpec:
    id: int
    x_mm: float  # marker centre in the table frame
    y_mm: float
    size_mm: float = 50.0  # side of the black square
    rotation_deg: float = 90.0  # the marker's up vector, counter-clockwise from +x


@dataclass(frozen=True)
class CameraSpec:
    matrix: tuple[tuple[float, float, float], ...]  # 3x3 intrinsics, pixels
    distortion: tuple[float, ...]  # OpenCV order k1 k2 p1 p2 [k3 ...]


@dataclass(frozen=True)
class PlayerSpec:
    name: str
    hand_mm: float = ADULT_HAND_MM
    finger_mm: float = ADULT_FINGER_MM


@dataclass(frozen=True)
class MiniSpec:
    id: int
    name: str
    marker_mm: float = 20.0  # side of the black square
    player: str = ""
    faction: str = ""
    unit_class: str = ""  # the TOML key is `class`
    base_mm: float = 25.0  # base diameter
    height_mm: float = 40.0  # model height above what it stands on
    marker_height_mm: float | None = None  # marker centre above the base; default height_mm
    height_given: bool = False  # the file gave height_mm or marker_height_mm (a measured value, not the default)
    extra: tuple[tuple[str, Any], ...] = ()  # the rule system's own keys (F0R60D's type, level, ...), as written

    def get(self, key: str, default: Any = None) -> Any:
        return next((v for k, v in self.extra if k == key), default)

    @property
    def marker_height(self) -> float:
        return self.height_mm if self.marker_height_mm is None else self.marker_height_mm


@dataclass(frozen=True)
class ObjectSpec:
    id: int  # its marker id
    kind: str
    radius_mm: float = 50.0
    name: str = ""
    marker_mm: float = 30.0


@dataclass(frozen=True)
class Setup:
    path: str
    table: TableSpec = field(default_factory=TableSpec)
    dictionary: str = "DICT_4X4_50"
    anchors: tuple[AnchorSpec, ...] = ()
    camera: CameraSpec | None = None
    ruleset: str = "knight"
    players: tuple[PlayerSpec, ...] = ()
    minis: tuple[MiniSpec, ...] = ()
    objects: tuple[ObjectSpec, ...] = ()
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)  # ruleset tables: hex, infinity, forgod
    rules: Any = None  # the rule system's own reading of its section and roster keys (a frozen value), if it has one

    def mini(self, marker_id: int) -> MiniSpec | None:
        return next((m for m in self.minis if m.id == marker_id), None)

    def player(self, name: str) -> PlayerSpec | None:
        return next((p for p in self.players if p.name == name), None)

    @property
    def anchor_ids(self) -> frozenset[int]:
        return frozenset(a.id for a in self.anchors)

    @property
    def listed_ids(self) -> frozenset[int] | None:
        """Every marker a frame of this table may show (anchors, minis, objects); None without a
        roster (then any marker may be a mini, and no frame is known to be missing one)."""
        if not self.minis:
            return None
        return self.anchor_ids | {m.id for m in self.minis} | {o.id for o in self.objects}


# --- validation ------------------------------------------------------------------------------------

class _Problems:
    """Collects every problem with its key path, then raises one SetupError listing them all."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.items.append(f"{key}: {message}" if key else message)

    def raise_if_any(self) -> None:
        if self.items:
            raise SetupError(f"{self.path}: " + "; ".join(self.items))


def _number(p: _Problems, table: dict, key: str, where: str, default: float | None = None,
            positive: bool = False, required: bool = False,
            between: tuple[float, float] | None = None) -> float | None:
    if key not in table:
        if required:
            p.add(f"{where}.{key}" if where else key, "missing (required)")
        return default
    value = table[key]
    name = f"{where}.{key}" if where else key
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        p.add(name, f"must be a number, got {value!r}")
        return default
    if positive and value <= 0:
        p.add(name, f"must be positive, got {value!r}")
        return default
    if between is not None and not between[0] <= value <= between[1]:
        p.add(name, f"must be {between[0]:g}-{between[1]:g} mm, got {value!r}")
        return default
    return float(value)


# What a table holds, in mm: sizes outside these are a typo or a unit mix-up (a hand of 1e300 mm
# made every distance 0 hands; a base of 1e300 mm crashed the drawing; a table 1e308 mm wide, the
# views sized by it).
MAX_TABLE_MM = 20000.0
MARKER_MM = (1.0, 500.0)
PART_MM = (0.0, 1000.0)  # a base, a mini's height, its marker's height


def _integer(p: _Problems, table: dict, key: str, where: str, required: bool = True) -> int | None:
    name = f"{where}.{key}"
    if key not in table:
        if required:
            p.add(name, "missing (required)")
        return None
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        p.add(name, f"must be a whole number >= 0, got {value!r}")
        return None
    return value


def _string(p: _Problems, table: dict, key: str, where: str, default: str = "") -> str:
    if key not in table:
        return default
    value = table[key]
    if not isinstance(value, str):
        p.add(f"{where}.{key}" if where else key, f"must be a string, got {value!r}")
        return default
    return value


def _unknown(p: _Problems, table: dict, allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            p.add(f"{where}.{key}" if where else key, "unknown key")


def _section(p: _Problems, data: dict, key: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        p.add(key, "must be a table")
        return {}
    return value


def _choice(p: _Problems, data: dict, section: str, key: str, default: str, allowed: tuple[str, ...],
            hint: str) -> str:
    """A one-key table whose string value must be one of `allowed`."""
    table = _section(p, data, section)
    _unknown(p, table, {key}, section)
    value = _string(p, table, key, section, default)
    if value not in allowed:
        p.add(f"{section}.{key}", f"unknown {key if key != 'name' else section} {value!r} ({hint})")
    return value


def _array_of_tables(p: _Problems, data: dict, key: str) -> list[dict]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        p.add(key, "must be an array of tables ([[%s]])" % key)
        return []
    return value


_TOP_KEYS = {"table", "markers", "anchors", "camera", "ruleset", "players", "minis", "objects"}
_MINI_KEYS = {"id", "name", "marker_mm", "player", "faction", "class", "base_mm", "height_mm", "marker_height_mm"}


def parse_setup(data: dict[str, Any], path: str, need_anchors: bool = False) -> Setup:
    """Validate an already-parsed TOML document; raises SetupError listing every problem.

    `need_anchors`: the setup is to register a camera's frames (locate, doctor, serve), which
    needs one anchor at least; the rules on a saved state and the calibrations do not."""
    from companion.rules.registry import systems  # imported here: the rule systems import this module

    known = systems()
    p = _Problems(path)
    ruleset = _choice(p, data, "ruleset", "name", "knight", tuple(known), f"one of {', '.join(known)}")
    system = known.get(ruleset)
    _unknown(p, data, _TOP_KEYS | {s.section for s in known.values() if s.section}, "")

    table_t = _section(p, data, "table")
    _unknown(p, table_t, {"width_mm", "depth_mm"}, "table")
    table = TableSpec(
        width_mm=_number(p, table_t, "width_mm", "table", 1200.0, positive=True, between=(0.0, MAX_TABLE_MM)),
        depth_mm=_number(p, table_t, "depth_mm", "table", 800.0, positive=True, between=(0.0, MAX_TABLE_MM)),
    )

    dictionary = _choice(p, data, "markers", "dictionary", "DICT_4X4_50", DICTIONARIES, "try DICT_4X4_50")

    anchors = []
    for i, a in enumerate(_array_of_tables(p, data, "anchors")):
        where = f"anchors[{i}]"
        _unknown(p, a, {"id", "x_mm", "y_mm", "size_mm", "rotation_deg"}, where)
        anchors.append(AnchorSpec(
            id=_integer(p, a, "id", where) or 0,
            x_mm=_number(p, a, "x_mm", where, 0.0, required=True, between=(-MAX_TABLE_MM, MAX_TABLE_MM)),
            y_mm=_number(p, a, "y_mm", where, 0.0, required=True, between=(-MAX_TABLE_MM, MAX_TABLE_MM)),
            size_mm=_number(p, a, "size_mm", where, 50.0, positive=True, between=MARKER_MM),
            rotation_deg=_number(p, a, "rotation_deg", where, 90.0),
        ))

    camera = None
    if "camera" in data:
        cam_t = _section(p, data, "camera")
        _unknown(p, cam_t, {"matrix", "distortion"}, "camera")
        camera = _camera(p, cam_t)

    players = []
    for i, pl in enumerate(_array_of_tables(p, data, "players")):
        where = f"players[{i}]"
        _unknown(p, pl, {"name", "hand_mm", "finger_mm"}, where)
        if "name" not in pl:
            p.add(f"{where}.name", "missing (required)")
        players.append(PlayerSpec(
            name=_string(p, pl, "name", where, f"player{i}"),
            hand_mm=_number(p, pl, "hand_mm", where, ADULT_HAND_MM, positive=True, between=PERSON_HAND_MM),
            finger_mm=_number(p, pl, "finger_mm", where, ADULT_FINGER_MM, positive=True, between=PERSON_FINGER_MM),
        ))
        if players[-1].finger_mm >= players[-1].hand_mm:
            p.add(f"{where}.finger_mm", f"must be shorter than the hand ({players[-1].hand_mm:g} mm), "
                                        f"got {players[-1].finger_mm:g}")

    minis = []
    system_keys = system.mini_keys if system else frozenset()
    for i, m in enumerate(_array_of_tables(p, data, "minis")):
        where = f"minis[{i}]"
        _unknown(p, m, _MINI_KEYS | system_keys, where)
        marker_id = _integer(p, m, "id", where)
        minis.append(MiniSpec(
            id=marker_id if marker_id is not None else -1,
            name=_string(p, m, "name", where, f"mini {marker_id}"),
            marker_mm=_number(p, m, "marker_mm", where, 20.0, positive=True, between=MARKER_MM),
            player=_string(p, m, "player", where),
            faction=_string(p, m, "faction", where),
            unit_class=_string(p, m, "class", where),
            base_mm=_number(p, m, "base_mm", where, 25.0, positive=True, between=PART_MM),
            height_mm=_number(p, m, "height_mm", where, 40.0, between=PART_MM) or 0.0,
            marker_height_mm=_number(p, m, "marker_height_mm", where, None, between=PART_MM),
            height_given="height_mm" in m or "marker_height_mm" in m,
            extra=tuple((k, v) for k, v in m.items() if k in system_keys),
        ))

    objects = []
    for i, o in enumerate(_array_of_tables(p, data, "objects")):
        where = f"objects[{i}]"
        _unknown(p, o, {"id", "kind", "radius_mm", "name", "marker_mm"}, where)
        kind = _string(p, o, "kind", where)
        if kind not in OBJECT_KINDS:
            p.add(f"{where}.kind", f"unknown kind {kind!r} (one of {', '.join(OBJECT_KINDS)})")
        object_id = _integer(p, o, "id", where)
        objects.append(ObjectSpec(
            id=object_id if object_id is not None else -1, kind=kind,
            radius_mm=_number(p, o, "radius_mm", where, 50.0, positive=True, between=(0.0, MAX_TABLE_MM)),
            name=_string(p, o, "name", where, kind),
            marker_mm=_number(p, o, "marker_mm", where, 30.0, positive=True, between=MARKER_MM),
        ))

    sections = {}
    for other in known.values():  # a system's table is checked for known keys even under another ruleset
        if other.section and other.section in data:
            sec = _section(p, data, other.section)
            _unknown(p, sec, other.section_keys, other.section)
            sections[other.section] = dict(sec)

    if not data:
        p.add("", "the file is empty: a setup needs at least [table] and one [[anchors]]")
    elif not anchors and need_anchors:
        p.add("anchors", "none given: at least one [[anchors]] (id, x_mm, y_mm) is needed to register the table")
    _cross_checks(p, anchors, players, minis, objects, dictionary)
    setup = Setup(path=path, table=table, dictionary=dictionary, anchors=tuple(anchors),
                  camera=camera, ruleset=ruleset, players=tuple(players), minis=tuple(minis),
                  objects=tuple(objects), sections=sections)
    rules = system.read_setup(setup, p.add) if system and system.read_setup else None
    p.raise_if_any()
    return replace(setup, rules=rules) if rules is not None else setup


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _camera(p: _Problems, cam: dict) -> CameraSpec | None:
    matrix = cam.get("matrix")
    ok = (isinstance(matrix, list) and len(matrix) == 3
          and all(isinstance(r, list) and len(r) == 3 for r in matrix)
          and all(_finite(v) for r in matrix for v in r))
    if not ok:
        p.add("camera.matrix", "must be 3 rows of 3 finite numbers")
        return None
    if matrix[0][0] <= 0 or matrix[1][1] <= 0:
        p.add("camera.matrix", "focal lengths (matrix[0][0], matrix[1][1]) must be positive")
    distortion = cam.get("distortion", [0.0, 0.0, 0.0, 0.0, 0.0])
    if (not isinstance(distortion, list) or len(distortion) not in (4, 5, 8, 12, 14)
            or not all(_finite(v) for v in distortion)):
        p.add("camera.distortion", "must be 4, 5, 8, 12 or 14 finite numbers (OpenCV order k1 k2 p1 p2 k3 ...)")
        return None
    return CameraSpec(matrix=tuple(tuple(float(v) for v in r) for r in matrix),
                      distortion=tuple(float(v) for v in distortion))


def _cross_checks(p: _Problems, anchors: list[AnchorSpec], players: list[PlayerSpec],
                  minis: list[MiniSpec], objects: list[ObjectSpec], dictionary: str) -> None:
    seen: dict[int, str] = {}
    size = DICTIONARY_SIZES.get(dictionary)
    for kind, items in (("anchors", anchors), ("minis", minis), ("objects", objects)):
        for i, item in enumerate(items):
            if item.id < 0:
                continue
            if size is not None and item.id >= size:
                p.add(f"{kind}[{i}].id", f"marker id {item.id} is not in {dictionary} (ids 0-{size - 1})")
            if item.id in seen:
                p.add(f"{kind}[{i}].id", f"marker id {item.id} is already used by {seen[item.id]}")
            else:
                seen[item.id] = f"{kind}[{i}]"
    names = [pl.name for pl in players]
    for i, name in enumerate(names):
        if name in names[:i]:
            p.add(f"players[{i}].name", f"duplicate player {name!r}")
    for i, m in enumerate(minis):
        if m.player and players and m.player not in names:
            p.add(f"minis[{i}].player", f"unknown player {m.player!r} (players: {', '.join(names)})")
        if m.height_mm < 0:
            p.add(f"minis[{i}].height_mm", f"must be >= 0, got {m.height_mm}")


def load_setup(path: str | Path, need_anchors: bool = False) -> Setup:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SetupError(f"{path}: setup file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(f"{path}: cannot read setup file ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(f"{path}: not valid TOML ({exc})") from None
    return parse_setup(data, str(path), need_anchors)


def default_anchors(table: TableSpec, size_mm: float = 50.0, inset_mm: float = 45.0) -> tuple[AnchorSpec, ...]:
    """Anchors 0-3 at the corners, counter-clockwise from the origin, upright from the y=0 edge."""
    w, d = table.width_mm, table.depth_mm
    spots = ((inset_mm, inset_mm), (w - inset_mm, inset_mm), (w - inset_mm, d - inset_mm), (inset_mm, d - inset_mm))
    return tuple(AnchorSpec(id=i, x_mm=x, y_mm=y, size_mm=size_mm) for i, (x, y) in enumerate(spots))


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):  # an inline table: F0R60D's area overrides
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {value!r} to TOML")


def setup_to_toml(setup: Setup) -> str:
    """The setup as a TOML document that `load_setup` reads back to an equal Setup."""
    lines = ["[table]", f"width_mm = {toml_value(setup.table.width_mm)}",
             f"depth_mm = {toml_value(setup.table.depth_mm)}", "",
             "[markers]", f"dictionary = {toml_value(setup.dictionary)}", ""]
    for a in setup.anchors:
        lines += ["[[anchors]]", f"id = {a.id}", f"x_mm = {toml_value(a.x_mm)}", f"y_mm = {toml_value(a.y_mm)}",
                  f"size_mm = {toml_value(a.size_mm)}", f"rotation_deg = {toml_value(a.rotation_deg)}", ""]
    if setup.camera is not None:
        lines += ["[camera]", f"matrix = {toml_value([list(r) for r in setup.camera.matrix])}",
                  f"distortion = {toml_value(list(setup.camera.distortion))}", ""]
    lines += ["[ruleset]", f"name = {toml_value(setup.ruleset)}", ""]
    for p in setup.players:
        lines += ["[[players]]", f"name = {toml_value(p.name)}", f"hand_mm = {toml_value(p.hand_mm)}",
                  f"finger_mm = {toml_value(p.finger_mm)}", ""]
    for m in setup.minis:
        lines += ["[[minis]]", f"id = {m.id}", f"name = {toml_value(m.name)}", f"marker_mm = {toml_value(m.marker_mm)}"]
        for key, value in (("player", m.player), ("faction", m.faction), ("class", m.unit_class)):
            if value:
                lines.append(f"{key} = {toml_value(value)}")
        lines.append(f"base_mm = {toml_value(m.base_mm)}")
        if m.height_given:
            lines.append(f"height_mm = {toml_value(m.height_mm)}")
        if m.marker_height_mm is not None:
            lines.append(f"marker_height_mm = {toml_value(m.marker_height_mm)}")
        lines += [f"{key} = {toml_value(value)}" for key, value in m.extra]
        lines.append("")
    for o in setup.objects:
        lines += ["[[objects]]", f"id = {o.id}", f"kind = {toml_value(o.kind)}", f"radius_mm = {toml_value(o.radius_mm)}",
                  f"name = {toml_value(o.name)}", f"marker_mm = {toml_value(o.marker_mm)}", ""]
    for name, table in setup.sections.items():
        lines += [f"[{name}]"] + [f"{k} = {toml_value(v)}" for k, v in table.items()] + [""]
    return "\n".join(lines)
