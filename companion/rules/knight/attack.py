"""Can this unit attack that one, with what bonuses, at what odds — and why.

Everything follows shared/rules/knight.md ("Line of attack and cover", "Attack resolution and
odds", "Bonus sums"); every modifier in an answer carries its name, value and reason.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction

from companion.errors import InputError
from companion.rules.geometry import (angle_between_deg, boxes_apart, crossing_depth, point_in_polygon,
                                      point_polygon_distance, segment_meets_polygon, segment_polygon_distance)
from companion.rules.knight.closecalls import near_threshold, near_view_edge, view_edge_mm
from companion.rules.knight.measure import Measure, measure, within_for_acting_side
from companion.rules.knight.squads import group_of
from companion.rules.table import Block, Table, Unit
from companion.setup_file import PlayerSpec

FIELD_OF_VIEW_HALF_DEG = 90.0
# Attack range per class: (hands, fingers) of the acting player.
RANGES = {"defender": (0, 1), "berserker": (0, 2), "polearm": (0, 4), "shooter": (2, 0), "priest": (3, 0)}
RANGED_CLASSES = frozenset({"shooter", "priest"})
ELEVATION_MARGIN_MM = 1.0
SHOOTER_OWN_COVER_FINGERS = 1
CLOSE_CALL_MM = 3.2  # a plate: the camera's height step
# A camera places a block's edge to a millimetre or two: a line of attack this near an edge may
# cross the block or pass beside it.
GRAZE_MM = 1.5


@dataclass(frozen=True)
class Modifier:
    name: str
    value: int
    why: str


@dataclass(frozen=True)
class CoverBlock:
    id: int
    footprint_mm: tuple[tuple[float, float], ...]
    height_mm: float  # top above the table
    cover_height_mm: float  # top above the target's standing level
    kind: str  # full | partial | none (crosses but gives nothing)
    why: str
    close_call: bool = False  # its top within CLOSE_CALL_MM of the target's height, or the line within GRAZE_MM of its edge


@dataclass(frozen=True)
class Cover:
    full: bool
    partial: int  # partial blocks that count
    blocks: tuple[CoverBlock, ...]  # every block crossing the line of attack
    # Blocks the line passes within GRAZE_MM of, that would give cover if it crossed them (what
    # they would give; in the verdict's reasons, not in `blocks`: they do not count).
    beside: tuple[CoverBlock, ...] = ()

    def to_json(self) -> dict:
        return {"full": self.full, "partial": self.partial, "blocks": [asdict(b) for b in self.blocks]}


@dataclass(frozen=True)
class Odds:
    attacker_wins: Fraction  # includes attacker_critical
    attacker_critical: Fraction
    tie: Fraction
    defender_wins: Fraction  # includes defender_critical
    defender_critical: Fraction

    def to_json(self) -> dict:
        return {k: float(v) for k, v in asdict(self).items()} | {
            "fractions": {k: f"{v.numerator}/{v.denominator}" for k, v in asdict(self).items()}}


@dataclass(frozen=True)
class AttackVerdict:
    attacker: int
    target: int
    legal: bool
    reasons: tuple[str, ...]  # why it is (not) possible, and what counts
    measure: Measure
    in_range: bool
    in_view: bool
    back_attack: bool
    cover: Cover
    elevation: bool
    ranged: bool
    attack_modifiers: tuple[Modifier, ...]
    defence_modifiers: tuple[Modifier, ...]
    odds: Odds
    consequences: tuple[str, ...] = ()  # what a win costs or triggers (priest, orc suicide, polearms)
    extra: dict = field(default_factory=dict)
    # Beyond cover, the parts of the verdict that turn on less than a camera can tell (a unit on the
    # edge of a field of view, a distance within a millimetre or two of a range): why, each.
    close_calls: tuple[str, ...] = ()

    @property
    def close_call(self) -> bool:
        """Whether the verdict turns on what a camera cannot tell: a block's height or its edge, a
        unit's place against a range or a field of view."""
        return any(b.close_call for b in self.cover.blocks) or bool(self.cover.beside) or bool(self.close_calls)

    @property
    def attack_bonus(self) -> int:
        return sum(m.value for m in self.attack_modifiers)

    @property
    def defence_bonus(self) -> int:
        return sum(m.value for m in self.defence_modifiers)

    def to_json(self) -> dict:
        return {
            "attacker": self.attacker, "target": self.target, "legal": self.legal, "reasons": list(self.reasons),
            "edge_mm": round(self.measure.edge_mm, 1), "distance": self.measure.to_json(),
            "in_range": self.in_range, "in_view": self.in_view, "back_attack": self.back_attack,
            "cover": self.cover.to_json(), "close_call": self.close_call, "close_calls": list(self.close_calls),
            "elevation": self.elevation,
            "ranged": self.ranged,
            "attack_bonus": self.attack_bonus, "defence_bonus": self.defence_bonus,
            "attack_modifiers": [asdict(m) for m in self.attack_modifiers],
            "defence_modifiers": [asdict(m) for m in self.defence_modifiers],
            "odds": self.odds.to_json(), "consequences": list(self.consequences), **self.extra,
        }

    def to_text(self) -> str:
        """What `knight attack` prints: the verdict and its reasons first, then what makes it."""
        def modifiers(items: tuple[Modifier, ...]) -> str:
            return ", ".join(f"{m.name} {m.value:+d} ({m.why})" for m in items) or "none"

        o = self.odds
        lines = [("CAN attack: " if self.legal else "CANNOT attack: ") + "; ".join(self.reasons),
                 f"distance {self.measure.text} ({self.measure.edge_mm:.0f} mm); back attack: "
                 f"{'yes' if self.back_attack else 'no'}; "
                 f"cover: {'full' if self.cover.full else f'{self.cover.partial} partial'}",
                 *(f"  {b.why}" for b in self.cover.blocks),
                 f"attack +{self.attack_bonus}: {modifiers(self.attack_modifiers)}",
                 f"defence +{self.defence_bonus}: {modifiers(self.defence_modifiers)}",
                 f"odds: attacker wins {float(o.attacker_wins):.1%} (critical {float(o.attacker_critical):.1%}), "
                 f"tie {float(o.tie):.1%}, defender wins {float(o.defender_wins):.1%} "
                 f"(critical {float(o.defender_critical):.1%})",
                 *(f"note: {c}" for c in self.consequences)]
        return "\n".join(lines)


