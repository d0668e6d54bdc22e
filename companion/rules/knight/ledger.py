"""The turn ledger: what the acting player's turn spent, seen between two table states.

As shared/rules/knight.md's "Turn ledger" writes it: moves (1 AP per hand with the finger of
grace; a squad that moved together is charged once, by its longest displacement), facing (a moved
unit should end facing the way it went, else 1 AP; a unit that stayed and turned: 1 AP),
fortifications (as `knight watch` rules them), and the other side's units that moved meanwhile.
All distances in the acting player's hand and finger.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from companion.rules.knight.measure import in_hands_and_fingers
from companion.rules.knight.moves import cheapest_ap, path_cost
from companion.rules.knight.referee import Fortification, fortifications
from companion.rules.knight.squads import group_of
from companion.rules.table import Table, Unit
from companion.setup_file import PlayerSpec

FACING_TOLERANCE_DEG = 30.0


def move_ap(distance_mm: float, profile: PlayerSpec) -> int:
    """max(1, ceil((d - finger) / hand)): 1 AP per hand, the last finger of it free."""
    return max(1, math.ceil((distance_mm - profile.finger_mm) / profile.hand_mm))


def angle_between_deg(a: float, b: float) -> float:
    """The smaller difference of two directions, 0-180."""
    d = abs(a - b) % 360.0
    return 360.0 - d if d > 180.0 else d


@dataclass(frozen=True)
class Move:
    units: tuple[int, ...]
    distance_mm: float  # the straight displacement (the longest one of a squad's)
    hands: int
    fingers: int
    ap: int
    why: str
    heading_deg: float  # the direction it went

    def to_json(self) -> dict:
        return {"units": list(self.units), "distance_mm": round(self.distance_mm, 2), "hands": self.hands,
                "fingers": self.fingers, "ap": self.ap, "why": self.why}


@dataclass(frozen=True)
class Turn:
    units: tuple[int, ...]
    ap: int
    why: str

    def to_json(self) -> dict:
        return {"unit": min(self.units), "units": list(self.units), "ap": self.ap, "why": self.why}


@dataclass(frozen=True)
class Ledger:
    player: str
    moves: tuple[Move, ...]
    turns: tuple[Turn, ...]
    fortifications: tuple[Fortification, ...]
    other_side_moved: tuple[int, ...]
    warnings: tuple[str, ...]

    @property
    def ap_spent(self) -> int:
        return sum(m.ap for m in self.moves) + sum(t.ap for t in self.turns) + sum(f.bricks for f in self.fortifications)

    def to_json(self) -> dict:
        return {"player": self.player, "moves": [m.to_json() for m in self.moves],
                "turns": [t.to_json() for t in self.turns],
                "fortifications": [{"block": f.block, "bricks": f.bricks, "in_reach": f.in_reach, "gap_mm": f.gap_mm,
                                    "ap": f.bricks, "why": f.why} for f in self.fortifications],
                "ap_spent": self.ap_spent, "other_side_moved": list(self.other_side_moved),
                "warnings": list(self.warnings)}

    def to_text(self) -> str:
        """What `knight ledger` prints: the total, then each AP spent with its reason."""
        return "\n".join([f"{self.player}'s turn: {self.ap_spent} AP spent",
                          *(f"  {entry.ap} AP: {entry.why}" for entry in (*self.moves, *self.turns)),
                          *(f"  {f.bricks} AP: fortification {f.why}" for f in self.fortifications),
                          *(f"  warning: {w}" for w in self.warnings)])


def _priced(before: Table, unit: Unit, end: tuple[float, float], profile: PlayerSpec,
            bounds_mm: tuple[float, float] | None) -> tuple[int, str]:
    """AP of a unit's move and how it was priced: straight, or where blocks stand in the way, the
    cheapest of climbing over them and walking around (as `knight moves` prices a path)."""
    walk = move_ap(math.dist(unit.centre, end), profile)
    climbs = path_cost(before, unit, [unit.centre, end], profile).climbs  # the blocks stepped onto, straight
    if not climbs:
        return walk, "straight"
    straight = walk + sum(ap for _, ap in climbs)
    over = ", ".join(f"block {block} +{ap}" for block, ap in climbs)
    around = cheapest_ap(before, unit, (end[0] - unit.centre[0], end[1] - unit.centre[1]), straight, profile,
                         bounds_mm)
    if around is not None and around < straight:
        return around, f"around the blocks in the way ({over} to climb straight)"
    return straight, f"straight over {over}"


def ledger(before: Table, now: Table, player: str, bounds_mm: tuple[float, float] | None = None) -> Ledger:
    """`bounds_mm`: the table's width and depth; a path round a wall stays on the table."""
    profile = now.player(player)
    finger = profile.finger_mm
    start = {u.id: u for u in before.units}
    end = {u.id: u for u in now.units}
    warnings: list[str] = []
    for uid in sorted(set(start) ^ set(end)):
        where = "the turn's start" if uid in start else "now"
        warnings.append(f"unit {uid} is seen only {'at ' if uid in start else ''}{where}: "
                        f"{'lifted or hidden since' if uid in start else 'placed or uncovered during the turn'}")
    both = sorted(set(start) & set(end))
    shift = {uid: (end[uid].centre[0] - start[uid].centre[0], end[uid].centre[1] - start[uid].centre[1]) for uid in both}
    moved = {uid for uid in both if math.hypot(*shift[uid]) >= finger}

    other = tuple(uid for uid in both if start[uid].player != player and uid in moved)
    for uid in other:
        warnings.append(f"unit {uid} ({start[uid].player}) moved {math.hypot(*shift[uid]):.0f} mm during {player}'s turn")

    mine = [uid for uid in both if start[uid].player == player]
    groups: list[tuple[int, ...]] = []
    left = sorted(uid for uid in mine if uid in moved)
    while left:  # squads of the start that moved together: displacement vectors within 1 finger, transitively
        seed = left.pop(0)
        squad = set(group_of(before, seed)) if seed in {u.id for u in before.units if not u.knocked_over} else {seed}
        together, frontier = [seed], [seed]
        while frontier:
            a = frontier.pop()
            for b in [b for b in left if b in squad and math.dist(shift[a], shift[b]) <= finger]:
                left.remove(b)
                together.append(b)
                frontier.append(b)
        groups.append(tuple(sorted(together)))

    moves, turns = [], []
    for g in groups:
        lead = max(g, key=lambda uid: (math.hypot(*shift[uid]), -uid))
        d = math.hypot(*shift[lead])
        ap, how = _priced(before, start[lead], end[lead].centre, profile, bounds_mm)
        text = in_hands_and_fingers(d, profile)
        who = f"squad {', '.join(map(str, g))} moved together" if len(g) > 1 else f"unit {g[0]} moved"
        why = (f"{who}: {text.text} ({d:.0f} mm{', the longest' if len(g) > 1 else ''}), {ap} AP, {how} "
               f"(1 AP per hand of {profile.hand_mm:g} mm, the finger of grace {finger:g} mm)")
        heading = math.degrees(math.atan2(shift[lead][1], shift[lead][0])) % 360.0
        moves.append(Move(g, d, text.hands, text.fingers, ap, why, heading))
        off = [(uid, angle_between_deg(end[uid].heading_deg, heading)) for uid in g]
        off = [(uid, a) for uid, a in off if a > FACING_TOLERANCE_DEG]
        if off:
            detail = ", ".join(f"unit {uid} {a:.0f} deg" for uid, a in off)
            turns.append(Turn(g, 1, f"{'squad' if len(g) > 1 else 'unit'} {', '.join(map(str, g))} does not face the "
                                    f"way it went ({heading:.0f} deg): {detail} off, more than {FACING_TOLERANCE_DEG:.0f}: a turn, 1 AP"))
    for uid in mine:
        if uid in moved:
            continue
        a = angle_between_deg(start[uid].heading_deg, end[uid].heading_deg)
        if a > FACING_TOLERANCE_DEG:
            turns.append(Turn((uid,), 1, f"unit {uid} turned in place by {a:.0f} deg (more than "
                                         f"{FACING_TOLERANCE_DEG:.0f}): 1 AP"))

    # Blocks first published after the turn's start would all look built this turn.
    forts = tuple(fortifications(before, now, player)) if before.blocks_seen and now.blocks_seen else ()
    if not (before.blocks_seen and now.blocks_seen):
        warnings.append("fortifications not checked: the camera had not seen the blocks yet "
                        + ("when the turn started" if not before.blocks_seen else "now"))
    for f in forts:
        if not f.in_reach:
            warnings.append(f"fortification out of reach: {f.why}")
    return Ledger(player, tuple(moves), tuple(sorted(turns, key=lambda t: min(t.units))), forts, other, tuple(warnings))
