"""F0R60D: board squares, exact odds against brute force, attack modifiers, army lists, setup errors,
and the commands exactly as shared/rules/forgod.md writes them."""

import json
import subprocess
import sys
import tomllib
from fractions import Fraction
from itertools import product

import pytest

from companion.errors import SetupError
from companion.rules.forgod.army import check_army
from companion.rules.forgod.attack import attack
from companion.rules.forgod.board import Board
from companion.rules.forgod.odds import attack_odds, check_odds
from companion.rules.forgod.squares import place
from companion.rules.table import Table
from companion.setup_file import parse_setup, setup_to_toml
from companion.state import TableState

BASE = """
[table]
width_mm = 800
depth_mm = 700
[[anchors]]
id = 0
x_mm = 40
y_mm = 40
[ruleset]
name = "forgod"
[forgod]
mode = "guerrilla"
level = "basic"
[[players]]
name = "ana"
[[players]]
name = "bo"
"""
# Board defaults: squares 70 x 95 from (100, 60), 7 columns, 3 rows a side: ana rows 0-2, bo rows 3-5.


def card(cid, player, **keys):
    body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items())
    return f'[[minis]]\nid = {cid}\nname = "c{cid}"\nplayer = "{player}"\n{body}'


def setup_of(*cards, extra=""):
    return parse_setup(tomllib.loads(BASE + extra + "".join(cards)), "forgod.toml")


def centre(col, row, dx=35.0, dy=47.5):
    return 100 + 70 * col + dx, 60 + 95 * row + dy


def state_of(**where):
    minis = [{"id": int(k[1:]), "x_mm": x, "y_mm": y, "z_mm": 0.0, "heading_deg": 90.0} for k, (x, y) in where.items()]
    return TableState(registered=True, minis=tuple(TableState.from_json({"minis": minis}).minis))


def placed(setup, **where):
    return place(setup.rules, Table.from_state(state_of(**where), setup))


# --- the board -------------------------------------------------------------------------------------

def test_squares_lines_and_edges():
    b = Board()
    assert b.square_at(*centre(0, 0)) == (0, 0) and b.square_at(*centre(6, 5)) == (6, 5)
    assert b.square_at(170.0, 155.0) == (1, 1)  # exactly on both lines: the higher index
    assert b.square_at(170.0 - 2, 155.0 - 2) == (0, 0) and b.square_at(170.0 + 2, 155.0 + 2) == (1, 1)  # 2 mm either side
    assert b.square_at(99.9, 100) is None and b.square_at(590.0, 100) is None and b.square_at(200, 630.0) is None
    assert [b.line_of(r) for r in range(6)] == ["rearguard", "normal", "advanced", "advanced", "normal", "rearguard"]
    assert [b.side_of(r) for r in range(6)] == [0, 0, 0, 1, 1, 1]
    assert Board(rows_per_side=1).line_of(0) == Board(rows_per_side=1).line_of(1) == "normal"
    assert [Board(rows_per_side=2).line_of(r) for r in range(4)] == ["rearguard", "advanced", "advanced", "rearguard"]
    # a decimal square size: a centre computed onto a line still goes to the higher square
    odd = Board(square_w_mm=63.5, origin_x_mm=12.7)
    assert all(odd.square_at(12.7 + 63.5 * k, 100)[0] == k for k in range(7))


def test_cells_side_line_and_enemy_field():
    s = setup_of(card(1, "ana"), card(2, "bo"), card(3, "ana"), card(4, "bo"))
    p = placed(s, m1=centre(2, 0), m2=centre(3, 2), m3=(50.0, 50.0), m4=centre(1, 4), m9=centre(0, 0))
    assert p[1].to_json() == {"col": 2, "row": 0, "side": "ana", "line": "rearguard", "in_enemy_field": False}
    assert p[2].to_json() == {"col": 3, "row": 2, "side": "ana", "line": "advanced", "in_enemy_field": True}
    assert p[4].to_json() == {"col": 1, "row": 4, "side": "bo", "line": "normal", "in_enemy_field": False}
    assert p[3].square is None and 9 not in p  # off the board; not a roster card