# --- pieces -----------------------------------------------------------------------------------------

def range_mm(unit_class: str, profile: PlayerSpec) -> float | None:
    if unit_class not in RANGES:
        return None
    hands, fingers = RANGES[unit_class]
    return hands * profile.hand_mm + fingers * profile.finger_mm


def in_view(viewer: Unit, point: tuple[float, float]) -> bool:
    """The front 180 degrees: the angle between the heading and the direction is at most 90."""
    return angle_between_deg(viewer.heading_deg, viewer.centre, point) <= FIELD_OF_VIEW_HALF_DEG


def line_cover(table: Table, attacker: Unit, target: Unit, profile: PlayerSpec) -> Cover:
    """Blocks crossing the segment between the two base centres, and what each gives the target."""
    ranged = attacker.unit_class in RANGED_CLASSES
    found: list[CoverBlock] = []
    beside: list[CoverBlock] = []
    for block in table.blocks:
        if point_in_polygon(attacker.centre, block.footprint) or point_in_polygon(target.centre, block.footprint):
            continue  # a unit stands on it: it is ground, not cover
        if segment_meets_polygon(attacker.centre, target.centre, block.footprint):
            found.append(_classify(block, attacker, target, profile, ranged,
                                   crossing_depth(attacker.centre, target.centre, block.footprint)))
            continue
        if boxes_apart(attacker.centre, target.centre, block.footprint, GRAZE_MM):
            continue  # (most blocks: the exact distance below is most of a verdict's time)
        gap = segment_polygon_distance(attacker.centre, target.centre, block.footprint)
        if gap < GRAZE_MM:
            would = _classify(block, attacker, target, profile, ranged)
            if would.kind != "none":
                beside.append(replace(would, close_call=True, why=(
                    f"block {block.id} passes {gap:.1f} mm beside the line of attack: across it, it would give "
                    f"{would.kind} cover (a close call: a camera places an edge to a millimetre or two; measure "
                    "it on the table)")))
    full = any(b.kind == "full" for b in found)
    partial = sum(b.kind == "partial" for b in found)
    return Cover(full, partial, tuple(found), tuple(beside))


