"""F0R60D's part of the setup: the board (`[forgod]`) and each card's figures (`[[minis]]` keys).

Every problem is reported at once, naming the key, like the rest of the setup file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from companion.rules.forgod.areas import UNIT_TYPES, Area, read_areas
from companion.rules.forgod.board import Board
from companion.rules.registry import Problem
from companion.setup_file import MiniSpec, Setup

MODES = ("guerrilla", "skirmish", "campaign")
LEVELS = ("basic", "intermediate", "advanced")
TERRAINS = ("earth", "air", "any")
ATTACK_TYPES = ("melee", "ranged", "dual")
INVOCATIONS = ("beast", "power")
NOT_TROOPS = ("beast", "power", "special")  # neither count as units nor cost PC

SECTION_KEYS = frozenset({"square_w_mm", "square_d_mm", "origin_x_mm", "origin_y_mm", "columns", "rows_per_side",
                          "mode", "level", "areas"})
_INT_KEYS = ("attack", "damage", "evasion", "absorption", "constant_absorption", "fortitude", "morale", "reaction")
MINI_KEYS = frozenset({"type", "level", "cards", "terrain", *_INT_KEYS, "hp", "pc", "armour", "commander",
                       "attack_type"})


@dataclass(frozen=True)
class Card:
    """One card or detachment (cards of one type in one square)."""

    id: int
    name: str
    player: str
    type: str = "infantry"
    level: int = 1
    cards: int = 1
    terrain: str = "earth"  # earth | air | any (any counts as earth unless declared)
    attack: int = 0
    damage: int = 0
    evasion: int = 0
    absorption: int = 0
    constant_absorption: int = 0
    fortitude: int = 0
    morale: int = 0
    reaction: int = 0
    hp: int = 1  # per card
    pc: int = 0  # per card
    armour: bool = False
    commander: bool = False
    attack_type: str = "melee"
    key: str = ""  # where the setup gives it ("minis[2]"), so a problem can name it

    @property
    def fights_as(self) -> str:
        """earth or air for the terrain rules."""
        return "air" if self.terrain == "air" else "earth"

    @property
    def ranged(self) -> bool:
        return self.attack_type in ("ranged", "dual")

    @property
    def melee(self) -> bool:
        return self.attack_type in ("melee", "dual")


@dataclass(frozen=True)
class Forgod:
    board: Board
    mode: str
    level: str
    players: tuple[str, str]
    cards: tuple[Card, ...]
    areas: dict[str, Area] = field(hash=False)

    def card(self, card_id: int) -> Card | None:
        return next((c for c in self.cards if c.id == card_id), None)

    def side_of_player(self, player: str) -> int:
        return self.players.index(player)


def _default_attack_type(unit_type: str) -> str:
    return {"archery": "ranged", "siege": "dual"}.get(unit_type, "melee")


def _card(m: MiniSpec, where: str, problem: Problem) -> Card:
    def pick(key: str, default: Any, kind: type, allowed: tuple[str, ...] = (), minimum: int | None = None) -> Any:
        value = m.get(key, default)
        wrong = {int: isinstance(value, bool) or not isinstance(value, int),
                 bool: not isinstance(value, bool), str: not isinstance(value, str)}[kind]
        if wrong:
            what = {int: "a whole number", bool: "true or false", str: "a string"}[kind]
            problem(f"{where}.{key}", f"must be {what}, got {value!r}")
        elif allowed and value not in allowed:
            problem(f"{where}.{key}", f"unknown {key} {value!r} (one of {', '.join(allowed)})")
        elif minimum is not None and value < minimum:
            problem(f"{where}.{key}", f"must be {minimum} or more, got {value!r}")
        else:
            return value
        return default

    unit_type = pick("type", "infantry", str, UNIT_TYPES)
    return Card(
        id=m.id, name=m.name, player=m.player, type=unit_type, key=where,
        level=pick("level", 1, int, minimum=1), cards=pick("cards", 1, int, minimum=1),
        terrain=pick("terrain", "earth", str, TERRAINS),
        **{k: pick(k, 0, int) for k in _INT_KEYS},
        hp=pick("hp", 1, int, minimum=1), pc=pick("pc", 0, int, minimum=0),
        armour=pick("armour", False, bool), commander=pick("commander", False, bool),
        attack_type=pick("attack_type", _default_attack_type(unit_type), str, ATTACK_TYPES),
    )


def read_setup(setup: Setup, problem: Problem) -> Forgod:
    section = setup.sections.get("forgod", {})

    def number(key: str, default: float, whole: bool = False, minimum: float | None = None) -> Any:
        value = section.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
            problem(f"forgod.{key}", f"must be a {'whole number' if whole else 'number'}, got {value!r}")
            return default
        if value != value or value in (float("inf"), float("-inf")):
            problem(f"forgod.{key}", f"must be finite, got {value!r}")
            return default
        if minimum is not None and value < minimum:
            problem(f"forgod.{key}", f"must be {'positive' if minimum > 0 and not whole else f'{minimum} or more'}, got {value!r}")
            return default
        return value

    def choice(key: str, default: str, allowed: tuple[str, ...]) -> str:
        value = section.get(key, default)
        if value not in allowed:
            problem(f"forgod.{key}", f"unknown {key} {value!r} (one of {', '.join(allowed)})")
            return default
        return value

    w, d = number("square_w_mm", 70.0), number("square_d_mm", 95.0)
    for key, value in (("square_w_mm", w), ("square_d_mm", d)):
        if value <= 0:
            problem(f"forgod.{key}", f"must be positive, got {value!r}")
    board = Board(float(w) if w > 0 else 70.0, float(d) if d > 0 else 95.0,
                  float(number("origin_x_mm", 100.0)), float(number("origin_y_mm", 60.0)),
                  number("columns", 7, whole=True, minimum=1), number("rows_per_side", 3, whole=True, minimum=1))
    mode, level = choice("mode", "guerrilla", MODES), choice("level", "basic", LEVELS)
    areas = read_areas(section.get("areas"), "forgod.areas", problem)

    names = tuple(p.name for p in setup.players)
    if len(names) != 2:
        problem("players", f"F0R60D is played by exactly two [[players]], the setup has {len(names)}"
                + (f" ({', '.join(names)})" if names else ""))
    cards = [_card(m, f"minis[{i}]", problem) for i, m in enumerate(setup.minis)]  # a card with no player: army says so
    players = (names + ("", ""))[:2] if len(names) != 2 else names
    return Forgod(board, mode, level, players, tuple(cards), areas)