# --- exact odds against brute force -------------------------------------------------------------

def brute_attack(A, E, D, X, Y, M, H):
    """The contract's sentences, one die triple at a time."""
    out = {"evaded": Fraction(0), "hit": Fraction(0), "critical": Fraction(0), "kill": Fraction(0)}
    damage = {}
    for a, e, d in product(range(1, 11), repeat=3):
        p = Fraction(1, 1000)
        evaded = e == 10 or (a != 10 and e + E >= a + A)
        if evaded:
            n = 0
            out["evaded"] += p
        else:
            crit = a == 10
            out["hit"] += p
            out["critical"] += p if crit else 0
            n = max(0, (d + D) * M * (2 if crit else 1) - X - Y)
        damage[n] = damage.get(n, 0) + p
        if H is not None and n >= H:
            out["kill"] += p
    return out, damage


@pytest.mark.parametrize("A,E,D,X,Y,M,H", [
    (0, 0, 0, 0, 0, 1, None), (3, 1, 2, 0, 0, 1, 5), (-4, 6, 1, 2, 1, 2, 4), (12, 0, 0, 0, 0, 3, 30),
    (0, 12, 5, 0, 0, 1, 1), (2, 2, -3, 1, 1, 1, 2), (9, -9, 4, 10, 10, 2, 1)])
def test_attack_odds_match_brute_force(A, E, D, X, Y, M, H):
    odds = attack_odds(A, E, D, X, Y, M, H)
    want, damage = brute_attack(A, E, D, X, Y, M, H)
    assert (odds.evaded, odds.hit, odds.critical) == (want["evaded"], want["hit"], want["critical"])
    assert odds.kill == (None if H is None else want["kill"])
    assert odds.damage == {n: p for n, p in damage.items() if p > 0} and sum(odds.damage.values()) == 1
    j = odds.to_json()
    assert j["fractions"]["evaded"] == f"{want['evaded'].numerator}/{want['evaded'].denominator}"


def test_odds_by_hand():
    # equal bonuses: evasion wins ties, so the attacker hits only rolling higher (45 of 90 non-10 pairs) or a 10
    o = attack_odds(0, 0)
    assert o.evaded == Fraction(55, 100) and o.critical == Fraction(9, 100) and o.hit == Fraction(45, 100)
    assert attack_odds(0, 100).hit == Fraction(9, 100)  # only an unanswered natural 10 gets through
    assert attack_odds(100, 0).evaded == Fraction(1, 10)  # a natural-10 evasion always evades
    assert attack_odds(0, 0, hp=None).to_json()["kill"] is None
    assert attack_odds(100, 0, damage=-20).damage == {0: 1}  # every hit absorbed to 0
    assert attack_odds(100, 0, damage=-20).to_json()["fractions"]["hit"] == "9/10"


def test_check_odds_brute_force():
    for A, B in [(0, 0), (3, 1), (-2, 5), (15, 0), (0, 15)]:
        wins = sum(Fraction(1, 100) for a, d in product(range(1, 11), repeat=2)
                   if (a == 10 and d != 10) or (a != 10 and d != 10 and a + A > d + B))
        r = check_odds(A, B)
        assert r.attacker_wins == wins and r.defender_wins == 1 - wins
    # equal bonuses: the 36 higher non-10 pairs and the 9 unanswered attacker 10s; ties to the defender
    assert check_odds(0, 0).attacker_wins == Fraction(36 + 9, 100)
    assert check_odds(100, 0).attacker_wins == Fraction(9, 10)  # loses only to the defender's 10 (and 10-10)
    assert check_odds(0, 100).attacker_wins == Fraction(9, 100)


# --- attack verdicts --------------------------------------------------------------------------------

def totals(v):
    j = v.to_json()
    return j["attack_bonus"], j["evasion_bonus"], j["damage_bonus"], j["multiplier"], j["absorption"], j["constant_absorption"]