def _classify(block: Block, attacker: Unit, target: Unit, profile: PlayerSpec, ranged: bool,
              depth_mm: float | None = None) -> CoverBlock:
    """What a block gives the target; `depth_mm`: how far into it the line of attack reaches."""
    cover_h = block.height_mm - target.standing_mm
    footprint = tuple((round(x, 1), round(y, 1)) for x, y in block.footprint)
    # Full against partial turns on a few mm: the camera reads a block's height to a plate and a
    # ruler a mini's to a millimetre or so, so a verdict this close says so.
    near = cover_h > 0 and abs(cover_h - target.height_mm) <= CLOSE_CALL_MM
    # Where the camera could not tell its height (right under the lens, say), the top it may have
    # reaches both sides of the target's: full or partial turns on what it could not see.
    low, high = block.height_range_mm or (block.height_mm, block.height_mm)
    spans = low - target.standing_mm < target.height_mm <= high - target.standing_mm
    # The line only clips a corner or an edge: a camera places an edge to a millimetre or two.
    grazed = depth_mm is not None and depth_mm < GRAZE_MM
    # A block a standing unit hides whole: the camera knows its height from the unit's marker,
    # but its extent is the most the unit hides, a guess.
    hidden = block.hidden_under is not None
    # A target standing on a block is at its marker's height less a ruler's: a block on the line
    # whose top is within a plate of the target's feet gives partial cover or none on that plate.
    at_feet = target.standing_mm > 0 and abs(cover_h) <= CLOSE_CALL_MM
    close = near or spans or grazed or hidden or at_feet
    if hidden:
        hedge = (f" (a close call: it lies hidden under unit {block.hidden_under}, and the camera only guesses how far "
                 "it reaches; look under that unit)")
    elif near:
        hedge = (f" (a close call: {abs(cover_h - target.height_mm):.1f} mm from the target's height, within what a "
                 "camera and a ruler can tell apart; measure it on the table)")
    elif spans:
        hedge = (f" (a close call: the camera reads its top anywhere from {low:.1f} to {high:.1f} mm, either side of "
                 f"the target's {target.height_mm:.0f} mm; measure it on the table)")
    elif grazed:
        hedge = (f" (a close call: the line of attack crosses only {depth_mm:.1f} mm into it, and a camera places an "
                 "edge to a millimetre or two; measure it on the table)")
    elif at_feet:
        hedge = (f" (a close call: its top is {cover_h:+.1f} mm from the feet of the target, which stands "
                 f"{target.standing_mm:.1f} mm up: a camera's heights and a ruler's tell that to a plate; measure it "
                 "on the table)")
    else:
        hedge = ""
    if cover_h >= target.height_mm:
        return CoverBlock(block.id, footprint, block.height_mm, cover_h, "full",
                          f"block {block.id} is {cover_h:.0f} mm above the target's feet, the target is "
                          f"{target.height_mm:.0f} mm tall: full cover" + hedge, close)
    if cover_h <= 0:
        return CoverBlock(block.id, footprint, block.height_mm, cover_h, "none",
                          f"block {block.id} is not above the target's feet" + hedge, close)
    gap = point_polygon_distance(attacker.centre, block.footprint) - attacker.base_radius_mm
    own_reach = SHOOTER_OWN_COVER_FINGERS * profile.finger_mm
    # Within a finger of the shooter or not turns on where the camera puts the block's edge and the
    # shooter's base: a gap within that of the finger says so.
    own_edge = ranged and near_threshold(gap, own_reach)
    own_hedge = (f" (a close call: the block is {gap:.1f} mm from the shooter's base, a finger is {own_reach:.0f} mm; "
                 "measure it on the table)") if own_edge else ""
    if ranged and gap <= own_reach:
        return CoverBlock(block.id, footprint, block.height_mm, cover_h, "none",
                          f"block {block.id} is within a finger of the shooter ({max(gap, 0):.0f} mm): it gives "
                          "the target nothing" + own_hedge, own_edge)
    return CoverBlock(block.id, footprint, block.height_mm, cover_h, "partial",
                      f"block {block.id} is {cover_h:.0f} mm high against a {target.height_mm:.0f} mm target: "
                      "partial cover" + (hedge or own_hedge), close or own_edge)


