"""Blocks end to end on rendered tables with known truth: the pipeline, a hand over the table,
the live tracker's watch, and the pieces they stand on (table view, colour names)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.bench.blockscore import BlockScore, Reported, plain_blocks, polygon_iou
from companion.rules.geometry import point_in_polygon
from companion.setup_file import setup_to_toml
from companion.state import BLOCKS_NOT_SEEN, MiniState, TableState
from companion.synth.render import Renderer, linear_to_srgb as encode  # a webcam's sRGB curve, clipping at 1
from companion.synth.scene import LEGO_RGB, SynthBrick, SynthHand, wall_bricks
from companion.vision.blocks import _BRICK_DISC, BlockFinder, _arms, stud_gaps_closed, to_block_states, union_outline
from companion.vision.blockwatch import GONE_SEARCHES
from companion.vision.brickfit import PLATE_MM, TableRect
from companion.vision.candidates import FAINT_SHARE, faint_candidates, faint_parts
from companion.vision.colourparts import FINER_APART, colour_parts
from companion.vision.colours import PAPER_ALBEDO, classify_colour, colour_distance
from companion.vision.cutout import FINE_MM, filled_blobs, small_holes_filled
from companion.vision.locator import Locator
from companion.vision.tableview import TableView
from companion.vision.topface import STUD_HOLE_MM2, top_face_of
from companion.vision.touching import TABLE
from companion.vision.tracker import LiveTracker
from tests.vision.found_blocks import box_block
from tests.conftest import rendered


def _free_spot(scene) -> tuple[float, float]:
    """A place for one more brick, 70 mm clear of every mini and anchor, near the middle."""
    taken = [(m.x_mm, m.y_mm) for m in scene.minis] + [(a.x_mm, a.y_mm) for a in scene.anchors]
    spots = [(x, y) for x in range(300, 901, 25) for y in range(200, 601, 25)
             if all(np.hypot(x - tx, y - ty) > 70 for tx, ty in taken)]
    return min(spots, key=lambda p: np.hypot(p[0] - 600, p[1] - 400))


def _spot_seen_from_aside(scene, from_foot_mm: float = 250.0) -> tuple[float, float]:
    """A free place at least `from_foot_mm` from the camera's foot: straight under the camera a
    block's walls do not show, and its height is not seen well (the block says so in its
    height confidence)."""
    foot = scene.pose.camera_centre_mm[:2]
    taken = [(m.x_mm, m.y_mm) for m in scene.minis] + [(a.x_mm, a.y_mm) for a in scene.anchors]
    spots = [(x, y) for x in range(200, 1001, 25) for y in range(150, 651, 25)
             if all(np.hypot(x - tx, y - ty) > 70 for tx, ty in taken) and np.hypot(x - foot[0], y - foot[1]) >= from_foot_mm]
    return min(spots, key=lambda p: np.hypot(p[0] - foot[0], p[1] - foot[1]))


def _one_brick(colour: str):
    """Scene 3 with a single 2x4 brick two high at a free spot: (scene, brick, its frame, a renderer)."""
    base, _ = rendered(3)
    x, y = _free_spot(base)
    brick = SynthBrick(x, y, 30.0, 4, 2, 0.0, 19.2, colour)
    scene = replace(base, bricks=(brick,))
    renderer = Renderer()
    return scene, brick, renderer.render(scene), renderer


def _unlit_bench_scene(seed: int, **layout):
    """A ray-cast bench table (`--renderer raycast`) without its lamps' shadows. The tests that use
    it hold what they were written for on these frames; under the lamps towers and walls are not
    yet read right (the bench's lamp rows measure that, on these tables too)."""
    from companion.synth.worlds import bench_scene

    return replace(bench_scene("raycast", seed, **layout), lighting=None)


def _score(scene, blocks) -> BlockScore:
    score = BlockScore("pipeline")
    score.add(scene, [Reported(b.footprint_mm, b.height_mm, b.color) for b in blocks], None)
    return score


def test_table_view_casts_and_projects_like_the_camera(standard_scene):
    scene, _ = standard_scene
    view = TableView(scene.camera, scene.pose)
    pts = np.array([[100.0, 200.0], [900.0, 650.0]])
    assert np.allclose(view.uncast(view.cast(pts, 19.2), 19.2), pts)
    # a point at height h seen on the table plane lies on the camera's ray through it
    top = np.concatenate([pts, np.full((2, 1), 19.2)], axis=1)
    ray_hits = view.cast(pts, 19.2)
    assert np.allclose(scene.pose.project(scene.camera, top), view.to_pixels(ray_hits), atol=1e-6)
    assert np.allclose(view.to_pixels(pts), scene.pose.project(scene.camera, np.c_[pts, np.zeros(2)]), atol=1e-9)


@pytest.mark.parametrize("name", list(LEGO_RGB))
def test_every_palette_colour_is_named_under_dimmer_and_brighter_light(name):
    albedo = np.array(LEGO_RGB[name]) / PAPER_ALBEDO
    for light in (0.85, 1.0, 1.15):
        assert classify_colour(albedo * light)[0] == name


@pytest.mark.slow
def test_standard_scene_blocks_within_targets(standard_scene):
    scene, image = standard_scene
    analysis = Locator(scene.setup()).analyse(image)
    assert analysis.state.blocks_seen and BLOCKS_NOT_SEEN not in analysis.state.to_json()["warnings"]
    summary = _score(scene, analysis.blocks).summary()
    assert summary["found"] >= 7 / 8 and summary["false_per_frame"] <= 1
    assert summary["mean_iou"] >= 0.8 and summary["colour_right"] == 1.0
    assert summary["height_within_half_brick"] >= 6 / 7
    # the state carries them, with a confidence
    assert len(analysis.state.blocks) == len(analysis.blocks)
    assert all(0.0 <= b.confidence <= 1.0 for b in analysis.state.blocks)


@pytest.mark.slow
def test_a_few_scenes_found_as_the_bench_says():
    score = BlockScore("pipeline")
    for seed in (3, 7, 12):
        scene, image = rendered(seed)
        analysis = Locator(scene.setup()).analyse(image)
        score.add(scene, [Reported(b.footprint_mm, b.height_mm, b.color) for b in analysis.blocks], None)
    s = score.summary()
    assert s["found"] >= 0.95 and s["mean_iou"] >= 0.9 and s["height_mm_p90"] <= 4.8 and s["colour_right"] >= 0.95
    assert s["false_per_frame"] <= 0.34


@pytest.mark.slow
def test_the_pipeline_beats_the_plain_way_on_the_same_frame(standard_scene):
    scene, image = standard_scene
    locator = Locator(scene.setup(), blocks=False)
    analysis = locator.analyse(image)
    camera, _ = locator.camera(image.shape[1], image.shape[0])
    plain = BlockScore("plain")
    plain.add(scene, plain_blocks(image, scene.setup(), camera, analysis.registration.pose), None)
    ours = _score(scene, BlockFinder(scene.setup()).find(image, camera, analysis.registration.pose,
                                                           analysis.state.minis))
    assert ours.summary()["found"] >= plain.summary()["found"]
    assert ours.summary()["false_per_frame"] < plain.summary()["false_per_frame"]


@pytest.mark.slow
def test_a_hand_over_the_table_is_not_a_block():
    scene, image = rendered(5, n_hands=1)
    blocks = Locator(scene.setup()).analyse(image).blocks
    hand = scene.hands[0]
    assert not any(np.hypot(*(b.footprint_mm.mean(axis=0) - (hand.x_mm, hand.y_mm))) < 60 for b in blocks)
    assert _score(scene, blocks).summary()["false_per_frame"] <= 1


def test_polygon_iou():
    square = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], float)
    assert polygon_iou(square, square) == pytest.approx(1.0, abs=0.01)
    assert polygon_iou(square, square + [5, 0]) == pytest.approx(1 / 3, abs=0.02)
    assert polygon_iou(square, square + [20, 0]) == 0.0
    # a wall's bricks against one polygon for all of them
    assert polygon_iou([square, square + [10, 0]], np.array([[0, 0], [20, 0], [20, 10], [0, 10]], float)) \
        == pytest.approx(1.0, abs=0.01)