def test_modifiers_lines_detachment_and_armour():
    s = setup_of(card(1, "ana", cards=3, attack=2, damage=1), card(2, "bo", evasion=3, armour=True, absorption=1,
                                                                   constant_absorption=2, hp=4))
    # ana's advanced (row 2) against bo's advanced (row 3), face to face
    v = attack(s.rules, placed(s, m1=centre(3, 2), m2=centre(3, 3)), 1, 2)
    assert v.legal and v.in_area
    assert totals(v) == (2 * 3 + 4, 3 - 2, 1 * 3, 1, 1 + 2, 2 + 2)
    assert {m.name for m in v.modifiers} >= {"card attack", "advanced line", "armour"}
    assert v.odds == attack_odds(10, 1, 3, 3, 4, 1, 4)
    # from the rearguard the attacker loses 2 attack and damage; a rearguard target gains 4 evasion
    v = attack(s.rules, placed(s, m1=centre(3, 0), m2=centre(3, 5)), 1, 2)
    assert totals(v)[:3] == (6 - 2, 3 + 4, 3 - 2) and not v.legal and not v.in_area
    assert any("outside the attack area" in r for r in v.reasons)
    # no armour: no absorption at all, not even the line's
    s2 = setup_of(card(1, "ana"), card(2, "bo", absorption=3, constant_absorption=3))
    assert totals(attack(s2.rules, placed(s2, m1=centre(3, 2), m2=centre(3, 3)), 1, 2))[4:] == (0, 0)


def test_enemy_field_counts_as_advanced_and_powers_have_no_lines():
    s = setup_of(card(1, "ana"), card(2, "bo"), card(3, "ana", type="power"))
    v = attack(s.rules, placed(s, m1=centre(3, 4), m2=centre(3, 5)), 1, 2)  # deep in bo's field, bo on its rearguard
    assert totals(v)[:2] == (4, 4) and any("enemy field" in m.why for m in v.modifiers)
    v = attack(s.rules, placed(s, m3=centre(0, 0), m2=centre(6, 5)), 3, 2)  # a power strikes anywhere, no line
    assert v.legal and v.in_area and totals(v)[0] == 0


def test_charge_flank_far_and_terrain():
    s = setup_of(card(1, "ana", type="archery"), card(2, "bo", terrain="air"), card(3, "ana"), card(4, "bo"),
                 card(5, "ana", type="cavalry"))
    p = placed(s, m1=centre(3, 1), m2=centre(3, 3), m3=centre(0, 2), m4=centre(0, 3), m5=centre(6, 1))
    v = attack(s.rules, p, 1, 2)  # earth archer against air: -2, legal (ranged)
    assert v.legal and totals(v)[0] == 0 - 2 and any(m.name == "ranged against air" for m in v.modifiers)
    v = attack(s.rules, p, 3, 2)  # earth melee infantry against air: not legal, whatever the area
    assert not v.legal and any("in the air" in r for r in v.reasons)
    v = attack(s.rules, p, 3, 4, charge=True)
    assert v.legal and totals(v)[0] == 4 + 4 and v.multiplier == 2
    v = attack(s.rules, p, 3, 4, flank=True)
    assert totals(v)[:4] == (8, -2, 4, 1)  # bo's advanced line: -2 evasion
    v = attack(s.rules, p, 3, 4, charge=True, flank=True)
    assert totals(v)[:4] == (4 + 8, -2, 4, 3)
    v = attack(s.rules, p, 1, 4, charge=True)  # an archer is ranged only
    assert not v.legal and any("cannot charge" in r for r in v.reasons)
    v = attack(s.rules, p, 3, 4, far=True)  # only archery has a far zone
    assert not v.legal and any("far zone" in r for r in v.reasons) and totals(v)[0] == 4 - 6
    v = attack(s.rules, p, 3, 2)
    assert not v.legal
    # archery's far zone: 4 rows ahead is far, not normal
    p = placed(s, m1=centre(3, 0), m4=centre(3, 4))
    assert not attack(s.rules, p, 1, 4).in_area and attack(s.rules, p, 1, 4, far=True).in_area
    # a charge reaches twice the tactical move: infantry 1 square, so 2 rows and then strikes one further
    p = placed(s, m3=centre(3, 1), m4=centre(3, 4))
    assert not attack(s.rules, p, 3, 4).in_area and attack(s.rules, p, 3, 4, charge=True).in_area


