"""The block a mini stands on, mostly hidden under it: the rectangle search on drawn windows, and
the finder on rendered tables where minis stand on bricks."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from companion.bench.blockscore import polygon_iou
from companion.synth.render import Renderer
from companion.synth.scene import SynthBrick, random_scene
from companion.vision.brickfit import TableRect
from companion.vision.locator import Locator
from companion.vision.tableview import TableView
from companion.vision.under_mini import (REACH_MM, STEP_MM, _best_rectangle, fit_top, occluded, plane_points,
                                         stand_height_mm)


def _drawn(rect: TableRect, base: np.ndarray, shape: int) -> np.ndarray:
    """uint8 (shape x shape): 1 where a pixel's centre lies inside a rectangle, in the window round `base`."""
    centres = plane_points(base)[:shape, :shape] - rect.centre
    along, across = centres @ rect.axis, centres @ rect.across
    return ((np.abs(along) <= rect.half_mm[0]) & (np.abs(across) <= rect.half_mm[1])).astype(np.uint8)


def test_a_stand_is_whole_plates_and_the_table_is_none():
    assert stand_height_mm(40.0 + 19.9, 40.0) == pytest.approx(19.2)
    assert stand_height_mm(40.0 + 8.2, 40.0) == pytest.approx(9.6)
    assert stand_height_mm(40.0 + 3.0, 40.0) is None  # a marker's height error, not a block
    assert stand_height_mm(float("nan"), 40.0) is None


@pytest.mark.parametrize("angle_deg, studs, offset", [(30.0, (6, 2), (0.0, 0.0)), (71.0, (4, 4), (3.0, -2.0)),
                                                       (12.0, (8, 2), (-4.0, 0.0))])
def test_the_rectangle_search_finds_a_top_whose_middle_is_hidden(angle_deg, studs, offset):
    base = np.array([500.0, 300.0])
    n = plane_points(base).shape[0]
    a = math.radians(angle_deg)
    axis = np.array([math.cos(a), math.sin(a)])
    across = np.array([-axis[1], axis[0]])
    truth = TableRect(base + axis * offset[0] + across * offset[1], axis,
                      tuple((s * 8.0 - 0.2) / 2 for s in studs))
    weights = np.where(_drawn(truth, base, n) > 0, 1.0, -1.0).astype(np.float32)
    yy, xx = np.mgrid[:n, :n]
    weights[np.hypot(xx - n / 2 + 0.5, yy - n / 2 + 0.5) < 16] = 0.0  # the base and what stands on it
    score, found_deg, sa, sb, cx, cy = _best_rectangle(weights)
    turn = math.radians(found_deg)
    found_axis = np.array([math.cos(turn), math.sin(turn)])
    found = TableRect(base + found_axis * cx + np.array([-found_axis[1], found_axis[0]]) * cy, found_axis,
                      ((sa * 8.0 - 0.2) / 2, (sb * 8.0 - 0.2) / 2))
    assert sorted((sa, sb)) == sorted(studs)
    assert polygon_iou(found.corners(), truth.corners()) > 0.9