def reaches(table: Table, unit: Unit, target: Unit, profile: PlayerSpec) -> tuple[bool, list[str]]:
    """Could `unit` attack `target` alone: enemy, in range, in view, no full cover, melee height allowed."""
    why: list[str] = []
    if unit.knocked_over:
        why.append(f"unit {unit.id} is knocked over (dead)")
    if target.knocked_over:
        why.append(f"unit {target.id} is knocked over (dead)")
    if not unit.player or unit.player == target.player:
        why.append(f"unit {target.id} is not an enemy of unit {unit.id}")
    reach = range_mm(unit.unit_class, profile)
    if reach is None:
        why.append(f"unit {unit.id} has no known class ({unit.unit_class!r}; one of {', '.join(RANGES)})")
    else:
        edge = measure(unit, target, profile).edge_mm
        if not within_for_acting_side(edge, reach, profile):
            why.append(f"unit {target.id} is out of range of unit {unit.id} ({edge:.0f} mm, range {reach:.0f} mm)")
    if not in_view(unit, target.centre):
        why.append(f"unit {target.id} is behind unit {unit.id} (outside its field of view)")
    cover = line_cover(table, unit, target, profile)
    if cover.full:
        block = next(b for b in cover.blocks if b.kind == "full")
        why.append(f"blocked by block {block.id} (full cover)")
    if unit.unit_class not in RANGED_CLASSES and target.standing_mm > unit.standing_mm + unit.height_mm:
        why.append(f"unit {target.id} stands too high for melee ({target.standing_mm:.0f} mm, unit {unit.id} reaches "
                   f"{unit.standing_mm + unit.height_mm:.0f} mm)")
    return not why, why


def odds(attack_bonus: int, defence_bonus: int, attacker_balance: int = 0, defender_balance: int = 0) -> Odds:
    """Exact: both sides roll one d6 and add their bonus (and their balance bonus on an odd die)."""
    wins = crit = tie = losses = dcrit = 0
    for a in range(1, 7):
        ta = a + attack_bonus + (attacker_balance if a % 2 else 0)
        for d in range(1, 7):
            td = d + defence_bonus + (defender_balance if d % 2 else 0)
            if ta > td:
                wins += 1
                crit += ta >= 2 * td
            elif td > ta:
                losses += 1
                dcrit += td >= 2 * ta
            else:
                tie += 1
    f = lambda n: Fraction(n, 36)  # noqa: E731
    return Odds(f(wins), f(crit), f(tie), f(losses), f(dcrit))


def morale_retreat_probability(units_left: int) -> Fraction:
    """A squad (or its survivor) that took losses retreats when a d6 shows more than its size."""
    if units_left <= 0:
        return Fraction(0)
    return Fraction(max(0, 6 - units_left), 6)


# --- the verdict --------------------------------------------------------------------------------------

def targets(table: Table, attacker_id: int, **options):
    """A lazy view: the verdict against every enemy of the attacker, nearest first."""
    attacker = table.unit(attacker_id)
    enemies = sorted((u for u in table.units if u.player != attacker.player and not u.knocked_over),
                     key=lambda u: (u.centre[0] - attacker.centre[0]) ** 2 + (u.centre[1] - attacker.centre[1]) ** 2)
    return (attack(table, attacker_id, u.id, **options) for u in enemies)


