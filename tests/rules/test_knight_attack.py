from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from companion.errors import InputError
from companion.rules.knight.attack import attack, line_cover, odds
from companion.rules.knight.control import control_all
from companion.rules.table import TableObject
from tests.rules.knight_table import RED, block, table, unit


def by_distributions(att, dfn, ab=0, db=0):
    """The same odds by another route than the code's pairs of dice: each side's totals as a
    distribution, then each attacker total against the defender's cumulative counts."""
    def totals(bonus, balance):
        out = {}
        for face in range(1, 7):
            total = face + bonus + (balance if face % 2 else 0)
            out[total] = out.get(total, 0) + 1
        return out

    attack_totals, defence_totals = totals(att, ab), totals(dfn, db)

    def at_most(limit):  # defender rolls with a total <= limit
        return sum(n for t, n in defence_totals.items() if t <= limit)

    wins = sum(n * at_most(ta - 1) for ta, n in attack_totals.items())
    ties = sum(n * defence_totals.get(ta, 0) for ta, n in attack_totals.items())
    crit = sum(n * at_most(min(ta - 1, ta // 2)) for ta, n in attack_totals.items())
    dcrit = sum(n * sum(1 for a in range(1, 7) if a + att + (ab if a % 2 else 0) <= min(td - 1, td // 2))
                for td, n in defence_totals.items())
    return {"w": Fraction(wins, 36), "c": Fraction(crit, 36), "t": Fraction(ties, 36),
            "l": Fraction(36 - wins - ties, 36), "d": Fraction(dcrit, 36)}


@given(st.integers(-3, 8), st.integers(-3, 8), st.integers(0, 4), st.integers(0, 4))
def test_odds_match_the_distributions_of_the_totals(att, dfn, ab, db):
    o, b = odds(att, dfn, ab, db), by_distributions(att, dfn, ab, db)
    assert (o.attacker_wins, o.attacker_critical, o.tie, o.defender_wins, o.defender_critical) == \
        (b["w"], b["c"], b["t"], b["l"], b["d"])
    assert o.attacker_wins + o.tie + o.defender_wins == 1


@pytest.mark.parametrize("att, dfn", [(a, d) for a in range(-3, 9) for d in range(-3, 9)])
def test_odds_without_balance_are_the_closed_form_of_the_dice_difference(att, dfn):
    # a - d takes the value x in -5..5 in 6 - |x| of the 36 rolls: the attacker wins when a - d > dfn - att
    k = dfn - att
    wins = sum(6 - abs(x) for x in range(-5, 6) if x > k)
    ties = 6 - abs(k) if abs(k) <= 5 else 0
    o = odds(att, dfn)
    assert (o.attacker_wins, o.tie, o.defender_wins) == (Fraction(wins, 36), Fraction(ties, 36),
                                                          Fraction(36 - wins - ties, 36))


def test_even_odds_by_hand():
    # equal bonuses: ties are the 6 doubles; wins 15/36; criticals: (2,1) (3,1) (4,1) (4,2) (5,1) (5,2) (6,1) (6,2) (6,3)
    o = odds(0, 0)
    assert (o.attacker_wins, o.tie, o.attacker_critical) == (Fraction(15, 36), Fraction(6, 36), Fraction(9, 36))


def test_berserker_alone_in_range_and_view():
    # red berserker faces +x; blue target 60 mm away centre to centre: 60 - 25 = 35 mm edge = 1.75 fingers (range 2)
    t = table(unit(1, "red", 0, 0, heading=0), unit(2, "blue", 60, 0, heading=0))
    v = attack(t, 1, 2)
    assert v.legal and v.in_range and v.in_view
    assert v.back_attack  # the target faces away (+x): the attacker is behind it
    assert [(m.name, m.value) for m in v.attack_modifiers] == [("berserker alone", 2), ("back attack", 2)]
    assert v.attack_bonus == 4 and v.defence_bonus == 0
    assert v.odds == odds(4, 0)


def test_out_of_range_out_of_view_and_friendly():
    t = table(unit(1, "red", 0, 0, heading=180), unit(2, "blue", 100, 0), unit(3, "red", 40, 0))
    v = attack(t, 1, 2)
    assert not v.legal and not v.in_range and not v.in_view
    assert any("out of range" in r for r in v.reasons) and any("behind" in r for r in v.reasons)
    assert not attack(t, 1, 3).legal


def test_full_cover_blocks_and_names_the_block():
    # a 50 mm wall between shooter and a 40 mm tall target: full cover
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0), blocks=[block(7, 140, -30, 160, 30, 50)])
    v = attack(t, 1, 2)
    assert not v.legal and v.cover.full and v.cover.blocks[0].id == 7
    assert "blocked by block 7 (full cover)" in v.reasons


def test_partial_cover_ranged_counts_each_block_melee_counts_one():
    walls = [block(5, 100, -30, 110, 30, 19.2), block(6, 200, -30, 210, 30, 9.6)]
    shooter = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0), blocks=walls)
    v = attack(shooter, 1, 2)
    assert v.legal and v.cover.partial == 2
    assert ("partial cover", 2) in [(m.name, m.value) for m in v.defence_modifiers]
    melee = table(unit(1, "red", 0, 0, cls="polearm"), unit(2, "blue", 90, 0), blocks=[block(5, 40, -30, 50, 30, 9.6)])
    # polearm range 4 fingers (80 mm); edge 90 - 25 = 65 mm
    v = attack(melee, 1, 2)
    assert v.legal and ("partial cover", 1) in [(m.name, m.value) for m in v.defence_modifiers]


@pytest.mark.parametrize("height, kind, close", [(38.4, "partial", True), (41.6, "full", True), (43.2, "full", False),
                                                 (19.2, "partial", False), (36.7, "partial", False)])
def test_a_block_within_a_plate_of_the_target_height_is_called_close(height, kind, close):
    # the camera reads heights in plates (3.2 mm): 38.4 against a 40 mm target could be full cover
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0, height=40.0),
              blocks=[block(7, 140, -30, 160, 30, height)])
    (cover,) = line_cover(t, t.unit(1), t.unit(2), RED).blocks
    assert cover.kind == kind and cover.close_call is close
    assert ("close call" in cover.why) is close


