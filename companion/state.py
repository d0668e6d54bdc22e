"""The table state: an immutable snapshot of where everything stands, and its JSON form.

This is the `locate` output of DESIGN.md and what every rules command reads back with `--state`.
Units are in the names: millimetres in the table frame (origin at the corner by anchor 0, x towards
anchor 1, y towards anchor 3, z up), degrees counter-clockwise from +x.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from companion.errors import InputError

# Facts of the table that the camera and the rules both stand on:
KNOCKED_OVER_DEG = 45.0  # a mini whose marker is tilted more than this from flat has been knocked over
BRICK_MM = 9.6  # a brick's height (a plate is a third of it)
# An empty `blocks` list must not read as "no cover on the table" when nobody looked: the state
# says so in a flag (`blocks_seen`) and, for people reading its JSON, in this warning.
BLOCKS_NOT_SEEN = "blocks were not looked for in this frame: `blocks` is empty whatever stands on the table"


@dataclass(frozen=True)
class MiniState:
    id: int
    x_mm: float  # base centre on the table plane
    y_mm: float
    z_mm: float  # marker centre above the table
    heading_deg: float  # marker up vector, [0, 360)
    name: str = ""
    player: str = ""
    tilt_deg: float = 0.0  # marker tilt from flat; > 45 means knocked over
    confidence: float = 1.0  # 0-1
    status: str = "seen"  # seen | held (covered, last known position kept)
    last_seen_frame: int = 0
    height_source: str = "frame"  # frame (this frame's marker size) | fused (blended with the setup's height, which agreed) | learned (tracked) | setup (the frame's was impossible) | block (on a block seen under it, the frame's height about its top)
    z_sigma_mm: float = 0.0  # expected error of z_mm (one sigma); x and y move by about z error * distance / camera height
    last_seen_s: float = 0.0  # epoch seconds of the frame it was last seen in (a held mini keeps it)
    held_place: str = ""  # held: what is where it stood now: hand (covered) | table (bare: lifted) | other (knocked over?)

    def seen_at(self, frame: int, time_s: float | None = None) -> "MiniState":
        """The same state, last seen at `frame` (at `time_s`). A plain attribute copy: the live
        tracker makes one per mini per frame, and `dataclasses.replace` re-runs every field through __init__."""
        if self.last_seen_frame == frame and (time_s is None or self.last_seen_s == time_s):
            return self
        out = object.__new__(MiniState)
        out.__dict__.update(self.__dict__)
        object.__setattr__(out, "last_seen_frame", frame)
        if time_s is not None:
            object.__setattr__(out, "last_seen_s", time_s)
        return out


@dataclass(frozen=True)
class BlockState:
    footprint_mm: tuple[tuple[float, float], ...]  # polygon on the table plane, counter-clockwise
    height_mm: float  # top above the table
    color: str
    id: int = 0
    confidence: float = 1.0
    # (lowest, highest) mm its top may be at as the camera saw it; None: as `height_mm` says
    height_range_mm: tuple[float, float] | None = None
    # the mini that hides it whole (its marker says it stands on a block none of which is seen):
    # its footprint is the most that mini can hide, a guess; None: seen
    hidden_under: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Its JSON in a table state, and wherever else a block is shown (the phone page's state)."""
        data = _clean(asdict(self))
        for optional in ("height_range_mm", "hidden_under"):
            if data[optional] is None:
                del data[optional]
        return data


@dataclass(frozen=True)
class MarkerSighting:
    """A marker that is not a placed mini: unknown to the roster, or an id seen more than once."""

    id: int
    x_mm: float
    y_mm: float
    z_mm: float | None = None  # None when the marker's size is unknown
    pixel: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True)
class CameraPose:
    """Where the camera stood for the frame: a table point X (mm) is at R X + t in the camera's
    frame (OpenCV's: x right, y down, z along the view)."""

    rotation_mrad: tuple[float, float, float]  # R as a Rodrigues vector (axis times angle), milliradians
    translation_mm: tuple[float, float, float]  # t
    centre_mm: tuple[float, float, float]  # the camera's optical centre in the table frame


