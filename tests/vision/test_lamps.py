"""The lamps found from the minis' shadows, and the shadows masked (`vision.lamps`)."""

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from companion.state import MiniState
from companion.vision.lamps import FoundLamp, _look, find_lamps, mask_shadows

MM_PER_PX = 2.0
CENTRE = np.array([600.0, 400.0])


def _minis(rng: np.random.Generator, count: int = 12) -> list[tuple[MiniState, float]]:
    return [(MiniState(id=k, x_mm=float(rng.uniform(100, 1100)), y_mm=float(rng.uniform(100, 700)),
                       z_mm=float(rng.uniform(5, 50)), heading_deg=float(rng.uniform(0, 360))), 26.7)
            for k in range(count)]


def _darkness_with_shadows(minis, lamps: list[FoundLamp], rng: np.random.Generator) -> np.ndarray:
    """A darkness map (`lamps.darkness`'s) of a felt-like table: noise, and each mini's shadow
    from each lamp 0.4 darker than the table (its tile's square, its body's band 12 mm wide)."""
    dark = np.clip(rng.normal(0.0, 0.03, (400, 600)), 0, 1).astype(np.float32)
    shadows = np.ones(dark.shape, np.uint8)
    for lamp in lamps:
        for m, side in minis:
            foot = np.array([m.x_mm, m.y_mm])
            tip = lamp.shadow_of(foot, m.z_mm)
            c, s = math.cos(math.radians(m.heading_deg)), math.sin(math.radians(m.heading_deg))
            square = tip + np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * side / 2 @ np.array([[s, -c], [c, s]])
            cv2.fillConvexPoly(shadows, np.round(square / MM_PER_PX - 0.5).astype(np.int32), 0)
            cv2.line(shadows, tuple(int(v) for v in np.round(foot / MM_PER_PX - 0.5)),
                     tuple(int(v) for v in np.round(tip / MM_PER_PX - 0.5)), 0, int(12 / MM_PER_PX))
    dark[shadows == 0] += 0.4
    return dark


def test_the_lamps_are_found_where_the_minis_shadows_say():
    rng = np.random.default_rng(3)
    minis = _minis(rng)
    truth = [FoundLamp((900.0, -300.0, 1500.0), 0, 0.0), FoundLamp((-2000.0, 900.0, 2500.0), 0, 0.0)]
    clear = np.ones((400, 600), np.uint8)
    found = find_lamps(_darkness_with_shadows(minis, truth, rng), clear, minis, CENTRE, MM_PER_PX)
    assert len(found) >= 2

    def slope(lamp: FoundLamp) -> np.ndarray:
        p = np.asarray(lamp.position_mm)
        return (CENTRE - p[:2]) / p[2]

    for lamp in truth:  # each true lamp within 0.15 mm a mm of its shadows at the centre (4.5 mm at 30 mm)
        assert min(np.linalg.norm(slope(f) - slope(lamp)) for f in found[:2]) <= 0.15, [f.position_mm for f in found]


def test_a_lamp_is_placed_by_its_tile_shadows_even_where_the_minis_hide_half_of_them():
    """Where the minis stand is masked (their tiles, their bases), and a low mini's tile shadow
    lies half under its own mask: asked to see most of each square, the search took lamps that
    throw the shadows further (30% too long a slope on ray-cast tables), and a brick's height read
    from its shadow's length would be 30% off. The slope refined on the shadows' edges holds."""
    rng = np.random.default_rng(11)
    minis = _minis(rng, 14)
    for slope, height in (((0.6, -0.5), 1e5), ((-0.7, 0.3), 1800.0)):
        place = (*(CENTRE - np.array(slope) * height), height)
        lamp = FoundLamp(place, 0, 0.0)
        clear = np.ones((400, 600), np.uint8)
        for m, side in minis:
            c, s = math.cos(math.radians(m.heading_deg)), math.sin(math.radians(m.heading_deg))
            square = np.array([m.x_mm, m.y_mm]) + np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * (side / 2 + 2) @ np.array(
                [[s, -c], [c, s]])
            cv2.fillConvexPoly(clear, np.round(square / MM_PER_PX - 0.5).astype(np.int32), 0)
        found = find_lamps(_darkness_with_shadows(minis, [lamp], rng), clear, minis, CENTRE, MM_PER_PX)
        assert found, place
        truth = (CENTRE - np.array(place[:2])) / place[2]
        got = (CENTRE - np.array(found[0].position_mm[:2])) / found[0].position_mm[2]
        assert np.linalg.norm(got - truth) <= 0.1 * np.linalg.norm(truth), (got, truth)
        assert abs(found[0].depth - 0.4) < 0.08  # the shadows' darkness, for what the blocks' shadows should be


