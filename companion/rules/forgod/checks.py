"""Cross-checks (fortitude, morale) between two cards, and what the camera can check of a declaration.

A detachment adds +1 per two cards (rounded down) to its morale and fortitude; a commander of level
9 to 11 still on the board gives every card of its side +1 morale.
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.rules.forgod.attack import Modifier
from companion.rules.forgod.cards import Card, Forgod
from companion.rules.forgod.odds import CheckOdds, check_odds
from companion.rules.forgod.squares import Placed

KINDS = ("fortitude", "morale")
COMMANDER_MORALE_LEVELS = range(9, 12)
COVER_SQUARES = 2  # a card covering a charge stands within two squares of the charger


@dataclass(frozen=True)
class CrossCheck:
    kind: str
    attacker: int
    defender: int
    attacker_modifiers: tuple[Modifier, ...]
    defender_modifiers: tuple[Modifier, ...]
    odds: CheckOdds

    def to_json(self) -> dict:
        return {"kind": self.kind, "attacker": self.attacker, "defender": self.defender,
                "bonus_a": sum(m.value for m in self.attacker_modifiers),
                "bonus_d": sum(m.value for m in self.defender_modifiers),
                "attacker_modifiers": [m.to_json() for m in self.attacker_modifiers],
                "defender_modifiers": [m.to_json() for m in self.defender_modifiers], **self.odds.to_json()}


def check_modifiers(rules: Forgod, card: Card, kind: str, on_board: set[int]) -> list[Modifier]:
    """A card's bonus for a cross-check, line by line."""
    out = [Modifier(kind, getattr(card, kind), kind, f"card {card.id}'s {kind}")]
    if card.cards >= 2:
        out.append(Modifier("detachment", card.cards // 2, kind, f"{card.cards} cards: +1 per two"))
    if kind == "morale":
        commander = next((c for c in rules.cards if c.player == card.player and c.commander and c.id in on_board), None)
        if commander is not None and commander.level in COMMANDER_MORALE_LEVELS:
            out.append(Modifier("commander", 1, kind, f"commander {commander.id} of level {commander.level} on the board"))
    return out


def cross_check(rules: Forgod, placed: dict[int, Placed], attacker: int, defender: int, kind: str) -> CrossCheck:
    if kind not in KINDS:
        raise ValueError(f"kind: one of {', '.join(KINDS)}")
    on_board = {i for i, p in placed.items() if p.square is not None}
    a, d = rules.card(attacker), rules.card(defender)
    if a is None or d is None:
        raise ValueError(f"card: no card {attacker if a is None else defender} in the setup")
    am, dm = check_modifiers(rules, a, kind, on_board), check_modifiers(rules, d, kind, on_board)
    return CrossCheck(kind, attacker, defender, tuple(am), tuple(dm),
                      check_odds(sum(m.value for m in am), sum(m.value for m in dm)))


def _squares_apart(a: Placed, b: Placed) -> int | None:
    if a.square is None or b.square is None:
        return None
    return max(abs(a.square[0] - b.square[0]), abs(a.square[1] - b.square[1]))


def placement_problems(placed: dict[int, Placed], action: str, card: int, target: int | None) -> list[str]:
    """What the camera sees against a declaration: a cover more than two squares from the charger, a
    royal guard not in the square next to its commander."""
    me, other = placed.get(card), placed.get(target) if target is not None else None
    if me is None or other is None:
        return []
    apart = _squares_apart(me, other)
    if action == "cover" and (apart is None or apart > COVER_SQUARES):
        return [f"card {card} is {'off the board' if apart is None else f'{apart} squares'} from the charger {target}: "
                f"a cover stands within {COVER_SQUARES}"]
    if action == "royal_guard" and apart != 1:
        return [f"card {card} is not in the square next to its commander {target} "
                f"({'off the board' if apart is None else f'{apart} squares away'})"]
    return []