@dataclass(frozen=True)
class RegistrationState:
    """How the table was found in the frame: which anchors, how well, and the camera's pose."""

    registered: bool = False
    anchors_seen: tuple[int, ...] = ()
    residual_px: float | None = None  # RMS reprojection error of the anchor corners
    camera: CameraPose | None = None
    reason: str = ""  # why not registered

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"registered": self.registered, "anchors_seen": list(self.anchors_seen),
                               "residual_px": self.residual_px}
        if self.camera is not None:
            out["camera_mm"] = [round(v, 1) for v in self.camera.centre_mm]
            out["camera_rotation_mrad"] = list(self.camera.rotation_mrad)
            out["camera_translation_mm"] = list(self.camera.translation_mm)
        if self.reason:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RegistrationState":
        def three(key: str) -> tuple[float, float, float]:
            values = tuple(_finite(v, f"registration: {key}") for v in data[key])
            if len(values) != 3:
                raise ValueError(f"registration: {key} has {len(values)} values, not 3")
            return values  # type: ignore[return-value]

        camera = None
        if all(k in data for k in ("camera_mm", "camera_rotation_mrad", "camera_translation_mm")):
            camera = CameraPose(three("camera_rotation_mrad"), three("camera_translation_mm"), three("camera_mm"))
        residual = data.get("residual_px")
        return cls(registered=bool(data.get("registered", False)),
                   anchors_seen=tuple(int(a) for a in data.get("anchors_seen", ())),
                   residual_px=None if residual is None else float(residual), camera=camera,
                   reason=str(data.get("reason", "")))


@dataclass(frozen=True)
class TableState:
    registered: bool
    minis: tuple[MiniState, ...] = ()
    blocks: tuple[BlockState, ...] = ()
    reason: str = ""  # why not registered
    frame: int = 0
    timestamp: float = 0.0  # seconds since the epoch of the frame
    unknown_markers: tuple[MarkerSighting, ...] = ()
    duplicate_markers: tuple[MarkerSighting, ...] = ()
    objects: tuple[MiniState, ...] = ()  # strategic objects located by their markers
    registration: RegistrationState = RegistrationState()
    warnings: tuple[str, ...] = ()
    blocks_seen: bool = True  # False: nobody has looked for blocks yet, `blocks` empty whatever stands there

    def mini(self, marker_id: int) -> MiniState | None:
        return next((m for m in self.minis if m.id == marker_id), None)

    def to_json(self) -> dict[str, Any]:
        data = {
            "registered": self.registered,
            "reason": self.reason,
            "frame": self.frame,
            "timestamp": self.timestamp,
            "minis": [asdict(m) for m in self.minis],
            "blocks": [b.to_json() for b in self.blocks],
            "objects": [asdict(o) for o in self.objects],
            "unknown_markers": [asdict(u) for u in self.unknown_markers],
            "duplicate_markers": [asdict(u) for u in self.duplicate_markers],
            "registration": self.registration.to_json(),
            "warnings": list(self.warnings) + ([] if self.blocks_seen else [BLOCKS_NOT_SEEN]),
            "blocks_seen": self.blocks_seen,
        }
        return _clean(data)

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "<state>") -> "TableState":
        try:
            minis = tuple(_mini(m) for m in _records(data, "minis"))
            objects = tuple(_mini(m) for m in _records(data, "objects"))
            ids = [m.id for m in minis + objects]
            twice = sorted({i for i in ids if ids.count(i) > 1})
            if twice:
                raise ValueError(f"marker ids {twice} are given twice (one place each)")
            blocks = tuple(_block(b, i) for i, b in enumerate(_records(data, "blocks")))
            registration = data.get("registration", {})
            if not isinstance(registration, dict):
                raise ValueError("registration must be an object")
            warnings = data.get("warnings", [])
            if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
                raise ValueError("warnings must be a list of texts")
            return cls(registered=bool(data.get("registered", True)), minis=minis, blocks=blocks,
                       reason=str(data.get("reason", "")), frame=int(data.get("frame", 0)),
                       timestamp=float(data.get("timestamp", 0.0)), objects=objects,
                       registration=RegistrationState.from_json(registration),
                       warnings=tuple(w for w in warnings if w != BLOCKS_NOT_SEEN),
                       blocks_seen=bool(data.get("blocks_seen", BLOCKS_NOT_SEEN not in warnings)))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(f"{source}: not a table state ({type(exc).__name__}: {exc})") from None


_MINI_FIELDS = {"id", "x_mm", "y_mm", "z_mm", "heading_deg", "name", "player", "tilt_deg", "confidence",
                "status", "last_seen_frame", "height_source", "z_sigma_mm", "last_seen_s", "held_place"}