@pytest.mark.parametrize("height, range_mm, kind, close", [
    (9.6, (9.6, 48.0), "partial", True),  # right under the lens: one brick, its height unseen
    (19.2, (16.0, 22.4), "partial", False),  # a range that stays under the target's 40 mm
    (44.8, (41.6, 48.0), "full", False),  # ... and one that stays over it
    (9.6, None, "partial", False),  # a state with no range: the height as read
])
def test_a_block_whose_height_the_camera_could_not_tell_either_side_is_called_close(height, range_mm, kind, close):
    """Where the frame allows its top anywhere from under the target's height to over it (a
    block straight under the camera, taken as one brick), the cover it gives turns on what the
    camera could not see: the verdict stands on the height read, and says so with the range."""
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0, height=40.0),
              blocks=[replace(block(7, 140, -30, 160, 30, height), height_range_mm=range_mm)])
    (cover,) = line_cover(t, t.unit(1), t.unit(2), RED).blocks
    assert cover.kind == kind and cover.close_call is close
    assert ("either side of the target's 40 mm" in cover.why) is close, cover.why


@pytest.mark.parametrize("y0, crosses, close", [(-15.0, True, False), (-1.0, True, True), (1.0, False, True),
                                                  (2.0, False, False)])
def test_a_line_of_attack_that_grazes_a_block_is_called_close(y0, crosses, close):
    """A camera places a block's edge to a millimetre or two: a line that crosses a block by less
    than GRAZE_MM, or passes that near beside one that would give cover, turns on what the
    camera cannot tell. The verdict stands on the edge as read and says so; a block beside the
    line gives nothing (it is in the reasons, not in the cover's blocks)."""
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0, height=40.0),
              blocks=[block(7, 140, y0, 160, y0 + 30, 19.2)])
    cover = line_cover(t, t.unit(1), t.unit(2), RED)
    v = attack(t, 1, 2)
    assert [b.id for b in cover.blocks] == ([7] if crosses else [])
    assert [b.id for b in cover.beside] == ([7] if close and not crosses else [])
    assert v.close_call is close and v.to_json()["close_call"] is close
    if crosses:
        assert cover.blocks[0].close_call is close and ("crosses only 1.0 mm into it" in cover.blocks[0].why) is close
        assert ("partial cover", 1) in [(m.name, m.value) for m in v.defence_modifiers]
    else:
        assert not any(m.name == "partial cover" for m in v.defence_modifiers)
        assert any("passes 1.0 mm beside the line of attack" in r and "partial cover" in r for r in v.reasons) is close


