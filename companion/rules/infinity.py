"""Infinity (N4) impact-template weapons, as read in shared/rules/infinity.md. Pure Python.

- The circular template is centred on the Main Target's base (or a table point for "no target"
  ammunition); a trooper is affected when its base touches or lies partly under it:
  |c - p| <= R + base radius.
- A template affecting a trooper allied to the attacker cancels that attack (and names the ally).
- Line of fire from the attacker to the Main Target in 3D: blocks are boxes, other minis upright
  cylinders of their silhouette height; it exists if some sight line from the attacker's eyes
  reaches some part of the target's silhouette.
- Face to Face rolls, exact: d20 per die, success on a result <= SV, a result equal to the SV is a
  critical; SV above 20 adds the excess to every die and 20+ is critical; MODs capped at +/-12.
  The side with the highest success wins (a critical beats any non-critical; criticals on both
  sides cancel), and its successes above the loser's best count as hits.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fractions import Fraction
from functools import lru_cache

from companion.errors import InputError
from companion.rules.geometry import Point, circle_polygon, distance, point_in_polygon
from companion.rules.table import Table, Unit

CIRCULAR_TEMPLATE_MM = 76.2  # the printed N4 circular template is 3 inches across: measure yours, set [infinity]
MOD_CAP = 12
# What the command line and the phone's API take (beyond them it is a typo, not a trooper): an
# attribute (BS, PH ...), a success value with its MODs, the MODs given.
ATTRIBUTE_RANGE = (1, 30)
SUCCESS_VALUE_RANGE = (0, 40)
MODS_RANGE = (-30, 30)
NO_LOF_DODGE_PENALTY = 3
SIGHT_SAMPLES = (0.15, 0.5, 0.85)  # heights on the target's silhouette that sight lines aim at


def clamp_mods(mods: int) -> int:
    return max(-MOD_CAP, min(MOD_CAP, mods))


# --- rolls ---------------------------------------------------------------------------------------------

def _die(result: int, sv: int) -> tuple[int, bool] | None:
    """(effective value, critical) of a successful die, None on a failure."""
    if sv > 20:
        value = min(result + sv - 20, 20)
        return value, result + sv - 20 >= 20
    if sv < 1 or result > sv:
        return None
    return result, result == sv


def _top(sv: int) -> int:
    """The value a critical die shows: the SV itself, or 20 past it (a die is critical exactly when
    it shows its side's top value, so a side's best value says whether it rolled a critical)."""
    return min(sv, 20)


@lru_cache(maxsize=4096)
def _tallies(sv: int, burst: int, above: int) -> dict[tuple[int, int], int]:
    """Of the 20**burst rolls of `burst` d20 at `sv`: how many give each (best successful value, 0
    for none; successes whose value is above `above`). Die by die (21 x 7 tallies), not roll by
    roll: 6 dice are 64 million rolls."""
    faces = [_die(result, sv) for result in range(1, 21)]
    tallies = {(0, 0): 1}
    for _ in range(burst):
        after: dict[tuple[int, int], int] = {}
        for (best, count), n in tallies.items():
            for face in faces:
                key = (best, count) if face is None else (max(best, face[0]), count + (face[0] > above))
                after[key] = after.get(key, 0) + n
        tallies = after
    return tallies


@dataclass(frozen=True)
class FaceToFace:
    a_wins: Fraction
    b_wins: Fraction
    none: Fraction
    a_critical: Fraction  # a wins with at least one critical
    b_critical: Fraction
    a_expected_hits: Fraction  # successes of a that stand, on average

    def to_json(self) -> dict:
        return {k: float(v) for k, v in asdict(self).items()}


@lru_cache(maxsize=4096)
def face_to_face(sv_a: int, burst_a: int, sv_b: int, burst_b: int) -> FaceToFace:
    """Exact Face to Face odds; sv_b <= 0 (or burst_b 0) is a Normal roll for a (nobody opposes)."""
    if burst_a < 1 or burst_a > 6 or burst_b < 0 or burst_b > 6:
        raise InputError("burst: 1 to 6 dice for the attacker, 0 to 6 for the defender")
    top_a, top_b = _top(sv_a), _top(sv_b)
    rolls_b: dict[int, int] = {}  # b's best value: how many of b's rolls give it
    for (best, _), n in (_tallies(sv_b, burst_b, 0) if burst_b else {(0, 0): 1}).items():
        rolls_b[best] = rolls_b.get(best, 0) + n
    a_win = b_win = none = a_crit = b_crit = hits = 0  # counted in rolls of both sides
    for best_b, n_b in rolls_b.items():
        crit_b = 0 < best_b == top_b
        for crit_a, tallies in ((True, _tallies(sv_a, burst_a, 0)), (False, _tallies(sv_a, burst_a, best_b))):
            for (best_a, standing), n_a in tallies.items():
                if (0 < best_a == top_a) != crit_a:
                    continue  # a critical roll's hits are all its successes; another's, those above b's best
                n = n_a * n_b
                if crit_a and crit_b:
                    none += n
                elif crit_a or (not crit_b and best_a > best_b):
                    a_win += n
                    a_crit += n if crit_a else 0
                    hits += n * standing
                elif crit_b or best_b > best_a:
                    b_win += n
                    b_crit += n if crit_b else 0
                else:
                    none += n  # equal best results (or no success at all) cancel
    rolls = 20 ** burst_a * (20 ** burst_b if burst_b else 1)
    a_win, b_win, none, a_crit, b_crit, hits = (Fraction(v, rolls) for v in (a_win, b_win, none, a_crit, b_crit, hits))
    return FaceToFace(a_win, b_win, none, a_crit, b_crit, hits)


# --- the template on the table ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TemplateAttack:
    attacker: int
    target: int | None
    centre_mm: Point
    radius_mm: float
    affected: tuple[int, ...]  # every trooper under the template (target included)
    cancelled_by: tuple[int, ...]  # allies of the attacker under it: the attack is cancelled
    line_of_fire: bool
    line_of_fire_why: str
    odds: dict  # per affected enemy: its reaction and the Face to Face odds
    expected_hits: float  # troopers the attacker is expected to hit

    def to_json(self) -> dict:
        return {"attacker": self.attacker, "target": self.target, "centre_mm": [round(v, 1) for v in self.centre_mm],
                "radius_mm": self.radius_mm, "affected": list(self.affected), "cancelled_by": list(self.cancelled_by),
                "line_of_fire": self.line_of_fire, "line_of_fire_why": self.line_of_fire_why,
                "odds": {str(k): v for k, v in self.odds.items()}, "expected_hits": round(self.expected_hits, 4)}

    def to_text(self) -> str:
        """What `infinity template` prints: who is under it, why it may be cancelled, the odds."""
        on = f"trooper {self.target}" if self.target is not None else "the point"
        lines = [f"template ({2 * self.radius_mm:g} mm) on {on}: affects {list(self.affected) or 'nobody'}"]
        if self.cancelled_by:
            lines.append(f"CANCELLED: the template covers the attacker's own trooper(s) {list(self.cancelled_by)}")
        lines.append(("line of fire: " if self.line_of_fire else "") + self.line_of_fire_why)
        lines += [f"  trooper {unit} ({odds['reaction']}): hit {odds['a_wins']:.1%}, nothing {odds['none']:.1%}, "
                  f"it wins {odds['b_wins']:.1%}" for unit, odds in self.odds.items()]
        if self.odds:
            lines.append(f"expected troopers hit: {self.expected_hits:.2f}")
        return "\n".join(lines)


def under_template(table: Table, centre: Point, radius_mm: float) -> list[Unit]:
    """Troopers whose base touches or lies partly under the circle."""
    return [u for u in table.units if distance(u.centre, centre) <= radius_mm + u.base_radius_mm + 1e-6]


def _segment_hits_box(p: tuple[float, float, float], q: tuple[float, float, float], footprint, top: float) -> bool:
    """Does the segment p-q pass through the prism footprint x [0, top]? (Sampled every 2 mm.)"""
    length = math.dist(p, q)
    steps = max(int(length / 2.0), 1)
    for k in range(1, steps):
        t = k / steps
        x, y, z = (p[i] + (q[i] - p[i]) * t for i in range(3))
        if z <= top and point_in_polygon((x, y), footprint):
            return True
    return False


def line_of_fire(table: Table, shooter: Unit, target: Unit) -> tuple[bool, str]:
    """Some sight line from the shooter's eyes reaches the target's silhouette, past blocks and minis."""
    eye = (shooter.centre[0], shooter.centre[1], shooter.standing_mm + 0.9 * shooter.height_mm)
    blockers = [(f"block {b.id}", b.footprint, b.height_mm) for b in table.blocks]
    for u in table.units:
        if u.id not in (shooter.id, target.id):
            blockers.append((f"trooper {u.id}", circle_polygon(u.centre, u.base_radius_mm, 16), u.standing_mm + u.height_mm))
    dx, dy = target.centre[0] - shooter.centre[0], target.centre[1] - shooter.centre[1]
    norm = math.hypot(dx, dy) or 1.0
    side = (-dy / norm, dx / norm)
    blocked_by: dict[str, int] = {}
    for frac in SIGHT_SAMPLES:
        for offset in (-0.7, 0.0, 0.7):
            aim = (target.centre[0] + side[0] * offset * target.base_radius_mm,
                   target.centre[1] + side[1] * offset * target.base_radius_mm,
                   target.standing_mm + frac * target.height_mm)
            hit = next((name for name, fp, top in blockers if _segment_hits_box(eye, aim, fp, top)), None)
            if hit is None:
                return True, f"trooper {shooter.id} sees trooper {target.id}"
            blocked_by[hit] = blocked_by.get(hit, 0) + 1
    worst = max(blocked_by, key=blocked_by.get)
    return False, f"no line of fire: {worst} is in the way" + (
        f" (and {', '.join(k for k in blocked_by if k != worst)})" if len(blocked_by) > 1 else "")


def template_attack(table: Table, attacker_id: int, target_id: int | None = None, point_mm: Point | None = None,
                    radius_mm: float = CIRCULAR_TEMPLATE_MM / 2, sv: int = 13, burst: int = 1,
                    reactions: dict[int, dict] | None = None) -> TemplateAttack:
    """Place the template on the Main Target (or a point, for "no target" ammunition) and rule on it.

    `reactions[id]` = {"dodge_ph": PH} or {"sv": SV, "burst": B} (shooting back); a trooper without a
    reaction dodges at PH 10. Dodging without line of fire to the attacker is at PH - 3.
    """
    attacker = table.unit(attacker_id)
    if target_id is None and point_mm is None:
        raise InputError("target: the Main Target (or a table point for no-target ammunition)")
    target = table.unit(target_id) if target_id is not None else None
    centre = target.centre if target is not None else point_mm
    if target is not None:
        lof, why = line_of_fire(table, attacker, target)
    else:
        lof, why = True, "no-target ammunition: placed on a table point"
    affected = [u for u in under_template(table, centre, radius_mm) if u.id != attacker.id]
    allies = tuple(u.id for u in affected if u.player == attacker.player)
    enemies = [u for u in affected if u.player != attacker.player]
    reactions = reactions or {}
    odds: dict[int, dict] = {}
    expected = 0.0
    if lof and not allies:
        for enemy in enemies:
            reaction = reactions.get(enemy.id, {"dodge_ph": 10})
            if "dodge_ph" in reaction:
                sees, _ = line_of_fire(table, enemy, attacker)
                sv_b = reaction["dodge_ph"] - (0 if sees else NO_LOF_DODGE_PENALTY)
                f2f = face_to_face(sv, burst, sv_b, 1)
                label = f"dodge at PH {sv_b}" + ("" if sees else " (PH-3: no line of fire to the attacker)")
            else:
                f2f = face_to_face(sv, burst, reaction["sv"], reaction.get("burst", 1))
                label = f"shoots back at SV {reaction['sv']}"
            odds[enemy.id] = {"reaction": label, **f2f.to_json()}
            expected += float(f2f.a_wins)
    return TemplateAttack(attacker.id, target.id if target else None, centre, radius_mm, tuple(u.id for u in affected),
                          allies, lof, why, odds, expected)


from companion.rules.registry import RuleSystem  # noqa: E402  (the descriptor, after what it describes)

@dataclass(frozen=True)
class InfinitySetup:
    circular_template_mm: float = CIRCULAR_TEMPLATE_MM  # the template's diameter


def read_infinity(section: dict, problem) -> InfinitySetup:
    value = section.get("circular_template_mm", CIRCULAR_TEMPLATE_MM)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        problem("infinity.circular_template_mm", f"must be a positive number of mm, got {value!r}")
        return InfinitySetup()
    return InfinitySetup(float(value))


def template_diameter_mm(setup) -> float:
    """The setup's template: its rules value under Infinity, else read from its [infinity] table."""
    if isinstance(setup.rules, InfinitySetup):
        return setup.rules.circular_template_mm
    problems: list[str] = []
    found = read_infinity(setup.sections.get("infinity", {}), lambda key, message: problems.append(f"{key}: {message}"))
    if problems:
        raise InputError(f"{setup.path}: " + "; ".join(problems))
    return found.circular_template_mm


SYSTEM = RuleSystem("infinity", "Infinity", section="infinity", section_keys=frozenset({"circular_template_mm"}),
                    read_setup=lambda setup, problem: read_infinity(setup.sections.get("infinity", {}), problem))
