"""A Knight-level game: turns, WBR dice, rounds, the siege counter, deaths and skeletons, winners.

In the style of python-chess: the game is a list of events; `push` checks an event and appends it
(an illegal one raises `IllegalEvent` listing every problem), `pop` takes the last one back, and
everything else (whose turn, the dice left, round, coins, unit statuses, the winner and why) is
derived by replaying the log, so undo is always exact. Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar, get_origin, get_type_hints

from companion.rules.events import Event, IllegalEvent, named_event
from companion.rules.table import Table
from companion.setup_file import Setup

__all__ = ["Event", "IllegalEvent", "Game"]  # the event base and the error are shared by every game

MODES = ("skirmish", "siege", "overlord", "destruction", "plague")
SIEGE_ROUNDS = 10
DICE = ("black", "red", "white")  # action points, attack points, warriors
STARTING_ARMY = 6
HIRE_COINS = 2


# --- events -------------------------------------------------------------------------------------------


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


# --- derived state -----------------------------------------------------------------------------------

@dataclass
class UnitStatus:
    id: int
    player: str
    unit_class: str
    status: str  # alive | skeleton | gone
    hired: bool = False


@dataclass
class _Replay:
    turn_player: str | None = None
    dice: dict[str, int] = field(default_factory=dict)  # left this turn
    rolled: dict[str, int] = field(default_factory=dict)
    action_points: int = 0  # the black die after any conversion: the turn's AP
    attacks: int = 0  # red points spent this turn
    spent_any: bool = False
    converted: bool = False
    turns_this_round: list[str] = field(default_factory=list)
    rounds_done: int = 0
    interrupts: dict[str, bool] = field(default_factory=dict)  # player -> penalised next turn
    interrupted_this_turn: bool = False
    hired_this_turn: bool = False
    coins: dict[str, int] = field(default_factory=dict)
    destroyed: list[tuple[str, str]] = field(default_factory=list)
    winner: str | None = None
    win_reason: str = ""
    log: list[str] = field(default_factory=list)
    units: dict[int, UnitStatus] = field(default_factory=dict)  # each roster unit's fate so far


class Game:
    def __init__(self, setup: Setup, mode: str = "skirmish", players: tuple[str, ...] | None = None,
                 castle_holder: str | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode: {mode!r} is not one of {', '.join(MODES)}")
        self.setup = setup
        self.mode = mode
        self.players = players or tuple(p.name for p in setup.players) or tuple(sorted({m.player for m in setup.minis}))
        if len(self.players) < 2:
            raise ValueError("players: a game needs two players")
        if mode == "siege":
            if castle_holder not in self.players:
                raise ValueError(f"castle_holder: the siege needs the castle holder, one of {', '.join(self.players)}")
        self.castle_holder = castle_holder
        self.events: list[Event] = []
        self._state = self._replay()

    @property
    def units(self) -> dict[int, UnitStatus]:
        """Each roster unit's fate after the events so far (replayed, never written elsewhere)."""
        return self._state.units

    @classmethod
    def new(cls, setup: Setup, mode: str | None = None, castle_holder: str | None = None) -> "Game":
        return cls(setup, mode or "skirmish", castle_holder=castle_holder)

    # python-chess style ---------------------------------------------------------------------------
    def push(self, event: Event) -> None:
        problems = self.problems(event)
        if problems:
            raise IllegalEvent("; ".join(problems))
        self.events.append(event)
        self._state = self._replay()

    def pop(self) -> Event:
        if not self.events:
            raise IllegalEvent("nothing to undo")
        event = self.events.pop()
        self._state = self._replay()
        return event

    def problems(self, event: Event) -> list[str]:
        """Every reason the event is not allowed now (empty: allowed)."""
        s = self._state
        out: list[str] = []
        if s.winner:
            out.append(f"the game is over: {s.winner} won ({s.win_reason})")
        if isinstance(event, StartTurn):
            if s.turn_player is not None:
                out.append(f"{s.turn_player}'s turn is not over")
            expected = self.next_player
            if event.player != expected:
                out.append(f"it is {expected}'s turn to start")
            for die in DICE:
                if not 1 <= getattr(event, die) <= 6:
                    out.append(f"{die}: a die shows 1 to 6")
        elif s.turn_player is None and not isinstance(event, (UnitDied, BecameSkeleton, Destroyed)):
            out.append("no turn has started: roll the dice first")
        if isinstance(event, Convert):
            if s.spent_any or s.converted:
                out.append("conversion is only right after the roll, once")
            if len(set(event.swap)) != 2 or not set(event.swap) <= set(DICE):
                out.append(f"swap: two different dice of {', '.join(DICE)}")
            if event.lose_on not in event.swap:
                out.append("lose_on: one of the two swapped dice")
        if isinstance(event, Spend):
            if event.die not in ("black", "red"):
                out.append("die: black (action points) or red (attacks); the white die is a limit, not spent")
            elif event.amount < 1 or event.amount > s.dice.get(event.die, 0):
                out.append(f"{event.die}: {s.dice.get(event.die, 0)} left, cannot spend {event.amount}")
        if isinstance(event, Interrupt):
            if event.player == s.turn_player:
                out.append("interrupt: only during the enemy's turn")
            if s.interrupted_this_turn:
                out.append("interrupt: once per enemy turn")
        if isinstance(event, (UnitDied, BecameSkeleton)):
            unit = self.units.get(event.unit)
            if unit is None:
                out.append(f"unit {event.unit}: not in this game")
            elif unit.status == "gone":
                out.append(f"unit {event.unit}: already out of the game")
            elif isinstance(event, BecameSkeleton) and unit.status == "skeleton":
                out.append(f"unit {event.unit}: already a skeleton")
        if isinstance(event, Hire):
            if event.player != s.turn_player:
                out.append("hire: on your own turn")
            if s.hired_this_turn:
                out.append("hire: once per turn")
            if s.coins.get(event.player, 0) < HIRE_COINS:
                out.append(f"hire: {HIRE_COINS} coins needed, {event.player} has {s.coins.get(event.player, 0)}")
            if event.unit_class == "priest":
                out.append("hire: any class but the oblivion priest")
            if event.unit in self.units:
                out.append(f"hire: marker {event.unit} is already in the game")
            if ("castle", event.player) in s.destroyed:
                out.append(f"hire: {event.player} lost their castle")
        return out

    # derived views ---------------------------------------------------------------------------------
    @property
    def turn_player(self) -> str | None:
        return self._state.turn_player

    @property
    def next_player(self) -> str:
        """Who starts the next turn (players alternate; a round is every player's turn)."""
        done = self._state.turns_this_round
        return next(p for p in self.players if p not in done) if len(done) < len(self.players) else self.players[0]

    @property
    def round(self) -> int:
        """The round being played (1-based); rounds completed = siege coins by the castle."""
        return self._state.rounds_done + 1

    @property
    def rounds_done(self) -> int:
        return self._state.rounds_done

    @property
    def dice_left(self) -> dict[str, int]:
        return dict(self._state.dice)

    @property
    def action_points(self) -> int:
        """The turn's AP: its black die after any conversion (0 between turns)."""
        return self._state.action_points if self._state.turn_player else 0

    @property
    def warriors(self) -> int:
        """The white die (after conversion): how many units may act this turn (0 between turns)."""
        return self._state.dice.get("white", 0) if self._state.turn_player else 0

    @property
    def attacks_made(self) -> int:
        """Red die points spent this turn (attacks the players entered)."""
        return self._state.attacks if self._state.turn_player else 0

    @property
    def played_this_round(self) -> tuple[str, ...]:
        """Players whose turn in this round is over, in order."""
        return tuple(self._state.turns_this_round)

    @property
    def winner(self) -> str | None:
        return self._state.winner

    @property
    def win_reason(self) -> str:
        return self._state.win_reason

    @property
    def log(self) -> list[str]:
        return list(self._state.log)

    @property
    def coins(self) -> dict[str, int]:
        return dict(self._state.coins)

    def statuses(self) -> dict[int, str]:
        """Each unit's status in the game: alive | skeleton | gone."""
        return {u.id: u.status for u in self.units.values()}

    def balance(self, player: str) -> int:
        """Vengeful spirits: units permanently lost from the starting 6, less skeletons hired."""
        lost = sum(1 for u in self.units.values() if u.player == player and u.status == "gone" and not u.hired)
        hired = sum(1 for u in self.units.values() if u.player == player and u.hired)
        return max(0, min(lost, STARTING_ARMY) - hired)

    # replay ------------------------------------------------------------------------------------------
    def _replay(self) -> _Replay:
        s = _Replay(coins={p: 0 for p in self.players}, interrupts={p: False for p in self.players},
                    units={m.id: UnitStatus(m.id, m.player, m.unit_class,
                                            "skeleton" if m.faction == "skeletons" else "alive")
                           for m in self.setup.minis if m.player in self.players})
        for event in self.events:
            self._apply(s, event)
        return s

    def _apply(self, s: _Replay, e: Event) -> None:
        if isinstance(e, StartTurn):
            penalty = 1 if s.interrupts.get(e.player) else 0
            s.interrupts[e.player] = False
            s.turn_player = e.player
            s.rolled = {d: max(1, getattr(e, d) - penalty) for d in DICE}
            s.dice = dict(s.rolled)
            s.action_points = s.dice["black"]
            s.attacks = 0
            s.spent_any = s.converted = s.interrupted_this_turn = s.hired_this_turn = False
            s.log.append(f"round {s.rounds_done + 1}: {e.player} rolled black {e.black}, red {e.red}, white {e.white}"
                         + (f" (-1 each for the interrupt: {s.dice})" if penalty else ""))
        elif isinstance(e, Convert):
            a, b = e.swap
            s.dice[a], s.dice[b] = s.dice[b], s.dice[a]
            s.dice[e.lose_on] = max(1, s.dice[e.lose_on] - 1)
            s.action_points = s.dice["black"]
            s.converted = True
            s.log.append(f"{s.turn_player} converted: swapped {a} and {b}, -1 on {e.lose_on}: {s.dice}")
        elif isinstance(e, Spend):
            s.dice[e.die] -= e.amount
            s.attacks += e.amount if e.die == "red" else 0
            s.spent_any = True
            s.log.append(f"{s.turn_player} spent {e.amount} {e.die}" + (f" ({e.what})" if e.what else ""))
        elif isinstance(e, Interrupt):
            s.interrupts[e.player] = True
            s.interrupted_this_turn = True
            s.log.append(f"{e.player} interrupts with unit {e.unit} (2 AP, 1 attack; all dice -1 next turn)")
        elif isinstance(e, UnitDied):
            unit = s.units[e.unit]
            no_afterlife = ("crystal", unit.player) in s.destroyed
            if unit.status == "alive" and not no_afterlife:
                unit.status = "skeleton"
                s.log.append(f"unit {e.unit} died and rose as a skeleton" + (f" ({e.cause})" if e.cause else ""))
            else:
                unit.status = "gone"
                s.log.append(f"unit {e.unit} left the game" + (f" ({e.cause})" if e.cause else ""))
            self._check_army(s)
        elif isinstance(e, BecameSkeleton):
            s.units[e.unit].status = "skeleton"
            s.log.append(f"unit {e.unit} became a skeleton" + (f" ({e.cause})" if e.cause else ""))
            self._check_plague(s)
        elif isinstance(e, Hire):
            s.coins[e.player] -= HIRE_COINS
            s.hired_this_turn = True
            s.units[e.unit] = UnitStatus(e.unit, e.player, e.unit_class, "skeleton", hired=True)
            s.log.append(f"{e.player} hired a skeleton {e.unit_class} (marker {e.unit}) for {HIRE_COINS} coins")
        elif isinstance(e, Destroyed):
            s.destroyed.append((e.object_kind, e.owner))
            s.log.append(f"{e.owner}'s {e.object_kind} was destroyed")
            if self.mode == "destruction" and e.object_kind == "castle" and not s.winner:
                s.winner = self._other(e.owner)
                s.win_reason = f"destroyed {e.owner}'s castle"
        elif isinstance(e, EndTurn):
            s.log.append(f"{s.turn_player} ended the turn")
            s.turns_this_round.append(s.turn_player)
            s.turn_player = None
            s.dice = {}
            if self.mode == "overlord" and not s.winner:
                holders = {e.control.get(k) for k in ("obelisk", "garden", "mine")}
                if len(holders) == 1 and None not in holders:
                    s.winner = holders.pop()
                    s.win_reason = "holds the dark obelisk, the garden of life and the mine at once"
            if len(s.turns_this_round) == len(self.players):
                self._end_round(s, e.control)

    def _end_round(self, s: _Replay, control: dict[str, str | None]) -> None:
        s.rounds_done += 1
        s.turns_this_round = []
        miner = control.get("mine")
        if miner in s.coins and self.mode != "siege":
            s.coins[miner] += 1
        # One line per event: the round ends with its last turn, and one Undo takes both back.
        s.log[-1] += f"; round {s.rounds_done} ended" + (f", a coin by the castle ({s.rounds_done} of {SIEGE_ROUNDS})"
                                                         if self.mode == "siege" else "")
        if self.mode == "siege" and not s.winner:
            attacker = self._other(self.castle_holder)
            holder = control.get("castle")
            if holder == attacker:
                s.winner, s.win_reason = attacker, f"took the castle by the end of round {s.rounds_done}"
            elif s.rounds_done >= SIEGE_ROUNDS:
                s.winner, s.win_reason = self.castle_holder, f"held the castle through round {SIEGE_ROUNDS}"

    def _check_army(self, s: _Replay) -> None:
        for player in self.players:
            army = [u for u in s.units.values() if u.player == player]
            if army and all(u.status == "gone" for u in army) and not s.winner:
                s.winner, s.win_reason = self._other(player), f"destroyed {player}'s whole army"

    def _check_plague(self, s: _Replay) -> None:
        if self.mode != "plague" or s.winner:
            return
        for player in self.players:
            army = [u for u in s.units.values() if u.player == player and u.status != "gone"]
            if army and all(u.status == "skeleton" for u in army):
                s.winner, s.win_reason = self._other(player), f"all of {player}'s warriors became skeletons"

    def _other(self, player: str | None) -> str:
        return next(p for p in self.players if p != player)

    def table_view(self, table: Table) -> Table:
        """The camera's table as this game sees it: units out of the game are left out, and a unit
        that died (or turned) fights on as a skeleton, with the skeletons' modifiers."""
        units = []
        for u in table.units:
            status = self.units.get(u.id)
            if status is not None and status.status == "gone":
                continue
            if status is not None and status.status == "skeleton":
                u = replace(u, faction="skeletons")
            units.append(u)
        return replace(table, units=tuple(units))

    # persistence -----------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"mode": self.mode, "players": list(self.players), "castle_holder": self.castle_holder,
                "events": [e.to_json() for e in self.events]}

    def summary(self) -> dict:
        return {"mode": self.mode, "round": self.round, "rounds_done": self.rounds_done,
                "siege_rounds": SIEGE_ROUNDS if self.mode == "siege" else None, "turn": self.turn_player,
                "next": self.next_player, "dice_left": self.dice_left, "coins": self.coins, "winner": self.winner,
                "win_reason": self.win_reason,
                "units": {str(u.id): u.status for u in self.units.values()},
                "balance": {p: self.balance(p) for p in self.players}, "log": self.log}

    @classmethod
    def from_json(cls, data: dict, setup: Setup) -> "Game":
        game = cls(setup, data.get("mode", "skirmish"), tuple(data["players"]) if data.get("players") else None,
                   data.get("castle_holder"))
        for raw in data.get("events", []):
            game.push(event_from_json(raw))
        return game
