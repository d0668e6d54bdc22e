import json
import math
import subprocess
import sys
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, strategies as st

from companion.rules.contienda import (HexGrid, charge_lanes, cube_round, damage, deployment_problems, distance,
                                       flanked, line, neighbours, odds, reach, ring)
from tests.rules.knight_table import block, table, unit

GRID = HexGrid(25.4, (0.0, 0.0), 30, 30)


def at(h, player, uid, **kw):
    x, y = GRID.centre(h)
    return unit(uid, player, x, y, **kw)


def test_hex_centres_by_hand():
    assert GRID.centre((0, 0)) == (0.0, 0.0)
    assert GRID.centre((1, 0)) == (25.4, 0.0)
    x, y = GRID.centre((0, 1))  # (w/2, w sqrt(3)/2) = (12.7, 21.997)
    assert (round(x, 3), round(y, 3)) == (12.7, 21.997)


def test_points_exactly_on_edges_go_to_the_larger_hex():
    # midway between (0,0) and (1,0): q = 0.5 exactly -> (1, 0); between (0,0) and (0,1): r = 0.5 -> (0, 1)
    assert GRID.hex_at(12.7, 0.0) == (1, 0)
    mid = [(a + b) / 2 for a, b in zip(GRID.centre((0, 0)), GRID.centre((0, 1)))]
    assert GRID.hex_at(*mid) == (0, 1)
    assert cube_round(0.5, 0.0) == (1, 0) and cube_round(-0.5, 0.0) == (0, 0)


@given(st.integers(-20, 20), st.integers(-20, 20), st.floats(-0.45, 0.45), st.floats(-0.45, 0.45))
def test_points_inside_a_hex_belong_to_it(q, r, fx, fy):
    cx, cy = GRID.centre((q, r))
    # a point within the inscribed circle (radius w/2) of the hex
    radius = GRID.size_mm / 2 * 0.99 * min(1.0, 1 / max(math.hypot(fx, fy) / 0.45, 1e-9))
    px, py = cx + fx / 0.45 * radius * 0.7, cy + fy / 0.45 * radius * 0.7
    assert GRID.hex_at(px, py) == (q, r)


def test_distances_neighbours_lines_rings():
    assert distance((0, 0), (3, -1)) == 3 and distance((2, 2), (2, 2)) == 0
    assert len(set(neighbours((4, 4)))) == 6 and all(distance((4, 4), n) == 1 for n in neighbours((4, 4)))
    path = line((0, 0), (4, -2))
    assert path[0] == (0, 0) and path[-1] == (4, -2) and len(path) == distance((0, 0), (4, -2)) + 1
    assert all(distance(a, b) == 1 for a, b in zip(path, path[1:]))
    assert len(ring((5, 5), 1)) == 6 and len(ring((5, 5), 2)) == 12
    assert all(distance((5, 5), h) == 2 for h in ring((5, 5), 2))


def test_reach_on_open_ground_is_a_hexagon():
    t = table(at((10, 10), "red", 1))
    result = reach(t, GRID, 1, 1, mobility=2)
    # 1 AP x mobility 2: every hex within 2 (3 x 2 x 3 = 18), all at 1 AP
    assert len(result.hexes) == 18 and all(ap == 1 for _, _, ap in result.hexes)