@dataclass(frozen=True)
class _Sides:
    """The two sides of one attack, each unit looked up once."""

    attacker: Unit
    target: Unit
    own: tuple[Unit, ...]  # the attacker's group (its squad, or itself)
    theirs: tuple[Unit, ...]  # the target's group
    reaching: tuple[int, ...]  # units of the attacker's group that reach the target
    ranged: bool
    measure: Measure
    profile: PlayerSpec

    @property
    def own_ids(self) -> list[int]:
        return [u.id for u in self.own]

    @property
    def their_ids(self) -> list[int]:
        return [u.id for u in self.theirs]

    @property
    def one_on_one(self) -> bool:
        return len(self.own) == 1 and len(self.theirs) == 1

    @property
    def outnumbering(self) -> bool:
        return len(self.reaching) >= 1 and len(self.reaching) > len(self.theirs)


def _attack_modifiers(s: _Sides, back: bool, elevation: bool, charged: bool, suicide: bool,
                      warriors: int | None, consequences: list[str]) -> list[Modifier]:
    att: list[Modifier] = []
    attacker, in_squad = s.attacker, len(s.own) > 1
    if in_squad:
        count = len(s.reaching)
        capped = min(count, warriors) if warriors is not None else count
        why = f"{count} unit(s) of the squad {s.own_ids} reach the target"
        if capped < count:
            why += f", capped by the white die at {warriors}"
        att.append(Modifier("squad", capped, why))
    if attacker.unit_class == "berserker" and not in_squad:
        att.append(Modifier("berserker alone", 2, f"unit {attacker.id} is a berserker fighting as a single"))
    if attacker.unit_class == "shooter":
        att.append(Modifier("shooter vs group", len(s.theirs), f"the target's group has {len(s.theirs)} unit(s)"))
        if s.measure.edge_mm <= 2 * s.profile.finger_mm:
            att.append(Modifier("shooter too close", -1, f"{s.measure.edge_mm:.0f} mm is 2 fingers or closer"))
    if attacker.faction == "humans" and s.one_on_one:
        att.append(Modifier("humans one-on-one", 1, "both sides are singles"))
    if attacker.faction == "rodents" and s.outnumbering:
        att.append(Modifier("rodents outnumber", 1, f"{len(s.reaching)} reach against a group of {len(s.theirs)}"))
    if elevation:
        att.append(Modifier("elevation", 1, f"attacker stands at {attacker.standing_mm:.0f} mm, target at "
                                            f"{s.target.standing_mm:.0f} mm"))
    if back:
        att.append(Modifier("back attack", 2, f"unit {attacker.id} is outside the field of view of {s.their_ids}"))
        consequences.append("the target may not answer or step back")
    if charged:
        att.append(Modifier("running charge", 1, "the attacker ran 3 fingers to 2 hands in a straight line"))
    if suicide:
        att.append(Modifier("orc suicide attack", 2, "declared: the orc dies whatever the result"))
        consequences.append(f"unit {attacker.id} dies (suicide attack)")
    return att


def _defence_modifiers(s: _Sides, cover: Cover) -> list[Modifier]:
    dfn: list[Modifier] = []
    target, target_in_squad = s.target, len(s.theirs) > 1
    if target_in_squad:
        dfn.append(Modifier("squad", len(s.theirs), f"the target's squad {s.their_ids} has {len(s.theirs)} units"))
    defenders = [u.id for u in s.theirs if u.unit_class == "defender"]
    if defenders:
        dfn.append(Modifier("defenders", len(defenders), f"defender-class unit(s) {defenders} in the target's group"))
    if target.faction == "humans" and s.one_on_one:
        dfn.append(Modifier("humans one-on-one", 1, "both sides are singles"))
    if target.faction == "dwarves" and target_in_squad:
        dfn.append(Modifier("dwarves in a squad", 1, "dwarf squads defend better"))
    if target.faction == "rodents" and s.outnumbering:
        dfn.append(Modifier("rodents outnumbered", -1, f"{len(s.reaching)} reach against a group of {len(s.theirs)}"))
    if target.faction == "skeletons":
        dfn.append(Modifier("skeletons vs ranged", 2, "arrows pass through bones") if s.ranged
                   else Modifier("skeletons in melee", -1, "brittle in close combat"))
    if cover.partial and not cover.full:
        ids = [b.id for b in cover.blocks if b.kind == "partial"]
        dfn.append(Modifier("partial cover", cover.partial if s.ranged else 1,
                            f"partial cover from block(s) {ids}" + ("" if s.ranged else " (melee: +1 whatever the count)")))
    return dfn