@pytest.mark.parametrize("height, kind", [(19.2, "partial"), (48.0, "full")])
def test_a_block_a_unit_hides_whole_is_a_close_call_that_names_the_unit(height, kind):
    """A block the camera knows only from the unit standing on it (its card hides it whole): its
    height is the unit's marker's, its extent a guess; the cover stands on the guess and says so."""
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0, height=40.0),
              blocks=[replace(block(7, 140, -30, 160, 30, height), hidden_under=5)])
    (cover,) = line_cover(t, t.unit(1), t.unit(2), RED).blocks
    assert cover.kind == kind and cover.close_call
    assert "hidden under unit 5" in cover.why and attack(t, 1, 2).close_call


def test_a_block_beside_the_line_that_would_give_nothing_is_no_close_call():
    """Beside the line, a block lower than the target's feet would give nothing if it crossed."""
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0, height=40.0, standing=19.2),
              blocks=[block(7, 140, 1.0, 160, 31.0, 9.6)])
    assert attack(t, 1, 2).close_call is False and not line_cover(t, t.unit(1), t.unit(2), RED).beside


def test_partial_block_within_a_finger_of_the_shooter_gives_nothing():
    # block edge at x = 25: the shooter's base edge is at 12.5, 12.5 mm away (< 20 mm finger)
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0), blocks=[block(5, 25, -30, 35, 30, 9.6)])
    v = attack(t, 1, 2)
    assert v.cover.partial == 0 and v.cover.blocks[0].kind == "none" and "within a finger" in v.cover.blocks[0].why


def test_a_block_the_target_stands_on_is_ground_not_cover():
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0, standing=19.2),
              blocks=[block(5, 280, -20, 320, 20, 19.2)])
    v = attack(t, 1, 2)
    assert v.cover.blocks == () and v.legal


def test_cover_unchanged_by_far_blocks():
    base = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0), blocks=[block(5, 100, -30, 110, 30, 9.6)])
    far = table(*base.units, blocks=[*base.blocks, block(9, 100, 200, 300, 260, 80)])
    assert line_cover(base, base.unit(1), base.unit(2), RED) == line_cover(far, far.unit(1), far.unit(2), RED)


def test_elevation_and_melee_height_limit():
    high = table(unit(1, "red", 0, 0, standing=19.2), unit(2, "blue", 50, 0, heading=180))
    v = attack(high, 1, 2)
    assert v.elevation and ("elevation", 1) in [(m.name, m.value) for m in v.attack_modifiers]
    too_high = table(unit(1, "red", 0, 0, height=30), unit(2, "blue", 50, 0, standing=38.4, heading=180))
    v = attack(too_high, 1, 2)
    assert not v.legal and any("too high for melee" in r for r in v.reasons)


