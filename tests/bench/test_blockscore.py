"""Block scoring by kind and colour (`companion bench vision`'s per-kind line and confusion matrix)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from companion.bench.blockscore import BlockScore, Reported, format_wrong
from companion.bench.vision import format_confusion
from companion.rules.geometry import point_in_polygon
from companion.synth.scene import Scene, SynthBrick, footprint_gap_mm, random_scene


def test_each_block_of_the_truth_has_its_kind():
    scene = random_scene(4, n_walls=1, n_towers=1, n_touching=1)
    truth = scene.truth_blocks()
    kinds = Counter(t.kind for t in truth)
    assert kinds["wall"] == len(scene.walls) == 1 and kinds["tower"] == len(scene.stacks) == 1
    assert 2 <= kinds["touching"] <= 3 and kinds["single"] == 8
    # a tower's block is its top brick's colour and height
    tower = next(t for t in truth if t.kind == "tower")
    top = max((scene.bricks[i] for i in scene.stacks[0]), key=lambda b: b.top_mm)
    assert (tower.colour, tower.height_mm) == (top.color, top.top_mm)


def test_minis_standing_on_blocks_are_added_to_the_same_table():
    plain = random_scene(4, n_walls=1, n_towers=1, n_touching=1)
    scene = random_scene(4, n_walls=1, n_towers=1, n_touching=1, n_standing=2)
    # the table is the one without them, and two minis more, each on a block of its own
    assert scene.minis[:len(plain.minis)] == plain.minis and scene.bricks[:len(plain.bricks)] == plain.bricks
    standing = scene.minis[len(plain.minis):]
    assert len(standing) == 2 and len({m.id for m in scene.minis}) == len(scene.minis)
    under = [t for t in scene.truth_blocks() if t.kind == "under a mini"]
    assert len(under) == 2
    for mini in standing:
        block = next(t for t in under
                     if point_in_polygon((mini.x_mm, mini.y_mm), [tuple(map(float, q)) for q in t.footprints[0]]))
        assert mini.stand_mm == block.height_mm > 0 and mini.z_mm > mini.stand_mm + 10
    # the roster measures a standing mini from what it stands on, as the players do
    setup = scene.setup(height_noise_mm=0.0)
    assert all(abs(setup.mini(m.id).marker_height - (m.z_mm - m.stand_mm)) <= 0.25 for m in standing)


def test_the_gap_between_footprints():
    a = SynthBrick(0.0, 0.0, 0.0, 2, 2).footprint_mm()  # 15.8 mm square about the origin
    assert abs(footprint_gap_mm(a, SynthBrick(16.0, 0.0, 0.0, 2, 2).footprint_mm()) - 0.2) < 1e-9
    assert abs(footprint_gap_mm(a, SynthBrick(30.0, 0.0, 45.0, 2, 2).footprint_mm()) - (30 - 7.9 - 7.9 * 2 ** 0.5)) < 1e-9
    assert footprint_gap_mm(a, SynthBrick(5.0, 5.0, 10.0, 2, 2).footprint_mm()) == 0.0  # overlapping


def _three_bricks() -> tuple[Scene, tuple[SynthBrick, ...]]:
    """A table with a red, a gray and a blue brick in a row, nothing else of blocks."""
    bricks = (SynthBrick(300.0, 300.0, 0.0, 2, 2, color="red"), SynthBrick(500.0, 300.0, 0.0, 2, 4, color="gray"),
              SynthBrick(700.0, 300.0, 0.0, 2, 2, color="blue"))
    return replace(random_scene(4), bricks=bricks, walls=(), stacks=()), bricks


def test_the_confusion_matrix_counts_what_was_reported_for_each_true_colour():
    scene, bricks = _three_bricks()
    score = BlockScore("pipeline")
    # red named right, gray taken for white with a brick too many, blue missed, one false block
    score.add(scene, [Reported(bricks[0].footprint_mm(), 9.6, "red"),
                      Reported(bricks[1].footprint_mm() + 0.5, 19.2, "white"),
                      Reported(np.array([[900.0, 300.0], [916.0, 300.0], [916.0, 316.0], [900.0, 316.0]]), 9.6, "black")],
              None)
    summary = score.summary()
    assert summary["colours"] == {"red": {"red": 1}, "gray": {"white": 1}, "blue": {"missed": 1}}
    assert summary["by_kind"] == {"single": {"blocks": 3, "found": 0.667, "height_within_half_brick": 0.333}}
    assert summary["false_per_frame"] == 1.0 and summary["colour_right"] == 0.5
    lines = format_confusion(summary["colours"], "colours")
    header = lines[1].split()
    assert header == ["blue", "gray", "red", "white", "missed"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert rows["gray"] == [".", ".", ".", "1", "."] and rows["blue"] == [".", ".", ".", ".", "1"]
    assert rows["red"] == [".", ".", "1", ".", "."]


def test_every_block_not_reported_right_is_listed_with_what_was_seen():
    scene, bricks = _three_bricks()
    score = BlockScore("pipeline")
    score.add(scene, [Reported(bricks[0].footprint_mm(), 9.6, "red"),  # right: not listed
                      Reported(bricks[1].footprint_mm() + 0.5, 19.2, "gray"),  # a brick too tall
                      Reported(bricks[2].footprint_mm() + 9.0, 9.6, "blue"),  # beside the blue one: missed
                      Reported(np.array([[900.0, 300.0], [916.0, 300.0], [916.0, 316.0], [900.0, 316.0]]), 9.6, "black")],
              None)
    wrong = score.summary()["wrong"]
    tall = [w for w in wrong if w["truth"] and w["seen"]]
    missed = [w for w in wrong if w["seen"] is None]
    false = [w for w in wrong if w["truth"] is None]
    assert len(tall) == 1 and tall[0]["truth"]["colour"] == "gray" and tall[0]["seen"]["height_mm"] == 19.2
    assert tall[0]["truth"]["centre_mm"] == [500.0, 300.0]
    assert len(missed) == 1 and missed[0]["truth"]["colour"] == "blue" and 0.0 < missed[0]["best_iou"] < 0.5
    assert sorted(f["seen"]["colour"] for f in false) == ["black", "blue"]
    lines = format_wrong(wrong, "wrong")
    assert len(lines) == 5 and any("seen as gray 19.2 mm" in line for line in lines)
    assert any("single blue 9.6 mm at (700, 300): missed" in line for line in lines)


def test_blocks_reported_hidden_under_minis_are_counted_apart_and_scored_as_any():
    """A hidden block's footprint is a guess: it is found at IoU 0.5 as any block (else missed, and
    a false block), and counted apart with whether a true block lies under it; its colour, unknown
    (""), is a column of its own in the confusion matrix."""
    scene, bricks = _three_bricks()
    score = BlockScore("pipeline")
    score.add(scene, [Reported(bricks[0].footprint_mm(), 9.6, "", hidden=True),  # right where the red one is
                      Reported(bricks[1].footprint_mm() + 5.0, 19.2, "", hidden=True),  # over the gray one, off
                      Reported(np.array([[900.0, 300.0], [916.0, 300.0], [916.0, 316.0], [900.0, 316.0]]), 9.6, "",
                               hidden=True)],  # over nothing
              None)
    summary = score.summary()
    assert summary["hidden"] == {"reported": 3, "found": 1, "over_a_block": 2}
    assert summary["false_per_frame"] == 2.0 and summary["colours"]["red"] == {"": 1}
    assert format_confusion(summary["colours"], "colours")[1].split()[0] == "unknown"


def test_a_block_a_hand_hides_from_the_camera_is_not_expected_and_what_is_seen_of_it_at_its_height_is_no_false_block():
    """A hand held over the red brick (its palm 100 mm above it) hides its top: the frame cannot be
    asked for it. Reported at its height it is neither found nor false; reported at a tower's
    height (the hand lent it its edges) it is a false block. The others count as ever."""
    from companion.synth.render import hidden_by_hands
    from companion.synth.scene import SynthHand

    scene, bricks = _three_bricks()
    hand = replace(scene, hands=(SynthHand(bricks[0].x_mm, bricks[0].y_mm, 100.0, 0.0),))
    assert hidden_by_hands(hand, [bricks[0].footprint_mm()], bricks[0].top_mm) == 1.0
    assert hidden_by_hands(hand, [bricks[2].footprint_mm()], bricks[2].top_mm) == 0.0
    assert hidden_by_hands(scene, [bricks[0].footprint_mm()], bricks[0].top_mm) == 0.0
    gray = Reported(bricks[1].footprint_mm(), bricks[1].top_mm, "gray")
    for red_height_mm, false in ((bricks[0].top_mm, 0.0), (80.0, 1.0)):
        score = BlockScore("pipeline")
        score.add(hand, [Reported(bricks[0].footprint_mm() + [4.0, 0.0], red_height_mm, "red"), gray],
                  None)
        summary = score.summary()
        assert summary["under_hands"] == 1 and score.expected == 2 and summary["found"] == 0.5
        assert summary["false_per_frame"] == false and summary["colours"] == {"gray": {"gray": 1}, "blue": {"missed": 1}}
