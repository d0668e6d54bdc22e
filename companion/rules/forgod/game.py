"""A F0R60D engagement: reaction rolls, alternating card turns, rounds, strategic actions, undo.

As the Knight game does (python-chess style): a list of events; `push` checks one (an illegal one
raises `IllegalEvent` listing every problem), `pop` takes the last back, and everything else is
derived by replaying the log. The seed's turn rules: a round starts with a reaction roll (d10 + the
commander's reaction; the higher acts first, a tie is rolled again); players then alternate, one
card a turn; in the first round only commanders act; a card cannot act again until every other card
of its side has acted; a round ends when all of one player's cards have acted.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any, ClassVar

from companion.rules.forgod.attack import Modifier
from companion.rules.forgod.cards import Card, Forgod
from companion.rules.events import Event, IllegalEvent, named_event
from companion.rules.table import Table
from companion.setup_file import Setup

ACTIONS = ("move", "attack", "charge", "flank", "charge_flank", "shield", "royal_guard", "cover", "special", "pass")
TARGETED = ("attack", "charge", "flank", "charge_flank", "shield", "royal_guard", "cover")
OUTCOMES = {"charge": ("hit", "evaded", "failed"), "flank": ("won", "lost"), "charge_flank": ("won", "lost")}
LANDS_NEXT_TURN = ("charge", "charge_flank")
CHARGER_EVASION, SHIELD_EVASION, SHIELDED_EVASION, GUARD_EVASION = -4, -2, 2, -2
COVER_ATTACK, COVER_DAMAGE, COUNTER_ATTACK = -2, -4, 2

__all__ = ["IllegalEvent", "ForgodGame"]


@dataclass(frozen=True)
class Reaction(Event):
    """The round's reaction roll: each player's d10 (1-10), plus their commander's reaction."""

    kind: ClassVar[str] = "reaction"
    rolls: dict[str, int]


@dataclass(frozen=True)
class Act(Event):
    """The turn's card acts: a move, an attack, a special ability, or a strategic action on a target."""

    kind: ClassVar[str] = "act"
    card: int
    action: str = "attack"
    target: int | None = None
    note: str = ""


@dataclass(frozen=True)
class Resolve(Event):
    """How a strategic action came out: a charge hit, was evaded or failed (the target moved out of
    reach); a flank's fortitude cross-check was won or lost."""

    kind: ClassVar[str] = "resolve"
    card: int
    outcome: str


@dataclass(frozen=True)
class Counter(Event):
    """The defender's counter-attack (+2 attack) after an evaded or failed charge, or a lost flank."""

    kind: ClassVar[str] = "counter"
    card: int
    against: int


@dataclass(frozen=True)
class CardDied(Event):
    kind: ClassVar[str] = "card_died"
    card: int
    cause: str = ""


@dataclass(frozen=True)
class ReachedRearguard(Event):
    """A card reached the enemy's rearguard line: the enemy discards additions equal to its level."""

    kind: ClassVar[str] = "reached_rearguard"
    card: int


EVENT_TYPES = {cls.kind: cls for cls in (Reaction, Act, Resolve, Counter, CardDied, ReachedRearguard)}


def event_from_json(data: dict[str, Any]) -> Event:
    cls, data = named_event(data, EVENT_TYPES)
    for f in fields(cls):
        if f.name not in data:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ValueError(f"{f.name}: required for {cls.kind}")
            continue
        value = data[f.name]
        if f.name in ("card", "against") and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"{f.name}: a card id (an integer)")
        if f.name == "target" and value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError("target: a card id (an integer) or null")
        if f.name in ("action", "outcome", "note", "cause") and not isinstance(value, str):
            raise ValueError(f"{f.name}: a text")
        if f.name == "rolls" and not (isinstance(value, dict) and all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in value.items())):
            raise ValueError("rolls: an object of player -> d10")
    return cls(**data)