def test_squad_bonuses_and_the_white_die():
    # red squad 1-2-3 (berserkers 30 mm apart centre to centre) attacks blue 4; all reach; defenders in blue squad
    units = [unit(1, "red", 0, 0), unit(2, "red", 0, 30), unit(3, "red", 0, -30),
             unit(4, "blue", 50, 0, heading=180, cls="defender"), unit(5, "blue", 80, 0, heading=180, cls="defender")]
    v = attack(table(*units), 1, 4)
    assert [(m.name, m.value) for m in v.attack_modifiers] == [("squad", 3)]
    # defence: squad of 2 -> +2; two defenders -> +2
    assert [(m.name, m.value) for m in v.defence_modifiers] == [("squad", 2), ("defenders", 2)]
    capped = attack(table(*units), 1, 4, warriors=2)
    assert capped.attack_modifiers[0].value == 2 and "white die" in capped.attack_modifiers[0].why


def test_faction_modifiers():
    # orc suicide in melee +2; humans one-on-one +1 defence; skeletons -1 in melee
    t = table(unit(1, "red", 0, 0, faction="orcs"), unit(2, "blue", 50, 0, heading=180, faction="humans"))
    v = attack(t, 1, 2, suicide=True)
    assert ("orc suicide attack", 2) in [(m.name, m.value) for m in v.attack_modifiers]
    assert any("dies" in c for c in v.consequences)
    assert ("humans one-on-one", 1) in [(m.name, m.value) for m in v.defence_modifiers]
    skel = table(unit(1, "red", 0, 0), unit(2, "blue", 50, 0, heading=180, faction="skeletons"))
    assert ("skeletons in melee", -1) in [(m.name, m.value) for m in attack(skel, 1, 2).defence_modifiers]
    with pytest.raises(InputError, match="only an orc"):
        attack(skel, 1, 2, suicide=True)


def test_shooter_modifiers_and_priest_needs_a_squad():
    # shooter 40 mm edge from a squad of two: +2 (group size) and -1 (2 fingers or closer)
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 65, 0, heading=180), unit(3, "blue", 95, 0, heading=180))
    assert [(m.name, m.value) for m in attack(t, 1, 2).attack_modifiers] == [("shooter vs group", 2), ("shooter too close", -1)]
    lone_priest = table(unit(1, "red", 0, 0, cls="priest"), unit(2, "blue", 300, 0, heading=180))
    v = attack(lone_priest, 1, 2)
    assert not v.legal and any("only from within a squad" in r for r in v.reasons)


def test_polearm_prestrike_against_a_charge():
    units = [unit(1, "red", 0, 0), unit(2, "blue", 50, 0, heading=180, cls="polearm"),
             unit(3, "blue", 80, 0, heading=180, cls="polearm")]
    v = attack(table(*units), 1, 2, charged=True)
    # two polearms, each kills on 5+: 1 - (4/6)^2 = 5/9
    assert v.extra["polearm_prestrike"]["fraction"] == "5/9"


def test_object_control_by_count_within_three_fingers():
    castle = TableObject(60, "castle", "castle", (500.0, 400.0), 50.0)
    # red 1 edge gap: 500-430 = 70 - 50 (radius) - 12.5 = 7.5 mm; red 2 at 590: 40 - 12.5 = 27.5; blue 3 far
    units = [unit(1, "red", 430, 400), unit(2, "red", 590, 400), unit(3, "blue", 500, 470), unit(4, "blue", 800, 400)]
    (c,) = control_all(table(*units, objects=[castle]))
    # blue 3: 70 - 50 - 12.5 = 7.5 mm (child's 3 fingers = 48 mm): red 2, blue 1
    assert c.counts == {"red": 2, "blue": 1} and c.controller == "red"
    (tie,) = control_all(table(*units[:1], units[2], objects=[castle]))
    assert tie.controller is None and "contested" in tie.why


def test_targets_view_lists_every_enemy_nearest_first():
    from companion.rules.knight.attack import targets

    t = table(unit(1, "red", 0, 0), unit(2, "blue", 300, 0), unit(3, "blue", 50, 0, heading=180), unit(4, "red", 0, 40))
    verdicts = list(targets(t, 1))
    assert [v.target for v in verdicts] == [3, 2] and [v.legal for v in verdicts] == [True, False]


