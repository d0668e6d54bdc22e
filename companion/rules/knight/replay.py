"""What the events of a Knight-level game make of it, replayed from the start (so undo is exact)."""

from __future__ import annotations

from dataclasses import dataclass, field

from companion.rules.events import Event
from companion.rules.knight.events import (DICE, BecameSkeleton, Convert, Destroyed, EndTurn, Hire, Interrupt, Spend,
                                           StartTurn, UnitDied)
from companion.setup_file import Setup

SIEGE_ROUNDS = 10
STARTING_ARMY = 6
HIRE_COINS = 2


@dataclass
class UnitStatus:
    id: int
    player: str
    unit_class: str
    status: str  # alive | skeleton | gone
    hired: bool = False


@dataclass
class Replayed:
    """Everything the events so far make of the game: whose turn, the dice left, the rounds, coins,
    each unit's fate, the winner and why, the log. Built by replaying them from the start."""

    mode: str
    players: tuple[str, ...]
    castle_holder: str | None
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

    def apply(self, e: Event) -> None:
        if isinstance(e, StartTurn):
            penalty = 1 if self.interrupts.get(e.player) else 0
            self.interrupts[e.player] = False
            self.turn_player = e.player
            self.rolled = {d: max(1, getattr(e, d) - penalty) for d in DICE}
            self.dice = dict(self.rolled)
            self.action_points = self.dice["black"]
            self.attacks = 0
            self.spent_any = self.converted = self.interrupted_this_turn = self.hired_this_turn = False
            self.log.append(f"round {self.rounds_done + 1}: {e.player} rolled black {e.black}, red {e.red}, white {e.white}"
                         + (f" (-1 each for the interrupt: {self.dice})" if penalty else ""))
        elif isinstance(e, Convert):
            a, b = e.swap
            self.dice[a], self.dice[b] = self.dice[b], self.dice[a]
            self.dice[e.lose_on] = max(1, self.dice[e.lose_on] - 1)
            self.action_points = self.dice["black"]
            self.converted = True
            self.log.append(f"{self.turn_player} converted: swapped {a} and {b}, -1 on {e.lose_on}: {self.dice}")
        elif isinstance(e, Spend):
            self.dice[e.die] -= e.amount
            self.attacks += e.amount if e.die == "red" else 0
            self.spent_any = True
            self.log.append(f"{self.turn_player} spent {e.amount} {e.die}" + (f" ({e.what})" if e.what else ""))
        elif isinstance(e, Interrupt):
            self.interrupts[e.player] = True
            self.interrupted_this_turn = True
            self.log.append(f"{e.player} interrupts with unit {e.unit} (2 AP, 1 attack; all dice -1 next turn)")
        elif isinstance(e, UnitDied):
            unit = self.units[e.unit]
            no_afterlife = ("crystal", unit.player) in self.destroyed
            if unit.status == "alive" and not no_afterlife:
                unit.status = "skeleton"
                self.log.append(f"unit {e.unit} died and rose as a skeleton" + (f" ({e.cause})" if e.cause else ""))
            else:
                unit.status = "gone"
                self.log.append(f"unit {e.unit} left the game" + (f" ({e.cause})" if e.cause else ""))
            self._check_army()
        elif isinstance(e, BecameSkeleton):
            self.units[e.unit].status = "skeleton"
            self.log.append(f"unit {e.unit} became a skeleton" + (f" ({e.cause})" if e.cause else ""))
            self._check_plague()
        elif isinstance(e, Hire):
            self.coins[e.player] -= HIRE_COINS
            self.hired_this_turn = True
            self.units[e.unit] = UnitStatus(e.unit, e.player, e.unit_class, "skeleton", hired=True)
            self.log.append(f"{e.player} hired a skeleton {e.unit_class} (marker {e.unit}) for {HIRE_COINS} coins")
        elif isinstance(e, Destroyed):
            self.destroyed.append((e.object_kind, e.owner))
            self.log.append(f"{e.owner}'s {e.object_kind} was destroyed")
            if self.mode == "destruction" and e.object_kind == "castle" and not self.winner:
                self.winner = self._other(e.owner)
                self.win_reason = f"destroyed {e.owner}'s castle"
        elif isinstance(e, EndTurn):
            self.log.append(f"{self.turn_player} ended the turn")
            self.turns_this_round.append(self.turn_player)
            self.turn_player = None
            self.dice = {}
            if self.mode == "overlord" and not self.winner:
                holders = {e.control.get(k) for k in ("obelisk", "garden", "mine")}
                if len(holders) == 1 and None not in holders:
                    self.winner = holders.pop()
                    self.win_reason = "holds the dark obelisk, the garden of life and the mine at once"
            if len(self.turns_this_round) == len(self.players):
                self._end_round(e.control)

    def _end_round(self, control: dict[str, str | None]) -> None:
        self.rounds_done += 1
        self.turns_this_round = []
        miner = control.get("mine")
        if miner in self.coins and self.mode != "siege":
            self.coins[miner] += 1
        # One line per event: the round ends with its last turn, and one Undo takes both back.
        self.log[-1] += f"; round {self.rounds_done} ended" + (f", a coin by the castle ({self.rounds_done} of {SIEGE_ROUNDS})"
                                                         if self.mode == "siege" else "")
        if self.mode == "siege" and not self.winner:
            attacker = self._other(self.castle_holder)
            holder = control.get("castle")
            if holder == attacker:
                self.winner, self.win_reason = attacker, f"took the castle by the end of round {self.rounds_done}"
            elif self.rounds_done >= SIEGE_ROUNDS:
                self.winner, self.win_reason = self.castle_holder, f"held the castle through round {SIEGE_ROUNDS}"

    def _check_army(self) -> None:
        for player in self.players:
            army = [u for u in self.units.values() if u.player == player]
            if army and all(u.status == "gone" for u in army) and not self.winner:
                self.winner, self.win_reason = self._other(player), f"destroyed {player}'s whole army"

    def _check_plague(self) -> None:
        if self.mode != "plague" or self.winner:
            return
        for player in self.players:
            army = [u for u in self.units.values() if u.player == player and u.status != "gone"]
            if army and all(u.status == "skeleton" for u in army):
                self.winner, self.win_reason = self._other(player), f"all of {player}'s warriors became skeletons"

    def _other(self, player: str | None) -> str:
        return next(p for p in self.players if p != player)



def replay(setup: Setup, mode: str, players: tuple[str, ...], castle_holder: str | None,
           events: list[Event]) -> Replayed:
    """The game after `events`, from its roster at the start (skeleton factions rise as skeletons)."""
    s = Replayed(mode, players, castle_holder, coins={p: 0 for p in players}, interrupts={p: False for p in players},
                 units={m.id: UnitStatus(m.id, m.player, m.unit_class,
                                         "skeleton" if m.faction == "skeletons" else "alive")
                        for m in setup.minis if m.player in players})
    for event in events:
        s.apply(event)
    return s
