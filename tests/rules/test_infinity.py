import json
import subprocess
import sys
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings, strategies as st

from companion.rules.infinity import CIRCULAR_TEMPLATE_MM, face_to_face, line_of_fire, template_attack
from tests.rules.knight_table import block, table, unit


def brute_force(sv_a, burst_a, sv_b, burst_b):
    """Die by die, the rules as written: the highest success wins, criticals beat the rest, both cancel."""
    def roll(r, sv):
        if sv > 20:
            return min(r + sv - 20, 20), r + sv - 20 >= 20
        return (r, r == sv) if r <= sv else None

    a = b = n = 0
    for dice in product(range(1, 21), repeat=burst_a + burst_b):
        sa = [x for x in (roll(r, sv_a) for r in dice[:burst_a]) if x]
        sb = [x for x in (roll(r, sv_b) for r in dice[burst_a:]) if x]
        ca, cb = any(c for _, c in sa), any(c for _, c in sb)
        ma, mb = max((v for v, _ in sa), default=0), max((v for v, _ in sb), default=0)
        if ca and cb:
            n += 1
        elif ca or (not cb and ma > mb):
            a += 1
        elif cb or mb > ma:
            b += 1
        else:
            n += 1
    total = 20 ** (burst_a + burst_b)
    return Fraction(a, total), Fraction(b, total), Fraction(n, total)


def test_reference_values():
    # success value 13 burst 3 against 12 burst 1: 0.7550 / 0.1864 / 0.0586
    r = face_to_face(13, 3, 12, 1)
    assert (round(float(r.a_wins), 4), round(float(r.b_wins), 4), round(float(r.none), 4)) == (0.7550, 0.1864, 0.0586)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 24), st.integers(1, 2), st.integers(1, 24), st.integers(1, 2))
def test_face_to_face_matches_brute_force(sv_a, burst_a, sv_b, burst_b):
    r = face_to_face(sv_a, burst_a, sv_b, burst_b)
    assert (r.a_wins, r.b_wins, r.none) == brute_force(sv_a, burst_a, sv_b, burst_b)
    assert r.a_wins + r.b_wins + r.none == 1


def test_six_dice_a_side_are_exact_and_fair_between_equals():
    # Rolled out die by die: the roll-by-roll enumeration took 20**12 steps here (a phone asking
    # for 6 against 6 held a server thread for hours). Equal sides win equally often, exactly.
    r = face_to_face(14, 6, 14, 6)
    assert r.a_wins == r.b_wins and r.a_critical == r.b_critical and r.a_wins + r.b_wins + r.none == 1
    assert 0 < r.none < 1 and r.a_expected_hits > r.a_wins  # a winning burst of six lands more than one hit on average


def test_normal_roll_and_criticals():
    # unopposed SV 13: succeeds on 1-13 (13/20), critical on exactly 13 (1/20)
    r = face_to_face(13, 1, 0, 0)
    assert (r.a_wins, r.a_critical) == (Fraction(13, 20), Fraction(1, 20))
    # SV 23: +3 on every die, 17-20 become criticals: 4/20
    assert face_to_face(23, 1, 0, 0).a_critical == Fraction(4, 20)


def fusiliers():
    """The seed's example: an Unidron (red) fires a plasma carbine template at Fusiliers 1 and 2 (blue)."""
    return table(unit(1, "red", 100, 400, heading=0, height=30),  # the attacking Unidron
                 unit(11, "blue", 500, 380, heading=180), unit(12, "blue", 500, 520, heading=180),
                 unit(13, "blue", 540, 545, heading=270),  # Fusilier 3, facing away: no line of fire back
                 unit(2, "red", 520, 360, height=10))  # the unconscious allied Unidron by Fusilier 1


def test_seed_example_attack_on_fusilier_1_is_cancelled_by_the_allied_unidron():
    t = fusiliers()
    on_1 = template_attack(t, 1, 11)
    assert on_1.cancelled_by == (2,) and on_1.odds == {} and on_1.expected_hits == 0
    on_2 = template_attack(t, 1, 12, sv=13, reactions={12: {"sv": 12, "burst": 1}})
    assert set(on_2.affected) == {12, 13} and on_2.cancelled_by == ()
    assert on_2.odds[12]["reaction"] == "shoots back at SV 12"
    assert "PH-3" in on_2.odds[13]["reaction"] and "dodge at PH 7" in on_2.odds[13]["reaction"]
    assert on_2.odds[12]["a_wins"] == pytest.approx(float(face_to_face(13, 1, 12, 1).a_wins))
    assert on_2.expected_hits == pytest.approx(on_2.odds[12]["a_wins"] + on_2.odds[13]["a_wins"])


def test_template_edges_touching_counts():
    r = CIRCULAR_TEMPLATE_MM / 2
    t = table(unit(1, "red", 0, 0), unit(2, "blue", 300, 0), unit(3, "blue", 300 + r + 12.5, 0),
              unit(4, "blue", 300 + r + 12.6, 0))
    assert template_attack(t, 1, 2).affected == (2, 3)  # 3 just touches the circle; 4 does not


def test_line_of_fire_names_what_blocks_it():
    t = table(unit(1, "red", 0, 0), unit(2, "blue", 300, 0), blocks=[block(7, 140, -60, 160, 60, 80)])
    ok, why = line_of_fire(t, t.unit(1), t.unit(2))
    assert not ok and "block 7" in why
    low = table(*t.units, blocks=[block(7, 140, -60, 160, 60, 9.6)])
    assert line_of_fire(low, low.unit(1), low.unit(2))[0]
    attack = template_attack(t, 1, 2)
    assert not attack.line_of_fire and attack.odds == {}


def test_smoke_on_a_point_and_the_commands(tmp_path):
    t = fusiliers()
    smoke = template_attack(t, 1, None, point_mm=(500.0, 410.0))  # 30 mm from Fusilier 1's centre
    assert smoke.target is None and smoke.affected == (11,) and smoke.line_of_fire
    out = subprocess.run([sys.executable, "-m", "companion.cli", "infinity", "f2f", "--sv-a", "13", "--burst-a", "3",
                          "--sv-b", "12", "--burst-b", "1", "--json"], capture_output=True, text=True, timeout=60)
    data = json.loads(out.stdout)
    assert round(data["a_wins"], 4) == 0.755 and round(data["none"], 4) == 0.0586