def _wall_scene(kind: str, colour: str):
    """Scene 3 with one wall that turns (two bricks high) at a spot clear of its minis."""
    base, _ = rendered(3)
    taken = [(m.x_mm, m.y_mm) for m in base.minis] + [(a.x_mm, a.y_mm) for a in base.anchors]
    spots = [(x, y) for x in range(250, 951, 25) for y in range(200, 601, 25)
             if all(np.hypot(x - tx, y - ty) > 110 for tx, ty in taken)]
    x, y = spots[len(spots) // 2]
    bricks = wall_bricks(kind, x, y, 25.0, 19.2, colour)
    return replace(base, bricks=bricks, walls=(tuple(range(len(bricks))),)), (x, y)


@pytest.mark.parametrize("kind, colour", [("L", "blue"), ("ring", "white")])
def test_a_wall_that_turns_is_one_block_with_its_outline(kind, colour):
    scene, (x, y) = _wall_scene(kind, colour)
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    assert len(blocks) == 1
    wall = blocks[0]
    assert len(wall.footprint_mm) > 4  # a polygon, not a rectangle over the corner
    assert polygon_iou([b.footprint_mm() for b in scene.bricks], wall.footprint_mm) > 0.9
    assert abs(wall.height_mm - 19.2) <= 4.8 and wall.color == colour
    if kind == "ring":  # the yard is not wall: a mini standing in it is not on the block
        assert not point_in_polygon((x, y), [tuple(p) for p in wall.footprint_mm])
        assert point_in_polygon(tuple(scene.bricks[0].footprint_mm().mean(axis=0)), [tuple(p) for p in wall.footprint_mm])


@pytest.mark.parametrize("seed", [3, 13, 100005])
def test_a_wall_that_turns_is_found_with_the_height_its_arms_show_together(seed: int):
    """Two-brick walls (ray-cast bench tables 3 and 13, an L each) read 25.6 mm: one arm fitted
    25.6, the other 22.4, and the upper median of two is the taller. One wall has one height:
    each arm's fit is a measurement of it, and their costs add. Table 2 of `--seed 1` (100005): a
    black wall of 9.6 mm was missed, its lit top (5 levels above its walls) riddled by the
    sensor's noise and its arms cut lengthwise by the holes."""
    from companion.synth.worlds import Camera

    scene = _unlit_bench_scene(seed, n_walls=1, n_towers=1, n_touching=1)
    (footprints, height, colour, _), = [t for t in scene.truth_blocks() if t.kind == "wall"]
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    near = [b for b in blocks if polygon_iou(footprints, b.footprint_mm) > 0.5]
    assert len(near) == 1 and near[0].color == colour
    assert abs(near[0].height_mm - height) <= 4.8


def test_a_wall_top_with_a_row_of_stud_shadows_gives_arms_of_its_whole_width():
    """The lit top of a wall of 1-wide bricks has its studs' shaded sides as holes down its
    middle (a black top's, the noise's): its arms were cut lengthwise into slivers 2-5 mm wide,
    which no box fit explained (a green U, path traced; a black one, ray-cast). Stud-sized holes
    are the top; a yard is not."""
    top = np.zeros((120, 160), np.uint8)
    top[20:36, 10:138] = 1  # 64 x 8 mm
    top[20:116, 122:138] = 1  # 8 x 48 mm
    for x in range(16, 130, 16):
        cv2.circle(top, (x, 28), 4, 0, -1)  # stud shades, ~12 mm2 each
    for y in range(42, 112, 16):
        cv2.circle(top, (130, y), 4, 0, -1)
    filled = small_holes_filled(top, STUD_HOLE_MM2)
    arms = sorted(_arms(filled, (0.0, 0.0)), key=lambda r: -max(r.half_mm))
    assert len(arms) == 2 and all(min(a.half_mm) * 2 == pytest.approx(8.0, abs=0.6) for a in arms)
    yard = np.ones((80, 80), np.uint8)
    yard[16:64, 16:64] = 0  # 24 x 24 mm inside a ring
    yard[0:6, 30:40] = 0  # a notch in its edge is no hole either
    assert (small_holes_filled(yard, STUD_HOLE_MM2) == yard).all()


def test_a_narrow_top_notched_by_its_studs_starts_the_fit():
    """A 1-wide brick's studs reach its top's edges, so their shaded sides notch the lit face
    instead of holing it. The cut-out of a path-traced green 1x6 brick 28.8 mm high (its top glared
    nearly white, its wall and shadow three times the top's area; cut-out, its outline and the
    local table side by side): the notched top filled 0.82 of its rectangle, no top was taken and
    the brick was lost. Its top is the start, a 1x6 brick's."""
    both = cv2.imread(str(Path(__file__).with_name("frames") / "pbr_narrow_glared_top.png"), cv2.IMREAD_COLOR)
    fine, outline, table = np.split(both, 3, axis=1)
    top = top_face_of(fine, (outline[..., 0] > 127).astype(np.uint8), table)
    assert top is not None
    ys, xs = np.nonzero(top)
    (_, _), sides_px, _ = cv2.minAreaRect(np.stack([xs, ys], axis=1).astype(np.float32))
    long_mm, short_mm = sorted(np.array(sides_px) * FINE_MM)[::-1]
    assert long_mm == pytest.approx(47.8, abs=2.5) and short_mm == pytest.approx(7.8, abs=1.5)


def test_a_ring_outline_keeps_its_yard_out_and_arms_take_their_corner():
    ring = [TableRect(np.array(c, float), np.array([1.0, 0.0]), h) for c, h in
            (((0, 40), (40, 8)), ((0, -40), (40, 8)), ((-32, 0), (8, 32)), ((32, 0), (8, 32)))]
    outline = [tuple(p) for p in union_outline(ring)]
    assert not point_in_polygon((0.0, 0.0), outline)
    assert point_in_polygon((0.0, 40.0), outline) and point_in_polygon((-32.0, 0.0), outline)
    # an L painted at 0.5 mm a pixel: two arms, each the whole run including the corner
    mask = np.zeros((120, 160), np.uint8)
    mask[20:52, 10:138] = 1  # 64 x 16 mm
    mask[20:116, 106:138] = 1  # 16 x 48 mm
    arms = sorted(_arms(mask, (0.0, 0.0)), key=lambda r: -max(r.half_mm))
    assert len(arms) == 2
    assert sorted(arms[0].half_mm) == pytest.approx([8.0, 32.0], abs=0.6)
    assert sorted(arms[1].half_mm) == pytest.approx([8.0, 24.0], abs=0.6)


@pytest.mark.slow
def test_the_live_tracker_publishes_a_block_once_it_stood_still_and_drops_it_once_gone():
    scene, brick, with_brick, renderer = _one_brick("red")
    without = renderer.render(replace(scene, bricks=()))
    tracker = LiveTracker(scene.setup())
    assert tracker.block_watch is not None
    state = tracker.update(with_brick, 0, 0.0)
    assert state.blocks == () and not state.blocks_seen  # seen once: not yet, and not "no blocks" either
    frame = 1
    while not state.blocks and frame < 20:
        state = tracker.update(with_brick, frame, frame / 10)
        frame += 1
    assert len(state.blocks) == 1
    block = state.blocks[0]
    assert block.color == "red" and abs(block.height_mm - 19.2) <= 3.3
    assert polygon_iou(np.array(block.footprint_mm), brick.footprint_mm()) > 0.8
    assert state.blocks_seen and BLOCKS_NOT_SEEN not in state.to_json()["warnings"]
    assert (frame - 1) / 10 <= 0.5  # published within half a second of frame time
    # Taken away: the bare table shows where it stood; two searches agreeing drop it, within a second.
    searches, taken_at = tracker.block_watch.searches, frame / 10
    while state.blocks and frame < 400:
        state = tracker.update(without, frame, frame / 10)
        frame += 1
    assert state.blocks == ()
    assert tracker.block_watch.searches - searches == GONE_SEARCHES
    assert (frame - 1) / 10 - taken_at <= 1.0


def test_a_new_block_gets_its_second_look_on_the_next_frame():
    """A block is published when two searches agree; the second waited 0.25 s, so at 10 frames/s a
    brick was published after 0.6 s. While a new block awaits its second look the next frame is
    searched; once it stands, a settled change waits `recheck_s` and a still table `every_s`."""
    from companion.vision.blockwatch import BlockWatch

    scene, _, with_brick, _ = _one_brick("green")
    locator = Locator(scene.setup(), blocks=False)
    analysis = locator.analyse(with_brick)
    camera, _ = locator.camera(with_brick.shape[1], with_brick.shape[0])
    pose, minis = analysis.registration.pose, analysis.state.minis
    watch = BlockWatch(BlockFinder(scene.setup(), remember=True))
    first = 1.0
    watch.update(with_brick, camera, pose, minis, first)
    assert watch.states() == ()
    assert not watch.due(first) and watch.due(first + 1 / 30)
    watch.update(with_brick, camera, pose, minis, first + 1 / 30)
    assert [b.color for b in watch.states()] == ["green"]
    last = first + 1 / 30
    assert not watch.due(last + 0.1) and not watch.due(last + 0.1, changed=True)
    assert watch.due(last + watch.recheck_s + 0.01, changed=True) and watch.due(last + watch.every_s + 0.01)
    assert not watch.due(last + watch.every_s - 0.1)


def _green_brick_frames():
    """A green brick's scene and frame, the same frame with another noise draw, the bare table, and
    what a search of them needs (camera, pose, minis)."""
    scene, _, with_brick, renderer = _one_brick("green")
    other_noise = renderer.render(replace(scene, noise_seed=7))
    without = renderer.render(replace(scene, bricks=()))
    locator = Locator(scene.setup(), blocks=False)
    analysis = locator.analyse(with_brick)
    camera, _ = locator.camera(with_brick.shape[1], with_brick.shape[0])
    return scene, with_brick, other_noise, without, (camera, analysis.registration.pose, analysis.state.minis)


@pytest.mark.slow
def test_frames_that_came_while_a_search_ran_are_its_second_look_where_the_block_did_not_change():
    """Searched in their own process, a search takes 0.1-0.3 s and the second look waited for a
    search of a frame after it: at 10 frames/s a brick was published 0.3-0.7 s after it was put
    down. A frame that came meanwhile with the block's picture unchanged (another noise draw) is
    that look; one where it changed (the brick lifted again) is not, nor is a search during which
    no frame came."""
    from companion.vision.blockwatch import BlockWatch

    scene, with_brick, other_noise, without, (camera, pose, minis) = _green_brick_frames()

    def published_after_one_search(later: np.ndarray | None) -> list[str]:
        watch = BlockWatch(BlockFinder(scene.setup(), remember=True), background=True)
        try:
            watch.start(with_brick, camera, pose, minis, 1.0)  # the worker starts first: this runs for seconds
            if later is not None:
                watch.look(later, 1.1)
            watch.wait()
            assert watch.searches == 1
            return [b.color for b in watch.states()]
        finally:
            watch.close()

    assert published_after_one_search(other_noise) == ["green"]
    assert published_after_one_search(without) == []
    assert published_after_one_search(None) == []


def test_the_next_frame_after_a_search_is_its_second_look_where_the_block_did_not_change():
    """A search that ends before the next frame comes had its second look from a second search of
    that frame: at 5 frames/s a brick was published 0.6-0.8 s after it was put down. The next
    frame with the block's picture unchanged is that look (a search of it would read the same
    pixels); one where it changed is not, and then the next frame is searched."""
    from companion.vision.blockwatch import BlockWatch

    scene, with_brick, other_noise, without, (camera, pose, minis) = _green_brick_frames()
    watch = BlockWatch(BlockFinder(scene.setup(), remember=True))
    watch.update(with_brick, camera, pose, minis, 1.0)
    watch.look(other_noise, 1.0)  # the searched frame itself is no later look
    assert watch.states() == () and not watch.seen
    watch.look(other_noise, 1.2)
    assert [b.color for b in watch.states()] == ["green"] and watch.seen and watch.searches == 1
    assert not watch.due(1.4)  # confirmed: no second search

    watch = BlockWatch(BlockFinder(scene.setup(), remember=True))
    watch.update(with_brick, camera, pose, minis, 1.0)
    watch.look(without, 1.2)  # lifted again
    assert watch.states() == () and watch.due(1.2)
    watch.look(with_brick, 1.4)  # one look a search: the next decides by a search again
    assert watch.states() == ()


def test_a_published_block_changes_height_only_when_two_searches_agree():
    """One search alone used to replace a published block's height: in the demo a lamp misfound
    in one frame read the castle's blocks one to three plates low, and the next turn's ledger took
    the difference back for bricks put down (9 AP against a black 3). A brick put on the block is
    taken at the second search that sees it; a single other reading is forgotten."""
    from companion.vision.blockwatch import BlockWatch

    scene, brick, with_brick, renderer = _one_brick("green")
    stacked = renderer.render(replace(scene, bricks=(brick, replace(brick, z0_mm=19.2, height_mm=9.6))))
    locator = Locator(scene.setup(), blocks=False)
    analysis = locator.analyse(with_brick)
    camera, _ = locator.camera(with_brick.shape[1], with_brick.shape[0])
    pose, minis = analysis.registration.pose, analysis.state.minis

    def heights(watch: BlockWatch) -> list[float]:
        return [round(b.height_mm, 1) for b in watch.states()]

    watch = BlockWatch(BlockFinder(scene.setup(), remember=True))
    for t in (1.0, 1.1):
        watch.update(with_brick, camera, pose, minis, t)
    (low,) = heights(watch)
    watch.update(stacked, camera, pose, minis, 2.0)
    assert heights(watch) == [low] and watch.due(2.05)  # measured otherwise once: looked at again at once
    watch.update(stacked, camera, pose, minis, 2.1)
    (high,) = heights(watch)
    assert high >= low + 6.4 and watch.states()[0].id == 0  # the same block, grown
    watch.update(with_brick, camera, pose, minis, 3.0)  # one reading of the old height ...
    watch.update(stacked, camera, pose, minis, 3.1)  # ... then the stack again: never published
    assert heights(watch) == [high]


@pytest.mark.slow
def test_a_hand_resting_on_a_block_does_not_remove_it_at_once():
    scene, brick, with_brick, renderer = _one_brick("blue")
    covered = renderer.render(replace(scene, hands=(SynthHand(brick.x_mm, brick.y_mm, 60.0, 200.0),)))
    tracker = LiveTracker(scene.setup())
    state = None
    for frame in range(12):
        state = tracker.update(with_brick, frame, frame / 10)
    assert state is not None and len(state.blocks) == 1
    every_s = tracker.block_watch.every_s
    for frame in range(12, 12 + int(10 * every_s * (tracker.block_watch.forget - 1)) + 1):
        state = tracker.update(covered, frame, frame / 10)
    assert len(state.blocks) == 1  # a hand over it for a few seconds is not a removal


def test_block_states_carry_footprint_height_colour_and_confidence(standard_scene):
    scene, image = standard_scene
    locator = Locator(scene.setup(), blocks=False)
    analysis = locator.analyse(image)
    camera, _ = locator.camera(image.shape[1], image.shape[0])
    blocks = BlockFinder(scene.setup()).find(image, camera, analysis.registration.pose, analysis.state.minis)
    states = to_block_states(blocks)
    assert [s.id for s in states] == list(range(len(blocks)))
    for s, b in zip(states, blocks):
        assert len(s.footprint_mm) == 4 and s.height_mm == round(b.height_mm, 1) and s.color == b.color
    assert not analysis.state.blocks_seen  # blocks=False: nobody looked, and the JSON says so in words
    assert BLOCKS_NOT_SEEN in analysis.state.to_json()["warnings"]
    again = TableState.from_json(analysis.state.to_json())
    assert not again.blocks_seen and again.warnings == analysis.state.warnings


@pytest.mark.slow
def test_an_empty_table_frame_tells_blocks_from_the_table():
    scene, image = rendered(7)
    background = Renderer().render(replace(scene, minis=(), bricks=()))
    analysis = Locator(scene.setup()).analyse(image, background=background)
    summary = _score(scene, analysis.blocks).summary()
    assert summary["found"] >= 7 / 8 and summary["false_per_frame"] <= 1 and summary["mean_iou"] >= 0.85


def test_locate_refuses_an_empty_table_from_another_camera(tmp_path, standard_scene):
    import cv2

    from companion.cli import main

    scene, image = standard_scene
    frame, empty, setup = tmp_path / "frame.png", tmp_path / "empty.png", tmp_path / "setup.toml"
    cv2.imwrite(str(frame), image)
    cv2.imwrite(str(empty), image[:500, :700])
    setup.write_text(setup_to_toml(scene.setup()), encoding="utf-8")
    assert main(["locate", str(frame), "--setup", str(setup), "--background", str(empty)]) == 3


@pytest.mark.slow
def test_the_demo_castle_is_seen_wall_by_wall():
    from companion.synth.siege import DEFAULT_FRAMES, base_scene, siege_scene, siege_setup

    base = base_scene()
    scene = siege_scene(base, 0, DEFAULT_FRAMES)
    blocks = Locator(siege_setup(base)).analyse(Renderer().render(scene)).blocks
    # Five pieces of wall two bricks high (bricks in a row touch: each row is one block), the
    # marker card in the yard and the defenders beside the walls not among them.
    assert len(blocks) == 5
    assert all(b.color == "white" and abs(b.height_mm - 19.2) <= 6.4 for b in blocks)
    truth = [b.footprint_mm() for b in scene.bricks]
    for b in blocks:  # every reported wall lies on bricks of the castle
        covered = max(polygon_iou(b.footprint_mm, t) for t in truth)
        assert covered > 0.15


def test_a_live_block_search_runs_off_the_camera_thread():
    """With blocks in the background, `update` returns while the search is still under way in its
    own process (its Python holds no lock the camera thread or the server's threads wait for): no
    frame waits for a block search; its result is published when it is done."""
    import os

    from companion.vision import blockwatch
    from tests.conftest import rendered

    scene, image = rendered(101)
    tracker = LiveTracker(scene.setup(), blocks_in_background=True)
    try:
        state = tracker.update(image, 0, 0.0)  # starts the search and returns
        assert not tracker.block_watch._running.done() and state.blocks == ()  # the worker is still at it
        state = tracker.update(image, 1, 0.5)
        assert state.blocks == () and tracker.block_watch.searches == 0  # no second search while one runs
        tracker.block_watch.wait()
        assert tracker.block_watch.searches == 1
        worker_pid = tracker.block_watch._pool.submit(os.getpid).result(30)
        assert worker_pid != os.getpid() and blockwatch._worker_finder is None  # searched elsewhere
    finally:
        tracker.close()


@pytest.mark.parametrize("name", list(LEGO_RGB))
def test_a_colour_is_named_through_a_tone_curve_a_lamp_highlight_and_clipping(name):
    from companion.vision.colours import name_colour, srgb_to_linear

    albedo = srgb_to_linear(np.array(LEGO_RGB[name]))
    paper = float(srgb_to_linear(PAPER_ALBEDO))
    warm = np.array([1.0, 0.86, 0.66])  # what a white balance leaves of a 3000 K lamp
    # (a sheen of white much stronger than 6 % makes black a dark gray: only hues survive it)
    sheens = (0.0, 0.06) if name in ("black", "gray", "white") else (0.0, 0.06, 0.15)
    for exposure in (0.8, 1.0, 1.25):
        for highlight in sheens:
            light = exposure * warm
            top = encode(albedo * light + highlight * light)
            assert name_colour(top, encode(paper * light))[0] == name, (exposure, highlight)


def test_a_black_tops_sheen_under_a_clipped_paper_is_no_gray_top_once_the_frames_hued_tops_give_the_light():
    """An auto-exposure for a dark table clips the paper (here 2.5 times the ceiling): a black
    top's sheen then reads like a dim gray top against it. A green top beside it, named by its
    hue, measures the light the paper no longer tells, and no top of the frame is that dim."""
    from companion.vision.colours import TopReading, calibrating_shade, frame_top_shade, srgb_to_linear
    warm = np.array([1.0, 0.86, 0.66])
    exposure = 2.5

    def reading(name: str, shade: float = 1.0, sheen: float = 0.0) -> TopReading:
        albedo = srgb_to_linear(np.array(LEGO_RGB[name]))
        return TopReading(encode((albedo * shade + sheen) * exposure * warm),
                          encode(float(srgb_to_linear(PAPER_ALBEDO)) * exposure * warm), 1.0, None)

    green = reading("green")
    assert green.name()[0] == "green"
    top_shade = frame_top_shade([calibrating_shade(green, "green", green.name()[1])])
    assert top_shade is not None
    for sheen in (0.06, 0.08):
        black = reading("black", sheen=sheen)
        assert black.name()[0] == "gray" and black.name(top_shade=top_shade)[0] == "black", sheen
    assert reading("gray", shade=0.6).name(top_shade=top_shade)[0] == "gray"
    for name in ("red", "blue", "orange", "green"):
        assert reading(name).name(top_shade=top_shade)[0] == name
    # A gray, white or black top measures nothing: its shade is what is in doubt.
    assert calibrating_shade(reading("gray"), "gray", 1.0) is None
    assert calibrating_shade(reading("yellow", shade=1.5), "yellow", 1.0) is None  # its red at the ceiling


def test_a_gray_top_lit_as_the_frames_hued_tops_is_no_white_one_in_shade():
    """A lamp lights the tops 2.2 times as much as the anchors' paper (which it does not clip): a
    gray top then reads as a white one at 0.95 of the paper's light would. The frame's hued tops
    say how its tops are lit, and a top is likeliest lit as they are."""
    from companion.vision.colours import TopReading, calibrating_shade, frame_top_shade, srgb_to_linear
    warm = np.array([1.0, 0.86, 0.66])
    exposure, shade = 0.3, 2.2
    for sheen in (0.0, 0.06):
        def reading(name: str) -> TopReading:
            albedo = srgb_to_linear(np.array(LEGO_RGB[name]))
            return TopReading(encode((albedo * shade + sheen) * exposure * warm),
                              encode(float(srgb_to_linear(PAPER_ALBEDO)) * exposure * warm), 1.0, None)

        hued = [reading(name) for name in ("green", "blue", "red")]
        top_shade = frame_top_shade([s for r in hued if (s := calibrating_shade(r, *r.name())) is not None])
        assert top_shade is not None and top_shade > 2.0
        assert reading("gray").name()[0] == "white", sheen  # (the paper alone cannot tell)
        for name in ("gray", "white", "black", "yellow", "orange"):
            assert reading(name).name(top_shade=top_shade)[0] == name, (name, sheen)


@pytest.mark.parametrize("top_rgb, paper_rgb, light, top_shade, name, held", [
    ((0.518, 0.204, 0.192), (0.995, 0.997, 0.999), 1.092, 2.985, "red", "black"),  # standing set, table 7
    ((0.631, 0.322, 0.110), (0.999, 0.989, 0.908), 0.859, 3.488, "orange", "black"),  # table 16
    ((0.992, 0.953, 0.557), (0.998, 0.998, 0.990), 0.866, 3.310, "orange", "orange"),  # table 5: lit, as before
])
def test_a_top_in_the_shadow_of_the_mini_standing_on_it_is_not_held_to_the_frames_light(top_rgb, paper_rgb, light,
                                                                                        top_shade, name, held):
    """The path-traced standing set's tops under minis (readings and frame light as measured): the
    part of a top seen beside the mini standing on it may lie in its shadow. Held to the light of
    the frame's tops (three times the paper's) a red or orange top that dark was black; its light
    is the frame's at most, and likeliest that (an orange top lit as the frame's is no yellow)."""
    from companion.vision.colours import TopReading

    reading = TopReading(np.array(top_rgb), np.array(paper_rgb), light, None)
    assert reading.name(top_shade=top_shade)[0] == held
    assert replace(reading, shaded_by_a_mini=True).name(top_shade=top_shade)[0] == name


@pytest.mark.parametrize("name", [n for n in LEGO_RGB if n != "black"])  # a black top is never blown to white
def test_a_top_the_glare_blew_to_white_is_named_by_its_walls(name):
    """A glossy top under a lamp clips to white in every channel; its walls, turned from the lamp,
    keep the plastic's hue at a shade no top has. Colours of a hue are named by the wall; white
    and gray stay neutral (which of the two, no clipped top can say: a gray wall in shade is a
    white one in deeper shade)."""
    from companion.vision.colours import clipped_top, name_colour, srgb_to_linear
    albedo = srgb_to_linear(np.array(LEGO_RGB[name]))
    warm = np.array([1.0, 0.86, 0.66])
    paper = encode(float(srgb_to_linear(PAPER_ALBEDO)) * warm)
    top = encode(albedo * warm * 1.2 + 1.5 * warm)  # the lamp's reflection, clipped
    assert clipped_top(top)
    for wall_shade in (0.15, 0.3, 0.6):
        wall = encode(albedo * warm * wall_shade)
        named = name_colour(top, paper, 1.0, wall_rgb=wall)[0]
        assert named in (("white", "gray") if name in ("white", "gray") else (name,)), (wall_shade, named)


@pytest.mark.parametrize("name", [n for n in LEGO_RGB if n != "black"])
def test_a_top_the_glare_paled_without_clipping_is_named_by_its_hued_walls(name):
    """A glossy top under an area lamp can take its reflection all over and stay just under the
    ceiling (a blue top read 231, 248, 251: white, one channel near the top): a hue its walls show
    names it; a white or gray brick's walls show none, and its top is named as before."""
    from companion.vision.colours import clipped_top, glared_top, name_colour, naming_wall, srgb_to_linear
    albedo = srgb_to_linear(np.array(LEGO_RGB[name]))
    warm = np.array([1.0, 0.86, 0.66])
    paper = encode(float(srgb_to_linear(PAPER_ALBEDO)) * warm)
    for sheen in (0.6, 0.75):
        top = encode(albedo * warm * 0.9 + sheen * warm)
        if clipped_top(top) or not glared_top(top, paper):
            continue  # (a yellow top clips, a dark one stays below the glare level: other tests' cases)
        for wall_shade in (0.15, 0.3, 0.6):
            wall = encode(albedo * warm * wall_shade)
            chosen = naming_wall(top, wall, paper)
            if name in ("white", "gray"):
                assert chosen is None  # as before: the top alone
            else:
                assert chosen is not None and name_colour(top, paper, 1.0, wall_rgb=chosen)[0] == name, (sheen, wall_shade)


@pytest.mark.parametrize("name", ["orange", "red", "yellow"])
def test_a_top_clipped_in_one_channel_is_named_with_its_walls(name):
    """Overexposed, an orange top's red clips and its green keeps rising: the ratio of its
    channels is gone, its walls in shade keep it. Red and yellow stay theirs. The top alone is
    fitted on the channels it has left, against a paper clipped too (a floor, not a level: it
    had read yellow)."""
    from companion.vision.colours import name_colour, naming_wall, srgb_to_linear
    albedo = srgb_to_linear(np.array(LEGO_RGB[name]))
    warm = np.array([1.0, 0.86, 0.66])
    for exposure in (1.5, 2.0, 2.5):
        paper = encode(np.minimum(float(srgb_to_linear(PAPER_ALBEDO)) * warm * exposure, 1.0))  # clipped too
        top = encode(albedo * warm * exposure)
        wall = naming_wall(top, encode(albedo * warm * 0.4), paper)
        assert name_colour(top, paper, 1.0, wall_rgb=wall)[0] == name, exposure
        assert name_colour(top, paper)[0] == name, exposure


@pytest.mark.parametrize("name", ["gray", "white", "black"])
def test_neutral_tops_are_named_against_a_paper_the_camera_clipped(name):
    """An auto-exposure metering a dark table to mid grey puts the anchors' paper at 1.5-3 times
    the camera's ceiling: it reads 255 however bright it is, and a gray top in the same light
    reads 238-255, as bright as the paper reads. Against a clipped paper a face may be lit up to
    PAPER_HEADROOM times what the paper reads: gray had to be white (its shade against the paper
    capped at 1.6), and stays gray with its walls; white and black stay theirs."""
    from companion.vision.colours import name_colour, naming_wall, srgb_to_linear
    albedo = srgb_to_linear(np.array(LEGO_RGB[name])) / srgb_to_linear(PAPER_ALBEDO)
    paper = encode(np.ones(3))
    for exposure in (1.5, 2.0, 2.8):  # the paper's light, in camera ceilings
        top = encode(albedo * exposure)
        wall = naming_wall(top, encode(albedo * exposure * 0.3), paper)
        assert name_colour(top, paper, 1.0, wall_rgb=wall)[0] == name, exposure


@pytest.mark.parametrize("exposure", [1.5, 2.0, 2.5])
def test_an_orange_top_clipped_in_red_under_a_sheen_is_orange(exposure):
    """Path traced, an orange 2x2 read (251, 221, 89) with walls of (164, 118, 60): its red clipped,
    a little of the lamp's white on it, its walls lit by the room's grey as well as its own hue.
    Fitted on all three channels the clipped red pulled the shade down and the top read yellow;
    fitted on green and blue it is orange."""
    from companion.vision.colours import name_colour, naming_wall, srgb_to_linear
    albedo = srgb_to_linear(np.array(LEGO_RGB["orange"])) / srgb_to_linear(PAPER_ALBEDO)
    paper = encode(np.ones(3))
    wall = encode(albedo * 0.35 + 0.08)
    for sheen in (0.05, 0.1, 0.15):
        top = encode(albedo * exposure + sheen)
        assert name_colour(top, paper, 1.0, wall_rgb=naming_wall(top, wall, paper))[0] == "orange", sheen


def test_a_glossy_orange_top_is_told_from_skin_by_its_walls():
    """Measured tops and walls (BGR under the paper's white balance): orange and red bricks 28.8 mm
    tall on the path-traced frames, whose tops the lamp paled into skin tones, and fingers of the
    ray-cast hands. A finger's sides are its top in shade; a brick's walls keep its plastic's hue."""
    from companion.vision.hands import skin_top

    bricks = [([73, 174, 212], [58, 86, 178]), ([84, 192, 242], [66, 113, 177])]
    fingers = [([116, 142, 188], [122, 153, 201]), ([82, 99, 130], [65, 79, 104]), ([95, 113, 140], [60, 76, 98])]
    assert not any(skin_top(np.array(top, float), np.array(wall, float)) for top, wall in bricks)
    assert all(skin_top(np.array(top, float), np.array(wall, float)) for top, wall in fingers)
    assert skin_top(np.array(bricks[0][0], float), None)  # no wall seen: skin-toned is skin


def test_a_skin_toned_brick_under_the_lens_is_no_finger(monkeypatch):
    """A nougat brick (Lego's skin-coloured one; a lamp pales a glossy orange top to the same
    tones, as on three path-traced seed 1 tables) standing right under the camera: none of its
    walls show, and a skin-toned top with no wall seen was taken for a finger. A finger comes with
    its hand; a brick stands alone."""
    from companion.vision.hands import looks_like_skin

    nougat = (0.82, 0.57, 0.41)
    monkeypatch.setitem(LEGO_RGB, "nougat", nougat)  # (the palette the bricks are painted and named in)
    assert looks_like_skin(np.array(nougat[::-1]) * 255 * PAPER_ALBEDO)
    base, _ = rendered(3)
    x, y = base.pose.camera_centre_mm[:2]
    brick = SynthBrick(float(x), float(y), 30.0, 4, 2, 0.0, 19.2, "nougat")
    scene = replace(base, bricks=(brick,), minis=tuple(m for m in base.minis if np.hypot(m.x_mm - x, m.y_mm - y) > 70))
    _, blocks = _alone_found("plain", scene)
    assert [b.color for b in blocks] == ["nougat"], [(b.color, b.height_mm) for b in blocks]
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) >= 0.8
    for towards_deg in (0.0, 90.0, 200.0):  # a hand there, its fingers over the foot, is still no block
        hand = replace(scene, bricks=(), hands=(SynthHand(float(x) - 60 * np.cos(np.radians(towards_deg)),
                                                          float(y) - 60 * np.sin(np.radians(towards_deg)), 40.0, towards_deg),))
        assert not Locator(hand.setup()).analyse(Renderer().render(hand)).blocks, towards_deg


def test_a_hand_is_seen_in_a_frame_by_a_hands_worth_of_skin_in_one_piece_or_on_a_skin_toned_table():
    from companion.vision.cutout import COARSE_MM
    from companion.vision.hands import HAND_MM2, hand_may_be_in_view

    white = np.full(3, PAPER_ALBEDO)  # the paper seen as paper: colours are judged as they are
    gray, skin = (128, 128, 128), (120, 160, 215)  # BGR
    coarse = np.full((200, 300, 3), gray, np.uint8)
    table = coarse.copy()
    differs = np.zeros((200, 300), np.uint8)
    side = int(np.ceil(np.sqrt(HAND_MM2) / COARSE_MM)) + 1  # a palm
    coarse[20:20 + side, 20:20 + side] = skin
    differs[20:20 + side, 20:20 + side] = 1
    assert hand_may_be_in_view(coarse, table, differs, white)
    coarse[20:20 + side, 20:20 + side:4] = gray  # the same skin in strips (orange bricks side by side)
    differs[20:20 + side, 20:20 + side:4] = 0
    assert not hand_may_be_in_view(coarse, table, differs, white)
    assert hand_may_be_in_view(coarse, np.full_like(table, skin), differs, white)  # a wooden table tells nothing


@pytest.mark.parametrize("from_foot_mm, height_mm", [(450.0, 19.2), (350.0, 28.8)])
def test_a_skin_toned_brick_whose_walls_share_its_hue_is_a_brick_where_no_hand_is_seen(monkeypatch, from_foot_mm,
                                                                                      height_mm):
    """A nougat brick seen from aside: its walls in shade are its top's hue, darker, as a finger's
    sides are its skin in shade, and it was taken for a finger (so was a matte orange brick on a
    path-traced hard table, seed 0 table 0, no hand in the frame). A finger comes with its hand:
    where the frame shows none (`hand_may_be_in_view`), it is a brick."""
    monkeypatch.setitem(LEGO_RGB, "nougat", (0.82, 0.57, 0.41))
    base, _ = rendered(3)
    x, y = _spot_seen_from_aside(base, from_foot_mm)
    brick = SynthBrick(x, y, 20.0, 4, 2, 0.0, height_mm, "nougat")
    scene = replace(base, bricks=(brick,))
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    assert [(b.color, b.height_mm) for b in blocks] == [("nougat", height_mm)]
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) >= 0.8