def test_a_lamp_high_above_is_found_though_its_shadows_middles_lie_under_the_minis():
    """A lamp 65-70 degrees up throws a 16-32 mm mini's tile shadow 6-15 mm: its middle lies under
    the mini's mask (a circle half the tile's diagonal and more, as `localtable.mask_known` draws it),
    only its far part is in view. Read there, the lamp is found (ray-cast tables lost half their
    main lamps so, and their bricks' shadows then read as walls: a 19.2 mm brick 48 mm high)."""
    rng = np.random.default_rng(5)
    minis = [(replace(m, z_mm=float(rng.uniform(16, 32))), side) for m, side in _minis(rng, 12)]
    for slope in ((0.38, -0.27), (-0.16, 0.41)):
        place = (*(CENTRE - np.array(slope) * 1e5), 1e5)
        clear = np.ones((400, 600), np.uint8)
        for m, side in minis:
            cv2.circle(clear, (int(m.x_mm / MM_PER_PX), int(m.y_mm / MM_PER_PX)), int((0.71 * side + 5) / MM_PER_PX), 0, -1)
        found = find_lamps(_darkness_with_shadows(minis, [FoundLamp(place, 0, 0.0)], rng), clear, minis, CENTRE,
                           MM_PER_PX)
        assert len(found) == 1, (slope, [f.position_mm for f in found])
        got = (CENTRE - np.array(found[0].position_mm[:2])) / found[0].position_mm[2]
        assert np.linalg.norm(got - np.array(slope)) <= 0.08, (got, slope)


def test_a_lamp_whose_shadows_two_minis_show_is_found():
    """A lamp above the camera throws most minis' tile shadows behind the minis as the camera sees
    them (masked with the minis); on path-traced tables two minis' shadows were often all that
    showed, and three were asked for: the lamp went unfound and the bricks' shadows unread."""
    rng = np.random.default_rng(7)
    minis = [(replace(m, z_mm=float(rng.uniform(25, 45))), side) for m, side in _minis(rng, 12)]
    slope = np.array([0.3, -0.2])
    lamp = FoundLamp((*(CENTRE - slope * 1500.0), 1500.0), 0, 0.0)
    dark = _darkness_with_shadows(minis, [lamp], rng)
    clear = np.ones((400, 600), np.uint8)
    for m, side in minis[2:]:  # all but two minis' tiles and shadows out of view
        tip = lamp.shadow_of(np.array([m.x_mm, m.y_mm]), m.z_mm)
        for centre in (np.array([m.x_mm, m.y_mm]), tip):
            cv2.circle(clear, tuple(int(v) for v in np.round(centre / MM_PER_PX)), int(side / MM_PER_PX), 0, -1)
    found = find_lamps(dark, clear, minis, CENTRE, MM_PER_PX)
    assert len(found) == 1, [f.position_mm for f in found]
    got = (CENTRE - np.array(found[0].position_mm[:2])) / found[0].position_mm[2]
    assert np.linalg.norm(got - slope) <= 0.08, got


