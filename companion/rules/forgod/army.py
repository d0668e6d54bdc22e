"""Army lists against the game mode: units, PC, detachment sizes, the commander. Every problem at once."""

from __future__ import annotations

from dataclasses import dataclass

from companion.rules.forgod.cards import INVOCATIONS, LEVELS, NOT_TROOPS, Card, Forgod

PC_LIMITS = {"guerrilla": (500, 1000, 1500), "skirmish": (1000, 1500, 2000), "campaign": (1500, 2000, 2500)}
UNIT_LIMITS = {"guerrilla": 3, "skirmish": 5, "campaign": 9}  # campaign: eight units and the commander
DETACHMENT_TYPES = ("infantry", "cavalry", "archery", "siege")
NO_COMMANDER_TYPES = ("war_machine", *INVOCATIONS, "special")


def detachment_max(level: int) -> int:
    """Cards of one type in one square: 9 at levels 1-2, 6 at 3-4, 3 at 5-6; none from level 7."""
    return 9 if level <= 2 else 6 if level <= 4 else 3 if level <= 6 else 1


@dataclass(frozen=True)
class ArmyCheck:
    problems: tuple[str, ...]
    pc_total: dict[str, int]
    pc_limit: int
    units: dict[str, int]

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {"valid": self.valid, "problems": list(self.problems), "pc_total": self.pc_total,
                "pc_limit": self.pc_limit, "units": self.units}


def _label(card: Card) -> str:
    return f"card {card.id} ({card.name}{', ' + card.key if card.key else ''})"


def check_army(rules: Forgod) -> ArmyCheck:
    limit = PC_LIMITS[rules.mode][LEVELS.index(rules.level)]
    max_units = UNIT_LIMITS[rules.mode]
    problems: list[str] = [f"{_label(c)} has no player (one of {', '.join(rules.players)})"
                           for c in rules.cards if c.player not in rules.players]
    pc_total, units = {}, {}
    for player in rules.players:
        mine = [c for c in rules.cards if c.player == player]
        troops = [c for c in mine if c.type not in NOT_TROOPS]
        pc_total[player] = sum(c.pc * c.cards for c in troops)
        units[player] = len(troops)
        if units[player] > max_units:
            problems.append(f"{player}: {units[player]} units, {rules.mode} allows {max_units}")
        if pc_total[player] > limit:
            problems.append(f"{player}: {pc_total[player]} PC, over the {rules.mode} {rules.level} limit of {limit}")
        for c in mine:
            if c.cards > 1 and c.type not in DETACHMENT_TYPES:
                problems.append(f"{player}: {_label(c)} is {c.type} with {c.cards} cards: only "
                                f"{', '.join(DETACHMENT_TYPES)} form detachments")
            elif c.cards > detachment_max(c.level):
                problems.append(f"{player}: {_label(c)} has {c.cards} cards of level {c.level}: a detachment "
                                f"holds at most {detachment_max(c.level)}")
        commanders = [c for c in mine if c.commander]
        if not commanders:
            problems.append(f"{player}: no commander (one card with commander = true)")
        elif len(commanders) > 1:
            problems.append(f"{player}: {len(commanders)} commanders ({', '.join(str(c.id) for c in commanders)}), "
                            "exactly one is allowed")
        for c in commanders:
            if c.cards > 1:
                problems.append(f"{player}: commander {_label(c)} is a detachment of {c.cards} cards: "
                                "a detachment cannot command")
            if c.type in NO_COMMANDER_TYPES:
                problems.append(f"{player}: commander {_label(c)} is {c.type}: war machines, invocations and "
                                "special cards cannot command")
    return ArmyCheck(tuple(problems), pc_total, limit, units)