def test_terrain_allies_and_enemies():
    wall_x, wall_y = GRID.centre((11, 10))
    low = block(1, wall_x - 14, wall_y - 14, wall_x + 14, wall_y + 14, 9.6)  # lower than the 40 mm unit: difficult
    t = table(at((10, 10), "red", 1), blocks=[low])
    result = {(q, r): ap for q, r, ap in reach(t, GRID, 1, 1, mobility=2).hexes}
    # the difficult hex costs 2: reachable with a budget of 2; beyond it (12, 10) costs 2 + 1 through
    # it or 3 around it: out of reach with 2, in reach with 3
    assert (11, 10) in result and (12, 10) not in result
    assert (12, 10) in {(q, r) for q, r, _ in reach(t, GRID, 1, 1, mobility=3).hexes}
    tall = block(1, wall_x - 14, wall_y - 14, wall_x + 14, wall_y + 14, 48)
    t = table(at((10, 10), "red", 1), blocks=[tall])
    assert (11, 10) not in {(q, r) for q, r, _ in reach(t, GRID, 1, 1, mobility=2).hexes}
    ally = table(at((10, 10), "red", 1), at((11, 10), "red", 2))
    hexes = {(q, r) for q, r, _ in reach(ally, GRID, 1, 1, mobility=2).hexes}
    assert (11, 10) not in hexes  # never ended on; crossing it costs 2: (12, 10) needs 3 along that line
    foe = table(at((10, 10), "red", 1), at((11, 10), "blue", 2))
    r = reach(foe, GRID, 1, 1, mobility=3)
    hexes = {(q, r_): ap for q, r_, ap in r.hexes}
    assert (11, 10) not in hexes and r.provoking  # leaving a hex next to the enemy provokes


def test_charges_and_flanks():
    t = table(at((10, 10), "red", 1), at((13, 10), "blue", 2))
    lanes = charge_lanes(t, GRID, 1)
    assert [lane.targets for lane in lanes if lane.direction == (1, 0)] == [(2,)]
    assert lanes[0].to_json()["path"][0] == list(lanes[0].path[0])
    flank = table(at((10, 10), "blue", 9), at((11, 10), "red", 1), at((9, 10), "red", 2))
    assert flanked(flank, GRID, 9)
    assert not flanked(table(at((10, 10), "blue", 9), at((11, 10), "red", 1), at((10, 9), "red", 2)), GRID, 9)


def test_odds_by_hand_and_brute_force():
    b = odds(0)
    assert (b.full, b.partial, b.miss) == (Fraction(6, 36), Fraction(15, 36), Fraction(15, 36))
    for mod, adv, dis in product(range(-2, 3), (0, 1), (0, 1)):
        counts = {"full": 0, "partial": 0, "miss": 0}
        n = 3 if adv != dis else 2
        for roll in product(range(1, 7), repeat=n):
            kept = sorted(roll)[1:] if adv and not dis else sorted(roll)[:2] if dis and not adv else roll
            t = sum(kept) + mod
            counts["full" if t >= 10 else "partial" if t >= 7 else "miss"] += 1
        assert odds(mod, adv, dis) == type(b)(*(Fraction(counts[k], 6 ** n) for k in ("full", "partial", "miss")))
    assert odds(2, attack_number=3) == odds(0)  # the third attack: -2


def test_damage_pipeline():
    assert damage(3, "full")[0] == 5  # 10+: base + 2
    assert damage(3, "partial", "charge")[0] == 4 and damage(3, "miss", "charge")[0] == 0
    assert damage(3, "partial", "counter")[0] == 1
    amount, why = damage(4, "full", protection=2, magic_protection=1, magic=True, resistant=True)
    assert amount == (6 - 1) // 2 and any("magic ignores" in w for w in why)
    assert damage(4, "full", resistant=True, vulnerable=True)[0] == 6
    assert damage(4, "full", immune=True)[0] == 0 and damage(4, "full", vulnerable=True)[0] == 12


def test_deployment_bands():
    t = table(at((2, 2), "red", 1), at((2, 12), "red", 2), at((2, 27), "blue", 3))
    problems = deployment_problems(t, GRID, ("red", "blue"))
    assert len(problems) == 1 and "unit 2" in problems[0]