def test_a_low_lamp_is_found_where_none_is_higher():
    """A desk lamp beside the table, 20-25 degrees up, throws shadows two to three times as long
    as the minis are tall: beyond the slopes searched first (lamps 38.7 degrees up and higher), so
    it was never found and a brick's long shadow was part of the brick (heights 6.4-54 mm for a
    28.8 mm brick). Where nothing is found above, the low slopes are searched on a coarser grid."""
    rng = np.random.default_rng(11)
    minis = _minis(rng)
    clear = np.ones((400, 600), np.uint8)
    for slope in ((2.2, -1.0), (-1.5, 1.9)):
        place = (*(CENTRE - np.array(slope) * 2000.0), 2000.0)
        found = find_lamps(_darkness_with_shadows(minis, [FoundLamp(place, 0, 0.0)], rng), clear, minis, CENTRE,
                           MM_PER_PX)
        assert len(found) == 1, (slope, [f.position_mm for f in found])
        got = (CENTRE - np.array(found[0].position_mm[:2])) / found[0].position_mm[2]
        assert np.linalg.norm(got - np.array(slope)) <= 0.15, (got, slope)


@pytest.mark.parametrize("from_foot_mm, turn_deg", [(400.0, 30.0)])  # (and 250 mm, 5 degrees: 6.4 mm before)
def test_a_brick_under_a_low_lamp_is_fitted_apart_from_its_long_shadow(from_foot_mm, turn_deg):
    """The ray-caster's table 3 under one lamp 20 degrees up on the camera's side: a 2x2 brick
    28.8 mm high throws a 79 mm shadow, which the lamp unfound left in the brick's candidate
    (read 6.4 and 16 mm high, IoU 0.63 here). The lamp is found from the minis' shadows now, and
    the brick fitted apart from its shadow."""
    from companion.bench.blockscore import polygon_iou
    from companion.synth.render import Renderer
    from companion.vision.locator import Locator
    from tests.vision.test_blocks import tall_brick_under_a_lamp_on_the_cameras_side

    scene, brick, lamp = tall_brick_under_a_lamp_on_the_cameras_side(from_foot_mm, turn_deg, 20.0)
    locator = Locator(scene.setup())
    blocks = locator.analyse(Renderer().render(scene)).blocks
    assert [b.color for b in blocks] == ["orange"], [(b.footprint_mm.mean(axis=0), b.height_mm, b.color) for b in blocks]
    assert polygon_iou(blocks[0].footprint_mm, brick.footprint_mm()) > 0.85
    assert abs(blocks[0].height_mm - 28.8) <= 3.2 + 1e-6, blocks[0].height_mm
    truth = -np.array(lamp.towards[:2]) / lamp.towards[2]  # its shadows' slope (mm a mm of height)
    assert any(np.linalg.norm((CENTRE - f.position_mm[:2]) / f.position_mm[2] - truth) < 0.1 * np.linalg.norm(truth)
               for f in locator.block_finder.lamps), [f.position_mm for f in locator.block_finder.lamps]


def test_no_lamp_is_found_without_shadows_nor_from_a_printed_grid():
    rng = np.random.default_rng(4)
    minis = _minis(rng)
    clear = np.ones((400, 600), np.uint8)
    assert find_lamps(_darkness_with_shadows(minis, [], rng), clear, minis, CENTRE, MM_PER_PX) == []
    grid = np.clip(rng.normal(0.0, 0.03, (400, 600)), 0, 1).astype(np.float32)
    grid[::25, :] += 0.5  # a 50 mm grid's 2 mm lines, darker than any shadow
    grid[:, ::25] += 0.5
    assert find_lamps(grid, clear, minis, CENTRE, MM_PER_PX) == []


