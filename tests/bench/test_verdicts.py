"""`companion bench verdicts`: the comparison itself (truth against truth agrees everywhere; a block
taken away or a unit moved shows up as a disagreement with its cause), and the command."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from companion.bench.verdicts import FIELDS, VerdictScore, truth_state
from companion.rules.knight.attack import attack
from companion.rules.table import Table
from companion.state import BlockState
from companion.synth.scene import random_scene


@pytest.fixture(scope="module")
def scene():
    return random_scene(3, n_walls=1, n_towers=1, n_touching=1)


def test_the_truth_agrees_with_itself_on_every_pair(scene):
    score = VerdictScore("truth")
    truth = truth_state(scene)
    score.add_table(0, scene, scene.setup(), truth, truth)
    summary = score.summary()
    assert summary["pairs"] > 20 and summary["all_fields"] == 1.0 and summary["tables_all_right"] == 1.0
    assert set(summary["per_field"]) == set(FIELDS)


def test_a_wall_and_a_tower_are_one_block_each_in_the_truth(scene):
    truth = truth_state(scene)
    assert len(truth.blocks) == len(scene.truth_blocks()) < len(scene.bricks)
    tower = [b for b in truth.blocks if b.height_mm > 38.4]
    assert len(tower) == 1 and tower[0].color == scene.bricks[scene.stacks[0][-1]].color


def test_a_missed_block_and_a_moved_unit_are_the_causes_given(scene):
    truth = truth_state(scene)
    setup = scene.setup()
    # every block gone: each pair whose line crossed one now differs, put down to a missed block
    score = VerdictScore("no blocks")
    score.add_table(0, scene, setup, replace(truth, blocks=()), truth)
    summary = score.summary()
    assert summary["all_fields"] < 1.0 and set(summary["causes"]) == {"missed block"}
    # one unit 40 mm off: its pairs are put down to its position
    moved = replace(truth, minis=tuple(replace(m, x_mm=m.x_mm + 40.0) if i == 0 else m
                                       for i, m in enumerate(truth.minis)))
    score = VerdictScore("moved")
    score.add_table(0, scene, setup, moved, truth)
    assert all(d.cause.startswith("position: unit %d" % truth.minis[0].id) for d in score.disagreements)
    # a block where there is none, across a line of attack
    stray = [BlockState(((u.x_mm - 20, u.y_mm - 3), (u.x_mm + 20, u.y_mm - 3), (u.x_mm + 20, u.y_mm + 3),
                         (u.x_mm - 20, u.y_mm + 3)), 60.0, "red", id=99) for u in truth.minis[:1]]
    score = VerdictScore("stray")
    score.add_table(0, scene, setup, replace(truth, blocks=truth.blocks + tuple(stray)), truth)
    assert all("false block" in d.cause or "footprint" in d.cause for d in score.disagreements)


def test_a_right_verdict_called_a_close_call_is_counted_apart_from_the_wrong_ones(scene):
    """Every block as tall as the commonest unit: the verdicts of the truth against itself are all
    right, and those whose cover turns on that height are called close calls, counted as right."""
    setup = scene.setup()
    heights = [setup.mini(m.id).height_mm for m in truth_state(scene).minis]
    tall = max(set(heights), key=heights.count)
    truth = truth_state(scene)
    level = replace(truth, blocks=tuple(replace(b, height_mm=tall) for b in truth.blocks))
    score = VerdictScore("level")
    score.add_table(0, scene, setup, level, level)
    summary = score.summary()
    assert summary["all_fields"] == 1.0 and summary["cover_wrong"] == summary["cover_wrong_called_close"] == 0
    assert summary["cover_right_called_close"] > 0


def test_a_wrong_verdict_called_a_close_call_is_counted_apart_from_a_silent_one(scene):
    """What players are told: every block a plate under the commonest unit's height where the truth
    has it a plate over: full against partial cover turns on the plate, and each such verdict says
    so (called close); every block gone instead: the verdicts are wrong without a word (silent)."""
    setup = scene.setup()
    truth = truth_state(scene)
    heights = [setup.mini(m.id).height_mm for m in truth.minis]
    tall = max(set(heights), key=heights.count)
    over = replace(truth, blocks=tuple(replace(b, height_mm=tall + 1.6) for b in truth.blocks))
    under = replace(truth, blocks=tuple(replace(b, height_mm=tall - 1.6) for b in truth.blocks))
    score = VerdictScore("a plate off")
    score.add_table(0, scene, setup, under, over)
    summary = score.summary()
    wrong = summary["pairs"] - round(summary["all_fields"] * summary["pairs"])
    assert wrong > 0 and summary["wrong_called_close"] == wrong and summary["wrong_silent"] == 0
    score = VerdictScore("no blocks")
    score.add_table(0, scene, setup, replace(over, blocks=()), over)
    summary = score.summary()
    assert summary["wrong_silent"] > 0 and summary["wrong_called_close"] == 0
    assert summary["wrong_silent_on_legal"] == 0  # (no attack there may be made in truth)


def test_a_silent_verdict_on_an_attack_that_may_be_made_is_counted_apart(scene):
    """Of the wrong verdicts said without a word, those on attacks that may be made (legal in
    truth) are the ones a player acts on: a block half the target's height across the line of the
    one pair on the table in range and in view, missed by the camera."""
    setup = scene.setup()
    truth = truth_state(scene)
    table = Table.from_state(truth, setup)
    legal = [(a.id, t.id) for a in table.units for t in table.units
             if a.player != t.player and attack(table, a.id, t.id).legal]
    attacker, target = legal[0]
    (ax, ay), (tx, ty) = table.unit(attacker).centre, table.unit(target).centre
    mx, my = (ax + tx) / 2, (ay + ty) / 2
    square = ((mx - 4, my - 4), (mx + 4, my - 4), (mx + 4, my + 4), (mx - 4, my + 4))
    low = BlockState(square, setup.mini(target).height_mm / 2, "red", id=99)
    with_block = replace(truth, blocks=truth.blocks + (low,))
    as_is = Table.from_state(with_block, setup)
    verdict = attack(as_is, attacker, target)
    assert verdict.legal and verdict.cover.partial > 0
    score = VerdictScore("missed")
    score.add_table(0, scene, setup, truth, with_block)
    summary = score.summary()
    seen = Table.from_state(truth, setup)
    silent = [(d.attacker, d.target) for d in score.disagreements if not attack(seen, d.attacker, d.target).close_call]
    assert (attacker, target) in silent and summary["wrong_silent"] == len(silent)
    assert summary["wrong_silent_on_legal"] == sum(attack(as_is, a, t).legal for a, t in silent) >= 1
    assert summary["wrong_on_legal"] == sum(attack(as_is, d.attacker, d.target).legal for d in score.disagreements)


@pytest.mark.slow
def test_the_command_prints_both_ways_per_field():
    out = subprocess.run([sys.executable, "-m", "companion.cli", "bench", "verdicts", "--scenes", "1", "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [m["method"] for m in data["methods"]] == ["pipeline", "plain (OpenCV markers, HSV blocks)"]
    assert data["walls"] == data["towers"] == data["touching"] == 1
    assert 0.0 <= data["methods"][0]["all_fields"] <= 1.0
    # split by the clipped paper: the ray-caster's table is all on the side that is not
    assert data["by_paper"]["clipped"]["tables"] == 0
    assert data["by_paper"]["not_clipped"]["pairs"] == data["methods"][0]["pairs"]


def test_the_command_refuses_no_scenes():
    out = subprocess.run([sys.executable, "-m", "companion.cli", "bench", "verdicts", "--scenes", "0"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 3 and out.stderr.strip().count("\n") == 0 and "--scenes" in out.stderr
