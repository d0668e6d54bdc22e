"""Exact F0R60D odds: d10 against d10 with natural-10 criticals, the damage roll, cross-checks.

A d10 reads 1..10; the 10 (printed 0) is natural. The attacker rolls d10 + attack, the defender
d10 + evasion: the defender evades on a natural 10, or when the attacker's die is not a natural 10
and evasion >= attack. An attacker's natural 10 that is not evaded is a critical: damage doubled.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

D10 = range(1, 11)
NATURAL = 10
_CELL = Fraction(1, 100)


def fraction_text(p: Fraction) -> str:
    return f"{p.numerator}/{p.denominator}"


@dataclass(frozen=True)
class AttackOdds:
    evaded: Fraction
    hit: Fraction
    critical: Fraction
    damage: dict[int, Fraction]  # damage dealt -> probability (an evasion deals 0)
    kill: Fraction | None  # P(damage >= hp), None without hp

    def to_json(self) -> dict:
        return {"evaded": float(self.evaded), "hit": float(self.hit), "critical": float(self.critical),
                "kill": None if self.kill is None else float(self.kill),
                "damage": {str(n): float(p) for n, p in sorted(self.damage.items())},
                "fractions": {"evaded": fraction_text(self.evaded), "hit": fraction_text(self.hit),
                              "critical": fraction_text(self.critical),
                              "kill": None if self.kill is None else fraction_text(self.kill)}}


def evades(attack_roll: int, evasion_roll: int, attack: int, evasion: int) -> bool:
    if evasion_roll == NATURAL:
        return True
    return attack_roll != NATURAL and evasion_roll + evasion >= attack_roll + attack


def hit_damage(damage_roll: int, damage: int, multiplier: int, critical: bool, absorption: int,
               constant_absorption: int) -> int:
    return max(0, (damage_roll + damage) * multiplier * (2 if critical else 1) - absorption - constant_absorption)


def attack_odds(attack: int, evasion: int, damage: int = 0, absorption: int = 0, constant_absorption: int = 0,
                multiplier: int = 1, hp: int | None = None) -> AttackOdds:
    evaded = critical = Fraction(0)
    dealt: dict[int, Fraction] = {}
    for a in D10:
        for e in D10:
            if evades(a, e, attack, evasion):
                evaded += _CELL
                dealt[0] = dealt.get(0, Fraction(0)) + _CELL
                continue
            crit = a == NATURAL
            critical += _CELL if crit else 0
            for d in D10:
                n = hit_damage(d, damage, multiplier, crit, absorption, constant_absorption)
                dealt[n] = dealt.get(n, Fraction(0)) + _CELL / 10
    kill = None if hp is None else sum((p for n, p in dealt.items() if n >= hp), Fraction(0))
    return AttackOdds(evaded, 1 - evaded, critical, {n: p for n, p in dealt.items() if p > 0}, kill)


@dataclass(frozen=True)
class CheckOdds:
    """A cross-check (fortitude, morale): d10 + bonus each; ties and double 10s go to the defender."""

    attacker_wins: Fraction
    defender_wins: Fraction

    def to_json(self) -> dict:
        return {"attacker_wins": float(self.attacker_wins), "defender_wins": float(self.defender_wins),
                "fractions": {"attacker_wins": fraction_text(self.attacker_wins),
                              "defender_wins": fraction_text(self.defender_wins)}}


def attacker_wins_check(a: int, d: int, bonus_a: int, bonus_d: int) -> bool:
    if a == NATURAL or d == NATURAL:
        return a == NATURAL and d != NATURAL
    return a + bonus_a > d + bonus_d


def check_odds(bonus_a: int, bonus_d: int) -> CheckOdds:
    wins = sum((_CELL for a in D10 for d in D10 if attacker_wins_check(a, d, bonus_a, bonus_d)), Fraction(0))
    return CheckOdds(wins, 1 - wins)