def test_a_minis_shadow_is_masked_where_the_lamp_throws_it():
    lamp = FoundLamp((600.0, 400.0 - 1000.0, 1000.0), 5, 1.0)  # 45 degrees up towards -y from the centre
    mini = MiniState(id=4, x_mm=600.0, y_mm=400.0, z_mm=40.0, heading_deg=0.0)
    mask = np.ones((400, 600), np.uint8)
    mask_shadows(mask, [lamp], [(mini, 26.7, 25.0)], MM_PER_PX)
    tip = lamp.shadow_of(np.array([600.0, 400.0]), 40.0)
    assert tip[1] > 440.0 and abs(tip[0] - 600.0) < 1e-6  # away from the lamp, ~z (x 1000 / 960)
    assert mask[int(tip[1] / MM_PER_PX), int(tip[0] / MM_PER_PX)] == 0
    assert mask[int(380 / MM_PER_PX), 300] == 1  # on the lamp's side: no shadow
    assert (mask == 0).sum() * MM_PER_PX ** 2 < 4000  # the tile's square and the body's band only


def test_a_lamp_is_kept_only_where_its_shadows_are_dark_against_the_truer_table_too():
    rng = np.random.default_rng(5)
    minis = _minis(rng)
    lamp = FoundLamp((900.0, -300.0, 1500.0), 0, 0.0)
    dark = _darkness_with_shadows(minis, [lamp], rng)
    clear = np.ones((400, 600), np.uint8)
    asked = []

    def truer(shade: np.ndarray):
        def made() -> np.ndarray:
            asked.append(1)
            return shade
        return made
    assert len(find_lamps(dark, clear, minis, CENTRE, MM_PER_PX, truer(dark))) == 1 and len(asked) == 1
    bare = np.clip(rng.normal(0.0, 0.03, dark.shape), 0, 1).astype(np.float32)  # no shade against it
    assert find_lamps(dark, clear, minis, CENTRE, MM_PER_PX, truer(bare)) == []
    asked.clear()
    assert find_lamps(bare, clear, minis, CENTRE, MM_PER_PX, truer(bare)) == [] and asked == []  # asked once a lamp is found


def test_no_lamp_is_found_in_a_castles_yard_where_cards_and_white_walls_crowd_the_felt():
    """The demo's castle without the attackers: three defenders in its yard, no lamp. Against the
    plain median the yard's felt, among the cards and the white walls, read a quarter darker than
    the table, a lamp was found from the "shadows" two minis put there, and every block of the
    frame read one to three plates low (the castle's 19.2 mm walls 6.4-12.8 mm). The shadows are
    measured against the table without what stands on it."""
    from companion.synth.render import Renderer
    from companion.synth.siege import base_scene, siege_scene, siege_setup
    from companion.vision.locator import Locator

    base = base_scene()
    scene = siege_scene(base, 2, 5)  # the new wall stands in front of the gate
    scene = replace(scene, minis=tuple(m for m in scene.minis if m.id >= 20))
    locator = Locator(siege_setup(base))
    blocks = locator.analyse(Renderer().render(scene)).blocks
    assert locator.block_finder.lamps == [], [f.position_mm for f in locator.block_finder.lamps]
    castle = [b for b in blocks if b.color == "white"]
    assert len(castle) == 5, [(b.color, b.height_mm) for b in blocks]
    assert all(abs(b.height_mm - 19.2) <= 3.2 + 1e-6 for b in castle), [b.height_mm for b in castle]


def test_the_darkness_is_read_at_the_cell_under_each_point_and_nowhere_else():
    """`_look` (the lamps' search reads tens of thousands of points a frame through flat indices):
    the cell under each point of a view wider than deep, 0 off the view and where something known
    stands (`clear` 0), 1 for "in view" without a darkness."""
    clear = np.ones((3, 5), np.uint8)
    clear[1, 3] = 0
    dark = np.arange(15, dtype=np.float32).reshape(3, 5) / 10
    points = np.array([[[0.5, 0.5], [9.9, 5.9], [7.0, 3.0]], [[4.1, 2.2], [-0.1, 1.0], [10.0, 1.0]]])  # mm, 2 mm cells
    assert _look(dark, clear, points, 2.0).ravel().tolist() == pytest.approx([0.0, 1.4, 0.0, 0.7, 0.0, 0.0])
    assert _look(None, clear, points, 2.0).tolist() == [[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
