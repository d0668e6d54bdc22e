"""Can card A strike card B, and with what: every modifier with where it came from, and the odds.

Bonuses count every declared modifier even when the attack is not legal, so a player can see what
the numbers would be; `legal` and `reasons` say whether it may happen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from companion.errors import InputError
from companion.rules.forgod.board import ADVANCED, REARGUARD
from companion.rules.forgod.cards import Forgod
from companion.rules.forgod.odds import AttackOdds, attack_odds
from companion.rules.forgod.squares import Placed

ADVANCED_ATTACK, ADVANCED_EVASION, ADVANCED_ABSORPTION = 4, -2, 2
REARGUARD_EVASION, REARGUARD_ATTACK, REARGUARD_DAMAGE = 4, -2, -2
RANGED_VS_AIR, FAR_ZONE = -2, -6
CHARGE_ATTACK, CHARGE_MULTIPLIER = 4, 2
FLANK_ATTACK, FLANK_DAMAGE = 4, 4
CHARGE_AND_FLANK_MULTIPLIER = 3


@dataclass(frozen=True)
class Modifier:
    name: str
    value: int
    applies_to: str  # attack | damage | evasion | absorption | constant_absorption | multiplier
    why: str

    def to_json(self) -> dict:
        return {"name": self.name, "value": self.value, "applies_to": self.applies_to, "why": self.why}


@dataclass(frozen=True)
class Verdict:
    attacker: int
    target: int
    legal: bool
    reasons: tuple[str, ...]
    in_area: bool
    modifiers: tuple[Modifier, ...]
    odds: AttackOdds

    def total(self, applies_to: str) -> int:
        return _total(self.modifiers, applies_to)

    @property
    def multiplier(self) -> int:
        return _multiplier(self.modifiers)

    def to_json(self) -> dict:
        return {"attacker": self.attacker, "target": self.target, "legal": self.legal, "reasons": list(self.reasons),
                "in_area": self.in_area, "attack_bonus": self.total("attack"), "evasion_bonus": self.total("evasion"),
                "damage_bonus": self.total("damage"), "multiplier": self.multiplier,
                "absorption": self.total("absorption"), "constant_absorption": self.total("constant_absorption"),
                "modifiers": [m.to_json() for m in self.modifiers], "odds": self.odds.to_json()}


def _total(modifiers: "list[Modifier] | tuple[Modifier, ...]", applies_to: str) -> int:
    return sum(m.value for m in modifiers if m.applies_to == applies_to)


def _multiplier(modifiers: "list[Modifier] | tuple[Modifier, ...]") -> int:
    factors = [m.value for m in modifiers if m.applies_to == "multiplier"]  # at most one: charge, or charge and flank
    return factors[-1] if factors else 1


def _where(p: Placed) -> str:
    return "off the board" if p.square is None else f"col {p.square[0]}, row {p.square[1]}"


def _line_modifiers(attacker: Placed, target: Placed) -> list[Modifier]:
    out = []
    a_line, t_line = attacker.fights_from, target.fights_from
    a_why = "in the enemy field (counts as advanced)" if attacker.in_enemy_field and a_line else f"on its {a_line} line"
    t_why = "in the enemy field (counts as advanced)" if target.in_enemy_field and t_line else f"on its {t_line} line"
    if a_line == ADVANCED:
        out.append(Modifier("advanced line", ADVANCED_ATTACK, "attack", f"attacker {attacker.card.id} {a_why}"))
    elif a_line == REARGUARD:
        out.append(Modifier("rearguard", REARGUARD_ATTACK, "attack", f"attacker {attacker.card.id} {a_why}"))
        out.append(Modifier("rearguard", REARGUARD_DAMAGE, "damage", f"attacker {attacker.card.id} {a_why}"))
    if t_line == ADVANCED:
        out.append(Modifier("advanced line", ADVANCED_EVASION, "evasion", f"target {target.card.id} {t_why}"))
        if target.card.armour:
            for key in ("absorption", "constant_absorption"):
                out.append(Modifier("advanced line", ADVANCED_ABSORPTION, key,
                                    f"target {target.card.id} {t_why}, with armour"))
    elif t_line == REARGUARD:
        out.append(Modifier("rearguard", REARGUARD_EVASION, "evasion", f"target {target.card.id} {t_why}"))
    return out


def attack(rules: Forgod, placed: dict[int, Placed], attacker_id: int, target_id: int, charge: bool = False,
           flank: bool = False, far: bool = False, effects: Sequence[tuple[int, str, Modifier]] = (),
           guarded_by: int | None = None) -> Verdict:
    """`effects`: the engagement's standing modifiers (ForgodGame.effects: shields, charges under way,
    covered charges); `guarded_by`: the royal guard in front of the target commander, if any."""
    for role, card_id in (("attacker", attacker_id), ("target", target_id)):
        if card_id not in placed:
            known = sorted(placed)
            raise InputError(f"{role}: card {card_id} is not on the table (cards seen: {known})"
                             if rules.card(card_id) else f"{role}: no card {card_id} in the setup's [[minis]]")
    if attacker_id == target_id:
        raise InputError("target: a card cannot attack itself")
    a, t = placed[attacker_id], placed[target_id]
    ac, tc = a.card, t.card
    powers = ac.type == "power" or tc.type == "power"  # powers: no terrain rules

    mods = [Modifier("card attack", ac.attack * ac.cards, "attack", f"attack {ac.attack} x {ac.cards} card(s)"),
            Modifier("card damage", ac.damage * ac.cards, "damage", f"damage {ac.damage} x {ac.cards} card(s)"),
            Modifier("card evasion", tc.evasion, "evasion", f"target {tc.id}'s evasion {tc.evasion}")]
    if tc.armour:
        mods += [Modifier("armour", tc.absorption, "absorption", f"target {tc.id}'s absorption, armour equipped"),
                 Modifier("armour", tc.constant_absorption, "constant_absorption",
                          f"target {tc.id}'s constant absorption, armour equipped")]
    mods += _line_modifiers(a, t)
    if not powers and ac.fights_as == "earth" and ac.ranged and tc.fights_as == "air":
        mods.append(Modifier("ranged against air", RANGED_VS_AIR, "attack", f"earth {ac.attack_type} attacker against an air unit"))
    if far:
        mods.append(Modifier("far zone", FAR_ZONE, "attack", "archery's far zone, declared"))
    if charge:
        mods.append(Modifier("charge", CHARGE_ATTACK, "attack", "charge declared (hits on the next turn)"))
    if flank:
        mods.append(Modifier("flank", FLANK_ATTACK, "attack", "flank declared (fortitude cross-check won)"))
        mods.append(Modifier("flank", FLANK_DAMAGE, "damage", "flank declared (fortitude cross-check won)"))
    if charge and flank:
        mods.append(Modifier("charge and flank", CHARGE_AND_FLANK_MULTIPLIER, "multiplier", "damage x3 (x6 on a critical)"))
    elif charge:
        mods.append(Modifier("charge", CHARGE_MULTIPLIER, "multiplier", "damage x2 (x4 on a critical)"))

    for card_id, role, mod in effects:
        if card_id == target_id and role in ("target", "covered"):  # "covered": its attackers suffer it
            mods.append(mod)

    problems, in_area = [], False
    if guarded_by is not None and guarded_by != attacker_id:
        problems.append(f"{tc.name} ({tc.id}) is behind its royal guard (card {guarded_by}): strike the guard first")
    for p in (a, t):
        if p.square is None:
            problems.append(f"card {p.card.id} ({p.card.name}) is off the board")
    if ac.player == tc.player:
        problems.append(f"cards {ac.id} and {tc.id} are both {ac.player}'s")
    if not powers and ac.fights_as == "earth" and not ac.ranged and tc.fights_as == "air":
        problems.append(f"{ac.name} ({ac.id}) fights on the earth in melee only: it cannot strike {tc.name} ({tc.id}) in the air")
    if charge and not ac.melee:
        problems.append(f"{ac.name} ({ac.id}) attacks at range only: it cannot charge")
    if far and ac.type != "archery":
        problems.append(f"{ac.name} ({ac.id}) is {ac.type}: only archery has a far zone")
    area = rules.areas[ac.type]
    if a.square is not None and t.square is not None:
        side = rules.side_of_player(ac.player) if ac.player in rules.players else 0  # patterns face the enemy
        zone = "far zone" if far else "charge reach" if charge else "attack area"
        squares = (area.squares(rules.board, a.square, side, "far") if far
                   else area.charge_reach(rules.board, a.square, side) if charge
                   else area.squares(rules.board, a.square, side, "attack"))
        in_area = t.square in squares
        if not in_area:
            hint = ""
            if not far and t.square in area.squares(rules.board, a.square, side, "far"):
                hint = " (it is in the far zone: declare --far, -6)"
            problems.append(f"{tc.name} ({tc.id}, {_where(t)}) is outside the {zone} of {ac.name} ({ac.id}, "
                            f"{ac.type}, {_where(a)}){hint}")
    reasons = tuple(problems) if problems else (
        f"{tc.name} ({tc.id}, {_where(t)}) is in the {'far zone' if far else 'charge reach' if charge else 'attack area'} "
        f"of {ac.name} ({ac.id}, {ac.type}, {_where(a)})",)
    odds = attack_odds(_total(mods, "attack"), _total(mods, "evasion"), _total(mods, "damage"), _total(mods, "absorption"),
                       _total(mods, "constant_absorption"), _multiplier(mods), tc.hp)
    return Verdict(attacker_id, target_id, not problems, reasons, in_area, tuple(mods), odds)