def test_polearms_strike_first_against_a_descent_too():
    units = [unit(1, "red", 0, 0, standing=19.2), unit(2, "blue", 50, 0, heading=180, cls="polearm")]
    v = attack(table(*units), 1, 2, descent=True)
    assert v.extra["polearm_prestrike"]["fraction"] == "1/3" and "descent" in v.consequences[-1]


@given(st.floats(-200, 200), st.floats(30, 300), st.floats(20, 60), st.floats(5, 60), st.booleans())
def test_cover_is_unchanged_by_blocks_far_from_the_line(bx, far_y, size, height, above):
    """A block whose footprint stays more than 30 mm from the line of attack changes nothing."""
    base = table(unit(1, "red", -300, 0, cls="shooter"), unit(2, "blue", 300, 0), blocks=[block(5, -20, -20, 20, 20, 9.6)])
    y0 = far_y + 30 if above else -(far_y + 30) - size
    far = table(*base.units, blocks=[*base.blocks, block(9, bx, y0, bx + size, y0 + size, height)])
    assert line_cover(base, base.unit(1), base.unit(2), RED) == line_cover(far, far.unit(1), far.unit(2), RED)
    assert attack(base, 1, 2).to_json() == attack(far, 1, 2).to_json()


def test_a_verdict_before_the_camera_saw_the_blocks_says_its_cover_is_unknown():
    from dataclasses import replace

    t = table(unit(1, "red", 100, 100), unit(2, "blue", 200, 100))
    assert not any("not seen the blocks" in r for r in attack(t, 1, 2).reasons)
    v = attack(replace(t, blocks_seen=False), 1, 2)
    assert v.reasons[-1].startswith("the camera has not seen the blocks yet: cover and heights are judged")


@pytest.mark.parametrize("x, seen, close", [(1.0, True, True), (-1.0, False, True), (10.0, True, False),
                                            (-10.0, False, False)])
def test_a_target_on_the_edge_of_the_attackers_view_is_called_close(x, seen, close):
    """A camera reads a heading to half a degree and a place to a millimetre: a target 200 mm
    off, a millimetre either side of the attacker's side line, may be in view or not."""
    t = table(unit(1, "red", 0, 0, heading=0.0, cls="shooter"), unit(2, "blue", x, 200, heading=270.0))
    v = attack(t, 1, 2)
    assert v.in_view is seen and not v.back_attack
    assert v.close_call is close and bool(v.close_calls) is close
    assert any("edge of its field of view" in r for r in v.reasons) is close
    assert v.to_json()["close_calls"] == list(v.close_calls)


@pytest.mark.parametrize("y, back, close", [(1.0, False, True), (-1.0, True, True), (20.0, False, False),
                                            (-20.0, True, False)])
def test_an_attacker_on_the_edge_of_the_targets_view_is_called_close_for_a_back_attack(y, back, close):
    t = table(unit(1, "red", 0, y, heading=0.0, cls="shooter"), unit(2, "blue", 200, 0, heading=90.0))
    v = attack(t, 1, 2)
    assert v.back_attack is back and v.in_view
    assert v.close_call is close
    assert any("a back attack or not" in r for r in v.close_calls) is close


_THRESHOLD_HOLDS = {"in range or not": lambda v: v.in_range,
                    "2 fingers": lambda v: any(m.name == "shooter too close" for m in v.attack_modifiers)}


@pytest.mark.parametrize("edge_mm, phrase, holds, close", [
    (375.0, "in range or not", True, True), (377.0, "in range or not", False, True),
    (370.0, "in range or not", True, False), (382.0, "in range or not", False, False),
    (39.0, "2 fingers", True, True), (41.0, "2 fingers", False, True), (30.0, "2 fingers", True, False),
    (50.0, "2 fingers", False, False)])