def test_a_row_of_fingers_under_the_lens_is_no_brick():
    """A hand's fingers under the lens (plain camera, bench seed 2 with a hand, table 12): no wall
    shows, and their skin-toned top was fitted as a red box 88 x 44 mm (2 x 11 studs across the
    top) with no hand's worth of skin in its window; bricks are not made 11 studs long."""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    scene = bench_scene("plain", 2 * 100003 + 12, "standard", n_hands=1)
    blocks = Locator(scene.setup()).analyse(Camera("plain").render(scene)).blocks
    assert not [b for b in blocks if np.hypot(*(b.footprint_mm.mean(axis=0) - (486.0, 309.0))) < 40], \
        [(b.color, b.height_mm) for b in blocks]


@pytest.mark.parametrize("table_albedo, surface", [((0.45, 0.30, 0.16), "wood"), ((0.12, 0.30, 0.14), "green felt"),
                                                   ((0.55, 0.55, 0.55), "gray mat")])
def test_a_minis_shadow_is_told_from_a_black_brick_where_the_table_has_a_hue(table_albedo, surface):
    """Beside a mini a lamp's shadow is the table darker in every channel alike (a bluer sky may
    light it); black plastic is gray, darker in the table's brighter channels. On wood or felt
    the two differ; on a gray mat they do not, and the candidate stays a brick."""
    from companion.vision.shade import table_in_shade
    from companion.vision.colours import srgb_to_linear

    warm = np.array([1.0, 0.86, 0.66])  # a 3000 K lamp after the camera's white balance
    paper = encode(float(srgb_to_linear(PAPER_ALBEDO)) * warm)
    table = np.asarray(table_albedo) * warm
    sky = np.array([0.85, 1.0, 1.25])  # the shadow's light: the room's bluer bounce
    as_bgr = lambda rgb: np.tile(encode(rgb)[::-1] * 255.0, (20, 1))  # noqa: E731
    for depth in (0.1, 0.3, 0.6):
        shadow = table * depth * sky
        assert table_in_shade(as_bgr(shadow), as_bgr(table), paper) == (surface != "gray mat"), depth
    black = np.array([0.05, 0.05, 0.05]) * warm * 1.3
    assert not table_in_shade(as_bgr(black), as_bgr(table), paper)


@pytest.mark.parametrize("table_albedo", [(0.45, 0.30, 0.16), (0.12, 0.30, 0.14)])  # wood, green felt
def test_a_shadow_pixel_is_told_from_a_bricks_wall_in_shade(table_albedo):
    """Pixel by pixel (a block's own shadow inside its candidate): the table darker in every
    channel alike is shade; a coloured brick's wall turned from the lamp is its plastic's hue,
    however dark, and black plastic stays a brick."""
    from companion.vision.shade import SHADE_TINT, shaded
    from companion.vision.colours import srgb_to_linear

    warm = np.array([1.0, 0.86, 0.66])
    paper = encode(float(srgb_to_linear(PAPER_ALBEDO)) * warm)
    table = np.asarray(table_albedo) * warm
    as_bgr = lambda rgb: encode(rgb)[::-1] * 255.0  # noqa: E731
    sky = np.array([0.85, 1.0, 1.25])
    shadows = [as_bgr(table * depth * sky) for depth in (0.15, 0.3, 0.6)]
    walls = [as_bgr(srgb_to_linear(np.array(LEGO_RGB[name])) * warm * shade)
             for name in ("yellow", "red", "blue", "white") for shade in (0.15, 0.3, 0.6)]
    black = [as_bgr(np.array([0.05, 0.05, 0.05]) * warm * 1.3)]
    seen = np.array(shadows + walls + black)
    verdict = shaded(seen, np.tile(as_bgr(table), (len(seen), 1)), paper, SHADE_TINT)
    assert verdict[:3].all() and not verdict[3:].any(), verdict


def test_a_shadow_as_blue_as_the_minis_shadows_is_shade_and_black_plastic_is_not():
    """Under a warm lamp with a cooler room light (path-traced seed 1, table 4: a felt mat, a 6500 K
    sky filling the shadows of a warmer lamp) a brick's deep shadow kept 3.4%, 5.2% and 10.8% of the
    table's red, green and blue: three times bluer than the table, past SHADE_TINT, so no shade, and
    every brick's shadow became a black brick beside it (5 false blocks on that table). The minis'
    deep shadows measure the frame's shade tint (`frames_shade_tint`); a top tinted as they are,
    or on the way to them from the table's (a penumbra), may be shade. Black plastic, under half
    the deepest shadow's light, and a blue brick's wall turned from the lamp are not."""
    from companion.vision.shade import Lamplight, frames_shade_tint, top_may_be_shade
    from companion.vision.colours import srgb_to_linear
    from companion.vision.lamps import FoundLamp, darkness

    as_bgr = lambda rgb: encode(np.asarray(rgb, float))[::-1] * 255.0  # noqa: E731
    table_rgb = srgb_to_linear(np.array([113.0, 120.0, 110.0]) / 255.0)
    table_bgr = as_bgr(table_rgb)
    deep = as_bgr(table_rgb * np.array([0.034, 0.052, 0.108]))
    penumbra = as_bgr(table_rgb * np.array([0.4, 0.45, 0.55]))
    black = as_bgr(np.array([0.002, 0.002, 0.002]))
    blue_wall = as_bgr(srgb_to_linear(np.array(LEGO_RGB["blue"])) * np.array([1.0, 0.86, 0.66]) * 0.3)

    coarse = np.tile(table_bgr, (40, 40, 1)).astype(np.float32)
    shadows = np.zeros((40, 40), np.uint8)
    shadows[10:20, 10:30] = 1
    coarse[10:20, 10:30] = deep
    table = np.tile(table_bgr, (40, 40, 1)).astype(np.float32)
    lamp = FoundLamp((900.0, 1000.0, 1500.0), 7, 0.86, depth=0.93)
    dark = darkness(coarse, table)
    tint = frames_shade_tint(coarse, table, shadows, dark, [lamp])
    assert tint is not None and tint[2] - tint[0] > 0.6  # (RGB, log) the shade is bluer than the table
    clear = np.ones((40, 40), np.uint8)
    with_tint, without = Lamplight((lamp,), dark, clear, tint), Lamplight((lamp,), dark, clear)
    assert top_may_be_shade(with_tint, deep, table_bgr) and top_may_be_shade(with_tint, penumbra, table_bgr)
    assert not top_may_be_shade(without, deep, table_bgr)  # (what it was before)
    assert not top_may_be_shade(with_tint, black, table_bgr)
    assert not top_may_be_shade(with_tint, blue_wall, table_bgr)


def test_a_towers_shadow_is_its_own_where_the_lamp_found_or_the_far_lamp_of_its_slope_casts_it():
    """A lamp found from the minis' short shadows is sure of its slope in the table's middle, less
    of how far it is: on a path-traced walls table (8) a point 1100 mm up was found for a far lamp,
    and at the far corner it throws an 86 mm tower's shadow more than twice as long, onto lit
    table: the tower, placed right, was dropped as a box with no shadow of its own. The far lamp
    with the same slope in the middle casts it where it is; a tower with no shadow at all under
    either is still no tower."""
    from companion.vision.blockshadows import no_shadow_of_its_own
    from companion.vision.cutout import COARSE_MM, fill_coarse
    from companion.vision.shade import Lamplight
    from companion.vision.lamps import FoundLamp

    width_mm, depth_mm = 1200.0, 800.0
    shape = (int(depth_mm / COARSE_MM), int(width_mm / COARSE_MM))
    near = FoundLamp((900.0, 400.0, 1100.0), 5, 1.0, depth=0.9)
    middle = np.array([width_mm, depth_mm]) / 2
    far = near.as_far(middle)
    # the same slope in the middle, and the far one's the same everywhere
    for lamp in (near, far):
        assert np.allclose(lamp.shadow_of(middle, np.array(10.0)) - middle, [-10 * 300 / 1090, 0.0], atol=0.05)
    footprint = TableRect(np.array([200.0, 170.0]), np.array([1.0, 0.0]), (7.9, 7.9))
    tower = box_block(footprint, 86.4, "red", (2, 2), (40.0, 40.0, 200.0))
    clear = np.ones(shape, np.uint8)
    for truth, has_a_shadow in ((far, True), (near, True), (None, False)):
        dark = np.zeros(shape, np.float32)
        if truth is not None:
            dark = fill_coarse(np.zeros(shape, np.uint8), truth.box_shadow(footprint.corners(), 86.4)).astype(np.float32) * 0.9
        assert no_shadow_of_its_own(Lamplight((near,), dark, clear), tower) == (not has_a_shadow), truth


def test_a_tall_box_whose_shadow_ends_halfway_was_read_too_tall_and_a_pale_whole_shadow_is_its_own():
    """A tower's shadow is as long as the tower is tall. An orange brick 28.8 mm high fitted 41.6 mm
    (ray-cast walls/towers/touching seed 13 table 2) stood: its shadow under one lamp was 1.01 as
    dark as that lamp's, under the other 0.36, pale (a broad lamp's shadow of a tall tower is), but
    its far half was lit (0.13): the shadow ended where a 28.8 mm box's does. A box whose shadow
    under a lamp is dark only halfway casts no shadow of its own; one whose shadow is pale all the
    way to its tip, with another lamp's dark, does."""
    from companion.vision.blockshadows import no_shadow_of_its_own
    from companion.vision.cutout import COARSE_MM, fill_coarse
    from companion.vision.shade import Lamplight
    from companion.vision.lamps import FoundLamp

    shape = (int(800.0 / COARSE_MM), int(1200.0 / COARSE_MM))
    # far lamps (their shadows the same length all over the table), shadows 0.75 mm a mm of height
    lamps = (FoundLamp((75600.0, 400.0, 1e5), 5, 1.0, depth=0.5), FoundLamp((600.0, -74600.0, 1e5), 5, 1.0, depth=0.5))
    footprint = TableRect(np.array([600.0, 400.0]), np.array([1.0, 0.0]), (7.9, 7.9))
    clear = np.ones(shape, np.uint8)

    def seen(height_mm: float, shares: tuple[float, float]) -> Lamplight:
        """The darkness of a box `height_mm` high's shadows, each this share of its lamp's depth."""
        dark = np.zeros(shape, np.float32)
        for lamp, share in zip(lamps, shares):
            cast = fill_coarse(np.zeros(shape, np.uint8), lamp.box_shadow(footprint.corners(), height_mm))
            dark = np.maximum(dark, cast.astype(np.float32) * lamp.depth * share)
        return Lamplight(lamps, dark, clear)

    tower = box_block(footprint, 64.0, "orange", (2, 2))
    assert no_shadow_of_its_own(seen(41.6, (1.0, 1.0)), tower)  # both shadows end at 41.6 mm's length
    assert not no_shadow_of_its_own(seen(64.0, (1.0, 1.0)), tower)
    assert not no_shadow_of_its_own(seen(64.0, (1.0, 0.35)), tower)  # pale all the way, the other dark
    assert no_shadow_of_its_own(seen(64.0, (0.35, 0.35)), tower)  # pale under every lamp


def test_a_tall_box_with_no_shadow_of_its_own_is_the_low_brick_its_costs_also_answer(standard_scene):
    """A sheened green 9.6 mm brick beside the lens (path-traced walls table 9) was fitted 41.6 mm
    tall and dropped as casting no shadow of its own; its height costs had a second minimum at
    9.6, well inside the low range. A tower's costs fall all the way to the low range's end (32-35.2
    mm on every tall box the benches' frames dropped): it stays dropped."""
    from companion.vision.blockshadows import low_instead
    from companion.vision.foundblock import TALL_FROM_MM, FoundBlock
    from companion.vision.brickfit import HEIGHTS_MM, BoxFit

    scene, _ = standard_scene
    view = TableView(scene.camera, scene.pose)
    footprint = TableRect(np.array([500.0, 170.0]), np.array([1.0, 0.0]), (15.9, 3.9))

    def tall(costs: dict[float, float]) -> FoundBlock:
        top = footprint.scaled_about(view.foot_mm, float(view.k(41.6)))
        corners = np.concatenate([footprint.corners(), top.corners()])
        silhouette = TableRect.from_quad(cv2.boxPoints(cv2.minAreaRect(corners.astype(np.float32))))
        fit = BoxFit(top=top, silhouette=silhouette, height_mm=41.6, footprint=footprint, height_cost=costs)
        return FoundBlock(footprint.corners(), 41.6, "green", 0.99, 0.9, 0.9, (4, 1), fit, np.array([70.0, 180.0, 130.0]))

    low_minimum = {h: 0.0 if h == 41.6 else 22.8 + abs(h - 9.6) * 3 for h in HEIGHTS_MM}
    brick = low_instead(view, tall(low_minimum))
    assert brick is not None and brick.height_mm == pytest.approx(9.6) and brick.color == "green"
    assert all(h < TALL_FROM_MM for h in brick.fit.height_cost) and brick.fit.height_cost[9.6] == 0.0
    falling = {h: max(0.0, 41.6 - h) * 2 for h in HEIGHTS_MM}  # a tower's: least at the low range's end
    assert low_instead(view, tall(falling)) is None


