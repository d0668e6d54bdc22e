"""The turn ledger (`knight ledger`), entry by entry, as shared/rules/knight.md writes it."""

import json
import subprocess
import sys

import pytest

from companion.rules.knight.ledger import angle_between_deg, ledger, move_ap
from tests.rules.knight_table import RED, block, table, unit
from tests.rules.test_knight_cli import SETUP  # units 4 and 5 red, 6 blue (a child's hand)

HAND, FINGER = RED.hand_mm, RED.finger_mm  # 178, 20


def walk(uid, dx, dy=0.0, heading=None, x=300.0, y=300.0, player="red"):
    """A unit before and after moving by (dx, dy), facing `heading` at the end (default: the way it went)."""
    import math
    h = math.degrees(math.atan2(dy, dx)) % 360 if heading is None else heading
    return unit(uid, player, x, y, heading=h), unit(uid, player, x + dx, y + dy, heading=h)


def test_move_ap_with_the_finger_of_grace():
    assert move_ap(HAND + 0.8 * FINGER, RED) == 1 and move_ap(HAND + FINGER, RED) == 1
    assert move_ap(HAND + 2 * FINGER, RED) == 2 and move_ap(25.0, RED) == 1 and move_ap(2 * HAND + FINGER, RED) == 2
    assert angle_between_deg(350, 10) == 20 and angle_between_deg(0, 180) == 180 and angle_between_deg(90, 300) == 150


def test_a_walk_of_one_hand_two_fingers_costs_two_ap():
    a0, a1 = walk(1, HAND + 2 * FINGER)
    led = ledger(table(a0), table(a1), "red").to_json()
    (move,) = led["moves"]
    assert move["units"] == [1] and move["ap"] == 2 and (move["hands"], move["fingers"]) == (1, 2)
    assert move["distance_mm"] == pytest.approx(218.0, abs=0.01) and "1 hand 2 fingers" in move["why"]
    assert led["turns"] == [] and led["ap_spent"] == 2 and led["warnings"] == [] and led["player"] == "red"


def test_under_a_finger_is_no_move_and_grace_keeps_one_ap():
    a0, a1 = walk(1, 0.9 * FINGER)
    assert ledger(table(a0), table(a1), "red").moves == ()
    a0, a1 = walk(1, HAND + 0.8 * FINGER, 0.0)
    assert [m.ap for m in ledger(table(a0), table(a1), "red").moves] == [1]


def test_a_squad_that_moved_together_is_charged_once_by_its_longest():
    # two red units 30 mm edge to edge (a squad), moved by the same vector give or take 15 mm
    a0, a1 = walk(1, 200.0, 0.0)
    b0, b1 = walk(2, 212.0, 8.0, heading=0.0, y=355.0)
    led = ledger(table(a0, b0), table(a1, b1), "red")
    (move,) = led.moves
    assert move.units == (1, 2) and move.distance_mm == pytest.approx((212.0 ** 2 + 64) ** 0.5) and move.ap == 2
    assert led.ap_spent == 2 and led.turns == ()
    # the same two, one going elsewhere: two entries
    c0, c1 = walk(2, 0.0, 100.0, y=355.0)
    led = ledger(table(a0, c0), table(a1, c1), "red")
    assert sorted(m.units for m in led.moves) == [(1,), (2,)] and led.ap_spent == 2 + 1


def test_units_not_in_one_squad_are_charged_each():
    a0, a1 = walk(1, 100.0)
    b0, b1 = walk(2, 100.0, y=500.0)  # same vector, but 175 mm apart at the start: not a squad
    assert len(ledger(table(a0, b0), table(a1, b1), "red").moves) == 2


def test_facing_after_a_move_and_turns_in_place():
    a0, a1 = walk(1, 150.0, 0.0, heading=45.0)  # went along +x (0 deg), faces 45: off by 45 -> a turn
    led = ledger(table(a0), table(a1), "red").to_json()
    assert [(t["unit"], t["ap"]) for t in led["turns"]] == [(1, 1)] and led["ap_spent"] == 1 + 1
    a0, a1 = walk(1, 150.0, 0.0, heading=25.0)  # 25 deg off: within 30, no turn
    assert ledger(table(a0), table(a1), "red").turns == ()
    still0, still1 = unit(3, "red", 600, 600, heading=90.0), unit(3, "red", 600, 600, heading=140.0)
    led = ledger(table(still0), table(still1), "red").to_json()
    assert led["moves"] == [] and [(t["unit"], t["ap"]) for t in led["turns"]] == [(3, 1)] and "in place" in led["turns"][0]["why"]
    small1 = unit(3, "red", 603, 600, heading=115.0)  # 25 deg, moved 3 mm: nothing
    assert ledger(table(still0), table(small1), "red").to_json()["ap_spent"] == 0


def test_a_squad_off_its_heading_is_one_turn_named_by_its_lowest_id():
    a0, a1 = walk(4, 200.0, 0.0, heading=0.0)
    b0, b1 = walk(7, 200.0, 0.0, heading=90.0, y=355.0)
    led = ledger(table(a0, b0), table(a1, b1), "red").to_json()
    assert len(led["moves"]) == 1 and [(t["unit"], t["units"], t["ap"]) for t in led["turns"]] == [(4, [4, 7], 1)]
    assert "unit 7 90 deg" in led["turns"][0]["why"]


