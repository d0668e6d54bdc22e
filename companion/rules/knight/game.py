"""A Knight-level game: turns, WBR dice, rounds, the siege counter, deaths and skeletons, winners.

In the style of python-chess: the game is a list of events; `push` checks an event and appends it
(an illegal one raises `IllegalEvent` listing every problem), `pop` takes the last one back, and
everything else (whose turn, the dice left, round, coins, unit statuses, the winner and why) is
derived by replaying the log, so undo is always exact. Pure Python.
"""

from __future__ import annotations

from dataclasses import replace

from companion.rules.events import Event, IllegalEvent
from companion.rules.knight.events import (DICE, EVENT_TYPES, BecameSkeleton, Convert, Destroyed, EndTurn, Hire,
                                           Interrupt, Spend, StartTurn, UnitDied, event_from_json)
from companion.rules.knight.replay import HIRE_COINS, SIEGE_ROUNDS, STARTING_ARMY, Replayed, UnitStatus, replay
from companion.rules.table import Table
from companion.setup_file import Setup

# The event base and the error are shared by every game; the events and the replayed values are
# this game's vocabulary, imported from here by the web layer and the commands.
__all__ = ["Event", "IllegalEvent", "Game", "MODES", "DICE", "EVENT_TYPES", "SIEGE_ROUNDS", "STARTING_ARMY",
           "HIRE_COINS", "StartTurn", "Convert", "Spend", "Interrupt", "UnitDied", "BecameSkeleton", "Hire",
           "Destroyed", "EndTurn", "UnitStatus", "Replayed", "event_from_json"]

MODES = ("skirmish", "siege", "overlord", "destruction", "plague")


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
        self._state = self._replayed()

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
        self._state = self._replayed()

    def pop(self) -> Event:
        if not self.events:
            raise IllegalEvent("nothing to undo")
        event = self.events.pop()
        self._state = self._replayed()
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

    def _replayed(self) -> Replayed:
        return replay(self.setup, self.mode, self.players, self.castle_holder, self.events)

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
