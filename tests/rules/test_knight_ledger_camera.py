"""The turn ledger from rendered frames, end to end: the siege table at a turn's start and after red's
turn, each located by the real pipeline (minis and blocks), and the ledger between the two states
against what the script did: a walk of 1 hand 2 fingers and a half (2 AP), a turn in place (1 AP),
a brick put down 4 fingers and a half from the nearest red base (beyond 3 fingers and the finger
of grace: it costs its AP and is flagged, with its distance)."""

import math
from dataclasses import replace

import pytest

from companion.rules.knight.ledger import ledger
from companion.rules.table import Table
from companion.synth.render import Renderer
from companion.synth.scene import BRICK_MM, SynthBrick
from companion.synth.siege import base_scene, siege_setup
from companion.vision.locator import Locator

pytestmark = pytest.mark.slow

HAND, FINGER = 178.0, 20.0  # red's, as the siege's setup gives them
WALK_MM = HAND + 2.5 * FINGER  # 1 hand 2 fingers: 2 AP (over a hand and its finger of grace)
GAP_MM = 4.5 * FINGER  # from the nearest red base's edge to the new brick's side
BRICK_HALF_MM = (2 * 8.0 - 0.2) / 2  # a 2x2 brick


def test_a_turn_seen_by_the_camera_is_priced_entry_by_entry():
    start = base_scene()
    setup = siege_setup(start)
    units = {m.id: m for m in start.minis}
    walker, turner, nearest = units[6], units[4], units[8]
    radius = next(m.base_mm for m in setup.minis if m.id == nearest.id) / 2
    brick = SynthBrick(nearest.x_mm, nearest.y_mm + radius + GAP_MM + BRICK_HALF_MM, 0.0, 2, 2, 0.0, BRICK_MM, "red")
    minis = tuple(replace(m, x_mm=m.x_mm + WALK_MM) if m.id == walker.id else
                  replace(m, heading_deg=(m.heading_deg + 90.0) % 360) if m.id == turner.id else m
                  for m in start.minis)
    after = replace(start, minis=minis, bricks=start.bricks + (brick,), noise_seed=1)

    renderer, locator = Renderer(), Locator(setup)
    before_state, now_state = (locator.locate(renderer.render(s)) for s in (start, after))
    assert before_state.registered and now_state.registered and now_state.blocks_seen
    turn = ledger(Table.from_state(before_state, setup), Table.from_state(now_state, setup), "red",
                  (setup.table.width_mm, setup.table.depth_mm)).to_json()

    (move,) = turn["moves"]
    assert move["units"] == [walker.id] and move["ap"] == 2 and (move["hands"], move["fingers"]) == (1, 2)
    assert move["distance_mm"] == pytest.approx(WALK_MM, abs=3.0)
    (turned,) = turn["turns"]
    assert turned["unit"] == turner.id and turned["ap"] == 1 and "in place" in turned["why"]
    (fort,) = turn["fortifications"]
    assert fort["bricks"] == 1 and fort["ap"] == 1 and not fort["in_reach"]
    assert fort["gap_mm"] == pytest.approx(GAP_MM, abs=4.0), fort
    seen = next(b for b in now_state.blocks if b.id == fort["block"])
    centre = [sum(c) / len(seen.footprint_mm) for c in zip(*seen.footprint_mm)]
    assert math.dist(centre, (brick.x_mm, brick.y_mm)) < 3.0 and seen.color == "red"
    assert any("out of reach" in w and f"block {fort['block']}" in w for w in turn["warnings"])
    assert turn["ap_spent"] == 2 + 1 + 1 and turn["other_side_moved"] == []