def _close_calls(s: _Sides, reach: float | None, seeing: list[int]) -> list[str]:
    """The parts of a verdict, beyond its cover, that a unit's place, heading or level as a camera
    reads them may turn (`closecalls`): in view, back attack, in range, a shooter too close, from
    above, within a melee attacker's reach. `seeing`: the units of the target's group that see the
    attacker (none: a back attack)."""
    attacker, target, edge = s.attacker, s.target, s.measure.edge_mm
    hedge = "; measure it on the table"
    out = []
    if near_view_edge(attacker, target.centre, FIELD_OF_VIEW_HALF_DEG):
        angle = angle_between_deg(attacker.heading_deg, attacker.centre, target.centre)
        out.append(f"close call: unit {target.id} is {angle:.1f} deg from unit {attacker.id}'s heading, "
                   f"{view_edge_mm(attacker, target.centre, FIELD_OF_VIEW_HALF_DEG):.1f} mm from the edge of its field "
                   "of view: in view or not turns on less than a camera tells (a heading to half a degree)" + hedge)
    # Back attack or not flips when a unit of the target's group that sees nothing of the attacker
    # might, or when every one that sees it might not.
    edge_units = [u.id for u in s.theirs if near_view_edge(u, attacker.centre, FIELD_OF_VIEW_HALF_DEG)]
    if edge_units and set(seeing) <= set(edge_units):  # (none seeing: a back attack)
        out.append(f"close call: unit {attacker.id} stands on the edge of the field of view of unit(s) {edge_units}: "
                   "a back attack or not turns on less than a camera tells" + hedge)
    if reach is not None and near_threshold(edge, reach + s.profile.finger_mm):
        out.append(f"close call: {edge:.1f} mm apart against a range of {reach:.0f} mm and a finger of grace "
                   f"({reach + s.profile.finger_mm:.0f} mm in all): in range or not turns on a millimetre or two" + hedge)
    if attacker.unit_class == "shooter" and near_threshold(edge, 2 * s.profile.finger_mm):
        out.append(f"close call: {edge:.1f} mm apart, the shooter's penalty starts at 2 fingers "
                   f"({2 * s.profile.finger_mm:.0f} mm)" + hedge)
    # A level above the table is a marker's height less a ruler's (or a block's, read to a plate):
    # two units standing on blocks within a plate of the elevation margin, or a target within a
    # plate of a melee attacker's reach, may be either side of it.
    levels = f"unit {attacker.id} stands at {attacker.standing_mm:.1f} mm, unit {target.id} at {target.standing_mm:.1f} mm"
    if (max(attacker.standing_mm, target.standing_mm) > 0
            and abs(attacker.standing_mm - target.standing_mm - ELEVATION_MARGIN_MM) <= CLOSE_CALL_MM):
        out.append(f"close call: {levels}: attacking from above (+1) or not turns on a camera's heights and a "
                   f"ruler's, each to a plate ({CLOSE_CALL_MM} mm)" + hedge)
    reach_top = attacker.standing_mm + attacker.height_mm
    if not s.ranged and target.standing_mm > 0 and abs(target.standing_mm - reach_top) <= CLOSE_CALL_MM:
        out.append(f"close call: {levels}, unit {attacker.id} reaches {reach_top:.1f} mm: a melee attack or none "
                   f"turns on a plate ({CLOSE_CALL_MM} mm)" + hedge)
    return out