def test_the_top_is_the_lit_colour_not_its_walls_nor_the_shadow_beside_it():
    """A red top mostly hidden by the mini, its wall (red, darker: seen wider than what is left of
    the top, as a tall brick's is from aside) beside it and a broad gray shadow on the table: the
    top is the red rectangle, not the wall's band nor the shadow."""
    base = np.array([400.0, 400.0])
    n = plane_points(base).shape[0]
    axis = np.array([1.0, 0.0])
    top = TableRect(base, axis, (23.9, 7.9))  # a 6 x 2 brick
    wall = TableRect(base + np.array([0.0, 15.9]), axis, (23.9, 8.0))  # its wall, towards the camera
    shadow = TableRect(base + np.array([-30.0, -25.0]), axis, (30.0, 20.0))
    colours = np.full((n, n, 3), 150.0)
    colours[_drawn(shadow, base, n) > 0] = (70.0, 70.0, 70.0)
    colours[_drawn(wall, base, n) > 0] = (20.0, 20.0, 90.0)
    colours[_drawn(top, base, n) > 0] = (40.0, 40.0, 200.0)
    visible = np.ones((n, n), np.uint8)
    cv2.circle(visible, (n // 2, n // 2), 16, 0, -1)
    table = np.full((n, n, 3), 150.0)
    differs = np.linalg.norm(colours - table, axis=-1) > 20
    lit = ~np.all(np.isclose(colours, 70.0), axis=-1)  # the shadow: the table darker
    labels, darker_kin = _drawn_labels(colours)
    found = fit_top(base, 19.2, colours, visible, differs, lit, lambda bgr: True, labels, darker_kin)
    assert found is not None
    assert found.colour_bgr == pytest.approx((40.0, 40.0, 200.0), abs=2)
    assert polygon_iou(found.top.corners(), top.corners()) > 0.9


def _drawn_labels(colours: np.ndarray):
    """`fit_top`'s colour tests on a drawn window: a pixel of a top's colour, of its hue and
    darker (its kin), and whether a colour is another's darker kin."""
    def chroma(c: np.ndarray) -> np.ndarray:
        return c / np.maximum(c.sum(axis=-1, keepdims=True), 1)

    def labels(bgr: np.ndarray) -> np.ndarray:
        kin = (np.linalg.norm(chroma(colours) - chroma(bgr), axis=-1) < 0.08) & (colours.sum(axis=-1) < bgr.sum())
        return np.where(np.linalg.norm(colours - bgr, axis=-1) < 30, 1, np.where(kin, 0, -1)).astype(np.int8)

    def darker_kin(lighter: np.ndarray, darker: np.ndarray) -> bool:
        return darker.sum() < lighter.sum() and float(np.linalg.norm(chroma(darker) - chroma(lighter))) < 0.08

    return labels, darker_kin


@pytest.mark.parametrize("wall_bgr", [(40.0, 200.0, 220.0), (20.0, 100.0, 110.0)])  # lit as its top; in shade
def test_the_top_stops_where_its_walls_start_towards_the_cameras_foot(wall_bgr):
    """A yellow 6 x 2 top mostly hidden by the mini, its wall towards the camera's foot 8 mm wide
    in that plane (`walls_mm`), lit as brightly as the top or in shade, the table beyond: the top
    is the 6 x 2 rectangle, not a 6 x 3 one over its wall (a lamp on the camera's side lights the
    wall like the top: the two were one colour)."""
    base = np.array([400.0, 400.0])
    n = plane_points(base).shape[0]
    axis = np.array([1.0, 0.0])
    top = TableRect(base, axis, (23.9, 7.9))
    wall = TableRect(base + np.array([0.0, -11.9]), axis, (23.9, 4.0))  # the foot lies towards -y
    colours = np.full((n, n, 3), 150.0)
    colours[_drawn(wall, base, n) > 0] = wall_bgr
    colours[_drawn(top, base, n) > 0] = (40.0, 200.0, 220.0)
    visible = np.ones((n, n), np.uint8)
    cv2.circle(visible, (n // 2, n // 2), 16, 0, -1)
    differs = np.linalg.norm(colours - 150.0, axis=-1) > 20
    labels, darker_kin = _drawn_labels(colours)
    found = fit_top(base, 19.2, colours, visible, differs, np.ones((n, n), bool), lambda bgr: True, labels, darker_kin,
                    walls_mm=np.array([0.0, 8.0]))
    assert found is not None and polygon_iou(found.top.corners(), top.corners()) > 0.9


def test_the_mini_hides_its_column_and_its_tile_away_from_the_cameras_foot():
    scene = random_scene(3)
    from companion.vision.camera import CameraModel  # noqa: F401 (the scene's own camera model)
    view = TableView(scene.camera, scene.pose)
    base = view.foot_mm + np.array([300.0, 0.0])  # to the camera foot's right
    n = plane_points(base).shape[0]
    hidden = occluded(view, 19.2, base, 25.0, 60.0, 26.7, 0.0, (n, n), base - REACH_MM)
    ys, xs = np.nonzero(hidden)
    centre_x = (xs.mean() + 0.5) * STEP_MM - REACH_MM
    assert centre_x > 3.0  # cast away from the foot
    assert hidden[n // 2, n // 2] == 1  # the base's centre itself
    assert hidden[n // 2, 2] == 0 and hidden[2, n // 2] == 0  # not the whole window


def _standing_on_bricks(seed: int) -> tuple:
    """A bench table with its loose bricks taken away and three minis standing on bricks (2 x 4,
    2 x 8, 4 x 6; one, two and three bricks high), rendered by the ray-caster."""
    scene = random_scene(seed)
    foot = scene.pose.camera_centre_mm[:2]
    minis = sorted(scene.minis, key=lambda m: -math.hypot(m.x_mm - foot[0], m.y_mm - foot[1]))
    bricks, stood = [], []
    for m, (studs, top_mm, colour) in zip(minis[3:6], [((4, 2), 9.6, "red"), ((8, 2), 19.2, "yellow"),
                                                          ((6, 4), 28.8, "blue")]):
        bricks.append(SynthBrick(m.x_mm, m.y_mm, 25.0, studs[0], studs[1], 0.0, top_mm, colour))
        stood.append(replace(m, z_mm=m.z_mm + top_mm, stand_mm=top_mm))
    others = tuple(m for m in scene.minis if m.id not in {s.id for s in stood})
    scene = replace(scene, minis=others + tuple(stood), bricks=tuple(bricks))
    return scene, Renderer().render(scene)


def test_blocks_under_standing_minis_are_found():
    scene, image = _standing_on_bricks(5)
    state = Locator(scene.setup(height_noise_mm=0.0)).locate(image)
    for brick in scene.bricks:
        found = [b for b in state.blocks if polygon_iou(np.asarray(b.footprint_mm), brick.footprint_mm()) >= 0.5]
        assert len(found) == 1, (brick, [(b.color, b.height_mm) for b in state.blocks])
        assert found[0].color == brick.color
        assert abs(found[0].height_mm - brick.height_mm) <= 3.2 + 1e-6
    assert len(state.blocks) == len(scene.bricks)  # and nothing else beside them


def test_a_mini_the_roster_put_on_the_table_is_stood_on_the_block_seen_under_it():
    """Bench table 15 of the ray-cast standing set: mini 6 stands on a 9.6 mm brick, but its marker
    is small and far off (the frame's height ±4 mm), so the roster's height, within three sigmas,
    pulled it onto the table ("fused"). The frame alone stood it on something, and a block is seen
    under it there: it stands on that block."""
    from companion.synth.worlds import bench_scene

    scene = bench_scene("raycast", 15, n_standing=2)
    truth = next(m for m in scene.minis if m.id == 6)
    assert truth.stand_mm == pytest.approx(9.6)
    state = Locator(scene.setup()).locate(Renderer().render(scene))
    seen = state.mini(6)
    assert seen is not None and seen.height_source == "block"
    assert abs(seen.z_mm - truth.z_mm) <= 4.0
    brick = next(b for b in scene.bricks if math.hypot(b.x_mm - truth.x_mm, b.y_mm - truth.y_mm) < 1)
    assert any(polygon_iou(np.asarray(b.footprint_mm), brick.footprint_mm()) >= 0.5 for b in state.blocks)


def test_a_mini_read_a_little_high_with_no_block_under_it_is_on_the_table():
    """A marker read 3.5 sigmas (the frame's and the roster's together) above its roster's height
    would stand its mini on something; with no block seen under it, it is on the table at the
    roster's height (a lamp's glare on a print lifts its marker so)."""
    scene = random_scene(3)
    image = Renderer().render(scene)
    setup = scene.setup(height_noise_mm=0.0)
    first = Locator(setup).locate(image)
    mini = min((m for m in first.minis if m.height_source == "fused"), key=lambda m: m.id)
    truth = next(m for m in scene.minis if m.id == mini.id)
    frame_sigma = 1 / math.sqrt(max(1 / mini.z_sigma_mm ** 2 - 1 / 1.5 ** 2, 1e-6))
    low = truth.z_mm - 3.5 * math.hypot(frame_sigma, 1.5)  # the roster says it is this much shorter
    spec = setup.mini(mini.id)
    lowered = replace(setup, minis=tuple(replace(s, height_mm=low, marker_height_mm=None) if s is spec else s
                                         for s in setup.minis))
    seen = Locator(lowered).locate(image).mini(mini.id)
    assert seen is not None and seen.height_source == "fused"  # (blended: a sure frame's height weighs most)
    assert low < seen.z_mm < truth.z_mm and seen.z_sigma_mm < frame_sigma


def test_a_block_the_mini_hides_whole_is_reported_as_hidden_under_it():
    """Bench table 2 of the ray-cast standing set: mini 4 stands on a black 4 x 4 brick 19.2 mm
    high that its card hides whole (nothing of its top is seen beside the mini). Its marker says
    it stands on something: the block is reported, its colour unknown, its extent the most the
    card hides, with the mini that hides it."""
    from companion.synth.worlds import bench_scene

    scene = bench_scene("raycast", 2, n_standing=2)
    brick = next(b for b in scene.bricks if math.hypot(b.x_mm - 638.0, b.y_mm - 465.0) < 5)
    mini = next(m for m in scene.minis if math.hypot(m.x_mm - brick.x_mm, m.y_mm - brick.y_mm) < 20)
    state = Locator(scene.setup()).locate(Renderer().render(scene))
    hidden = [b for b in state.blocks if b.hidden_under is not None]
    assert [b.hidden_under for b in hidden] == [mini.id]
    assert hidden[0].color == "" and abs(hidden[0].height_mm - brick.height_mm) <= 3.2 + 1e-6
    assert polygon_iou(np.asarray(hidden[0].footprint_mm), brick.footprint_mm()) >= 0.5


def test_a_dark_top_under_a_mini_does_not_run_on_over_their_shadow():
    """Bench table 6 of the ray-cast standing set: mini 4 stands on a dark green 2 x 4 brick 28.8 mm
    high on a gray mat, their long shadow beside them. Only a sliver of the green top shows past
    the card; the shadow, loosely of a dark top's hue, was taken for more of it: a "top" 64 x 24
    mm over the shadow, named black. The shadow's hue is the mat's: the top is the green brick."""
    from companion.synth.worlds import bench_scene

    scene = bench_scene("raycast", 6, n_standing=2)
    mini = next(m for m in scene.minis if m.id == 4)
    brick = next(b for b in scene.bricks if math.hypot(b.x_mm - mini.x_mm, b.y_mm - mini.y_mm) < 1)
    assert brick.color == "green" and brick.height_mm == pytest.approx(28.8)
    state = Locator(scene.setup()).locate(Renderer().render(scene))
    found = [b for b in state.blocks if polygon_iou(np.asarray(b.footprint_mm), brick.footprint_mm()) >= 0.5]
    assert [(b.color, b.height_mm) for b in found] == [("green", pytest.approx(28.8, abs=3.3))]
    near = [b for b in state.blocks if math.dist(np.mean(b.footprint_mm, axis=0), (mini.x_mm, mini.y_mm)) < 60]
    assert len(near) == 1, [(b.color, b.height_mm) for b in near]  # no black "block" in their shadow


def test_a_mini_held_up_over_the_bare_table_hides_no_block():
    """A mini held 40 mm over the table (its base in the air, nothing under it) is read standing,
    and nothing of a top is seen under it; the table seen where a block's walls would stand says
    there is none."""
    scene = random_scene(3)
    foot = scene.pose.camera_centre_mm[:2]
    held = max(scene.minis, key=lambda m: math.hypot(m.x_mm - foot[0], m.y_mm - foot[1]))
    scene = replace(scene, minis=tuple(replace(m, z_mm=m.z_mm + 40.0, stand_mm=40.0) if m is held else m
                                       for m in scene.minis))
    state = Locator(scene.setup(height_noise_mm=0.0)).locate(Renderer().render(scene))
    seen = state.mini(held.id)
    assert seen is not None and seen.z_mm > 30.0  # read up there
    assert not any(b.hidden_under is not None for b in state.blocks)