def test_commands(tmp_path):
    setup = "[[players]]\nname = \"red\"\n[[players]]\nname = \"blue\"\n[[minis]]\nid = 4\nplayer = \"red\"\n" \
            "[[minis]]\nid = 5\nplayer = \"blue\"\n[hex]\nsize_mm = 25.4\n"
    (tmp_path / "s.toml").write_text(setup)
    x, y = GRID.centre((5, 5))
    state = {"registered": True, "minis": [{"id": 4, "x_mm": x, "y_mm": y, "z_mm": 40, "heading_deg": 0},
                                           {"id": 5, "x_mm": x + 101.6, "y_mm": y, "z_mm": 40, "heading_deg": 0}]}
    (tmp_path / "st.json").write_text(json.dumps(state))
    run = lambda *a: json.loads(subprocess.run([sys.executable, "-m", "companion.cli", "contienda", *a, "--json"],  # noqa
                                               capture_output=True, text=True, timeout=60).stdout)
    files = ["--setup", str(tmp_path / "s.toml"), "--state", str(tmp_path / "st.json")]
    assert run("cells", *files)["cells"] == {"4": [5, 5], "5": [9, 5]}
    hexes = run("reach", *files, "--unit", "4", "--ap", "1", "--mobility", "1")["hexes"]
    assert sorted(map(tuple, hexes)) == sorted((q, r, 1) for q, r in neighbours((5, 5)))
    assert run("odds", "--mod", "0") == run("odds", "--mod", "0") and run("odds", "--mod", "0")["full"] == pytest.approx(1 / 6)


@pytest.mark.slow
def test_end_to_end_from_a_rendered_frame_to_cells():
    """Minis stood in known hexes (off-centre, inside), rendered, located, put in their cells."""
    from dataclasses import replace

    from companion.rules.contienda import cells
    from companion.rules.table import Table
    from companion.synth.render import Renderer
    from companion.synth.scene import random_scene
    from companion.vision.locator import Locator

    grid = HexGrid(25.4, (60.0, 60.0), 40, 28)
    scene = random_scene(55, n_minis=8, n_bricks=0)
    wanted = [(2 + 4 * k, 3 + 2 * k) for k in range(8)]
    minis = []
    for mini, (q, r), k in zip(scene.minis, wanted, range(8)):
        x, y = grid.centre((q, r))
        angle = math.radians(45 * k)
        minis.append(replace(mini, x_mm=x + 6 * math.cos(angle), y_mm=y + 6 * math.sin(angle)))  # 6 mm off centre
    scene = replace(scene, minis=tuple(minis))
    setup = scene.setup()
    state = Locator(setup).locate(Renderer().render(scene))
    found = cells(Table.from_state(state, setup), grid)
    assert found == {m.id: h for m, h in zip(minis, wanted)}


def test_a_contienda_setup_reads_its_hex_table_into_a_grid_naming_every_bad_key():
    import tomllib

    from companion.errors import SetupError
    from companion.setup_file import parse_setup

    text = '[[anchors]]\nid = 0\nx_mm = 45\ny_mm = 45\n[ruleset]\nname = "contienda"\n[hex]\n'
    assert parse_setup(tomllib.loads(text + "size_mm = 30\ncolumns = 12\n"), "c.toml").rules == HexGrid(30.0, (0.0, 0.0), 12, 30)
    with pytest.raises(SetupError) as err:
        parse_setup(tomllib.loads(text + 'size_mm = 0\nrows = 2.5\norientation = "flat"\n'), "c.toml")
    message = str(err.value)
    assert message.startswith("c.toml: ") and all(k in message for k in ("hex.size_mm", "hex.rows", "hex.orientation"))


def test_the_grid_over_a_table_covers_every_point_of_it_with_the_hex_it_falls_in():
    grid = HexGrid(40.0, (20.0, 20.0))
    drawn = grid.grid_json(300.0, 200.0)
    by_hex = {(q, r): corners for q, r, corners in drawn["hexes"]}
    assert drawn["size_mm"] == 40.0 and drawn["origin_mm"] == [20.0, 20.0]
    for x in range(0, 301, 25):
        for y in range(0, 201, 25):
            h = grid.hex_at(x, y)
            assert h in by_hex, f"({x}, {y}) falls in {h}, which is not drawn"
            cx, cy = grid.centre(h)
            assert all(abs(math.dist((cx, cy), p) - 40.0 / math.sqrt(3)) < 0.1 for p in by_hex[h])
    for (q, r) in by_hex:  # and nothing wholly off the table
        cx, cy = grid.centre((q, r))
        assert -40.0 < cx < 340.0 and -40.0 < cy < 240.0