def test_same_player_and_off_board_are_not_legal():
    s = setup_of(card(1, "ana"), card(2, "ana"), card(3, "bo"))
    v = attack(s.rules, placed(s, m1=centre(3, 2), m2=centre(3, 1)), 1, 2)
    assert not v.legal and any("both ana's" in r for r in v.reasons)
    v = attack(s.rules, placed(s, m1=centre(3, 2), m3=(700.0, 300.0)), 1, 3)
    assert not v.legal and not v.in_area and any("off the board" in r for r in v.reasons)


def test_patterns_are_data_the_setup_overrides():
    extra = '[forgod.areas.infantry]\nattack = [[0, 1], [0, 2]]\n'
    s = setup_of(card(1, "ana"), card(2, "bo"), extra=extra)
    p = placed(s, m1=centre(3, 1), m2=centre(3, 3))
    assert attack(s.rules, p, 1, 2).in_area  # two rows ahead: only with the override
    plain = setup_of(card(1, "ana"), card(2, "bo"))
    assert not attack(plain.rules, placed(plain, m1=centre(3, 1), m2=centre(3, 3)), 1, 2).in_area
    # the second player's pattern is turned round: "ahead" is towards row 0
    p = placed(s, m1=centre(3, 1), m2=centre(3, 3))
    assert attack(s.rules, p, 2, 1).in_area


# --- army lists -------------------------------------------------------------------------------------

def test_a_valid_guerrilla_army():
    s = setup_of(card(1, "ana", commander=True, pc=200), card(2, "ana", cards=2, pc=100), card(3, "ana", type="beast", pc=900),
                 card(4, "bo", commander=True, type="cavalry", pc=300))
    r = check_army(s.rules)
    assert r.valid and r.pc_total == {"ana": 400, "bo": 300} and r.units == {"ana": 2, "bo": 1} and r.pc_limit == 500


def test_every_army_problem_at_once_naming_the_player():
    s = setup_of(card(1, "ana", commander=True, cards=2, pc=200), card(2, "ana", cards=10, pc=10),
                 card(3, "ana", type="level7", level=7, cards=2), card(4, "ana"),
                 card(5, "bo", type="war_machine", commander=True), card(6, "bo", commander=True),
                 card(7, "bo", level=5, cards=4))
    r = check_army(s.rules)
    text = "\n".join(r.problems)
    assert not r.valid
    assert "ana: 4 units, guerrilla allows 3" in text
    assert "ana: 500 PC" not in text and r.pc_total["ana"] == 400 + 100  # 200 x 2 + 10 x 10
    assert "card 2 (c2, minis[1]) has 10 cards of level 1" in text and "at most 9" in text
    assert "card 3 (c3, minis[2]) is level7 with 2 cards" in text
    assert "commander card 1 (c1, minis[0]) is a detachment" in text
    assert "bo: 2 commanders (5, 6)" in text and "commander card 5 (c5, minis[4]) is war_machine" in text
    assert "card 7 (c7, minis[6]) has 4 cards of level 5" in text
    assert all(p.startswith(("ana:", "bo:")) for p in r.problems)
    s = setup_of(card(1, "ana", pc=501, commander=True), card(2, "bo"))
    assert any("ana: 501 PC, over the guerrilla basic limit of 500" == p for p in check_army(s.rules).problems)
    assert any(p == "bo: no commander (one card with commander = true)" for p in check_army(s.rules).problems)


