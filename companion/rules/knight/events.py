"""The events of a Knight-level game, and reading them back from JSON (a saved game's log)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, get_origin, get_type_hints

from companion.rules.events import Event, named_event

DICE = ("black", "red", "white")  # action points, attack points, warriors


@dataclass(frozen=True)
class StartTurn(Event):
    """The acting player rolled black (action points), red (attacks) and white (warriors)."""

    kind: ClassVar[str] = "start_turn"
    player: str
    black: int
    red: int
    white: int


@dataclass(frozen=True)
class Convert(Event):
    """Right after the roll: swap two dice, losing 1 on either of them (never below 1)."""

    kind: ClassVar[str] = "convert"
    swap: tuple[str, str]
    lose_on: str


@dataclass(frozen=True)
class Spend(Event):
    kind: ClassVar[str] = "spend"
    die: str  # black | red
    amount: int
    what: str = ""


@dataclass(frozen=True)
class Interrupt(Event):
    """Once during the enemy's turn: one unit acts with 2 AP and 1 attack; the interrupter's dice are
    all 1 lower next turn."""

    kind: ClassVar[str] = "interrupt"
    player: str
    unit: int


@dataclass(frozen=True)
class UnitDied(Event):
    kind: ClassVar[str] = "unit_died"
    unit: int
    cause: str = ""


@dataclass(frozen=True)
class BecameSkeleton(Event):
    """Plague (or the dark obelisk): a living unit turns into a skeleton without dying."""

    kind: ClassVar[str] = "became_skeleton"
    unit: int
    cause: str = ""


@dataclass(frozen=True)
class Hire(Event):
    """A skeleton mercenary (any class but priest) for 2 mine coins, once per turn."""

    kind: ClassVar[str] = "hire"
    player: str
    unit: int  # its marker id
    unit_class: str


@dataclass(frozen=True)
class Destroyed(Event):
    """A strategic object destroyed (castle, crystal), with whose it was."""

    kind: ClassVar[str] = "destroyed"
    object_kind: str
    owner: str


@dataclass(frozen=True)
class EndTurn(Event):
    """The acting player ends the turn. `control` is who held each strategic object at that moment
    (from the camera: object kind -> player or None); the game is scored from it."""

    kind: ClassVar[str] = "end_turn"
    control: dict[str, str | None] = field(default_factory=dict)


EVENT_TYPES = {cls.kind: cls for cls in (StartTurn, Convert, Spend, Interrupt, UnitDied, BecameSkeleton, Hire,
                                         Destroyed, EndTurn)}


def event_from_json(data: dict[str, Any]) -> Event:
    cls, data = named_event(data, EVENT_TYPES)
    if cls is Convert and isinstance(data.get("swap"), list):
        data["swap"] = tuple(data["swap"])
    hints = get_type_hints(cls)
    for f in fields(cls):
        if f.name in data and not _fits(data[f.name], hints[f.name]):
            raise ValueError(f"{cls.kind}: {f.name} must be {_TYPE_WORDS.get(str(hints[f.name]), hints[f.name])}")
    try:
        return cls(**data)
    except TypeError as exc:
        raise ValueError(f"{cls.kind}: {exc}") from None


_TYPE_WORDS = {"<class 'int'>": "an integer", "<class 'str'>": "a text", "tuple[str, str]": "two dice names",
               "dict[str, str | None]": "an object of object kind -> player"}


def _fits(value: Any, hint: Any) -> bool:
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if get_origin(hint) is tuple:
        return isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)
    if get_origin(hint) is dict:
        return isinstance(value, dict) and all(isinstance(k, str) and (v is None or isinstance(v, str))
                                               for k, v in value.items())
    return True