@dataclass
class _Pending:
    card: int
    action: str
    target: int
    player: str
    due_after: int  # the turn number after which it lands (the player's next turn)
    crossed: bool = False  # a flank's fortitude cross-check was won (a charge and flank then still lands)

    @property
    def needs_cross_check(self) -> bool:
        return self.action in ("flank", "charge_flank") and not self.crossed


@dataclass
class _Replay:
    round: int = 0  # 0: before the first reaction roll
    first: str | None = None
    turn_player: str | None = None
    turns: int = 0
    acted: dict[str, list[int]] = field(default_factory=dict)  # this cycle, per player
    acted_round: dict[str, list[int]] = field(default_factory=dict)
    dead: list[int] = field(default_factory=list)
    pending: list[_Pending] = field(default_factory=list)  # declared, not yet resolved
    counters: list[tuple[int, int]] = field(default_factory=list)  # (defender, against) allowed
    standing: dict[int, tuple[str, int]] = field(default_factory=dict)  # card -> (action, target) until its next turn
    winner: str | None = None
    log: list[str] = field(default_factory=list)


class ForgodGame:
    def __init__(self, setup: Setup) -> None:
        if not isinstance(setup.rules, Forgod):
            raise ValueError("ruleset.name: a F0R60D game needs a forgod setup")
        self.setup = setup
        self.rules: Forgod = setup.rules
        self.mode = self.rules.mode
        self.players = self.rules.players
        self.castle_holder = None
        self.events: list[Event] = []
        self._state = self._replay()

    @classmethod
    def new(cls, setup: Setup, **_: Any) -> "ForgodGame":
        return cls(setup)

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

    def card(self, card_id: int) -> Card | None:
        return self.rules.card(card_id)

    def alive(self, player: str) -> list[Card]:
        return self._alive(self._state, player)

    def may_act(self, player: str) -> list[int]:
        """The cards of `player` allowed to act on their next turn."""
        return self._may_act(self._state, player)

    def _alive(self, s: "_Replay", player: str) -> list[Card]:
        return [c for c in self.rules.cards if c.player == player and c.id not in s.dead]

    def _may_act(self, s: "_Replay", player: str) -> list[int]:
        cards = self._alive(s, player)
        if s.round == 1 and any(c.commander for c in cards):  # (an army without one: the army check says so)
            cards = [c for c in cards if c.commander]
        left = [c.id for c in cards if c.id not in s.acted.get(player, [])]
        return left or [c.id for c in cards]  # everyone has acted: a new cycle

    def problems(self, event: Event) -> list[str]:
        s = self._state
        out: list[str] = []
        if s.winner:
            out.append(f"the engagement is over: {s.winner} won")
        if isinstance(event, Reaction):
            if s.turn_player is not None:
                out.append(f"round {s.round} is under way ({s.turn_player}'s turn): the reaction roll starts a round")
            if set(event.rolls) != set(self.players):
                out.append(f"rolls: one d10 for each of {', '.join(self.players)}")
            elif any(not 1 <= v <= 10 for v in event.rolls.values()):
                out.append("rolls: a d10 shows 1 to 10")
            else:
                totals = self._reaction_totals(s, event.rolls)
                if len(set(totals.values())) == 1:
                    out.append(f"a tie ({totals[self.players[0]]} each): roll again")
            return out
        if isinstance(event, (Act, Resolve, Counter, ReachedRearguard, CardDied)):
            card = self.card(event.card)
            if card is None:
                out.append(f"card: no card {event.card} in the setup")
                return out
            if event.card in s.dead:
                out.append(f"card {event.card} is out of the engagement")
        if isinstance(event, Act):
            if s.turn_player is None:
                out.append("no round under way: enter the reaction roll first")
            elif card.player != s.turn_player:
                out.append(f"it is {s.turn_player}'s turn, card {card.id} is {card.player}'s")
            elif event.card not in self.may_act(card.player):
                why = "only commanders act in the first round" if s.round == 1 else \
                    "it acted already; every other card of its side acts first"
                out.append(f"card {card.id} may not act now ({why}; may act: {self.may_act(card.player)})")
            first = [p for p in s.pending if p.needs_cross_check or self._lands_now(s, p)]
            if first:
                out.append("resolve first: " + ", ".join(
                    f"card {p.card}'s {p.action.replace('_', ' ')} on {p.target} "
                    f"({'the fortitude cross-check' if p.needs_cross_check else 'it lands now'})" for p in first))
            if event.action not in ACTIONS:
                out.append(f"action: one of {', '.join(ACTIONS)}")
            elif event.action in TARGETED:
                target = self.card(event.target) if event.target is not None else None
                if target is None:
                    out.append(f"target: {event.action} needs a card (got {event.target})")
                elif event.target in s.dead:
                    out.append(f"target: card {event.target} is out of the engagement")
                else:
                    friendly = event.action in ("shield", "royal_guard", "cover")
                    if friendly and target.player != card.player:
                        out.append(f"target: {event.action} protects one of {card.player}'s own cards")
                    if event.action == "royal_guard" and not target.commander:
                        out.append("target: the royal guard protects the commander only")
                    if event.action == "cover" and not any(p.card == event.target and p.action in LANDS_NEXT_TURN
                                                           for p in s.pending):
                        out.append(f"target: card {event.target} has no charge under way to cover")
                    if not friendly and target.player == card.player:
                        out.append(f"target: card {event.target} is on {card.player}'s own side")
            if event.action in ("charge", "charge_flank") and not card.melee:
                out.append(f"card {card.id} attacks at range only: it cannot charge")
            if event.action == "attack" and any(p.card == card.id for p in s.pending):
                out.append(f"card {card.id} is charging: it cannot attack until the charge lands")
            if event.action == "attack" and s.standing.get(card.id, ("",))[0] == "royal_guard":
                out.append(f"card {card.id} is the royal guard: it cannot attack")
        if isinstance(event, Resolve):
            pending = next((p for p in s.pending if p.card == event.card), None)
            if pending is None:
                out.append(f"card {event.card} has no charge or flank to resolve")
            else:
                allowed = OUTCOMES["flank" if pending.needs_cross_check else "charge"]
                if event.outcome not in allowed:
                    out.append(f"outcome: one of {', '.join(allowed)} for card {event.card}'s {pending.action}")
                if not pending.needs_cross_check and not self._lands_now(s, pending):
                    out.append(f"card {event.card}'s charge lands on {pending.player}'s next turn")
        if isinstance(event, Counter):
            if (event.card, event.against) not in s.counters:
                out.append(f"card {event.card} has no counter-attack against {event.against} (only after an evaded "
                           "or failed charge, or a lost flank, against it)")
        if isinstance(event, ReachedRearguard):
            if s.round == 0:
                out.append("no round under way")
        return out

    # derived views ---------------------------------------------------------------------------------
    @staticmethod
    def _lands_now(s: _Replay, p: _Pending) -> bool:
        """A charge lands at the start of its player's next turn."""
        return p.action in LANDS_NEXT_TURN and not p.needs_cross_check and p.player == s.turn_player \
            and p.due_after < s.turns

    def _reaction_totals(self, s: _Replay, rolls: dict[str, int]) -> dict[str, int]:
        def bonus(player: str) -> int:
            commander = next((c for c in self._alive(s, player) if c.commander), None)
            return commander.reaction if commander else 0

        return {p: rolls[p] + bonus(p) for p in self.players}

    @property
    def turn_player(self) -> str | None:
        return self._state.turn_player

    @property
    def round(self) -> int:
        return self._state.round

    @property
    def log(self) -> list[str]:
        return list(self._state.log)

    @property
    def winner(self) -> str | None:
        return self._state.winner

    def due(self) -> list[dict]:
        """Strategic actions waiting for their outcome, and when."""
        s = self._state
        return [{"card": p.card, "action": p.action, "target": p.target, "player": p.player,
                 "now": p.needs_cross_check or self._lands_now(s, p),
                 "needs": "fortitude cross-check" if p.needs_cross_check else "attack roll"} for p in s.pending]

    def effects(self) -> list[tuple[int, str, Modifier]]:
        """Standing modifiers from declared actions: (card, "attacker" | "target", modifier)."""
        s = self._state
        out: list[tuple[int, str, Modifier]] = []
        for p in s.pending:
            if p.action in LANDS_NEXT_TURN:
                out.append((p.card, "target", Modifier("charging", CHARGER_EVASION, "evasion",
                                                       f"card {p.card} is charging card {p.target}")))
        for card_id, (action, target) in s.standing.items():
            if action == "shield":
                out.append((card_id, "target", Modifier("shield", SHIELD_EVASION, "evasion", f"card {card_id} shields card {target}")))
                out.append((target, "target", Modifier("shielded", SHIELDED_EVASION, "evasion", f"card {card_id} shields it")))
            elif action == "royal_guard":
                out.append((card_id, "target", Modifier("royal guard", GUARD_EVASION, "evasion",
                                                        f"card {card_id} guards the commander {target}")))
            elif action == "cover":
                out.append((target, "covered", Modifier("covered charge", COVER_ATTACK, "attack",
                                                        f"card {card_id} covers card {target}'s charge")))
                out.append((target, "covered", Modifier("covered charge", COVER_DAMAGE, "damage",
                                                        f"card {card_id} covers card {target}'s charge")))
        return out

    def statuses(self) -> dict[int, str]:
        """Each card's status in the engagement: alive | gone."""
        dead = set(self._state.dead)
        return {c.id: "gone" if c.id in dead else "alive" for c in self.rules.cards}

    def guarded_commander(self, card_id: int) -> int | None:
        """The royal guard standing in front of this commander, if any."""
        return next((c for c, (a, t) in self._state.standing.items() if a == "royal_guard" and t == card_id), None)

    def summary(self) -> dict:
        s = self._state
        return {"mode": self.mode, "round": s.round, "turn": s.turn_player, "first": s.first,
                "may_act": {p: self.may_act(p) for p in self.players},
                "acted_this_round": {p: list(s.acted_round.get(p, [])) for p in self.players},
                "dead": sorted(s.dead), "due": self.due(),
                "counters": [{"card": c, "against": a} for c, a in s.counters],
                "winner": s.winner, "log": list(s.log)}

    # replay ------------------------------------------------------------------------------------------
    def _replay(self) -> _Replay:
        s = _Replay(acted={p: [] for p in self.players}, acted_round={p: [] for p in self.players})
        for event in self.events:
            self._apply(s, event)
        return s

    def _other(self, player: str) -> str:
        return next(p for p in self.players if p != player)

    def _apply(self, s: _Replay, e: Event) -> None:
        if isinstance(e, Reaction):
            totals = self._reaction_totals(s, e.rolls)
            s.round += 1
            s.first = max(self.players, key=lambda p: totals[p])
            s.turn_player = s.first
            s.acted_round = {p: [] for p in self.players}
            s.log.append(f"round {s.round}: reaction " + ", ".join(f"{p} {e.rolls[p]} -> {totals[p]}" for p in self.players)
                         + f"; {s.first} acts first" + (" (commanders only)" if s.round == 1 else ""))
            return
        if isinstance(e, Act):
            card = self.card(e.card)
            s.turns += 1
            s.standing.pop(card.id, None)  # what it declared last time ends when it acts again
            s.counters = [c for c in s.counters if c[0] != card.id]
            mine = s.acted[card.player]
            if card.id in mine:
                mine.clear()  # every other card of its side has acted (may_act allowed it): a new cycle
            mine.append(card.id)
            s.acted_round[card.player].append(card.id)
            text = f"{card.player}: card {card.id} ({card.name}) {e.action.replace('_', ' ')}" + \
                (f" on card {e.target}" if e.target is not None else "") + (f" ({e.note})" if e.note else "")
            if e.action in ("charge", "flank", "charge_flank"):
                s.pending.append(_Pending(card.id, e.action, e.target, card.player, s.turns))
                text += {"charge": ": lands on their next turn (+4 attack, damage x2)",
                         "flank": ": fortitude cross-check first (+4 attack and damage if won)",
                         "charge_flank": ": fortitude cross-check first; lands on their next turn (damage x3)"}[e.action]
            elif e.action in ("shield", "royal_guard", "cover"):
                s.standing[card.id] = (e.action, e.target)
            s.log.append(text)
            self._next_turn(s, card.player)
            return
        if isinstance(e, Resolve):
            p = next(p for p in s.pending if p.card == e.card)
            if p.needs_cross_check:
                if e.outcome == "lost":
                    s.pending.remove(p)
                    s.counters.append((p.target, p.card))
                    s.log.append(f"card {p.card}'s flank on {p.target}: cross-check lost; {p.target} may counter-attack (+2)")
                elif p.action == "flank":
                    s.pending.remove(p)
                    s.log.append(f"card {p.card}'s flank on {p.target}: cross-check won (+4 attack and damage)")
                else:
                    p.crossed = True
                    s.log.append(f"card {p.card}'s charge and flank on {p.target}: cross-check won; lands on their next turn")
                return
            s.pending.remove(p)
            if e.outcome == "hit":
                s.log.append(f"card {p.card}'s charge on {p.target} hit")
            else:
                s.counters.append((p.target, p.card))
                s.log.append(f"card {p.card}'s charge on {p.target} {'was evaded' if e.outcome == 'evaded' else 'failed: the target moved out of reach'}"
                             f"; {p.target} may counter-attack (+2)")
            return
        if isinstance(e, Counter):
            s.counters.remove((e.card, e.against))
            s.log.append(f"card {e.card} counter-attacks card {e.against} (+2 attack)")
            return
        if isinstance(e, CardDied):
            card = self.card(e.card)
            s.dead.append(e.card)
            s.pending = [p for p in s.pending if p.card != e.card and p.target != e.card]
            s.standing.pop(e.card, None)
            s.log.append(f"card {e.card} ({card.name}, {card.player}) is out" + (f" ({e.cause})" if e.cause else ""))
            for player in self.players:
                if not self._alive(s, player) and s.winner is None:
                    s.winner = self._other(player)
                    s.log.append(f"{s.winner} wins: {player} has no card left")
            return
        if isinstance(e, ReachedRearguard):
            card = self.card(e.card)
            s.log.append(f"card {e.card} reached {self._other(card.player)}'s rearguard: "
                         f"{self._other(card.player)} discards {card.level} addition(s)")

    def _next_turn(self, s: _Replay, acted: str) -> None:
        """The other player's turn, unless the round is over: all of one player's cards have acted
        (in the first round: both commanders)."""
        alive = {p: self._alive(s, p) for p in self.players}
        if s.round == 1:
            over = all(any(c.id in s.acted_round[p] for c in alive[p] if c.commander) or
                       not any(c.commander for c in alive[p]) for p in self.players)
        else:
            over = any(alive[p] and all(c.id in s.acted_round[p] for c in alive[p]) for p in self.players)
        if over:
            s.log.append(f"round {s.round} ends")
            s.turn_player = None
            return
        other = self._other(acted)
        s.turn_player = other if self._may_act(s, other) else acted

    def table_view(self, table: Table) -> Table:
        """The camera's table as this engagement sees it: cards out of it are left out."""
        dead = set(self._state.dead)
        return replace(table, units=tuple(u for u in table.units if u.id not in dead))

    # persistence -----------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"mode": self.mode, "players": list(self.players), "castle_holder": None,
                "events": [e.to_json() for e in self.events]}

    @classmethod
    def from_json(cls, data: dict, setup: Setup) -> "ForgodGame":
        game = cls(setup)
        for raw in data.get("events", []):
            game.push(event_from_json(raw))
        return game
