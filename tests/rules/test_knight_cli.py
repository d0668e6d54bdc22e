"""The rules commands of DESIGN.md, end to end from a state file."""

import json
import subprocess
import sys

import pytest

SETUP = """
[[anchors]]
id = 0
x_mm = 45
y_mm = 45

[[players]]
name = "red"

[[players]]
name = "blue"
hand_mm = 152
finger_mm = 16

[[minis]]
id = 4
name = "Orc berserker"
player = "red"
faction = "orcs"
class = "berserker"

[[minis]]
id = 5
name = "Orc shooter"
player = "red"
faction = "orcs"
class = "shooter"

[[minis]]
id = 6
name = "Human defender"
player = "blue"
faction = "humans"
class = "defender"

[[objects]]
id = 20
kind = "castle"
radius_mm = 60
"""
STATE = {"registered": True, "minis": [
    {"id": 4, "x_mm": 100.0, "y_mm": 100.0, "z_mm": 40.0, "heading_deg": 0.0},
    {"id": 5, "x_mm": 100.0, "y_mm": 135.0, "z_mm": 40.0, "heading_deg": 0.0},
    {"id": 6, "x_mm": 160.0, "y_mm": 100.0, "z_mm": 40.0, "heading_deg": 180.0}],
    "blocks": [{"footprint_mm": [[300, 0], [310, 0], [310, 50], [300, 50]], "height_mm": 19.2, "color": "red"}],
    "objects": [{"id": 20, "x_mm": 200.0, "y_mm": 180.0, "z_mm": 0.0, "heading_deg": 0.0}]}


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "setup.toml").write_text(SETUP)
    (tmp_path / "state.json").write_text(json.dumps(STATE))
    return ["--setup", str(tmp_path / "setup.toml"), "--state", str(tmp_path / "state.json")]


def run(*args):
    out = subprocess.run([sys.executable, "-m", "companion.cli", *args], capture_output=True, text=True, timeout=60)
    return out


def test_measure_contract(files):
    out = run("measure", *files, "--from", "4", "--to", "6", "--json")
    data = json.loads(out.stdout)
    # centres 60 mm apart, 25 mm bases: 35 mm = 1 finger (20) and 15 mm under a finger
    assert (data["edge_mm"], data["hands"], data["fingers"], data["text"]) == (35.0, 0, 1, "1 finger")
    child = json.loads(run("measure", *files, "--from", "4", "--to", "6", "--player", "blue", "--json").stdout)
    assert child["fingers"] == 2 and child["player"] == "blue"  # 35 mm = 2 x 16 mm + 3


def test_squads_contract(files):
    data = json.loads(run("knight", "squads", *files, "--json").stdout)
    assert data["squads"] == [[4, 5]] and data["singles"] == [6]


def test_attack_contract(files):
    data = json.loads(run("knight", "attack", *files, "--attacker", "4", "--target", "6", "--json").stdout)
    for key in ("legal", "reasons", "edge_mm", "in_range", "in_view", "back_attack", "cover", "elevation",
                "attack_bonus", "defence_bonus", "odds"):
        assert key in data
    assert data["legal"] is True and data["cover"] == {"full": False, "partial": 0, "blocks": []}
    assert set(data["odds"]) >= {"attacker_wins", "attacker_critical", "tie", "defender_wins", "defender_critical"}
    text = run("knight", "attack", *files, "--attacker", "4", "--target", "6").stdout
    assert text.startswith("CAN attack") and "odds:" in text


def test_control_contract(files):
    data = json.loads(run("knight", "control", *files, "--json").stdout)
    (castle,) = data["objects"]
    assert castle["kind"] == "castle" and set(castle["counts"]) == {"red", "blue"}