def test_a_distance_on_a_rules_threshold_is_called_close(edge_mm, phrase, holds, close):
    """A shooter reaches 2 hands (356 mm) and the finger of grace (20 mm): 376 mm edge to edge; its
    penalty starts at 2 fingers (40 mm). A millimetre either side is a close call, five are not."""
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", edge_mm + 25.0, 0, heading=180.0))
    v = attack(t, 1, 2)
    assert _THRESHOLD_HOLDS[phrase](v) is holds
    assert v.close_call is close and any(phrase in r for r in v.close_calls) is close


@pytest.mark.parametrize("gap_mm, kind, close", [(19.0, "none", True), (21.0, "partial", True), (15.0, "none", False),
                                                 (25.0, "partial", False)])
def test_a_block_a_finger_from_the_shooter_is_called_close(gap_mm, kind, close):
    """A block within a finger of the shooter gives the target nothing: a block whose edge is
    within a millimetre or two of that finger may give partial cover or nothing."""
    x0 = 12.5 + gap_mm  # the shooter's base is 12.5 mm round its centre
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0, heading=180.0),
              blocks=[block(7, x0, -30, x0 + 16, 30, 19.2)])
    (cover,) = line_cover(t, t.unit(1), t.unit(2), RED).blocks
    assert cover.kind == kind and cover.close_call is close
    assert ("a finger is 20 mm" in cover.why) is close
    assert attack(t, 1, 2).close_call is close


@pytest.mark.parametrize("attacker_mm, target_mm, above, close", [
    (20.0, 18.0, True, True), (18.0, 18.5, False, True), (25.0, 18.0, True, False), (0.0, 0.0, False, False),
    (3.2, 0.0, True, True), (28.8, 0.0, True, False)])
def test_attacking_from_above_within_a_plate_of_the_margin_is_called_close(attacker_mm, target_mm, above, close):
    """A level above the table is a marker's height less a ruler's: two units on blocks of one
    height read a millimetre or two apart, and either may seem the higher by the 1 mm margin."""
    t = table(unit(1, "red", 0, 0, cls="shooter", standing=attacker_mm), unit(2, "blue", 200, 0, heading=180.0,
                                                                               standing=target_mm))
    v = attack(t, 1, 2)
    assert v.elevation is above
    assert v.close_call is close and any("from above" in r for r in v.close_calls) is close


@pytest.mark.parametrize("target_mm, legal, close", [(41.0, False, True), (39.0, True, True), (50.0, False, False),
                                                     (30.0, True, False)])
def test_a_target_a_plate_from_a_melee_attackers_reach_is_called_close(target_mm, legal, close):
    # a berserker 40 mm tall on the table reaches 40 mm up; range 2 fingers (40 mm): 30 mm apart
    t = table(unit(1, "red", 0, 0), unit(2, "blue", 55, 0, heading=180.0, standing=target_mm))
    v = attack(t, 1, 2)
    assert v.legal is legal
    assert any("a melee attack or none" in r for r in v.close_calls) is close


@pytest.mark.parametrize("standing, height, kind, close", [
    (19.2, 21.2, "partial", True), (19.2, 17.2, "none", True), (19.2, 29.2, "partial", False),
    (19.2, 9.2, "none", False), (0.0, 3.2, "partial", False)])
def test_a_block_within_a_plate_of_a_standing_targets_feet_is_called_close(standing, height, kind, close):
    """A target on a block stands at its marker's height less a ruler's: a block on the line whose
    top is a plate or less from the target's feet gives partial cover or none on that plate. A
    target on the table stands at 0, and a plate on the line covers it."""
    t = table(unit(1, "red", 0, 0, cls="shooter"), unit(2, "blue", 300, 0, heading=180.0, standing=standing),
              blocks=[block(7, 140, -30, 160, 30, height)])
    (cover,) = line_cover(t, t.unit(1), t.unit(2), RED).blocks
    assert cover.kind == kind and cover.close_call is close
    assert ("from the feet of the target" in cover.why) is close