def _clean(value: Any) -> Any:
    """JSON-ready: tuples as lists, floats to a thousandth (of a mm, a degree, a px), NaN as null."""
    if isinstance(value, float):
        return None if math.isnan(value) else round(value, 3)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _finite(value: Any, what: str) -> float:
    """A number every answer can stand on: NaN or infinity would be measured as 0 fingers."""
    if isinstance(value, bool):
        raise ValueError(f"{what} is {value!r}, not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} is {value!r}, not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{what} is {value!r}, not a finite number")
    return number


FAR_MM = 1e6  # a place a kilometre off is no place on a table: a broken file, not a position


def _records(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """A state's list of minis, objects or blocks: each one a JSON object."""
    records = data.get(key, [])
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError(f"{key} must be a list of objects")
    return records


def _marker_id(value: Any, what: str) -> int:
    """A marker's id: a whole number (true/false or 5.5 is a broken file, not marker 1 or 5)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise ValueError(f"{what} is {value!r}, not a marker id")
    return int(value)


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} is {value!r}, not a text")
    return value


def _block(b: dict[str, Any], index: int) -> BlockState:
    what = f"block {index}"
    return BlockState(footprint_mm=_footprint(b["footprint_mm"], f"{what}: footprint_mm"),
                      height_mm=_at_least_zero(b["height_mm"], f"{what}: height_mm"),
                      color=_text(b.get("color", ""), f"{what}: color"),
                      id=_marker_id(b.get("id", index), f"{what}: id"),
                      confidence=_finite(b.get("confidence", 1.0), f"{what}: confidence"),
                      height_range_mm=_height_range(b, what),
                      hidden_under=None if b.get("hidden_under") is None
                      else _marker_id(b["hidden_under"], f"{what}: hidden_under"))


def _height_range(b: dict[str, Any], what: str) -> tuple[float, float] | None:
    """A block's optional `height_range_mm`: [lowest, highest], its `height_mm` between them."""
    if b.get("height_range_mm") is None:
        return None
    value = b["height_range_mm"]
    where = f"{what}: height_range_mm"
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise ValueError(f"{where} must be [lowest, highest] in mm")
    low, high = _at_least_zero(value[0], where), _at_least_zero(value[1], where)
    if not low <= float(b["height_mm"]) <= high:
        raise ValueError(f"{where} is [{low}, {high}]: it must hold height_mm ({b['height_mm']})")
    return low, high


def _footprint(points: Any, what: str) -> tuple[tuple[float, float], ...]:
    """A block's outline: three corners or more, each a finite place, enclosing some table."""
    if not isinstance(points, (list, tuple)) or len(points) < 3 \
            or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in points):
        raise ValueError(f"{what} must be a list of 3 or more [x, y] corners")
    corners = tuple((_place(p[0], what), _place(p[1], what)) for p in points)
    # (the shoelace formula: a footprint of no area stands nowhere, and would cover no line)
    twice_area = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1]))
    if abs(twice_area) < 1e-6:
        raise ValueError(f"{what} encloses no area")
    return corners


def _at_least_zero(value: Any, what: str) -> float:
    number = _finite(value, what)
    if number < 0:
        raise ValueError(f"{what} is {value!r}, below the table")
    return number


def _place(value: Any, what: str) -> float:
    number = _finite(value, what)
    if abs(number) > FAR_MM:
        raise ValueError(f"{what} is {number:g} mm, no place on a table")
    return number


def _mini(m: dict[str, Any]) -> MiniState:
    values = {k: v for k, v in m.items() if k in _MINI_FIELDS}
    for key in ("x_mm", "y_mm", "z_mm", "heading_deg"):
        if key not in values:
            raise KeyError(f"mini {m.get('id', '?')} has no {key}")
        values[key] = (_place if key != "heading_deg" else _finite)(values[key], f"mini {m.get('id', '?')}: {key}")
    values["id"] = _marker_id(values["id"], "mini id")
    for key in ("name", "player", "status", "height_source"):
        if key in values:
            values[key] = _text(values[key], f"mini {values['id']}: {key}")
    if values.get("tilt_deg") is None:
        values["tilt_deg"] = 0.0
    if "held_place" in values:
        values["held_place"] = str(values["held_place"] or "")
    for key in ("tilt_deg", "confidence", "z_sigma_mm", "last_seen_s"):
        if key in values:
            values[key] = _finite(values[key], f"mini {values['id']}: {key}")
    return MiniState(**values)


def load_state(path: str | Path) -> TableState:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: state file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read state ({exc})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a table state (expected a JSON object)")
    return TableState.from_json(data, str(path))