def test_fortifications_in_and_out_of_reach():
    a = unit(1, "red", 300, 300)
    near = block(10, 330, 290, 346, 310, 9.6)  # 17.5 mm from the base edge: in reach
    far = block(11, 300, 400, 316, 416, 19.2)  # 87.5 mm: more than 3 fingers (60 + the finger of grace 20)
    led = ledger(table(a), table(a, blocks=(near, far)), "red").to_json()
    forts = {f["block"]: f for f in led["fortifications"]}
    assert forts[10]["in_reach"] and forts[10]["ap"] == 1 and not forts[11]["in_reach"] and forts[11]["ap"] == 2
    assert led["ap_spent"] == 3 and any("out of reach" in w and "block 11" in w for w in led["warnings"])
    assert set(forts[11]) == {"block", "bricks", "in_reach", "gap_mm", "ap", "why"}


def test_blocks_the_camera_had_not_seen_yet_at_the_turns_start_are_not_taken_for_fortifications():
    from dataclasses import replace

    a = unit(1, "red", 300, 300)
    wall = block(11, 300, 400, 316, 416, 19.2)  # there all along; the first block search came later
    led = ledger(replace(table(a), blocks_seen=False), table(a, blocks=(wall,)), "red").to_json()
    assert led["fortifications"] == [] and led["ap_spent"] == 0
    assert led["warnings"] == ["fortifications not checked: the camera had not seen the blocks yet when the turn started"]


def test_the_other_side_moving_and_units_seen_once_are_warnings():
    r0, r1 = walk(1, 100.0)
    b0, b1 = walk(5, 0.0, 60.0, player="blue", x=700.0)
    gone = unit(6, "blue", 900, 200)
    led = ledger(table(r0, b0, gone), table(r1, b1), "red").to_json()
    assert led["other_side_moved"] == [5] and led["ap_spent"] == 1
    assert any("unit 5" in w and "moved" in w for w in led["warnings"]) and any("unit 6" in w for w in led["warnings"])


def test_a_wall_in_the_way_is_priced_as_the_cheapest_path():
    # a long full-cover wall (80 mm, two unit heights) across the way: climbing straight over costs
    # 2 x 2 = 4 AP plus the walk; a short one is cheaper to walk round
    a0, a1 = walk(1, 160.0)
    long_wall = block(20, 370, 0, 390, 800, 80.0)
    table_mm = (1200.0, 800.0)  # the wall runs edge to edge: no way round on the table
    led = ledger(table(a0, blocks=(long_wall,)), table(a1, blocks=(long_wall,)), "red", table_mm)
    assert led.moves[0].ap == 1 + 4 and "over block 20" in led.moves[0].why
    assert ledger(table(a0, blocks=(long_wall,)), table(a1, blocks=(long_wall,)), "red").moves[0].ap == 4  # off the table round its end
    short_wall = block(21, 370, 280, 390, 320, 80.0)
    led = ledger(table(a0, blocks=(short_wall,)), table(a1, blocks=(short_wall,)), "red", table_mm)
    assert led.moves[0].ap == 1 and "around" in led.moves[0].why  # round the 40 mm wall: under 1 hand + 1 finger




def test_ledger_command_contract(tmp_path):
    start = {"registered": True, "minis": [
        {"id": 4, "x_mm": 100.0, "y_mm": 100.0, "z_mm": 40.0, "heading_deg": 0.0},
        {"id": 5, "x_mm": 100.0, "y_mm": 135.0, "z_mm": 40.0, "heading_deg": 0.0},
        {"id": 6, "x_mm": 600.0, "y_mm": 400.0, "z_mm": 40.0, "heading_deg": 180.0}]}
    now = {"registered": True, "minis": [
        {"id": 4, "x_mm": 318.0, "y_mm": 100.0, "z_mm": 40.0, "heading_deg": 0.0},
        {"id": 5, "x_mm": 318.0, "y_mm": 135.0, "z_mm": 40.0, "heading_deg": 5.0},
        {"id": 6, "x_mm": 600.0, "y_mm": 400.0, "z_mm": 40.0, "heading_deg": 100.0}],
        "blocks": [{"footprint_mm": [[340, 90], [356, 90], [356, 106], [340, 106]], "height_mm": 9.6, "color": "red"}]}
    for name, data in (("setup.toml", SETUP), ("start.json", json.dumps(start)), ("now.json", json.dumps(now))):
        (tmp_path / name).write_text(data)
    args = ["--setup", str(tmp_path / "setup.toml"), "--before", str(tmp_path / "start.json"), "--state", str(tmp_path / "now.json")]
    out = subprocess.run([sys.executable, "-m", "companion.cli", "knight", "ledger", *args, "--player", "red", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    led = json.loads(out.stdout)
    assert set(led) == {"player", "moves", "turns", "fortifications", "ap_spent", "other_side_moved", "warnings"}
    (move,) = led["moves"]
    assert move["units"] == [4, 5] and move["ap"] == 2 and move["distance_mm"] == 218.0
    assert set(move) == {"units", "distance_mm", "hands", "fingers", "ap", "why"}
    assert led["turns"] == [] and len(led["fortifications"]) == 1 and led["ap_spent"] == 3 and led["other_side_moved"] == []
    out = subprocess.run([sys.executable, "-m", "companion.cli", "knight", "ledger", *args, "--player", "green", "--json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 3 and "player 'green'" in out.stderr and out.stdout == ""