@pytest.mark.parametrize("mode,level,limit,units", [("skirmish", "intermediate", 1500, 5), ("campaign", "advanced", 2500, 9)])
def test_mode_limits(mode, level, limit, units):
    s = parse_setup(tomllib.loads(BASE.replace('"guerrilla"', f'"{mode}"').replace('"basic"', f'"{level}"')
                                  + "".join(card(i, "ana", commander=i == 1) for i in range(1, units + 2))), "f.toml")
    r = check_army(s.rules)
    assert r.pc_limit == limit and r.problems == (f"ana: {units + 1} units, {mode} allows {units}", "bo: no commander (one card with commander = true)")


# --- the setup --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,key", [
    (card(1, "ana", type="wizard"), "minis[0].type: unknown type 'wizard'"),
    (card(1, "ana", cards=0), "minis[0].cards: must be 1 or more"),
    (card(1, "ana", terrain="sea"), "minis[0].terrain: unknown terrain"),
    (card(1, "ana", armour="yes"), "minis[0].armour: must be true or false"),
    (card(1, "ana", attack=1.5), "minis[0].attack: must be a whole number"),
    ('[[players]]\nname = "cy"\n', "players: F0R60D is played by exactly two [[players]], the setup has 3"),
])
def test_bad_forgod_setups_name_the_key(text, key):
    with pytest.raises(SetupError) as err:
        parse_setup(tomllib.loads(BASE + text), "forgod.toml")
    assert str(err.value).startswith("forgod.toml: ") and key in str(err.value)


@pytest.mark.parametrize("line,key", [
    ("square_w_mm = 0", "forgod.square_w_mm: must be positive"), ("rows_per_side = 0", "forgod.rows_per_side"),
    ('mode = "siege"', "forgod.mode: unknown mode 'siege'"), ("colums = 7", "forgod.colums: unknown key"),
    ('areas = {infantry = {attack = [[0]]}}', "forgod.areas.infantry.attack: must be a list of [columns, rows] pairs"),
    ('areas = {dragon = {attack = [[0, 1]]}}', "forgod.areas.dragon: unknown unit type")])
def test_bad_board_keys(line, key):
    key_name = line.split(" =")[0]
    text = "\n".join(row for row in BASE.splitlines() if not row.startswith(key_name + " ="))
    text = text.replace('[forgod]', f'[forgod]\n{line}')
    with pytest.raises(SetupError, match=r"forgod\.toml: .*" + key.replace("[", r"\[").replace("(", r"\(")):
        parse_setup(tomllib.loads(text), "forgod.toml")


def test_forgod_keys_belong_to_forgod_only():
    with pytest.raises(SetupError, match=r"minis\[0\]\.type: unknown key"):
        parse_setup(tomllib.loads(BASE.replace('name = "forgod"', 'name = "knight"') + card(1, "ana", type="cavalry")), "k.toml")


def test_round_trip_keeps_the_cards_and_the_board():
    s = setup_of(card(1, "ana", type="archery", cards=3, armour=True), extra="[forgod.areas.archery]\nfar = [[0, 4]]\n")
    again = parse_setup(tomllib.loads(setup_to_toml(s)), s.path)
    assert again == s and again.rules.card(1).cards == 3 and again.rules.areas["archery"].far == {(0, 4)}


# --- the commands, exactly as the contract writes them ------------------------------------------

def run(*args, ok=True):
    proc = subprocess.run([sys.executable, "-m", "companion.cli", "forgod", *args], capture_output=True, text=True)
    if ok:
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)
    return proc


@pytest.fixture
def files(tmp_path):
    setup = tmp_path / "setup.toml"
    setup.write_text(BASE + card(1, "ana", cards=2, attack=1, damage=2, commander=True) + card(2, "bo", hp=3, commander=True)
                     + card(3, "bo"), encoding="utf-8")
    state = tmp_path / "state.json"
    minis = [{"id": i, "x_mm": x, "y_mm": y, "z_mm": 0.0, "heading_deg": 90.0}
             for i, (x, y) in ((1, centre(2, 2)), (2, centre(2, 3)), (3, (20.0, 20.0)))]
    state.write_text(json.dumps({"registered": True, "minis": minis}), encoding="utf-8")
    return str(setup), str(state)