def _after_effects(s: _Sides, charged: bool, descent: bool, consequences: list[str]) -> dict:
    """What a win costs or triggers beyond the dice: the priest's price, polearms striking first,
    the loser's morale."""
    extra: dict = {}
    if s.attacker.unit_class == "priest":
        consequences.append(f"each successful attack kills one unit of the priest's own squad {s.own_ids}")
    polearms = [u.id for u in s.theirs if u.unit_class == "polearm"]
    if (charged or descent) and polearms and not s.ranged:
        p_first = 1 - Fraction(4, 6) ** len(polearms)
        extra["polearm_prestrike"] = {"polearms": polearms, "p_attacker_killed_first": float(p_first),
                                      "fraction": f"{p_first.numerator}/{p_first.denominator}"}
        consequences.append(f"polearm(s) {polearms} strike first against the {'charge' if charged else 'descent'}: "
                            "each kills the attacker on 5+")
    left_after_loss = len(s.theirs) - 1
    skeletons = s.target.faction == "skeletons"
    extra["morale_if_defender_loses"] = {
        "units_left": left_after_loss, "immune": skeletons,
        "p_retreat": 0.0 if skeletons else float(morale_retreat_probability(left_after_loss))}
    return extra


def attack(table: Table, attacker_id: int, target_id: int, player: str | None = None, charged: bool = False,
           suicide: bool = False, warriors: int | None = None, attacker_balance: int = 0,
           defender_balance: int = 0, descent: bool = False) -> AttackVerdict:
    attacker, target = table.unit(attacker_id), table.unit(target_id)
    if attacker_id == target_id:
        raise InputError("target: a unit cannot attack itself")
    if warriors is not None and warriors < 1:
        raise InputError("--warriors: the white die shows 1 to 6")
    profile = table.player(player or attacker.player) if (player or attacker.player) else PlayerSpec("table")
    ranged = attacker.unit_class in RANGED_CLASSES
    if suicide and (attacker.faction != "orcs" or ranged):
        raise InputError("--suicide: only an orc, in melee, may declare a suicide attack")
    legal, reasons = reaches(table, attacker, target, profile)
    m = measure(attacker, target, profile)
    reach = range_mm(attacker.unit_class, profile)
    in_range = reach is not None and within_for_acting_side(m.edge_mm, reach, profile)
    seen = in_view(attacker, target.centre)
    cover = line_cover(table, attacker, target, profile)
    own = tuple(table.unit(u) for u in group_of(table, attacker.id))
    theirs = tuple(table.unit(u) for u in group_of(table, target.id))
    reaching = tuple(u.id for u in own if reaches(table, u, target, profile)[0])
    s = _Sides(attacker, target, own, theirs, reaching, ranged, m, profile)
    if attacker.unit_class == "priest" and len(own) == 1:
        legal = False
        reasons.append(f"unit {attacker.id} is an oblivion priest: it attacks only from within a squad")
    # Back attack: outside the target's view, and the target's squad sees nothing of the attacker either.
    seeing = [u.id for u in theirs if in_view(u, attacker.centre)]
    back = not seeing
    elevation = attacker.standing_mm > target.standing_mm + ELEVATION_MARGIN_MM
    close_calls = _close_calls(s, reach, seeing)
    consequences: list[str] = []
    att = _attack_modifiers(s, back, elevation, charged, suicide, warriors, consequences)
    dfn = _defence_modifiers(s, cover)
    extra = _after_effects(s, charged, descent, consequences)

    if legal:
        reasons.insert(0, f"unit {attacker.id} can attack unit {target.id}: in range ({m.text}), in view"
                          + (", no full cover" if cover.blocks else ", clear line"))
    reasons.extend(b.why for b in cover.beside)
    reasons.extend(close_calls)
    if not table.blocks_seen:  # the camera's first seconds: its empty block list is not an open table
        reasons.append("the camera has not seen the blocks yet: cover and heights are judged as if the table "
                       "were bare; ask again in a few seconds")
    return AttackVerdict(attacker.id, target.id, legal, tuple(reasons), m, in_range, seen, back, cover, elevation,
                         ranged, tuple(att), tuple(dfn),
                         odds(sum(x.value for x in att), sum(x.value for x in dfn), attacker_balance, defender_balance),
                         tuple(consequences), extra, tuple(close_calls))