def test_bad_unit_and_bad_state_are_one_line(files, tmp_path):
    out = run("knight", "attack", *files, "--attacker", "4", "--target", "99", "--json")
    assert out.returncode == 3 and "unit 99" in out.stderr and out.stdout == ""
    (tmp_path / "bad.json").write_text("{not json")
    out = run("measure", "--setup", files[1], "--state", str(tmp_path / "bad.json"), "--from", "4", "--to", "6")
    assert out.returncode == 3 and "bad.json" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_the_rules_core_imports_no_opencv_and_no_flask():
    code = ("import sys, companion.rules.knight.attack, companion.rules.knight.control; "
            "print(any(m.split('.')[0] in ('cv2', 'flask') for m in sys.modules))")
    assert run_py(code) == "False"


def run_py(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()


def test_moves_contract(files):
    data = json.loads(run("knight", "moves", *files, "--unit", "4", "--ap", "2", "--json").stdout)
    assert [r["ap"] for r in data["regions"]] == [1, 2]
    assert data["regions"][1]["area_mm2"] > data["regions"][0]["area_mm2"] > 0
    assert all(len(poly) == 4 for poly in data["regions"][0]["polygons"])


def test_watch_flags_new_blocks_out_of_reach(files, tmp_path):
    before = dict(STATE, blocks=[])
    (tmp_path / "before.json").write_text(json.dumps(before))
    data = json.loads(run("knight", "watch", *files, "--before", str(tmp_path / "before.json"), "--player", "red",
                          "--json").stdout)
    # the 19.2 mm wall at x = 300 is 2 bricks, 175 mm from the nearest red unit: out of 3 fingers' reach
    (fort,) = data["fortifications"]
    assert fort["bricks"] == 2 and fort["in_reach"] is False and data["fortification_ap"] == 2
    assert data["knocked_over"] == [] and data["sealed"] == []


def test_saved_game_flow_with_undo(files, tmp_path):
    game = ["--setup", files[1], "--game", str(tmp_path / "game.json")]
    # red holds the castle (2 red units within 3 fingers of it, 1 blue): blue besieges
    assert run("knight", "game", "new", *game, "--mode", "siege", "--castle-holder", "red").returncode == 0
    assert run("knight", "game", "roll", *game, "--black", "3", "--red", "2", "--white", "4").returncode == 0
    refused = run("knight", "game", "spend", *game, "--die", "black", "--amount", "5")
    assert refused.returncode == 6 and "3 left" in refused.stderr
    run("knight", "game", "end-turn", *game, "--state", files[3])
    run("knight", "game", "roll", *game, "--black", "1", "--red", "1", "--white", "1")
    data = json.loads(run("knight", "game", "end-turn", *game, "--state", files[3], "--json").stdout)
    assert data["rounds_done"] == 1 and data["round"] == 2 and data["winner"] is None
    data = json.loads(run("knight", "game", "undo", *game, "--json").stdout)
    assert data["rounds_done"] == 0 and data["turn"] == "blue"
    assert json.loads((tmp_path / "game.json").read_text())["events"][-1]["kind"] == "start_turn"
    again = run("knight", "game", "new", *game, "--mode", "siege", "--castle-holder", "red")
    assert again.returncode == 3 and "already there" in again.stderr


def test_path_cost_command(files):
    # unit 4 at (100, 100): to (100, 400) is 300 mm = 2 hands (no finger of grace needed)
    data = json.loads(run("knight", "moves", *files, "--unit", "4", "--ap", "3", "--path", "100,400", "--json").stdout)
    assert (data["walk_ap"], data["ap"], data["affordable"]) == (2, 2, True)
    # One line naming --path for each (a lone number and a NaN ended in tracebacks, 1e308 was
    # priced as a walk of 5e305 AP)
    for point, says in (("100;400", "not a point"), ("100", "not a point"), ("nan,400", "not a point"),
                        ("1e308,400", "off the table"), ("100,-5", "off the table")):
        bad = run("knight", "moves", *files, "--unit", "4", "--ap", "3", "--path", "100,300", point)
        assert bad.returncode == 3 and bad.stdout == "" and "Traceback" not in bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1 and f"--path: '{point}' is {says}" in bad.stderr