def test_commands_json(files):
    setup, state = files
    assert run("cells", "--setup", setup, "--state", state, "--json") == {
        "cells": {"1": {"col": 2, "row": 2, "side": "ana", "line": "advanced", "in_enemy_field": False},
                  "2": {"col": 2, "row": 3, "side": "bo", "line": "advanced", "in_enemy_field": False}},
        "off_board": [3]}
    odds = run("odds", "--attack", "2", "--evasion", "1", "--damage", "1", "--hp", "4", "--json")
    assert set(odds) == {"evaded", "hit", "critical", "kill", "damage", "fractions"}
    assert odds["fractions"]["hit"] == "27/50" and odds["fractions"]["critical"] == "9/100"
    assert abs(sum(odds["damage"].values()) - 1) < 1e-12
    assert run("odds", "--attack", "0", "--evasion", "0", "--json")["kill"] is None
    assert run("check", "--bonus-a", "0", "--bonus-d", "0", "--json") == {
        "attacker_wins": 0.45, "defender_wins": 0.55, "fractions": {"attacker_wins": "9/20", "defender_wins": "11/20"}}
    v = run("attack", "--setup", setup, "--state", state, "--attacker", "1", "--target", "2", "--charge", "--json")
    assert {"legal", "reasons", "in_area", "attack_bonus", "evasion_bonus", "damage_bonus", "multiplier", "absorption",
            "constant_absorption", "modifiers", "odds"} <= set(v)
    assert v["legal"] and (v["attack_bonus"], v["evasion_bonus"], v["damage_bonus"], v["multiplier"]) == (2 + 4 + 4, -2, 4, 2)
    assert all(set(m) == {"name", "value", "applies_to", "why"} for m in v["modifiers"])
    assert v["odds"] == run("odds", "--attack", "10", "--evasion", "-2", "--damage", "4", "--multiplier", "2", "--hp", "3", "--json")
    army = run("army", "--setup", setup, "--json")
    assert army == {"valid": False,
                    "problems": ["ana: commander card 1 (c1, minis[0]) is a detachment of 2 cards: a detachment cannot command"],
                    "pc_total": {"ana": 0, "bo": 0}, "pc_limit": 500, "units": {"ana": 1, "bo": 2}}


def test_commands_bad_input(files, tmp_path):
    setup, state = files
    p = run("attack", "--setup", setup, "--state", state, "--attacker", "1", "--target", "9", "--json", ok=False)
    assert p.returncode == 3 and p.stderr.count("\n") == 1 and "target: no card 9" in p.stderr
    p = run("odds", "--attack", "1", "--evasion", "0", "--hp", "0", ok=False)
    assert p.returncode == 3 and "--hp" in p.stderr
    bad = tmp_path / "bad.toml"
    bad.write_text(BASE.replace('level = "basic"', 'level = "basic"\nsquare_d_mm = 0') + '[[players]]\nname = "cy"\n')
    p = run("army", "--setup", str(bad), ok=False)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "forgod.square_d_mm" in p.stderr and "players:" in p.stderr
    knight = tmp_path / "knight.toml"
    knight.write_text(BASE.replace('name = "forgod"', 'name = "knight"').split("[forgod]")[0])
    p = run("army", "--setup", str(knight), ok=False)
    assert p.returncode == 2 and "ruleset.name" in p.stderr


def test_a_card_without_a_player_is_an_army_problem_not_a_setup_error():
    s = parse_setup(tomllib.loads(BASE + '[[minis]]\nid = 1\nname = "x"\n' + card(2, "ana", commander=True)
                                  + card(3, "bo", commander=True)), "f.toml")
    assert check_army(s.rules).problems == ("card 1 (x, minis[0]) has no player (one of ana, bo)",)