def _shadowed_brick(surface: str, colour: str, towards_foot: bool):
    """Scene 3 on `surface` with one 2x4 brick two high seen from aside, and a lamp's shadow of it
    painted on the table: the footprint swept 22 mm (a lamp ~50 deg up) towards the camera's foot
    (along its near walls) or across, the table a quarter as bright there in linear light, its
    edge blurred like a lamp's penumbra (painted, so the test sets where it falls). (scene, brick, frame)"""
    from companion.vision.colours import srgb_to_linear

    base, _ = rendered(3)
    base = replace(base, surface=surface)
    x, y = _spot_seen_from_aside(base)
    brick = SynthBrick(x, y, 30.0, 4, 2, 0.0, 19.2, colour)
    scene = replace(base, bricks=(brick,))
    renderer = Renderer()
    frame, bare = renderer.render(scene), renderer.render(replace(scene, bricks=()))
    out = np.array([x, y]) - scene.pose.camera_centre_mm[:2]
    out /= np.linalg.norm(out)
    sweep = (-out if towards_foot else np.array([-out[1], out[0]])) * 22.0
    footprint = brick.footprint_mm()
    shadow = cv2.convexHull(np.concatenate([footprint, footprint + sweep]).astype(np.float32)).reshape(-1, 2)
    pixels = scene.pose.project(scene.camera, np.c_[shadow, np.zeros(len(shadow))])
    cast = np.zeros(frame.shape[:2], np.float32)
    cv2.fillConvexPoly(cast, np.round(pixels * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
    cast = cv2.GaussianBlur(cast, (0, 0), 2.0)
    on_table = np.abs(frame.astype(int) - bare.astype(int)).max(axis=2) < 12  # not the brick itself
    light = 1.0 - 0.75 * cast * on_table
    darkened = encode(srgb_to_linear(frame / 255.0) * light[..., None])
    return scene, brick, np.clip(np.round(darkened * 255.0), 0, 255).astype(np.uint8)


@pytest.mark.slow
@pytest.mark.parametrize("surface, colour, towards_foot", [("felt", "white", True), ("felt", "yellow", True),
                                                           ("wood", "white", True), ("felt", "white", False),
                                                           ("felt", "yellow", False)])
def test_a_bricks_shadow_on_the_table_is_no_part_of_it(surface, colour, towards_foot):
    """A lamp's shadow beside a brick, on a table with a hue: the brick alone, its height not
    widened by a shadow along its near walls (before: 25.6-28.8 mm and the shadow a second block,
    or nothing found)."""
    scene, brick, frame = _shadowed_brick(surface, colour, towards_foot)
    blocks = Locator(scene.setup()).analyse(frame).blocks
    near = [b for b in blocks if np.hypot(*(b.footprint_mm.mean(axis=0) - (brick.x_mm, brick.y_mm))) < 50]
    assert len(near) == 1, [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in near]
    block = near[0]
    assert polygon_iou(block.footprint_mm, brick.footprint_mm()) > 0.9
    assert abs(block.height_mm - 19.2) <= 3.2 and block.color == colour


def tall_brick_under_a_lamp_on_the_cameras_side(from_foot_mm: float, turn_deg: float, elevation_deg: float):
    """Ray-cast table 3 with an orange 2x2 brick 28.8 mm high at a free place `from_foot_mm` from
    the camera's foot, and one lamp `elevation_deg` up on the camera's side of it (25 degrees off
    the direction to the foot), which lights the wall facing the camera: (scene, brick, lamp)."""
    import math

    from companion.synth.scene import Lamp, Lighting

    base, _ = rendered(3)
    x, y = _spot_seen_from_aside(base, from_foot_mm)
    foot = base.pose.camera_centre_mm[:2]
    azimuth, elevation = math.atan2(foot[1] - y, foot[0] - x) + math.radians(25), math.radians(elevation_deg)
    lamp = Lamp((math.cos(elevation) * math.cos(azimuth), math.cos(elevation) * math.sin(azimuth),
                 math.sin(elevation)), 1.0, 3.0)
    brick = SynthBrick(x, y, turn_deg, 2, 2, 0.0, 28.8, "orange")
    return replace(base, bricks=(brick,), lighting=Lighting((lamp,), 0.3)), brick, lamp


@pytest.mark.parametrize("from_foot_mm, turn_deg", [(350.0, 60.0)])  # (and 400 mm, 30 degrees: 0.83 before)
def test_a_wall_lit_as_brightly_as_its_top_is_no_part_of_the_top(from_foot_mm, turn_deg):
    """A tall 2x2 brick seen from aside under a lamp 35 degrees up on the camera's side: the wall
    facing the lamp and the camera is lit like the top, and the two were one lit face whose least
    rectangle, turned from the brick's, started the fit astray (IoU 0.76-0.83). The face is split
    by colour and the part farther from the camera's foot is the top."""
    scene, brick, _ = tall_brick_under_a_lamp_on_the_cameras_side(from_foot_mm, turn_deg, 35.0)
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    assert [b.color for b in blocks] == ["orange"], [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) > 0.9
    assert abs(blocks[0].height_mm - 28.8) <= 3.2 + 1e-6, blocks[0].height_mm


@pytest.mark.slow
@pytest.mark.parametrize("surface, azimuth_deg, elevation_deg, height_mm", [
    ("grid", 200, 50, 19.2), ("paper", 200, 50, 9.6), ("grid", 120, 60, 28.8), ("paper", 300, 45, 19.2)])
def test_on_a_gray_mat_a_lit_brick_is_found_apart_from_its_shadow_and_the_minis_shadows_are_none(
        surface, azimuth_deg, elevation_deg, height_mm):
    """A gray mat under a lamp 45-60 degrees up (the ray-caster casting the shadows): shade and
    black plastic look alike there, so a white brick with its shadow was one candidate no box
    explains (missed), or a tower (its shadow towards the camera's foot read as a tower's walls),
    and the minis' shadows were gray blocks. The lamp is found from the minis' shadows (placed on
    their edges: the search alone threw them 25% too far) and they are left out; the brick's own
    shadow is what the lamp says it casts, its length a measure of its height, and a tower that
    casts no shadow is none."""
    import math

    from companion.synth.scene import Lamp, Lighting

    base, _ = rendered(3)
    elevation, azimuth = math.radians(elevation_deg), math.radians(azimuth_deg)
    lamp = Lamp((math.cos(elevation) * math.cos(azimuth), math.cos(elevation) * math.sin(azimuth),
                 math.sin(elevation)), 1.0, 3.0)
    base = replace(base, surface=surface, lighting=Lighting((lamp,), 0.3))
    x, y = _spot_seen_from_aside(base)
    brick = SynthBrick(x, y, 30.0, 4, 2, 0.0, height_mm, "white")
    scene = replace(base, bricks=(brick,))
    locator = Locator(scene.setup())
    blocks = locator.analyse(Renderer().render(scene)).blocks
    assert [b.color for b in blocks] == ["white"], [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) > 0.7
    assert abs(blocks[0].height_mm - height_mm) <= 3.2 + 1e-6, blocks[0].height_mm
    lamps = locator.block_finder.lamps
    truth = -np.array(lamp.towards[:2]) / lamp.towards[2]  # its shadows' slope (mm a mm of height)
    assert any(np.linalg.norm((np.array([600.0, 400.0]) - f.position_mm[:2]) / f.position_mm[2] - truth)
               < 0.08 * np.linalg.norm(truth) for f in lamps), [f.position_mm for f in lamps]


@pytest.mark.slow
def test_a_brick_whose_shadow_joins_a_minis_shadow_is_fitted():
    """Ray-cast bench table 5 (standard, seed 0): two lamps throw a white brick's shadow onto an
    anchor's shadow beside a mini, and the candidate (mostly shade, touching what is known) was
    dropped whole as a mini's shadow. A candidate with a lit part as broad as a brick is fitted."""
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("raycast", 5)
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    brick = next(t for t in scene.truth_blocks() if t.colour == "white" and t.height_mm > 28)
    near = [b for b in blocks if polygon_iou(b.footprint_mm, brick.footprints[0]) > 0.7]
    assert [(b.color, b.height_mm) for b in near] == [("white", pytest.approx(28.8, abs=3.3))], [
        (b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]


@pytest.mark.slow
def test_the_bricks_shadows_under_a_lamp_found_are_no_plates():
    """Ray-cast bench table 14 (standard, seed 0, a gray grid mat, one lamp): the shadows of a
    green and a blue brick, cut from them, were reported as black 3.2 mm plates, each its own
    candidate (three false blocks). Where the lamp is found, a shade-like block inside the shadow
    another block casts is none."""
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("raycast", 14)
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    truth = [fp for t in scene.truth_blocks() for fp in t.footprints]
    alone = [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks
             if max(polygon_iou(b.footprint_mm, fp) for fp in truth) < 0.1]
    assert not alone, alone


def test_the_table_in_shade_is_no_block_whatever_its_outline():
    """On a table with a hue, what has its tint a shade darker is the table in shade (`shaded`),
    not plastic. The shadow of a red brick put down on the live bench's lit table (seed 2: green
    felt, no lamp found there to cast it) was a green 6.4 mm plate touching the brick; on the
    ray-cast bench with hands (table 3, too slow to render here) a hand's soft shadow was a green
    block 25.6 mm high: mostly shade, it was fitted whole, as a black brick would be."""
    from companion.bench.live import _clear_spot
    from companion.synth.sequences import bench_table

    base = bench_table(2, n_bricks=6, randomise=True)
    spot = _clear_spot(base)
    scene = replace(base, bricks=base.bricks + (SynthBrick(spot[0], spot[1], 30.0, 4, 2, 0.0, 19.2, "red"),))
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    near = [(b.color, b.height_mm) for b in blocks if np.hypot(*(b.footprint_mm.mean(axis=0) - spot)) < 40]
    assert [colour for colour, _ in near] == ["red"], near


# Three lamps of a ray-cast bench table (standard seed 0, table 10) and its room light.
_THREE_LAMPS = (((-0.131, 0.361, 0.923), 0.171, 5.98), ((0.143, -0.485, 0.863), 0.321, 5.16),
                ((-0.141, 0.452, 0.881), 0.508, 2.23))


@pytest.mark.slow
@pytest.mark.parametrize("surface, turn_deg, height_mm", [("grid", 0, 19.2), ("grid", 180, 28.8),
                                                          ("paper", 0, 28.8), ("paper", 180, 19.2)])
def test_a_black_brick_between_the_light_shadows_of_its_lamps_on_a_gray_mat_is_found(surface, turn_deg, height_mm):
    """Lamps on opposite sides and the room's light: a black brick casts soft shadows that keep
    most of the light, and on a mat of no hue shade and black plastic look alike. The shadows were
    kept in the brick (dark beside it, or where its walls could show) and no box explained brick
    and shadows: missed (these four, and 11 of 24 such frames). A shadow with several times the
    light of the black beside it is its shadow; black walls are no shade."""
    import math

    from companion.synth.scene import Lamp, Lighting

    base, _ = rendered(3)
    c, s = math.cos(math.radians(turn_deg)), math.sin(math.radians(turn_deg))
    lamps = tuple(Lamp((c * t[0] - s * t[1], s * t[0] + c * t[1], t[2]), share, radius_deg)
                  for t, share, radius_deg in _THREE_LAMPS)
    base = replace(base, surface=surface, lighting=Lighting(lamps, 0.386))
    x, y = _spot_seen_from_aside(base)
    brick = SynthBrick(x, y, 20.0, 4, 1, 0.0, height_mm, "black")
    scene = replace(base, bricks=(brick,))
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    assert [b.color for b in blocks] == ["black"], [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) > 0.8
    assert abs(blocks[0].height_mm - height_mm) <= 3.2 + 1e-6, blocks[0].height_mm


@pytest.mark.parametrize("turn_deg", [0, 150])
def test_a_black_brick_beside_its_shadow_on_felt_is_no_plate_as_wide_as_both(turn_deg):
    """On a table with a hue a lamp's shadow is told from black plastic (`shaded`), but shade
    beside something dark is kept in the candidate (a black brick's own pixels may pass for
    shade): a black 1x4 brick 9.6 mm high and its shadow (ray-cast standard seed 0, table 3: green
    felt, the lamp 55 degrees up) were one black plate 3.2 mm high as wide as both. Where the dark
    part has a fraction of the shade's light it is a black brick beside its shadow."""
    import math

    from companion.synth.scene import Lamp, Lighting

    base, _ = rendered(3)
    c, s = math.cos(math.radians(turn_deg)), math.sin(math.radians(turn_deg))
    towards = (-0.01, 0.57, 0.82)
    lamp = Lamp((c * towards[0] - s * towards[1], s * towards[0] + c * towards[1], towards[2]), 0.9, 4.3)
    base = replace(base, surface="felt", lighting=Lighting((lamp,), 0.32))
    x, y = _spot_seen_from_aside(base)
    brick = SynthBrick(x, y, 105.0, 4, 1, 0.0, 9.6, "black")
    scene = replace(base, bricks=(brick,))
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    assert [b.color for b in blocks] == ["black"], [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(blocks[0].height_mm - 9.6) <= 3.2 + 1e-6, blocks[0].height_mm
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) > 0.6


def test_a_tall_white_bricks_long_shadow_on_a_mat_of_no_hue_is_no_gray_plate():
    """On a mat of no hue shade and gray plastic look alike, so nothing is left out of a
    candidate as shade: a white 1x4 brick 28.8 mm high with its long shadow beside it (ray-cast
    standard seed 0, table 1: a beige grid mat, the lamp 41 degrees up; here alone on it) was
    fitted whole as a gray plate 3.2 mm high over the shadow, which stood, and the brick was
    lost. Such a fit, its top maybe the mat in shade, is tried again with the shade left out,
    and the lit brick explains its outline better."""
    from companion.bench.vision import bench_scene

    table = bench_scene("raycast", 1, "standard")
    brick = min(table.bricks, key=lambda b: np.hypot(b.x_mm - 886.0, b.y_mm - 586.0))
    assert brick.color == "white" and abs(brick.height_mm - 28.8) < 1e-6
    scene = replace(table, bricks=(brick,))
    blocks = [b for b in Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
              if np.hypot(*(b.footprint_mm.mean(axis=0) - (brick.x_mm, brick.y_mm))) < 60.0]
    assert [b.color for b in blocks] == ["white"], [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(blocks[0].height_mm - 28.8) <= 4.8 + 1e-6, blocks[0].height_mm
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) > 0.6


@pytest.mark.parametrize("name, level, expected", [("pbr_faint_black", 25.61, 1), ("pbr_mat_patch", 20.78, 0)])
def test_a_faint_candidate_is_a_brick_set_apart_from_the_mat_not_a_patch_of_its_pattern(name, level, expected):
    """A black brick whose top carries the lamp's sheen on gray tiles differs from the table a
    little more than the tiles' own pattern in a few pixels only, which the opening removed: it
    had no candidate (path-traced seed 0, table 0, at (509, 604) mm). A candidate is also taken
    where FAINT_SHARE of the level holds a brick's size, but only set apart from the mat around
    it: a gray patch of a camouflage mat between green ones (table 10, at (1071, 179) mm), where
    the local table blurs the two, differs as faintly and was a false white brick. The coarse
    view (2 mm a pixel) and its local table are cut from those frames, side by side."""
    both = cv2.imread(str(Path(__file__).with_name("frames") / f"{name}.png"), cv2.IMREAD_COLOR)
    closed, table = both[:, :80], both[:, 80:]
    clear = np.ones(closed.shape[:2], np.uint8)
    diff = colour_distance(closed, table, blur_px=1.0)
    mask = cv2.morphologyEx(((diff > level) & (clear > 0)).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    assert not mask[25:55, 25:55].any()  # no candidate the usual way (a mini's tile stands in a corner)
    found = faint_candidates(closed, diff, level, mask, clear, faint_parts(diff, FAINT_SHARE * level, clear))
    assert len(found) == expected, [box for box, _, _ in found]
    for (x, y, w, h), region, its_level in found:
        assert abs(x + w / 2 - 40) < 6 and abs(y + h / 2 - 40) < 6 and region.sum() * 4 >= 150
        assert its_level < level


def test_a_patch_of_the_table_that_runs_on_past_its_outline_is_no_block():
    """A piece of the table cut off by its local estimate and fitted as a brick runs on in its
    top's colour past its outline (over RING_ALIKE of the ring round it); a block stands apart
    from the table on every side. Ray-cast verdict table 0 (walls, a tower, touching bricks):
    a tile beside a mini's shadow was a white brick 32 mm high at (133, 326) mm, its ring 0.87 the
    tile's colour; every other block found there is a true one, and each is kept."""
    from companion.bench.vision import bench_scene
    from companion.bench.verdicts import DEFAULT_LAYOUT

    scene = bench_scene("raycast", 0, "standard", **DEFAULT_LAYOUT)
    found = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    truth = [f for t in scene.truth_blocks() for f in t.footprints]
    assert not [b for b in found if np.hypot(*(b.footprint_mm.mean(axis=0) - (133.0, 326.0))) < 15.0]
    unmatched = [(b.color, b.height_mm, b.footprint_mm.mean(axis=0).round()) for b in found
                 if max(polygon_iou(b.footprint_mm, f) for f in truth) < 0.3]
    assert not unmatched
    assert len(found) >= 12, len(found)


@pytest.mark.parametrize("table, x_mm, y_mm", [(5, 659.0, 394.0), (1, 836.0, 314.0), (13, 120.0, 152.0)])
def test_a_low_tops_blurred_edge_rows_do_not_make_it_two_colours(table, x_mm, y_mm):
    """A low brick's top fitted a millimetre off had a row and a column of its samples, 1 mm in,
    on its blurred edges: a third of them off its colour, "not one colour", and the brick was lost
    (ray-cast standard seed 0: a green brick on green felt, a white one and an orange one, 9.6 mm
    high; here each alone on its table). Its lightness is judged also on the samples its hue is,
    further in."""
    from companion.bench.vision import bench_scene

    scene = bench_scene("raycast", table, "standard")
    brick = min(scene.bricks, key=lambda b: np.hypot(b.x_mm - x_mm, b.y_mm - y_mm))
    scene = replace(scene, bricks=(brick,))
    blocks = [b for b in Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
              if np.hypot(*(b.footprint_mm.mean(axis=0) - (brick.x_mm, brick.y_mm))) < 60.0]
    assert [b.color for b in blocks] == [brick.color], [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(blocks[0].height_mm - brick.height_mm) <= 4.8 + 1e-6, blocks[0].height_mm
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) >= 0.5


@pytest.mark.slow
@pytest.mark.parametrize("colour", ["white", "yellow"])
def test_a_top_the_camera_clipped_is_not_read_taller(colour):
    """Overexposed (x2 and x3 in linear light, blurred there, then clipped by the sRGB curve), a
    brick's top blooms past its edges: taken at its size, it reads a brick taller (white at x3
    25.6 mm before); its walls say the height."""
    base, _ = rendered(3)
    x, y = _spot_seen_from_aside(base)
    brick = SynthBrick(x, y, 30.0, 4, 2, 0.0, 19.2, colour)
    for exposure in (2.0, 3.0):
        scene = replace(base, bricks=(brick,), imaging=replace(base.imaging, gamma=0.0, exposure=exposure))
        blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
        near = [b for b in blocks if np.hypot(*(b.footprint_mm.mean(axis=0) - (x, y))) < 50]
        assert len(near) == 1 and near[0].color == colour
        assert polygon_iou(near[0].footprint_mm, brick.footprint_mm()) > 0.85
        assert -4.8 <= near[0].height_mm - 19.2 <= 3.2, (exposure, near[0].height_mm)


def _tower_scene():
    from companion.synth.scene import tower_bricks

    base, _ = rendered(3)
    x, y = _spot_seen_from_aside(base)
    bricks = tower_bricks(np.random.default_rng(5), x, y, list(LEGO_RGB))
    return replace(base, bricks=bricks, stacks=(tuple(range(len(bricks))),))


@pytest.mark.parametrize("seed", [100004, 100015])
def test_a_tall_tower_seen_from_aside_has_its_height(seed: int):
    """A 102 mm tower on a randomised camera's table, its walls cast 40-70 mm long: its top is too
    small a part of the outline to be taken for the top face, so it is taken at the outline's far
    end from the camera's foot, and the outline is read where its edges truly are (cut low, both
    ends grew and towers came out 10-25 mm too tall). Both were missed before."""
    from companion.synth.worlds import Camera

    scene = _unlit_bench_scene(seed, n_towers=1, n_touching=1)
    (footprints, height, colour, _), = [t for t in scene.truth_blocks() if len(t.footprints) > 3]
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    near = [b for b in blocks if polygon_iou(footprints, b.footprint_mm) > 0.5]
    assert len(near) == 1 and near[0].color == colour
    assert abs(near[0].height_mm - height) <= 4.8


def _bench_tower_alone(renderer: str, seed: int, kind: str = "stacks"):
    """The tower (or, kind "walls", the wall that turns) of a walls/towers/touching bench table
    alone on it: its truth, and the blocks found within 60 mm of it."""
    from companion.bench.vision import bench_scene

    table = bench_scene(renderer, seed, "standard", n_walls=1, n_towers=1, n_touching=1)
    bricks = tuple(table.bricks[i] for i in getattr(table, kind)[0])
    return _alone_found(renderer, replace(table, bricks=bricks, **{"stacks": (), "walls": (), kind: (tuple(range(len(bricks))),)}))


def _alone_found(renderer: str, scene):
    """A scene of one block seen by `renderer`'s camera: its truth, and the blocks found within
    60 mm of it."""
    from companion.synth.worlds import Camera

    truth, = scene.truth_blocks()
    centre = np.concatenate(truth.footprints).mean(axis=0)
    blocks = [b for b in Locator(scene.setup()).analyse(Camera(renderer).render(scene)).blocks
              if np.hypot(*(b.footprint_mm.mean(axis=0) - centre)) < 60.0]
    return truth, blocks


def test_a_blue_walls_shadow_lighter_than_its_walls_is_no_part_of_them():
    """A blue 19.2 mm wall that turns (a T) on green felt under the ray-caster's lamps (bench table
    4, walls/towers/touching; here alone on it): along its walls facing the camera lies its
    shadow, lighter than the blue walls in shade (0.64 of the felt's light against their 0.45), so
    not told from them by light; read as more wall, the wall was 32 mm high. The shadow is the
    felt's colour, the walls are not."""
    (footprints, height, colour, _), blocks = _bench_tower_alone("raycast", 4, "walls")
    assert colour == "blue" and height == pytest.approx(19.2)
    assert [b.color for b in blocks] == ["blue"], [(b.color, b.height_mm) for b in blocks]
    assert abs(blocks[0].height_mm - height) <= 3.2


@pytest.mark.parametrize("seed, colour, height_mm", [(1, "white", 19.2), (2, "green", 9.6)])
def test_a_wall_under_the_lens_is_as_tall_as_its_shadows_say(seed, colour, height_mm):
    """Walls that turn close to the camera's foot (ray-cast bench tables 1 and 2, walls/towers/
    touching; here alone on them): their walls a millimetre wide, their height was their tops'
    size alone, which a tenth of a millimetre moves by a plate or two (a white 19.2 mm T read
    12.8, a green 9.6 mm U read 12.8). The shadows they cast under the lamps found say it too,
    as they do for one brick."""
    (footprints, height, truth_colour, _), blocks = _bench_tower_alone("raycast", seed, "walls")
    assert truth_colour == colour and height == pytest.approx(height_mm)
    assert [b.color for b in blocks] == [colour], [(b.color, b.height_mm) for b in blocks]
    assert abs(blocks[0].height_mm - height) <= 1.6


def test_a_towers_courses_are_weighed_against_the_touching_bricks_as_they_are_reported():
    """A 90 mm tower of yellow, blue, white and orange courses under a blue top (plain bench
    table 5 of seed 1, walls/towers/touching; here alone on it) splits by colour into three low
    "touching bricks". Its courses explained the colour map less well than the bricks as the map
    placed them (each fitted to it freely), but the bricks reported are those placed then moved
    by their own walls: scored as reported, on the same points, the tower explains it better
    (a blue 9.6 mm brick, a yellow 6.4 and a red 3.2 before, none of them there)."""
    (footprints, height, colour, _), blocks = _bench_tower_alone("plain", 100003 + 5)
    assert height > 85.0 and colour == "blue"
    assert [b.color for b in blocks] == ["blue"], [(b.color, b.height_mm) for b in blocks]
    assert abs(blocks[0].height_mm - height) <= 4.8 and polygon_iou(footprints, blocks[0].footprint_mm) > 0.7


def test_a_tower_read_too_tall_for_its_shadow_is_taken_at_the_height_its_shadows_agree_on():
    """A 73.6 mm tower under two lamps (ray-cast bench table 15, walls/towers/touching; here alone
    on it) was placed on its outline at 89.6 mm: the shadow such a tower would cast reaches past
    the real one onto lit table, so it was dropped as a box with no shadow of its own, and nothing
    was found there. Its height is taken again where its shadows and its outline agree, its top
    where it is seen."""
    (footprints, height, colour, _), blocks = _bench_tower_alone("raycast", 15)
    assert colour == "red" and abs(height - 73.6) < 1e-6
    assert [b.color for b in blocks] == ["red"], [(b.color, b.height_mm) for b in blocks]
    assert blocks[0].height_mm >= 38.4 and abs(blocks[0].height_mm - height) <= 9.6, blocks[0].height_mm
    assert polygon_iou(footprints, blocks[0].footprint_mm) > 0.5


@pytest.mark.parametrize("seed", [3, 16])
def test_a_tower_whose_top_is_nearly_the_tables_colour_is_found(seed: int):
    """Green towers on green felt (ray-cast bench tables 3 and 16, 64 and 99 mm): their tops
    differ from the felt by 15-20 levels, under the 30 a tall top had to stand out by (a patch of
    felt between walls explains a tall outline too), and both were missed. A top that differs
    from the table all over where it is sampled, and is lighter than it (a shadow is darker), is
    the tower's."""
    from companion.synth.worlds import Camera

    scene = _unlit_bench_scene(seed, n_walls=1, n_towers=1, n_touching=1)
    (footprints, height, colour, _), = [t for t in scene.truth_blocks() if t.kind == "tower"]
    assert colour == "green" and scene.surface == "felt"
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    near = [b for b in blocks if polygon_iou(footprints, b.footprint_mm) > 0.5]
    assert len(near) == 1 and near[0].color == colour
    assert near[0].height_mm >= 38.4 and abs(near[0].height_mm - height) <= 6.5  # full cover, to two plates


@pytest.mark.parametrize("seed", [2, 4, 6, 8])
def test_a_tower_the_colour_split_took_for_touching_bricks_is_one_tall_block(seed: int):
    """A 109 mm white tower on green bricks, a 99 mm orange one on a blue plate (ray-cast bench
    tables 2 and 4): split by colour, each was a 48 mm "touching brick" beside a low one. A
    touching brick as tall as a tower is rather its top: one box on the outline explains it
    better than the touching bricks explain their colours. A 74 mm green tower and an 86 mm red
    one (tables 6 and 8) split into "touching bricks" 6-22 mm tall, none a tower's height: the
    tower whose walls' courses may each be any colour explains their colour map better."""
    from companion.synth.worlds import Camera

    scene = _unlit_bench_scene(seed, n_walls=1, n_towers=1, n_touching=1)
    (footprints, height, colour, _), = [t for t in scene.truth_blocks() if t.kind == "tower"]
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    near = [b for b in blocks if polygon_iou(footprints, b.footprint_mm) > 0.2]
    assert len(near) == 1 and near[0].color == colour
    assert polygon_iou(footprints, near[0].footprint_mm) > 0.5 and abs(near[0].height_mm - height) <= 4.8


def test_a_placed_bricks_height_is_as_sure_as_its_map_says(standard_scene):
    """Touching bricks' heights come from map points 0.5 mm apart, nine to a blurred pixel: a few
    points either way are no evidence (a part two bricks low had been 1.0 sure); a wall's worth is."""
    from companion.vision.blocks import _placed_fit
    from companion.vision.touching import Placed

    scene, _ = standard_scene
    view = TableView(scene.camera, scene.pose)
    footprint = TableRect(np.array([300.0, 250.0]), np.array([1.0, 0.0]), (7.9, 3.9))
    heights = [3.2 * k for k in range(1, 10)]

    def sure(points_per_plate: float) -> float:
        cost = {h: points_per_plate * abs(h - 12.8) / 3.2 for h in heights}
        return _placed_fit(view, Placed(footprint, 12.8, 0.95, 0.95, cost)).height_confidence

    assert sure(2.0) < 0.8  # two points a plate: a blur's width
    assert sure(60.0) > 0.99  # a wall's band of points a plate


def _touching_scene(row_seed: int = 2, colours: tuple[str, ...] = tuple(LEGO_RGB)):
    from companion.synth.scene import touching_bricks

    base, _ = rendered(3)
    x, y = _spot_seen_from_aside(base)
    return replace(base, bricks=touching_bricks(np.random.default_rng(row_seed), x, y, list(colours)))


def test_a_tower_of_mixed_colours_is_one_tall_block():
    scene = _tower_scene()
    (footprints, height, colour, _), = scene.truth_blocks()
    assert len(scene.bricks) >= 4 and height > 38.4 and colour == scene.bricks[-1].color
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    assert len(blocks) == 1 and blocks[0].color == colour
    assert polygon_iou(footprints, blocks[0].footprint_mm) > 0.5
    assert blocks[0].height_mm >= 38.4  # taller than any mini: full cover whoever stands behind it


@pytest.mark.xfail(strict=True, reason="issue 15: a tower's height is read 12.8 mm low on this frame (51.2 of 64): "
                   "the profiles' tall box stands, and trying every colour's face against it (which reads "
                   "this one right) made three loose bricks on the path-traced frames 10-20 mm taller")
def test_a_tower_of_mixed_colours_has_its_height():
    scene = _tower_scene()
    (_, height, _, _), = scene.truth_blocks()
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    assert abs(blocks[0].height_mm - height) <= 4.8


def test_touching_bricks_of_different_colours_are_told_apart():
    scene = _touching_scene()
    assert len({b.color for b in scene.bricks}) == len(scene.bricks) >= 2
    summary = _score(scene, Locator(scene.setup()).analyse(Renderer().render(scene)).blocks).summary()
    assert summary["found"] == 1.0 and summary["colour_right"] == 1.0 and summary["false_per_frame"] == 0


@pytest.mark.parametrize("row_seed", [3, 4, 5])
def test_a_white_brick_touching_a_black_one_is_told_from_it(row_seed):
    """White, gray and black share a chromaticity, and the colour split kept a white brick and a
    black one side by side as one part, neither one colour (ray-cast bench table 8: a white and a
    black brick beside a green one, all three missed). Their brightnesses are about six times
    apart on the display. (Rows 0-2 still fail: a black brick beside a taller white one is missed
    or placed off, and a 2 x 2 black one beside a 2 x 1 white one is not found.)"""
    scene = _touching_scene(row_seed, ("white", "black"))
    assert {b.color for b in scene.bricks} == {"white", "black"}
    summary = _score(scene, Locator(scene.setup()).analyse(Renderer().render(scene)).blocks).summary()
    assert summary["found"] == 1.0 and summary["colour_right"] == 1.0 and summary["false_per_frame"] == 0


def test_touching_bricks_have_their_heights():
    scene = _touching_scene()
    summary = _score(scene, Locator(scene.setup()).analyse(Renderer().render(scene)).blocks).summary()
    assert summary["height_within_half_brick"] == 1.0


def test_a_low_brick_a_taller_neighbour_half_hides_is_found():
    # Its top shows as a strip narrower than any brick: the row was not split, and its outline
    # was taken for an 83 mm tower.
    scene = _touching_scene(8)
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    summary = _score(scene, blocks).summary()
    assert summary["found"] == 1.0 and summary["colour_right"] == 1.0 and summary["false_per_frame"] == 0
    assert max(b.height_mm for b in blocks) <= max(b.top_mm for b in scene.bricks) + 3.2


@pytest.mark.parametrize("row_seed", [4, 11])
def test_each_touching_brick_has_the_height_its_own_walls_show(row_seed):
    # Placed on the colour map alone, a brick's height is how much of its neighbours it hides: on
    # these rows a 19.2 mm red brick read 12.8 mm and a 9.6 mm black one 3.2 mm.
    scene = _touching_scene(row_seed)
    assert len({b.height_mm for b in scene.bricks}) >= 2
    summary = _score(scene, Locator(scene.setup()).analyse(Renderer().render(scene)).blocks).summary()
    assert summary["found"] == 1.0 and summary["height_within_half_brick"] == 1.0


@pytest.mark.parametrize("seed, near_mm, found", [(700039, (691.0, 273.0), ("blue", "red")),
                                                   (700043, (824.0, 408.0), ("gray", "blue"))])
def test_a_row_with_a_one_stud_brick_is_not_lost_whole(seed, near_mm, found):
    """A one-stud brick's top in a touching row, blurred, reads narrower than a stud: the split
    took it for a band of a tower's wall and gave the row up to the tower, which cast no shadow of
    its own under the lamp found and was dropped, so the whole row went (ray-cast tables of three
    touching rows, seed 7, tables 18 and 22; here each row alone on its table). Where no tower
    stands, the strip is a brick. (The 6 x 1 yellow brick between the blue and the red one on
    the first is still missed, and the second's heights read a brick and a plate low.)"""
    from companion.synth.worlds import Camera, bench_scene

    table = bench_scene("raycast", seed, "standard", n_touching=3)
    scene = replace(table, bricks=tuple(b for b in table.bricks if np.hypot(b.x_mm - near_mm[0], b.y_mm - near_mm[1]) < 25))
    assert any(b.studs_short == 1 for b in scene.bricks if b.color in found)
    blocks = [b for b in Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
              if np.hypot(*(b.footprint_mm.mean(axis=0) - near_mm)) < 40]
    for brick in (b for b in scene.bricks if b.color in found):
        seen = [b for b in blocks if polygon_iou(brick.footprint_mm(), b.footprint_mm) >= 0.5]
        assert len(seen) == 1 and seen[0].color == brick.color, (brick, [(b.color, b.height_mm) for b in blocks])


def test_touching_tops_of_near_colours_are_parted_by_the_finer_split():
    """A row of red, orange and yellow 2x4 bricks under a warm lamp, as measured on a path-traced
    frame (the red brick tallest, its wall in shade showing over the orange top): their
    chromaticities are 11-12 apart and the usual split joins them (the row was read as a yellow
    tower 105.6 mm tall). The finer split parts the three tops, and the red wall, a colour of no
    part of its own, stays unknown to the map rather than table (read as table, it held the red
    brick 3.2 mm tall)."""
    rng = np.random.default_rng(0)
    fine = np.zeros((120, 160, 3), np.float32)
    fine[:] = (139, 136, 141)  # BGR, a gray mat
    tops = {"orange": (slice(20, 52), (70, 126, 219)), "red": (slice(56, 88), (62, 60, 183)),
            "yellow": (slice(88, 120), (89, 198, 230))}
    for rows, bgr in tops.values():
        fine[rows, 40:104] = bgr
    fine[52:56, 40:104] = (20, 55, 135)  # the red brick's wall in shade, 2 mm of it over the orange
    fine = np.clip(cv2.GaussianBlur(fine, (0, 0), 1.2) + rng.normal(0.0, 3.0, fine.shape), 0, 255).astype(np.uint8)
    blob = np.zeros(fine.shape[:2], np.uint8)
    blob[18:120, 38:106] = 1
    finer = colour_parts(fine, blob, blob, FINER_APART)
    assert finer is not None and len(finer.cores) == 3
    medians = [np.median(fine[core > 0], axis=0) for core in finer.cores]
    for rows, bgr in tops.values():
        assert min(np.abs(m - bgr).max() for m in medians) < 8
    assert not np.any(finer.labels[52:56, 44:100] == TABLE)


def _view_and_reach(top_from_foot_mm: float):
    """Scene 3's view, and a 2x2 brick top cast `top_from_foot_mm` from the camera's foot (away
    along +x of the foot), with where a box under it can show in a cut-out around both."""
    from companion.vision.blocks import _cast_reach
    from companion.vision.cutout import FINE_MM

    base, _ = rendered(3)
    view = TableView(base.camera, base.pose)
    centre = view.foot_mm + np.array([top_from_foot_mm, 0.0])
    top = TableRect(centre, np.array([1.0, 0.0]), (7.9, 7.9))
    origin = (float(centre[0] - 150.0), float(centre[1] - 60.0))
    reach = _cast_reach(view, origin, (int(120 / FINE_MM), int(200 / FINE_MM)), top)

    def shows(x_mm: float, y_mm: float) -> bool:
        return bool(reach[int((y_mm - origin[1]) / FINE_MM), int((x_mm - origin[0]) / FINE_MM)])

    return view, top, shows


def test_a_towers_outline_is_kept_to_what_a_box_under_its_top_can_cast():
    """A tower's shadow on a table of no hue is as dark as black plastic and lies beyond its top,
    where the outline's far end should be (path traced: a 67 mm tower missed, its shadow taken for
    the top). Under a top, a box shows between the top and the foot, never beyond or aside."""
    view, top, shows = _view_and_reach(400.0)
    x, y = top.centre
    assert shows(x, y) and shows(x - 30.0, y)  # its top, and its walls towards the camera's foot
    assert not shows(x + 20.0, y)  # beyond the top: its shadow under a lamp near the camera
    assert not shows(x - 15.0, y + 25.0)  # aside


def test_near_the_cameras_foot_an_outline_does_not_tell_a_tower():
    """Right under the lens a box of 92.8 mm and one of 28.8 mm cast outlines 3 mm apart, a
    blurred edge's width: a long white brick 60 mm from the foot had fitted 92.8 mm tall from its
    outline. 400 mm out a tower of five bricks stands clear of a low block."""
    from companion.vision.blocks import TOWER_SHIFT_MM, _tower_shift_mm

    near_view, near_top, _ = _view_and_reach(60.0)
    assert _tower_shift_mm(near_view, near_top, 92.8) < TOWER_SHIFT_MM
    far_view, far_top, _ = _view_and_reach(400.0)
    assert _tower_shift_mm(far_view, far_top, 48.0) > TOWER_SHIFT_MM


def test_a_top_far_darker_than_the_lamps_deepest_shade_is_no_shade():
    """A black brick's top keeps 1-3% of a light table's light; the table in a lamp's shadow keeps
    the room's other light (the lamps found from the minis' shadows say how much). A top that
    could be shade by its tint but is far darker than any shade the lamps cast is a brick's."""
    from companion.vision.shade import Lamplight, top_may_be_shade
    from companion.vision.lamps import FoundLamp

    table = np.array([150.0, 165.0, 180.0])  # beige tiles (BGR)
    black, shade = np.array([11.0, 15.0, 17.0]), np.array([104.0, 115.0, 126.0])
    dark, clear = np.zeros((4, 4)), np.ones((4, 4), np.uint8)
    lamp = FoundLamp((0.0, 0.0, 1000.0), minis=6, dark_share=1.0, depth=0.6)
    assert not top_may_be_shade(Lamplight((lamp,), dark, clear), black, table)
    assert top_may_be_shade(Lamplight((lamp,), dark, clear), shade, table)
    # With no lamp found nothing says how deep a shade may be: both may be.
    assert top_may_be_shade(None, black, table) and top_may_be_shade(None, shade, table)
    # Two lamps whose shadows cross leave less light: each keeps its share of what the other
    # leaves. Depths measured at the minis' feet (their own contact shade darkens them) may add up
    # to one or more; where their shadows cross the room's light is still there, more than a black
    # top keeps (it had been taken for shade, and black bricks and towers were dropped).
    assert not top_may_be_shade(Lamplight((lamp, replace(lamp, depth=0.45)), dark, clear), black, table)
    assert top_may_be_shade(Lamplight((lamp, replace(lamp, depth=0.45)), dark, clear), shade, table)
    # Two deep ones leave as little as black plastic keeps: the floor goes.
    deep = replace(lamp, depth=0.97)
    assert top_may_be_shade(Lamplight((deep, deep), dark, clear), black, table)


@pytest.mark.slow
@pytest.mark.parametrize("seed, colour, at_mm, height_mm", [
    (1, "black", (235.0, 698.0), 28.8),  # its shadow cut off, its top had been taken for shade
    (8, "blue", (358.0, 519.0), 9.6),  # a 1x4 top 1 px per mm: its edge rows had the wood's hue
    (10, "red", (202.0, 516.0), 28.8),  # its shadow joined an orange brick's: once the shade was cut, one part was fitted
])
def test_bench_bricks_a_top_test_had_dropped_are_found(seed, colour, at_mm, height_mm):
    """Ray-cast bench tables (standard, seed 0): a black 1x8 brick on light tiles under a lamp
    found, whose shadow the black-brick cut left out, was dropped as the table in shade (its top
    could be shade by its tint, though it kept 2% of the table's light against the shadows' 40%);
    a blue 1x4 brick far from the camera was no one colour (its top's edge rows a pixel from
    its edges, where a webcam's colour, kept at half resolution, takes the wood's hue); a red
    1x8 brick whose faint shadows joined an orange brick's made one candidate with it, and once
    the shade was left out only the larger of the two parts was fitted."""
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("raycast", seed)
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    truth = next(t for t in scene.truth_blocks() if np.hypot(*(t.footprints[0].mean(axis=0) - at_mm)) < 5.0)
    near = [b for b in blocks if polygon_iou(b.footprint_mm, truth.footprints[0]) > 0.6]
    assert [b.color for b in near] == [colour], [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(near[0].height_mm - height_mm) <= 4.8, near[0].height_mm


def test_the_lamps_search_masks_a_minis_tile_as_its_square_the_blocks_as_a_circle_round_it():
    """`mask_known(tiles=True)` (the lamps' search) leaves the table just past a tile's side in
    view, where a high lamp's short shadow of it falls; the blocks' mask keeps the circle round the
    tile's corners (a mini's parts there are no block). Both mask the tile and the base."""
    from companion.synth.sequences import bench_table
    from companion.vision.cutout import COARSE_MM
    from companion.vision.localtable import mask_known, tile_side_mm
    from companion.vision.tableview import window_size
    scene = bench_table(0, n_bricks=0)
    setup, view = scene.setup(), TableView(scene.camera, scene.pose)
    mini = next(m for m in scene.minis if setup.mini(m.id) is not None)
    state = MiniState(id=mini.id, x_mm=mini.x_mm, y_mm=mini.y_mm, z_mm=mini.z_mm, heading_deg=mini.heading_deg)
    half = tile_side_mm(setup.mini(mini.id).marker_mm) / 2
    heading = np.radians(mini.heading_deg)
    w_px, h_px = window_size(setup.table.width_mm, setup.table.depth_mm, COARSE_MM)
    masks = {}
    for tiles in (False, True):
        masks[tiles] = np.ones((h_px, w_px), np.uint8)
        mask_known(masks[tiles], setup, (state,), view, (0.0, 0.0), COARSE_MM, tiles=tiles)

    def at(mask: np.ndarray, point_mm: np.ndarray) -> int:
        top = view.cast(point_mm[None], state.z_mm)[0]  # the tile's plane as the view sees it
        return int(mask[int(top[1] / COARSE_MM), int(top[0] / COARSE_MM)])

    centre = np.array([state.x_mm, state.y_mm])
    top = view.cast(centre[None], state.z_mm)[0]
    past = [centre + (half + 6.0) * np.array([np.cos(a), np.sin(a)]) for a in heading + np.radians([0, 90, 180, 270])]
    # (those on the far side from the base: towards it the base's band up to the tile is masked too)
    past = [p for p in past if np.dot(view.cast(p[None], state.z_mm)[0] - top, top - centre) >= 0]
    assert len(past) >= 2
    assert at(masks[True], centre) == 0 and at(masks[False], centre) == 0
    assert all(at(masks[True], p) == 1 for p in past)
    assert all(at(masks[False], p) == 0 for p in past)


def _bench_brick_alone(renderer: str, seed: int, near_mm: tuple[float, float]):
    """The loose brick of a standard bench table nearest a place, alone on it (its minis stay: the
    lamps are found from their shadows): its truth, and the blocks found within 60 mm of it."""
    from companion.bench.vision import bench_scene

    table = bench_scene(renderer, seed, "standard")
    brick = min(table.bricks, key=lambda b: np.hypot(b.x_mm - near_mm[0], b.y_mm - near_mm[1]))
    return _alone_found(renderer, replace(table, bricks=(brick,), stacks=(), walls=()))


def test_a_plates_shadow_towards_the_camera_is_no_top_of_it():
    """A gray 1x4 plate (6.4 mm) on beige tiles, its shadow falling towards the camera's foot
    (ray-cast bench table 1): the shadow lies where its near wall would be, so the box fitted the
    shadow as wall (44.8-54.4 mm); its shadows then said 6.4 mm, but its top taken again from the
    silhouette at that height took the shadow in as top (a 49 x 14 mm top), which explained the
    outline too poorly (IoU 0.72-0.78) and the plate was missed. Its top seen standing out (gray
    on beige) is where the top is."""
    (footprints, height, colour, _), blocks = _bench_brick_alone("raycast", 1, (843.0, 200.0))
    assert colour == "gray" and height == pytest.approx(6.4)
    assert [b.color for b in blocks] == ["gray"], [(b.color, b.height_mm) for b in blocks]
    assert abs(blocks[0].height_mm - height) <= 1.6
    assert polygon_iou(blocks[0].footprint_mm, footprints[0]) >= 0.8


def test_a_shadow_of_a_touching_bricks_hue_is_table_not_brick():
    """Black, blue and orange 1x6 bricks 28.8 mm high touching in a row on wood (ray-cast bench
    table 2, walls/towers/touching; the row alone on it): the orange brick's shadow on the wood is
    the wood's hue in shade, near orange, and the colour split took it into the orange part; the
    touching fit grew the brick over it (48 mm, two studs wide), its top was then no one colour,
    and the orange brick was missed. Fitted again with what may be the table in shade taken for
    table, all three stand."""
    _row_alone_found("raycast", 2, (650.0, 347.0), ["black", "blue", "orange"], 6.4)


def test_a_touching_rows_shadow_in_pieces_on_felt_is_no_part():
    """Gray 28.8, blue 19.2 and orange 19.2 mm bricks touching in a row on green felt (ray-cast
    bench table 5, walls/towers/touching; the row alone on it), the blue one mostly hidden: the
    row's shadow on the felt, broken by the bricks' walls into three pieces of the felt's colour
    darker, made six colour parts with the bricks', more than a split is fitted with, and the row
    was missed. Pieces that are the table in shade are no part."""
    _row_alone_found("raycast", 5, (277.0, 700.0), ["blue", "gray", "orange"], 3.2)


def test_a_dark_towers_shadows_on_wood_are_left_out_though_most_of_its_outline():
    """A tower 44.8 mm high, a yellow 1x4 top over dark green courses, on wood under two lamps
    (ray-cast bench table 13, walls/towers/touching; the tower alone on it): its two shadows are
    most of its outline and its dark walls stand beside them, so no shade was left out (as for a
    black brick the shade test takes for shade all over); one shadow falls towards the camera's
    foot, where a taller tower's walls would be, and the tower fitted 124.8 mm tall, its top off
    the yellow, and was dropped. On wood the tint tells shade from dark plastic: left out last."""
    (footprints, height, colour, _), blocks = _bench_tower_alone("raycast", 13)
    assert colour == "yellow" and height == pytest.approx(44.8)
    assert [b.color for b in blocks] == ["yellow"], [(b.color, b.height_mm) for b in blocks]
    assert abs(blocks[0].height_mm - height) <= 3.2
    assert polygon_iou(blocks[0].footprint_mm, footprints[0]) >= 0.7


@pytest.mark.parametrize("seed, colour, height_mm", [(14, "black", 96.0), (4, "orange", 99.2)])
def test_a_towers_outline_that_asks_for_the_tallest_is_told_by_its_shadows(seed, colour, height_mm):
    """Towers of ten bricks or so (ray-cast bench tables 14 and 4, walls/towers/touching; alone on
    them): a shadow towards the camera's foot lengthens the outline, and the box fitted to it took
    the tallest height there is (124.8 mm), its top off the tower's (IoU 0.21-0.37 with it). An
    outline that asks for the tallest tower has more than the tower in it: the height its shadows
    and its outline agree on, its top where it is seen."""
    (footprints, height, truth_colour, _), blocks = _bench_tower_alone("raycast", seed)
    assert truth_colour == colour and height == pytest.approx(height_mm)
    assert [b.color for b in blocks] == [colour], [(b.color, b.height_mm) for b in blocks]
    assert abs(blocks[0].height_mm - height) <= 4.8
    assert polygon_iou(blocks[0].footprint_mm, footprints[0]) >= 0.7


def test_touching_bricks_of_near_colours_are_no_one_box():
    """An orange and a yellow 2x1 brick of one height (28.8 mm) touching on green felt (ray-cast
    bench table 18, walls/towers/touching; the row alone on it): one box over both explained the
    outline, its top named orange though not surely, and the yellow brick was missed. A box whose
    top is named less surely is tried as the bricks its colours split it into. (Both were read
    35.2 mm, and found where they stand; their shadows lower them to 28.8 and 32 mm, the top of
    each kept where it was seen, and the 2x1 yellow one then stands 1.2 mm off: IoU 0.64.)"""
    _row_alone_found("raycast", 18, (512.0, 551.0), ["orange", "yellow"], 3.2, least_iou=0.6)


def _row_alone_found(renderer: str, seed: int, near_mm: tuple[float, float], colours: list[str],
                     height_tolerance_mm: float, least_iou: float = 0.7) -> None:
    """The touching row of a walls/towers/touching bench table near a place, alone on it: each of
    its bricks found where it stands (IoU >= `least_iou`), named right, its height within a tolerance."""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    table = bench_scene(renderer, seed, "standard", n_walls=1, n_towers=1, n_touching=1)
    row = tuple(b for b in table.bricks if np.hypot(b.x_mm - near_mm[0], b.y_mm - near_mm[1]) < 40.0)
    scene = replace(table, bricks=row, stacks=(), walls=())
    truths = scene.truth_blocks()
    assert sorted(t.colour for t in truths) == colours
    blocks = Locator(scene.setup()).analyse(Camera(renderer).render(scene)).blocks
    _each_found(blocks, truths, least_iou, height_tolerance_mm + 1e-6)


def _each_found(blocks: list, truths: list, least_iou: float, height_tolerance_mm: float) -> None:
    """Each truth block found: the block found most over it covers it by `least_iou`, named
    right, its height within `height_tolerance_mm`."""
    for truth in truths:
        seen = max(blocks, key=lambda b: polygon_iou(b.footprint_mm, truth.footprints[0]))
        assert polygon_iou(seen.footprint_mm, truth.footprints[0]) >= least_iou, truth.colour
        assert seen.color == truth.colour, (truth.colour, seen.color)
        assert abs(seen.height_mm - truth.height_mm) <= height_tolerance_mm, (truth.colour, seen.height_mm)


def test_a_top_seen_stands_where_the_silhouettes_top_is_no_one_colour():
    """A gray 2x4 brick 28.8 mm high on gray tiles (ray-cast hard bench table 6, the whole table):
    on a table of no hue its dark walls and shadow are one with it; its top is seen standing out,
    but the top taken again from the silhouette took in the walls in shade (40 x 23 mm for 32 x 16)
    and was no one colour, and the brick was missed. The box under the top seen stands instead
    where it explains the outline too. (Its height is read low: 19.2 mm.)"""
    truth, blocks = _found_on_the_whole_table("raycast", 6, "hard", (442.0, 134.0), 15.0)
    assert truth.colour == "gray" and truth.height_mm == pytest.approx(28.8)
    assert [b.color for b in blocks] == ["gray"], [(b.color, b.height_mm) for b in blocks]
    assert polygon_iou(blocks[0].footprint_mm, truth.footprints[0]) >= 0.5


def test_a_top_seen_stands_at_the_height_that_explains_the_outline_where_the_fits_does_not():
    """A red 1x8 brick 19.2 mm high on wood (ray-cast hard bench table 7, the whole table), seen
    steeply: its dark red wall is as wide as its top, and the box fit took both for a top (a plate
    two studs wide, 6.4 mm), no one colour. The box under the top seen at that plate's height
    explains the outline poorly (0.64), and the brick was missed; the lowest height that explains
    it best is its own."""
    truth, blocks = _found_on_the_whole_table("raycast", 7, "hard", (316.0, 207.0), 15.0)
    assert truth.colour == "red" and truth.height_mm == pytest.approx(19.2)
    assert [b.color for b in blocks] == ["red"], [(b.color, b.height_mm) for b in blocks]
    assert polygon_iou(blocks[0].footprint_mm, truth.footprints[0]) >= 0.7
    assert blocks[0].height_mm == pytest.approx(19.2)


def test_a_top_seen_whose_outline_tells_no_height_is_no_box():
    """The box under a top seen, where the fit's height does not explain the outline, stands at the
    lowest height that explains it best; where every height explains it alike (a dark patch under a
    tower's fit on path-traced hard table 1, 0.854 at every height) the outline tells no height,
    and it is no box (it had been a false gray plate)."""
    from types import SimpleNamespace

    from companion.vision.blocks import _pinned_under_top
    from companion.vision.brickfit import BoxFit

    base, _ = rendered(3)
    view = TableView(base.camera, base.pose)
    top = TableRect(view.foot_mm + np.array([200.0, 0.0]), np.array([1.0, 0.0]), (15.9, 7.9))
    fit = BoxFit(top, top, 57.6, top, {57.6: 0.0})
    c = SimpleNamespace(view=view)

    def scored_by(iou_at):
        # (as `_fit_one` scores: None for a box taller than five bricks whose sides are no brick's)
        return lambda box: None if box.height_mm > 48.0 else (iou_at(box.height_mm), box, box.footprint, (4, 2))

    assert _pinned_under_top(c, fit, top, scored_by(lambda h: 0.854)) is None
    iou, box, _, _ = _pinned_under_top(c, fit, top, scored_by(lambda h: min(1.0, 0.5 + h / 38.4)))
    assert iou == 1.0 and box.height_mm == pytest.approx(19.2)
    assert box.height_confidence == pytest.approx(2 / 10)  # 19.2-48 mm explain it alike: 19.2 and 22.4 within half a brick
    # where the fit's own height explains the outline, the box stands there
    low = BoxFit(top, top, 28.8, top, {25.6: 3.0, 28.8: 0.0})
    assert _pinned_under_top(c, low, top, scored_by(lambda h: 0.9))[1].height_mm == pytest.approx(28.8)


def _found_on_the_whole_table(renderer: str, seed: int, level: str, near_mm: tuple[float, float], within_mm: float):
    """The bench block within 10 mm of a place on a whole bench table, and the blocks found within
    `within_mm` of it."""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    scene = bench_scene(renderer, seed, level)
    truth = next(t for t in scene.truth_blocks() if np.hypot(*(np.concatenate(t.footprints).mean(axis=0) - near_mm)) < 10)
    centre = np.concatenate(truth.footprints).mean(axis=0)
    blocks = [b for b in Locator(scene.setup()).analyse(Camera(renderer).render(scene)).blocks
              if np.hypot(*(b.footprint_mm.mean(axis=0) - centre)) < within_mm]
    return truth, blocks


def test_a_tall_narrow_bricks_top_is_a_start_though_its_walls_and_shadow_are_more():
    """A white 2x2 brick 28.8 mm high on green felt (ray-cast hard bench table 5, the whole table):
    seen from aside under the lamps its walls and shadow outweigh its top, which is less than 0.3
    of the outline, and was taken for a ragged piece of a top: the fit started from the whole
    outline, shadow and all, and the brick was missed. A lit face that fills its rectangle is a
    whole top where no other hue than its own and the felt's is in the outline."""
    truth, blocks = _found_on_the_whole_table("raycast", 5, "hard", (592.0, 474.0), 30.0)
    assert truth.colour == "white" and truth.height_mm == pytest.approx(28.8)
    assert [b.color for b in blocks] == ["white"], [(b.color, b.height_mm) for b in blocks]
    assert abs(blocks[0].height_mm - truth.height_mm) <= 4.8
    assert polygon_iou(blocks[0].footprint_mm, truth.footprints[0]) >= 0.7


def test_a_bricks_top_with_gaps_under_the_level_is_closed_but_not_the_speckled_table_or_its_shade():
    """A glossy gray brick's top on a speckled mat (path traced) differs from the table by less than
    the level in its studs' shaded rims and in noise, and opening the cut-out took it apart: no
    piece was left to fit. Its gaps under a stud across are closed where they still differ by half
    the level; the table's speckle beside it and its shade stay out."""
    level = 50.0
    rng = np.random.default_rng(3)
    diff = rng.uniform(0.0, 0.45 * level, (80, 140)).astype(np.float32)  # the table's speckle
    top = (slice(30, 46), slice(20, 110))  # a 1x6 brick, 8 x 45 mm at FINE_MM
    diff[top] = 1.4 * level
    for cx in range(27, 110, 16):  # each stud's shaded rim: a ring under the level, over half of it
        cv2.circle(diff, (cx, 38), 4, 0.7 * level, 1)
    diff[30:46, 23:108:3] = 0.6 * level  # and the sheen's streaks across it
    shade = np.zeros(diff.shape, np.uint8)
    shade[46:60, 20:110] = 1  # its shadow beside it
    diff[46:60, 20:110] = 0.8 * level
    blob = ((diff > level) & (shade == 0)).astype(np.uint8)
    assert not filled_blobs(cv2.morphologyEx(blob, cv2.MORPH_OPEN, _BRICK_DISC))  # taken apart
    closed = stud_gaps_closed(blob, diff, level, shade)
    assert closed is not None
    assert closed[31:45, 21:109].all()  # (a streak reaching its very edge leaves a notch a pixel deep)
    assert not closed[shade > 0].any() and not closed[:28].any() and not closed[:, :18].any()
    pieces = filled_blobs(cv2.morphologyEx(closed, cv2.MORPH_OPEN, _BRICK_DISC))
    assert len(pieces) == 1 and pieces[0][top].mean() > 0.9  # (the opening rounds its corners)
    assert stud_gaps_closed(closed, diff, level, shade) is None  # nothing left to close


def _small_pbr_table(seed: int):
    """A small path-traced table (600 x 400 mm, 960 x 540 px: 1.6 px a mm, as on the bench) and
    the renderer; skipped without the '.[pbr]' extra."""
    pbr = pytest.importorskip("companion.synth.pbr")
    pytest.importorskip("mitsuba")
    from companion.setup_file import TableSpec
    from companion.synth.scene import random_scene

    return random_scene(seed, n_minis=6, n_bricks=3, table=TableSpec(600.0, 400.0), width_px=960, height_px=540,
                        surface="grid"), pbr


@pytest.mark.slow
def test_a_glossy_gray_brick_on_a_speckled_mat_path_traced_is_found():
    """A small path-traced table (a gray grid mat with its speckle, a glossy gray 2x4 brick 19.2 mm
    high; seed 4 of the small tables, 1.6 px a mm as on the bench): the brick's top dipped under the
    level in spots and no block was found. Needs the '.[pbr]' extra."""
    scene, pbr = _small_pbr_table(4)
    shapes = [(1, 6, 9.6), (2, 4, 19.2), (1, 4, 28.8)]
    scene = replace(scene, bricks=tuple(replace(b, color="gray", studs_long=n, studs_short=m, height_mm=h)
                                        for b, (n, m, h) in zip(scene.bricks, shapes)))
    brick = scene.bricks[1]
    blocks = Locator(scene.setup()).analyse(pbr.render(scene)).blocks
    near = [b for b in blocks if polygon_iou(b.footprint_mm, brick.footprint_mm()) >= 0.5]
    assert len(near) == 1, [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(near[0].height_mm - brick.height_mm) <= 4.8 + 1e-6, near[0].height_mm


@pytest.mark.slow
def test_a_clipped_white_brick_under_the_lens_path_traced_is_no_tower():
    """Right under the camera a block's walls are under a pixel and only its top's size tells its
    height; a white top the camera clipped blooms past its edges, and a 2x3 brick 19.2 mm high 15
    mm from the camera's foot was read 96 mm high. No tower now: its height from its shadows where
    a lamp is found (here, from two minis' shadows), else one brick, its height marked unsure."""
    scene, pbr = _small_pbr_table(5)
    foot = scene.pose.camera_centre_mm[:2]
    brick = replace(scene.bricks[0], color="white", studs_long=3, studs_short=2, height_mm=19.2,
                    x_mm=float(foot[0] + 15.0), y_mm=float(foot[1] + 7.5))
    scene = replace(scene, bricks=(brick,) + scene.bricks[1:])
    blocks = Locator(scene.setup()).analyse(pbr.render(scene)).blocks
    near = [b for b in blocks if polygon_iou(b.footprint_mm, brick.footprint_mm()) >= 0.5]
    assert len(near) == 1, [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    height, sure, (low, high) = near[0].height_mm, near[0].height_confidence, near[0].height_range_mm
    assert height <= 48.0 and (abs(height - brick.height_mm) <= 4.8 + 1e-6 or sure < 0.5), (height, sure)
    assert low <= brick.height_mm <= high, (low, high)  # where its top may be, for the verdicts


@pytest.mark.slow
def test_a_tall_narrow_brick_lowered_by_its_shadows_keeps_the_top_its_fit_saw():
    """Path traced (the bench's hard table 8), a gray 1x4 brick 28.8 mm high shows no top that
    stands out, and the shadow beside its near wall widens its silhouette: fitted 38.4 mm high and
    a brick wide, its shadows say 28.8, and its top taken again from the silhouette at that height
    was 13 mm wide, no one colour, and the brick was lost. The top where the fit saw it, at the
    shadows' height, is the brick. Needs the '.[pbr]' extra."""
    pytest.importorskip("companion.synth.pbr")
    pytest.importorskip("mitsuba")
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("pbr", 8, "hard")
    brick = min(scene.bricks, key=lambda b: np.hypot(b.x_mm - 281.7, b.y_mm - 687.2))
    assert (brick.color, brick.studs_long * brick.studs_short, round(brick.height_mm, 1)) == ("gray", 4, 28.8)
    blocks = Locator(scene.setup()).analyse(Camera("pbr", cache=False).render(scene)).blocks  # (as the bench sees it)
    near = [b for b in blocks if polygon_iou(b.footprint_mm, brick.footprint_mm()) >= 0.5]
    assert len(near) == 1, [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(near[0].height_mm - brick.height_mm) <= 4.8 + 1e-6 and near[0].color == "gray"


@pytest.mark.slow
def test_a_tower_its_shadows_raise_keeps_the_top_it_shows():
    """Path traced (the bench's walls/towers/touching table 4), an orange tower 99.2 mm high
    shows its top; its fit's height was raised by its shadows, and its top taken again from the
    silhouette at the taller height was smaller than the one seen: the box explained the outline
    only under the top seen, and the tower was lost. Needs the '.[pbr]' extra."""
    pytest.importorskip("companion.synth.pbr")
    pytest.importorskip("mitsuba")
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("pbr", 4, "standard", n_walls=1, n_towers=1, n_touching=1)
    tower = next(t for t in scene.truth_blocks() if t.kind == "tower")
    assert tower.colour == "orange" and round(tower.height_mm, 1) == 99.2
    blocks = Locator(scene.setup()).analyse(Camera("pbr", cache=False).render(scene)).blocks
    near = [b for b in blocks if polygon_iou(tower.footprints, b.footprint_mm) >= 0.5]
    assert len(near) == 1, [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(near[0].height_mm - tower.height_mm) <= 4.8 + 1e-6, near[0].height_mm


@pytest.mark.slow
def test_a_gray_brick_on_gravel_is_found_from_its_faint_outline():
    """Path traced (the bench's seed 1 table 14), a gray 1x4 brick 28.8 mm high on gravel by the
    grass differs from the gravel barely more than the gravel from itself: only a 140 mm2 piece of
    it passed the frame's level, which fits no brick, and the faint outline around that piece was
    left out as its rim. Fitted from that outline, it is a brick. Needs the '.[pbr]' extra."""
    pytest.importorskip("companion.synth.pbr")
    pytest.importorskip("mitsuba")
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("pbr", 100003 + 14, "standard")
    brick = min(scene.bricks, key=lambda b: np.hypot(b.x_mm - 100.9, b.y_mm - 265.2))
    assert (brick.color, brick.studs_long * brick.studs_short, round(brick.height_mm, 1)) == ("gray", 4, 28.8)
    blocks = Locator(scene.setup()).analyse(Camera("pbr", cache=False).render(scene)).blocks
    near = [b for b in blocks if polygon_iou(b.footprint_mm, brick.footprint_mm()) >= 0.5]
    assert len(near) == 1, [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(near[0].height_mm - brick.height_mm) <= 4.8 + 1e-6, near[0].height_mm


@pytest.mark.slow
def test_a_gray_plate_on_paving_seen_in_part_is_found_whole():
    """Path traced (the verdict bench's table 1), a gray 1x4 plate 6.4 mm high on gray paving
    passed the level only in part, and that part was fitted as a 2x1 brick 19.2 mm high: it gave
    partial cover between units 37 and 42 where the truth gives none. The faint outline around
    the part, fitted as a 1x4 brick holding the first, is taken instead, and the verdict of that
    pair agrees with the truth's field by field. Needs the '.[pbr]' extra."""
    pytest.importorskip("companion.synth.pbr")
    pytest.importorskip("mitsuba")
    from companion.bench.verdicts import DEFAULT_LAYOUT, truth_state, verdict_fields
    from companion.rules.knight.attack import attack
    from companion.rules.table import Table
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("pbr", 1, "standard", **DEFAULT_LAYOUT)
    plate = min(scene.bricks, key=lambda b: np.hypot(b.x_mm - 842.9, b.y_mm - 200.2))
    assert (plate.color, plate.studs_long * plate.studs_short, round(plate.height_mm, 1)) == ("gray", 4, 6.4)
    setup = scene.setup()
    state = Locator(setup).analyse(Camera("pbr", cache=False).render(scene)).state
    near = [b for b in state.blocks if polygon_iou(np.asarray(b.footprint_mm), plate.footprint_mm()) >= 0.5]
    assert len(near) == 1, [(b.footprint_mm, b.height_mm) for b in state.blocks]
    corners = np.asarray(near[0].footprint_mm)
    sides_mm = sorted(np.linalg.norm(corners[1:3] - corners[0:2], axis=1))
    assert sides_mm == pytest.approx([7.8, 31.8], abs=2.0), sides_mm
    seen, truth = Table.from_state(state, setup), Table.from_state(truth_state(scene), setup)
    for a, t in ((42, 37), (37, 42)):
        assert verdict_fields(attack(seen, a, t)) == verdict_fields(attack(truth, a, t)), (a, t)


@pytest.mark.parametrize("colour, height_mm", [("orange", 28.8), ("blue", 19.2)])
def test_a_brick_under_the_lens_keeps_the_height_its_top_tells_where_the_fit_is_sure(colour, height_mm):
    """The ray-caster's camera does not bias a top's edges: right under the lens its size tells
    the height, the fit is sure of it and keeps it (only an unsure fit there is taken as one
    brick)."""
    base, _ = rendered(3)
    foot = base.pose.camera_centre_mm[:2]
    brick = SynthBrick(float(foot[0] + 20.0), float(foot[1] - 10.0), 30.0, 4, 2, 0.0, height_mm, colour)
    clear = tuple(m for m in base.minis if np.hypot(m.x_mm - brick.x_mm, m.y_mm - brick.y_mm) > 70)
    scene = replace(base, bricks=(brick,), minis=clear)
    blocks = Locator(scene.setup()).analyse(Renderer().render(scene)).blocks
    near = [b for b in blocks if polygon_iou(b.footprint_mm, brick.footprint_mm()) >= 0.5]
    assert len(near) == 1, [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert abs(near[0].height_mm - height_mm) <= 4.8 + 1e-6 and near[0].height_confidence >= 0.6, (
        near[0].height_mm, near[0].height_confidence)
    low, high = near[0].height_range_mm
    assert low <= height_mm <= high, (low, high)  # (wide there: only the top's size tells the height)


def test_a_gray_bricks_own_shadow_past_its_far_end_is_no_part_of_its_top():
    """A gray 2x4 brick 19.2 mm high on gray tiles (ray-cast bench table 0, walls/towers/touching;
    here alone on it): one of the two lamps found casts its shadow past the brick's far end, and the
    top standing out (darker than the tiles) took the shadow in; the fit from it was a 2x5 brick,
    a stud long, and it gave full cover on a line of attack that passes beside the brick. The part
    of the top that may be the table in shade, off the rest the way a lamp found casts shadows, is
    no part of it."""
    from companion.bench.vision import bench_scene

    table = bench_scene("raycast", 0, "standard", n_walls=1, n_towers=1, n_touching=1)
    brick = min(table.bricks, key=lambda b: np.hypot(b.x_mm - 611.0, b.y_mm - 300.0))
    (footprints, height, colour, _), blocks = _alone_found("raycast", replace(table, bricks=(brick,), stacks=(),
                                                                              walls=()))
    assert (colour, height, sorted((brick.studs_long, brick.studs_short))) == ("gray", pytest.approx(19.2), [2, 4])
    assert [b.color for b in blocks] == ["gray"], [(b.color, b.height_mm) for b in blocks]
    assert blocks[0].studs == (4, 2) and polygon_iou(blocks[0].footprint_mm, footprints[0]) >= 0.9


def _touching_pair_alone_found(table: int, near_mm: tuple[float, float], truth: list[tuple[str, float]],
                               within_mm: float) -> list:
    """The touching pair of a ray-cast walls/towers/touching bench table near a place (its colours
    and heights `truth`, sorted), alone on that table: the blocks found within `within_mm` of it,
    one of each colour."""
    from companion.bench.vision import bench_scene

    scene = bench_scene("raycast", table, "standard", n_walls=1, n_towers=1, n_touching=1)
    pair = tuple(b for b in scene.bricks if np.hypot(b.x_mm - near_mm[0], b.y_mm - near_mm[1]) < 12)
    assert sorted((b.color, round(b.top_mm, 1)) for b in pair) == truth
    alone = replace(scene, bricks=pair, stacks=(), walls=())
    found = [b for b in Locator(alone.setup()).analyse(Renderer().render(alone)).blocks
             if np.hypot(*(b.footprint_mm.mean(axis=0) - near_mm)) < within_mm]
    assert sorted(b.color for b in found) == [c for c, _ in truth], [(b.color, b.height_mm) for b in found]
    return found


def test_touching_bricks_under_the_lens_are_as_tall_as_their_shadows_say():
    """An orange 2x2 brick 28.8 mm high touching a green 1x2 one 9.6 mm high near the camera's
    foot (ray-cast bench table 10, walls/towers/touching; here alone on it): their walls do not
    show, and the colour map tells a height only by what each hides of the other; the orange was
    read 6.4 mm high (its height range 3.2-19.2 mm), and on the whole table its long shadow was a
    gray plate that gave partial cover. The shadows the two cast together under the lamps found
    rule the low heights out."""
    found = _touching_pair_alone_found(10, (469.0, 396.0), [("green", 9.6), ("orange", 28.8)], 60.0)
    orange = next(b for b in found if b.color == "orange")
    assert abs(orange.height_mm - 28.8) <= 3.2, orange.height_mm
    low, high = orange.height_range_mm
    assert low <= 28.8 <= high, (low, high)


def test_touching_bricks_the_map_reads_too_tall_are_lowered_to_what_their_shadows_say():
    """A yellow and an orange 2x2 brick, both 28.8 mm high, side by side (ray-cast bench table 18,
    walls/towers/touching; here alone on it) were read 35.2 mm (on the whole table both, here the
    yellow): the colour map, which tells a height by what each hides of the other, was near
    indifferent between 28.8 and 35.2 mm, and their shadows, which rule 35.2 mm out, could only
    raise a part. A part is lowered as well where its own fit does not rule the lower height out."""
    found = _touching_pair_alone_found(18, (512.0, 551.0), [("orange", 28.8), ("yellow", 28.8)], 40.0)
    assert all(abs(b.height_mm - 28.8) <= PLATE_MM + 1e-6 for b in found), [(b.color, b.height_mm) for b in found]


def test_a_touching_brick_is_lowered_only_where_a_shadow_shows_and_its_own_fit_is_unsure_down_to_it():
    """The costs measured on three bench tables (per height 3.2 .. 48 mm): the orange brick of
    ray-cast walls/towers/touching table 18, placed at 35.2 mm, its shadows showing one of
    25.6 mm; a path-traced 9.6 mm brick placed at 16 mm whose shadows show none (verdict table 9:
    lowered, it read 3.2 mm and turned two verdicts); a piece of a ray-cast green wall placed at
    38.4 mm whose own fit also likes 6.4 mm, with heights between ruled out (shadows here made up:
    a shadow of 6.4 mm)."""
    from companion.vision.blockshadows import heights_their_shadows_allow

    heights = np.round(np.arange(1, 16) * 3.2, 1)

    def costs(text: str) -> np.ndarray:
        return np.array([float(v) for v in text.split()])

    orange = heights_their_shadows_allow(heights, costs("50 45 40 35 30 24 17 10 4 0 0 1 4 8 12"),
                                          costs("537 467 369 285 193 108 30 0 16 93 181 275 385 508 633"), 35.2)
    assert heights[orange].tolist() == [22.4, 25.6, 28.8, 32.0]
    no_shadow = heights_their_shadows_allow(heights, costs("22 13 9 4 0 2 11 16 16 22 22 28 28 33 39"),
                                             costs("0 42 298 392 405 420 432 446 456 468 482 496 506 522 539"), 16.0)
    assert not no_shadow.any()
    wall_piece = heights_their_shadows_allow(heights, costs("23 8 22 65 137 240 354 226 126 54 12 0 18 67 147"),
                                              costs("300 0 300 300 300 300 300 300 300 300 300 300 300 300 300"), 38.4)
    assert not wall_piece.any()
    # and taller, wherever the shadows allow it (as before)
    taller = heights_their_shadows_allow(heights, costs("0 2 37 105 208 346 519 601 561 389 250 144 72 35 32"),
                                          costs("725 721 714 703 639 444 224 77 0 5 117 278 526 875 1273"), 3.2)
    assert heights[taller].tolist() == [25.6, 28.8, 32.0]


def test_a_brick_where_a_minis_shadow_was_drawn_is_still_searched():
    """The minis' shadows, drawn from the lamps found, are left out of the search as the minis
    are; on ray-cast walls/towers/touching seed 3 table 10 an orange 1x4 brick 19.2 mm high stood
    where a mini's shadow was drawn (it stands beside the mini and its own shadow joins the
    mini's), was left out with it, and its shadow was reported as a gray plate. A shadow only
    takes light away: what is brighter than the table there is searched."""
    _the_brick_found(3 * 100003 + 10, (556.5, 123.5), "orange", 19.2, n_walls=1, n_towers=1, n_touching=1)


def test_a_gray_top_darker_than_the_tiles_but_brighter_than_its_shadow_is_a_top():
    """On light gray tiles a light bluish gray 1x8 brick 28.8 mm high (ray-cast seed 3 table 4) has
    a top darker than the tiles and as gray: it may be the tiles in shade, and the fit that stood
    once its shadow was cut away was dropped as "what was left of a shadow". Its top is brighter
    in every channel than the shade cut out beside it: no shade of that, a top."""
    _the_brick_found(3 * 100003 + 4, (598.6, 577.5), "gray", 28.8)


def test_touching_bricks_split_with_their_shade_a_part_of_its_own_are_found():
    """A white 1x4 brick 19.2 mm high touching an orange 2x4 one 28.8 mm high on beige tiles
    (ray-cast walls/towers/touching seed 3 table 7): the usual colour split took the white top in
    with the walls in shade and the shadow beside them, and the finer split gave the two bricks
    right and a third, dark part: their walls and shadow. That part stood for no brick, and the
    pair was dropped. A part that is darker than the table and within the bricks' outlines or
    their shadows is theirs."""
    _the_blocks_found(3 * 100003 + 7, (630.0, 259.0), [("orange", 28.8), ("white", 19.2)],
                      n_walls=1, n_towers=1, n_touching=1)


def test_touching_bricks_one_tall_box_without_a_shadow_explained_are_found():
    """A gray 2x4 brick 19.2 mm high touching a green 1x4 one 9.6 mm high on green felt (ray-cast
    walls/towers/touching seed 3 table 6): one box over both fitted 48 mm tall (60.8 on its
    outline), and a tall box is not taken for touching bricks; it cast no shadow of its own under
    the lamps found and was dropped, and nothing was left. Such a box is none, so the touching
    bricks are tried."""
    _the_blocks_found(3 * 100003 + 6, (920.0, 489.0), [("gray", 19.2), ("green", 9.6)],
                      n_walls=1, n_towers=1, n_touching=1)


def test_a_towers_top_split_off_its_courses_is_as_tall_as_the_tower():
    """An orange-topped tower of 2x2 bricks and plates 73.6 mm high (ray-cast walls/towers/touching
    seed 7 table 6): split by colour, its top and its lower courses of other colours were placed as
    touching bricks among the low heights, the top at their tallest, 48 mm, and reported so
    (half the cover a tower gives). A part that reaches the low heights' end is placed again
    among a tower's."""
    _the_blocks_found(7 * 100003 + 6, (380.3, 241.3), [("orange", 73.6)], n_walls=1, n_towers=1, n_touching=1)


def test_a_towers_top_its_shadows_set_at_the_low_heights_end_is_as_tall_as_its_shadow():
    """A red-topped tower of 2x2 bricks 76.8 mm high over green and white courses, 140 mm from the
    camera's foot (ray-cast walls/towers/touching seed 7 table 5): split by colour, its top was
    placed at 44.8 mm, its shadows said taller, and the low heights end at 48 mm: read so (the
    outline tells little of a height there). Its shadow, four times its top's length, carries
    it on among a tower's heights."""
    _the_blocks_found(7 * 100003 + 5, (873.1, 610.4), [("red", 76.8)], n_walls=1, n_towers=1, n_touching=1)


def test_a_towers_pale_shadow_under_a_broad_lamp_is_its_own_where_another_lamps_is_dark():
    """A yellow-topped tower 102.4 mm high on light tiles under two lamps (ray-cast walls/towers/
    touching seed 3 table 4): the shadow the broader lamp throws of it is a third as dark as that
    lamp's short shadows of the minis (its penumbra grows with the height), the other lamp's is
    dark. Fitted right, it was dropped as casting no shadow of its own, and its top was read as a
    3.2 mm plate 26 mm off. A pale shadow counts where another lamp's is dark."""
    _the_blocks_found(3 * 100003 + 4, (757.4, 209.3), [("yellow", 102.4)], n_walls=1, n_towers=1, n_touching=1)


def test_a_tower_whose_outline_takes_a_band_for_its_top_is_its_tallest_part_where_its_courses_say_so():
    """A blue-topped tower of 2x2 bricks 70.4 mm high over black courses on dark wood, its
    shadow falling towards the camera's foot (ray-cast walls/towers/touching seed 3 table 8):
    split by colour, the blue top was placed right, 70.4 mm high, its courses as black bricks
    beside it; the tower fitted to the outline (shadow and all) took a black band for its top and
    stood 57.6 mm high, 8 mm off, and was reported black. The tallest part's courses explain the
    colour map better than that tower's and than the bricks as reported: it is the tower."""
    _the_blocks_found(3 * 100003 + 8, (923.4, 108.2), [("blue", 70.4)], n_walls=1, n_towers=1, n_touching=1)


def test_a_lamp_found_again_on_the_same_shadows_is_not_a_second_lamp():
    """A black 1x8 brick 28.8 mm high on light gray tiles (ray-cast walls/towers/touching seed 5
    table 2): the lamp search found the main lamp (slope 0.2, 0.16 at the table's centre), then
    from another start a lamp 3.5 m up that its shadows' edges moved onto the same shadows (0.34,
    0.21): the one lamp counted twice, its shadows' darkness summed past all the light. The
    brick's walls read 25.6-28.8 mm, the doubled shadows it does not cast pulled it to 16.0. A lamp
    placed within LAMPS_APART of one found is that one."""
    _the_brick_found(5 * 100003 + 2, (629.9, 619.4), "black", 28.8, n_walls=1, n_towers=1, n_touching=1)


def test_a_tall_narrow_bricks_lit_top_is_its_top_though_its_wall_and_long_shadow_are_most_of_its_outline():
    """A gray 1x4 brick 28.8 mm high on beige tiles, 640 mm from the camera's foot, under a low
    lamp (ray-cast standard seed 3 table 9): its lit top, 7.8 mm wide, was a sixth of an outline
    that took in its wall in shade (15 mm wide as the camera sees it) and its shadow (32 mm long),
    too little to start the fit from; the outline itself, 88 mm long, was no brick. Its top is
    most of what of the outline may not be the table in shade, and lit itself: the fit starts
    from it."""
    _the_brick_found(3 * 100003 + 9, (184.1, 482.1), "gray", 28.8)


def test_a_low_brick_read_tall_on_the_tables_grain_is_its_low_fits_low_height_where_it_casts_no_tall_shadow():
    """A yellow 2x3 brick 9.6 mm high on wood, 600 mm from the camera's foot (ray-cast standard
    seed 3 table 11): its near walls' profiles read 44.8 mm on the wood's grain beyond them (9.6
    the next least), refitted among a tower's heights 67.2 mm; that tower casts no shadow of its
    own, and the tower's fit's least low height (32 mm) is the end of the low range: dropped. The
    low range's own fit has 9.6 mm well inside it: the brick stands there, where nothing else
    does."""
    _the_brick_found(3 * 100003 + 11, (959.6, 360.9), "yellow", 9.6)


def test_a_bricks_shadow_on_felt_speckled_by_its_fibres_is_its_shadow_all_the_same():
    """A yellow 1x8 brick 19.2 mm high on green felt under a low lamp (ray-cast walls/towers/touching
    seed 7 table 6): fitted right, 19.2 mm by its shadows, its outline took in its shadow, 22 mm
    wide; where the felt's fibres gave the shade another tint, pixel by pixel, the shadow the box
    casts did not explain the outline (0.78) and the brick was lost. The shade is closed over the
    felt's texture where the box casts it."""
    _the_brick_found(7 * 100003 + 6, (369.5, 606.7), "yellow", 19.2, n_walls=1, n_towers=1, n_touching=1)


def test_a_towers_lower_courses_of_another_colour_are_no_block_of_their_own():
    """A green-topped tower 80 mm high over a yellow course and red ones (ray-cast
    walls/towers/touching seed 7 table 1): its red walls were fitted as a 6.4 mm box round the
    tower's footprint and reported beside it, the block found most over the tower. A low block of
    another colour that a tower stands in, half of it within the tower's footprint, is its courses."""
    _the_blocks_found(7 * 100003 + 1, (671.1, 628.5), [("green", 80.0)], n_walls=1, n_towers=1, n_touching=1)


def test_a_touching_row_with_a_part_as_tall_as_a_tower_is_no_tower_where_no_lamp_checks_it():
    """A yellow, a gray and a blue brick in a row, 28.8, 19.2 and 28.8 mm high, on wood under lamps
    whose shadows were not found (ray-cast walls/towers/touching seed 5 table 10): the yellow one's
    walls read it 38.4 mm, and a part as tall as a tower gave the row to the tower fitted to its
    outline, one gray box 121.6 mm high, which nothing then checked. Where no lamp is found the
    tower must explain the colour map by its courses: the bricks stand. (The yellow and the gray
    are read 9.6 and 6.4 mm too high, the blue one as a plate 6.4 mm high a few millimetres off:
    the row's heights are issue 15's still.)"""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    scene = bench_scene("raycast", 5 * 100003 + 10, "standard", n_walls=1, n_towers=1, n_touching=1)
    truths = [t for t in scene.truth_blocks() if np.hypot(*(np.concatenate(t.footprints).mean(axis=0) - (644.0, 330.0))) < 20]
    assert sorted((t.colour, round(t.height_mm, 1)) for t in truths) == [("blue", 28.8), ("gray", 19.2), ("yellow", 28.8)]
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    near = [b for b in blocks if np.hypot(*(b.footprint_mm.mean(axis=0) - (644.0, 330.0))) < 30]
    assert max(b.height_mm for b in near) < 48.0, [(b.color, b.height_mm) for b in near]
    _each_found(blocks, [t for t in truths if t.colour != "blue"], 0.5, 12.8)


def test_a_light_shadow_far_below_its_wall_is_a_shadow():
    """A white 2x2 brick 9.6 mm high on green felt (ray-cast seed 3 table 1) under a room with much
    light of its own: its lamp's shadow keeps 0.7-0.8 of the felt's light, and a shadow was looked
    for only under 0.65 of it; the wall took it in, 22.4 mm high. A level run of the table's colour
    in shade far below the wall's light is a shadow up to 0.85 of it."""
    _the_brick_found(3 * 100003 + 1, (567.8, 101.4), "white", 9.6)


def test_a_brick_whose_neighbours_show_no_core_of_their_own_is_fitted_on_its_own_colours_outline():
    """A gray 1x6 brick 28.8 mm high with a blue and a green brick 9.6 mm high beside it on green
    felt (ray-cast walls/towers/touching seed 3 table 2): their tops are mostly behind the gray
    one's wall, the green one's the felt's colour, so the colour split had one core only and no
    touching fit; the whole outline, theirs in it, was no box's (silhouette 0.72), and nothing was
    found. Last of all each colour part is fitted alone on its own outline: the gray brick stands."""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    scene = bench_scene("raycast", 3 * 100003 + 2, "standard", n_walls=1, n_towers=1, n_touching=1)
    near = [t for t in scene.truth_blocks() if np.hypot(*(np.concatenate(t.footprints).mean(axis=0) - (325.0, 266.0))) < 15]
    assert sorted((t.colour, round(t.height_mm, 1)) for t in near) == [("blue", 9.6), ("gray", 28.8), ("green", 9.6)]
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    _each_found(blocks, [t for t in near if t.colour == "gray"], 0.5, 4.8)


def test_a_tower_whose_outlines_tower_casts_no_shadow_of_its_own_stands_as_first_fitted():
    """A blue 2x2 tower 86.4 mm high 115 mm from the camera's foot (ray-cast walls/towers/touching
    seed 3 table 6): its box fitted 67.2 mm high (walls 83.2, its shadows lower), and it casts its
    shadow; the tower fitted to its outline, 99.2 mm, casts none and was dropped, and with it the
    box: the tower fitted after read 54.4 mm, off its footprint (IoU 0.45). The box first fitted
    stands where its outline's tower casts no shadow of its own. (Its height is still read 19.2 mm
    low: its shadows pull it down from its walls' 83.2 mm.)"""
    _the_blocks_found(3 * 100003 + 6, (667.8, 263.9), [("blue", 86.4)], n_walls=1, n_towers=1, n_touching=1,
                      height_tolerance_mm=19.2)


def test_a_black_brick_beside_its_shadow_on_a_mat_of_no_hue_is_a_part_of_its_own():
    """A black 2x2 brick 19.2 mm high touching a red one 28.8 mm high on a gray grid mat (ray-cast
    walls/towers/touching seed 3 table 10): the black brick and the shadows beside it are one
    neutral colour, two cores in one piece of it, and every point of that piece was "unknown" to
    the touching fit, so the black brick was never placed. Cores of one neutral colour twice apart
    in light or more (neither the table in shade, where the table's hue tells) share the piece,
    each point to the nearer core: the black brick is found. (It reads 12.8 mm.)"""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    scene = bench_scene("raycast", 3 * 100003 + 10, "standard", n_walls=1, n_towers=1, n_touching=1)
    near = [t for t in scene.truth_blocks() if np.hypot(*(np.concatenate(t.footprints).mean(axis=0) - (793.0, 694.0))) < 10]
    assert sorted((t.colour, round(t.height_mm, 1)) for t in near) == [("black", 19.2), ("red", 28.8)]
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    _each_found(blocks, near, 0.5, 6.4)


def test_the_table_in_a_weak_lamps_shadow_is_no_block():
    """Green felt under three lamps, two of them a sixth of the light each (ray-cast walls/towers/
    touching seed 5 table 6): their shadows keep 0.82-0.91 of the felt's light and its tint, too
    light for shade (0.85 at most), and they came out as green blocks 16-35 mm high, one as a
    third part of a blue and a red brick's touching fit, others beside a mini. A top that keeps the
    table's tint within 0.1 and half its light or more, but less than all of it, is the table in a
    light shadow: those are gone, and the blue and the red brick still stand."""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    scene = bench_scene("raycast", 5 * 100003 + 6, "standard", n_walls=1, n_towers=1, n_touching=1)
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    shadows_mm = [(602.0, 425.0), (378.0, 567.0), (889.0, 98.0)]
    assert not [b for b in blocks if min(np.hypot(*(b.footprint_mm.mean(axis=0) - p)) for p in shadows_mm) < 6]
    bricks = [t for t in scene.truth_blocks() if np.hypot(*(np.concatenate(t.footprints).mean(axis=0) - (603.0, 390.0))) < 12]
    assert sorted(t.colour for t in bricks) == ["blue", "red"]
    _each_found(blocks, bricks, 0.5, 9.6)


def test_a_light_shadow_is_told_by_its_tint_and_its_light():
    """`not_the_table_in_light_shade`: a top of the table's tint with 0.5-1 of its light is the
    table in a light shadow; a darker one (a black brick), one of another tint (a green brick on
    greener felt), or a lighter one stays."""
    from companion.vision.blockshadows import not_the_table_in_light_shade
    from companion.vision.foundblock import FoundBlock
    from companion.vision.brickfit import BoxFit

    table = np.zeros((10, 10, 3), np.uint8)
    table[:] = (40, 78, 38)  # green felt, BGR

    def block(top_bgr: tuple[int, int, int]) -> FoundBlock:
        footprint = TableRect(np.array([10.0, 10.0]), np.array([1.0, 0.0]), (3.9, 3.9))  # a 1x1 brick at (10, 10)
        fit = BoxFit(top=footprint, silhouette=footprint, height_mm=9.6, footprint=footprint, height_cost={9.6: 0.0})
        return FoundBlock(footprint.corners(), 9.6, "green", 1.0, 1.0, 1.0, (1, 1), fit, np.array(top_bgr, float))

    shadow, black, other, lit = block((35, 69, 34)), block((12, 13, 12)), block((38, 74, 30)), block((60, 110, 55))
    kept = not_the_table_in_light_shade([shadow, black, other, lit], table)
    assert [id(b) for b in kept] == [id(black), id(other), id(lit)]


def _the_blocks_found(seed: int, near_mm: tuple[float, float], truth: list[tuple[str, float]],
                     height_tolerance_mm: float = 4.8, **layout: int) -> None:
    """The bench blocks within 12 mm of a place on a whole ray-cast bench table (their colours and
    heights `truth`, sorted) each found (IoU >= 0.5 as the bench counts it), named right, its
    height within `height_tolerance_mm` (half a brick)."""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    scene = bench_scene("raycast", seed, "standard", **layout)
    truths = [t for t in scene.truth_blocks() if np.hypot(*(np.concatenate(t.footprints).mean(axis=0) - near_mm)) < 12]
    assert sorted((t.colour, round(t.height_mm, 1)) for t in truths) == truth
    _each_found(Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks, truths, 0.5, height_tolerance_mm)


def _the_brick_found(seed: int, near_mm: tuple[float, float], colour: str, height_mm: float, **layout: int) -> None:
    """A loose brick of a whole ray-cast bench table found where it stands (`_the_blocks_found`)."""
    _the_blocks_found(seed, near_mm, [(colour, height_mm)], **layout)


def test_a_low_block_of_a_taller_ones_colour_standing_in_it_is_its_face_and_one_of_another_colour_is_not():
    """Two blocks do not stand in one place. A path-traced gray 1 x 4 brick 28.8 mm high was found,
    and its wall in shade beside it again as a gray block 6.4 mm high, 9 mm along it (0.59 of its
    footprint inside the brick's): that one is the brick's face, no block. A lower brick of another
    colour fitted into a taller neighbour's box (an orange one touching a gray one) is a brick,
    and so is a block of the same colour less than four plates lower (a touching pair's boxes
    overlap by their fits' errors) or one beside it."""
    from companion.vision.blocks import _not_inside_a_taller
    from companion.vision.foundblock import FoundBlock

    def block(x_mm: float, y_mm: float, height_mm: float, colour: str) -> FoundBlock:
        return box_block(TableRect(np.array([x_mm, y_mm]), np.array([0.0, 1.0]), (11.9, 3.9)), height_mm, colour)  # 1 x 4

    brick = block(825.0, 446.0, 28.8, "gray")
    face = block(825.0, 455.0, 6.4, "gray")
    assert _not_inside_a_taller([brick, face]) == [brick]
    for kept in (block(825.0, 455.0, 6.4, "orange"), block(825.0, 455.0, 19.2, "gray"),
                 block(834.0, 446.0, 6.4, "gray")):
        assert _not_inside_a_taller([brick, kept]) == [brick, kept]


def test_a_third_of_a_block_inside_the_block_a_mini_stands_on_makes_it_a_piece_of_it():
    """A green 3.2 mm "block" beside a mini on a gray brick 28.8 mm high (ray-cast standing table
    16), 0.43 of its footprint inside the brick's: a piece of the brick or of the mini, dropped
    when the mini's block is found (every such block on the standing dev sets was false, at 0.4-0.95
    inside). One a fifth inside is a brick beside it."""
    from companion.vision.blocks import _mostly_within

    stood_on = TableRect(np.array([976.0, 604.0]), np.array([1.0, 0.0]), (15.9, 7.9)).corners()
    for dx_mm, piece in ((-14.5, True), (-17.8, False)):  # 0.43 and 0.2 of it inside
        beside = TableRect(np.array([976.0 + dx_mm, 604.0]), np.array([0.0, 1.0]), (11.9, 4.7)).corners()
        assert _mostly_within(beside, stood_on) == piece


@pytest.mark.parametrize("glare", [0.15, 0.2, 0.3])
def test_a_top_clipped_in_two_channels_leaves_the_hue_to_its_walls(glare):
    """Path traced under a clipped paper, an orange top read (254, 250, 131): red and green at the
    camera's ceiling, the lamp's glare in its blue; its wall (164, 110, 58) is orange. The usual
    fit's shortcut (the shade from all three channels, the glare their mean residual) left orange
    a worse fit of the top than yellow, and the name went to yellow; fitted exactly, the top rules
    out only what cannot reach it, and the wall names it."""
    from companion.vision.colours import clipped_top, name_colour, naming_wall, srgb_to_linear
    albedo = srgb_to_linear(np.array(LEGO_RGB["orange"])) / srgb_to_linear(PAPER_ALBEDO)
    paper = encode(np.ones(3))
    wall = encode(albedo * 0.3 + 0.04)
    for exposure in (3.0, 4.0):
        top = encode(albedo * exposure + glare)
        assert clipped_top(top)
        chosen = naming_wall(top, wall, paper)
        assert name_colour(top, paper, 1.0, wall_rgb=chosen, top_shade=exposure)[0] == "orange", exposure


def test_a_brick_fitted_from_its_faint_outline_keeps_its_one_box():
    """A black 1x8 brick 28.8 mm high on the dark mat (the plain bench's seed 0 table 1) is fitted
    right from its candidate, and the faint outline around it (the last resort for a brick that
    passes the level only in part) is fitted too. Nothing stood there at first; the second pass
    with shade left out (a black top may be the mat in shade), as a strong outline gets, gave a box
    25.6 mm high that holds the first and so replaced it. A faint outline now gets only the fits
    that can give one brick: the box, or two colours of it; not towers, touching bricks, walls or
    the second pass (which gave nothing else on faint outlines, at 50-170 ms each)."""
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("plain", 1, "standard")
    brick = min(scene.bricks, key=lambda b: np.hypot(b.x_mm - 234.0, b.y_mm - 698.0))
    assert (brick.color, brick.studs_long * brick.studs_short, round(brick.height_mm, 1)) == ("black", 8, 28.8)
    blocks = Locator(scene.setup()).analyse(Camera("plain").render(scene)).blocks
    near = [b for b in blocks if polygon_iou(b.footprint_mm, brick.footprint_mm()) >= 0.5]
    assert len(near) == 1, [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert near[0].color == "black" and abs(near[0].height_mm - brick.height_mm) < PLATE_MM / 2, near[0].height_mm


def test_a_side_seen_edge_on_says_nothing_of_the_height():
    """A red 2x2 brick 9.6 mm high on green felt, 315 mm from the camera's foot (ray-cast
    walls/towers/touching seed 3 table 6): one of its sides runs 2.5 mm from the line to the foot,
    so its wall is a few hundredths of a millimetre wide at any height; fitted as a wall and a top,
    two edges that close with free levels fitted the edge's blur, better the taller the box, and
    the brick read 28.8 mm high as a 1x2. A wall under half a pixel wide is left out of the fit."""
    _the_brick_found(3 * 100003 + 6, (386.8, 406.7), "red", 9.6, n_walls=1, n_towers=1, n_touching=1)


def test_a_brick_split_from_its_own_shadow_is_fitted_again_alone():
    """A green 1x4 brick 9.6 mm high on light gray tiles (ray-cast walls/towers/touching seed 7
    table 4): its shadow past its far side, lighter than the green, split off as a gray part; the
    touching fit placed the two as bricks, the gray one hiding part of the green, whose top was
    pushed onto the shadow and read 22.4 mm. The gray part is dropped as its shadow (judged where
    its top is seen: fitted as a tall box its footprint had moved onto the green brick), and the
    brick is fitted again alone on its own colour's outline."""
    _the_brick_found(7 * 100003 + 4, (956.5, 595.7), "green", 9.6, n_walls=1, n_towers=1, n_touching=1)


def test_a_shadow_lighter_than_a_dark_wall_of_the_tops_colour_is_a_shadow():
    """A green 1x4 brick 9.6 mm high on white tiles (ray-cast walls/towers/touching seed 5 table
    1): its wall in shade (a quarter of the tiles' light, nearly gray) is darker than its shadow
    beyond (0.47), so a shadow was looked for only if the wall's colour told it from the table's,
    and it was read as 3 mm of wall: the box came out as a 3.2 mm plate. The wall's colour, near
    its top's, tells it."""
    _the_brick_found(5 * 100003 + 1, (356.2, 294.9), "green", 9.6, n_walls=1, n_towers=1, n_touching=1)


@pytest.mark.slow
def test_a_wall_of_one_colour_whose_arms_read_apart_is_one_block():
    """Path traced (the verdict bench's table 8), an orange ring of four bricks 9.6 mm high: its
    arms, each fitted right, had their tops named white, white, white and orange under the light's
    falloff along the wall, and came out as two blocks; attacks across the yard between units 20
    and 37 then saw partial cover where the truth gives none. A cut-out of one colour is one colour:
    its arms take the colour of most of its top, and those verdicts agree with the truth's. Needs
    the '.[pbr]' extra."""
    pytest.importorskip("companion.synth.pbr")
    pytest.importorskip("mitsuba")
    from companion.bench.verdicts import DEFAULT_LAYOUT, truth_state, verdict_fields
    from companion.rules.knight.attack import attack
    from companion.rules.table import Table
    from companion.synth.worlds import Camera, bench_scene

    scene = bench_scene("pbr", 8, "standard", **DEFAULT_LAYOUT)
    ring = [t for t in scene.truth_blocks() if t.kind == "wall"]
    assert [(t.colour, round(t.height_mm, 1), len(t.footprints)) for t in ring] == [("orange", 9.6, 4)]
    setup = scene.setup()
    state = Locator(setup).analyse(Camera("pbr", cache=False).render(scene)).state
    yard = np.concatenate(ring[0].footprints).mean(axis=0)
    near = [b for b in state.blocks if np.hypot(*(np.mean(b.footprint_mm, axis=0) - yard)) < 60]
    assert len(near) == 1, [(np.mean(b.footprint_mm, axis=0), b.height_mm, b.color) for b in near]
    seen, truth = Table.from_state(state, setup), Table.from_state(truth_state(scene), setup)
    for a, t in ((20, 37), (37, 20)):
        assert verdict_fields(attack(seen, a, t)) == verdict_fields(attack(truth, a, t)), (a, t)


def test_a_light_narrow_shadow_beside_a_near_wall_is_a_shadow_though_no_millimetre_of_it_is_level():
    """A white 1x4 brick 9.6 mm high on green felt (ray-cast seed 3 table 6) under a lamp 14 degrees
    off overhead, in a room with a third of the light its own: its lamp's shadow beside its walls
    is 2.5 mm wide and light; blurred, it dips and rises with no millimetre of it level, and so no
    shadow was looked for: the walls took it in, 16 mm high. A light shadow half a millimetre
    level is looked for."""
    _the_brick_found(3 * 100003 + 6, (943.0, 366.1), "white", 9.6)


def test_a_deep_shadow_is_looked_for_on_the_profiles_clear_of_a_touching_part():
    """An orange 2x3 brick 19.2 mm high on gray tiles (ray-cast seed 0 table 0): its shadows, gray,
    were split off by colour as parts touching it, and its near side's profiles that cross them
    were averaged in when the side was asked whether a deep shadow lies beyond it: the shadow was
    not looked for and the brick read 9.6 mm. Asked on the profiles clear of the other parts, as
    every fit of the side reads them, it stands 19.2 mm."""
    _the_brick_found(0 * 100003 + 0, (161.8, 497.7), "orange", 19.2)


def test_what_of_an_outline_no_block_found_explains_is_fitted_as_a_brick_of_its_own():
    """A white, a green and a red 2x6 brick in a row, 28.8, 19.2 and 9.6 mm high, on beige tiles
    (ray-cast walls/towers/touching seed 7 table 3): split by colour and fitted together, the white
    read 38.4 mm, as tall as a tower, cast no tower's shadow and was dropped; the green and the red
    stood. What of the outline the blocks found (their silhouettes, the shadows they cast) leave
    unexplained is fitted again as a low brick of its own, of a colour none of them has."""
    _the_blocks_found(7 * 100003 + 3, (764.2, 200.3), [("white", 28.8)], n_walls=1, n_towers=1, n_touching=1)


def test_an_outline_the_coarse_search_parts_by_a_pixel_is_one_candidate():
    """A light gray 2 x 4 tower 35.2 mm high on beige tiles (ray-cast walls/towers/touching seed 5
    table 3): its top differs from the tiles little, and on the coarse 2 mm search a corner of
    its outline lay a pixel apart from the rest, a candidate of its own; the outline without it
    gave no block, nor did the corner. Parts of the coarse outline a pixel apart are one candidate
    (closed before they are labelled): the tower is found, its height right."""
    _the_blocks_found(5 * 100003 + 3, (340.4, 474.4), [("gray", 35.2)], n_walls=1, n_towers=1, n_touching=1)


def test_a_shadow_the_lamps_leave_light_in_is_shade_beside_black_plastic():
    """A black top beside its lamps' shadows on gray tiles: a long faint shadow (58% of the tiles'
    light) and a short deep one at the brick's foot (15%). Taken against the faint one alone, the
    deep shadow passed for black plastic and stayed in the brick's outline (a black tower 51.2 mm
    high near the camera's foot was fitted over it and dropped). Where the lamps were found, what
    keeps the light their deepest shade leaves is shade: the deep shadow is cut off with the faint
    one, the black top (3%) and its blurred edge are not; with no lamp found, as before. A blue
    brick beside a shadow is no black plastic either (`dark_beside`): darker than beige tiles in
    every channel, it is lit as no shade is."""
    from companion.vision.lamps import FoundLamp
    from companion.vision.shade import Lamplight, black_bricks_shadow, dark_beside, linear_light

    tiles = np.array([180.0, 186.0, 190.0])

    def seen(share: float) -> np.ndarray:  # the tiles at a share of their light (BGR, display)
        return np.clip(encode(linear_light(tiles) * share) * 255.0, 0, 255)

    fine = np.tile(tiles, (40, 90, 1))
    maybe = np.zeros((40, 90), bool)
    fine[10:30, 5:45], maybe[10:30, 5:45] = seen(0.58), True  # the long faint shadow
    fine[10:30, 45:60], maybe[10:30, 45:60] = seen(0.15), True  # the deep one at its foot
    fine[10:30, 60:80] = seen(0.03)  # the black top
    blob = np.zeros((40, 90), np.uint8)
    blob[10:30, 5:80] = 1
    fine, table_fine = fine.astype(np.uint8), np.tile(tiles, (40, 90, 1)).astype(np.uint8)
    lamp = FoundLamp((0.0, 0.0, 1000.0), minis=6, dark_share=1.0, depth=0.55)
    lamps = Lamplight((lamp, replace(lamp, depth=0.85)), np.zeros((4, 4)), np.ones((4, 4), np.uint8))
    without = black_bricks_shadow(fine, blob, maybe)
    assert without is not None and not without[:, 46:60].any() and without[12:28, 8:43].all()
    shade = black_bricks_shadow(fine, blob, maybe, lamps, table_fine)
    assert shade is not None and shade[12:28, 8:58].all() and not shade[:, 60:].any()

    blue = np.zeros((40, 90, 3), np.uint8)
    blue[:] = tiles.astype(np.uint8)
    blue[10:30, 60:80] = (150, 70, 10)
    black = fine
    lit_shade = np.zeros((40, 90), np.uint8)
    lit_shade[10:30, 5:60] = 1
    assert dark_beside(blue, table_fine, blob, lit_shade)  # (darker in every channel)
    assert not dark_beside(blue, table_fine, blob, lit_shade, lamps)
    assert dark_beside(black, table_fine, blob, lit_shade, lamps)


@pytest.mark.slow
def test_a_rings_arms_named_apart_where_its_split_found_one_colour_broad_as_a_brick_are_one_block():
    """A castle ring of white bricks on wood (ray-cast walls/towers/touching seed 3 table 11): its
    colour split found a second colour only in strips no brick fits in (its walls in shade), one
    core, and the arms' tops were named apart (three white, one yellow under the lamp's falloff):
    the yellow arm stood as a block of its own over the ring, white once the frame's light named it
    (19.2 mm, its silhouette fit 0.3). A split with no second core is one colour too: one white
    block, the ring. (Its height is read 16.0 mm for 9.6: its walls barely show.)"""
    from companion.bench.vision import bench_scene
    from companion.synth.worlds import Camera

    scene = bench_scene("raycast", 3 * 100003 + 11, "standard", n_walls=1, n_towers=1, n_touching=1)
    ring = next(t for t in scene.truth_blocks() if t.kind == "wall")
    assert ring.colour == "white" and len(ring.footprints) == 4
    blocks = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).blocks
    over = [b for b in blocks if polygon_iou(ring.footprints, b.footprint_mm) > 0.05]
    assert [b.color for b in over] == ["white"], [(b.color, b.height_mm) for b in over]
    assert polygon_iou(ring.footprints, over[0].footprint_mm) >= 0.5


@pytest.mark.slow
@pytest.mark.parametrize("seed, layout, at_mm, colour, height_mm", [
    # a 2 x 2 black tower 113 mm from the camera's foot on gray tiles, a short deep shadow and a
    # long faint one beside it (ray-cast walls/towers/touching seed 3 table 3)
    (3 * 100003 + 3, {"n_walls": 1, "n_towers": 1, "n_touching": 1}, (510.8, 378.1), "black", 51.2),
    # a black 1 x 8 brick 28.8 mm high under two lamps whose depths add up to more than one: its
    # top (3% of the tiles' light) had been taken for shade (ray-cast seed 3 table 10)
    (3 * 100003 + 10, {}, (941.5, 707.8), "black", 28.8),
])
def test_black_plastic_beside_its_lamps_shadows_is_found(seed: int, layout: dict, at_mm: tuple[float, float],
                                                       colour: str, height_mm: float):
    """Two cases of black plastic on gray tiles lost to its shadows: found, the height right."""
    _the_blocks_found(seed, at_mm, [(colour, height_mm)], **layout)


def test_a_brick_the_rest_of_an_outline_leaves_narrow_against_a_found_one_is_grown_to_a_brick():
    """A black 1x2 brick 19.2 mm high behind a blue one 9.6 mm high, touching (ray-cast
    walls/towers/touching seed 5 table 3): the blue was found, and what of the outline it leaves
    (beyond its silhouette) was fitted as the black brick at its height, but 5 mm wide: the blue's
    silhouette had taken the rest, and a brick that is no brick's size did not stand. Where the
    short side meets a found block's footprint it grows to the brick's side above, towards it;
    short anywhere else, or standing in the found block, it is no brick still."""
    from companion.vision.blocks import _grown_to_a_brick_against

    _the_blocks_found(5 * 100003 + 3, (902.6, 588.4), [("black", 19.2), ("blue", 9.6)], n_walls=1, n_towers=1,
                      n_touching=1)

    found = box_block(TableRect(np.array([300.0, 200.0]), np.array([1.0, 0.0]), (7.9, 3.9)), 9.6, "blue", (2, 1))

    def grown(centre_y_mm: float, width_mm: float, length_mm: float = 15.8) -> tuple | None:
        piece = box_block(TableRect(np.array([300.0, centre_y_mm]), np.array([1.0, 0.0]), (length_mm / 2, width_mm / 2)),
                          19.2, "black", None)
        block = _grown_to_a_brick_against(piece, [found])
        if block is None:
            return None
        rect = block.fit.footprint
        return block.studs, round(float(rect.centre[1]), 1), round(2 * rect.half_mm[1], 1)

    assert grown(209.3, 5.0) == ((2, 1), 207.9, 7.8)  # its edge 2.9 mm past the blue's: grown to it
    assert grown(213.3, 5.0) is None  # 6.9 mm past: a brick apart, no neighbour's silhouette took it
    assert grown(209.3, 5.0, 12.0) is None  # short along its length too, where nothing found meets it
    assert grown(207.5, 5.0) is None  # grown, it would stand 1.7 mm into the blue


@pytest.mark.slow
def test_parts_of_an_outline_are_joined_but_not_to_a_hand():
    """Parts of the coarse outline a pixel apart are one candidate, but not across a hand: a red
    1x2 brick 9.6 mm high a coarse pixel from a hand over the table (ray-cast seed 2 table 1 with two
    hands) went with the hand's candidate, and a hand's is no block's."""
    _the_blocks_found(2 * 100003 + 1, (760.0, 572.0), [("red", 9.6)], n_hands=2)


def test_a_clipped_tops_bloom_is_no_stud_more():
    """A glossy top the camera clipped blooms past its edges, a millimetre or two each side: path
    traced, 1-wide bricks were fitted 9-12 mm wide and 2-wide ones 17-18 mm, snapped to no brick,
    and the footprints reported so were a third too large. Such a footprint's sides are the
    bricks' sides below them, up to CLIPPED_BLOOM_MM longer; an unclipped one snaps as before."""
    from companion.vision.blocks import CLIPPED_BLOOM_MM
    from companion.vision.foundblock import snapped

    def sides(length_mm: float, width_mm: float, bloom_mm: float) -> tuple[tuple[float, float], tuple | None]:
        rect, studs = snapped(TableRect(np.array([300.0, 200.0]), np.array([0.8, 0.6]), (length_mm / 2, width_mm / 2)),
                              bloom_mm)
        return (round(2 * rect.half_mm[0], 1), round(2 * rect.half_mm[1], 1)), studs

    assert sides(65.0, 11.8, CLIPPED_BLOOM_MM) == ((63.8, 7.8), (8, 1))
    assert sides(47.8, 18.3, CLIPPED_BLOOM_MM) == ((47.8, 15.8), (6, 2))
    assert sides(65.0, 11.8, 0.0) == ((65.0, 11.8), None)
    assert sides(31.5, 16.3, CLIPPED_BLOOM_MM) == ((31.8, 15.8), (4, 2))  # near a brick: that brick
    assert sides(30.0, 30.0, CLIPPED_BLOOM_MM)[1] is None  # 6 mm over 23.8: no bloom's


def test_a_clipped_yellow_tops_footprint_is_its_bricks_on_a_path_traced_frame():
    """The path-traced felt table committed beside this file: its yellow 1x6 brick's top clipped,
    and its footprint was reported 9.5 mm wide, snapped to no brick (IoU 0.83 with the truth)."""
    import json

    from companion.setup_file import load_setup

    frames = Path(__file__).with_name("frames")
    image = cv2.imread(str(frames / "pbr_felt.jpg"), cv2.IMREAD_COLOR)
    truth = json.loads((frames / "pbr_felt.truth.json").read_text())
    blocks = Locator(load_setup(frames / "pbr_felt.toml")).locate(image).blocks
    yellow = next(np.array(t["footprint_mm"]) for t in truth["blocks"] if t["color"] == "yellow")
    assert max(polygon_iou([yellow], np.array(b.footprint_mm)) for b in blocks) >= 0.9
