"""Listed markers read from their paper cards (`vision.cards`): prints whose black a lamp's glare
or an exposure brought too close to their white for OpenCV's thresholds."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.vision.camera import CameraModel
from companion.vision.cards import read_cards, read_outlines
from companion.vision.markers import MarkerDetections, detect_raw, dictionary, mean_side_px, refine

FRAMES = Path(__file__).with_name("frames")
DICT = "DICT_4X4_50"


@pytest.mark.parametrize("name, marker_id, centre_px", [
    # Cut from path-traced frames (pbr, standard, seed 1): scene 2, glossy ink showing the lamp
    # (black 150-200 against white 250, some modules glared to white, the mini's copper rim
    # touching the card); scene 4, the lamp's reflection on the whole print (black within 10-25
    # grey levels of white). The centres are the truth projected.
    ("pbr_glossy_ink", 43, (48.87, 48.40)),
    ("pbr_washed_out", 6, (48.16, 48.14)),
    # Hard level (seed 0, scene 5): 20 px, blurred; the lamp's reflection leaves the black border
    # between 220 and 236 against the white's 250, paler than the inner black (180-200).
    ("pbr_hard_washed_out", 49, (40.18, 40.16)),
    # Hard level (seed 1, scene 2): 17 px on felt, the black lifted to 15-30 levels under the white
    # by an exposure set for the felt; the modules match 27 short of the strict thresholds, and its
    # pattern fitted explains the place 1.26-1.31 times better than any other id's: taken.
    ("pbr_hard_lifted_black", 27, (40.80, 40.44)),
])
def test_prints_too_faint_for_the_detector_are_read_from_their_cards(name, marker_id, centre_px):
    gray = cv2.cvtColor(cv2.imread(str(FRAMES / f"{name}.jpg"), cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    assert marker_id not in detect_raw(gray, DICT, expected=frozenset({marker_id}))[0].tolist()
    ids, quads = read_cards(gray, frozenset({marker_id, 7, 14, 21, 43}), DICT, (15.0, 45.0), MarkerDetections.empty())
    assert ids.tolist() == [marker_id]
    camera = CameraModel.guess(gray.shape[1], gray.shape[0])
    refined = refine(gray, camera, ids, quads, DICT)  # the pattern fit on the frame confirms it
    assert refined.ids.tolist() == [marker_id]
    assert np.linalg.norm(refined.corners_px[0].mean(axis=0) - centre_px) < 0.5


@pytest.mark.parametrize("name, marker_id, centre_px", [
    # Path traced, hard level, on blue felt (seed 0, scene 5, minis 46 and 39; seed 1, scene 2,
    # mini 31): 16-21 px prints whose black the lamp's reflection lifted to 15-40 levels under the
    # white. The module means of the card's grid rank the right id first but short of the strict
    # thresholds (and ids of the whole dictionary come close); fitted on the frame, its pattern
    # explains the place clearly better than any other id's, fitted at its own place too.
    ("pbr_hard_faint_card_a", 46, (39.58, 39.90)),
    ("pbr_hard_faint_card_b", 39, (40.41, 40.45)),
    ("pbr_hard_faint_card_c", 31, (40.48, 40.35)),
    # Path traced, hard level (seed 3): cards whose bright blob carries what touches them, so its
    # outline is no four sides. Scene 1, mini 26: a stub of the mini's pale rim; scene 6, mini 20:
    # a crescent of it; scene 4, mini 16: the bright patches of a printed mat. Opened by a share
    # of the smallest marker's side, the card is left.
    ("pbr_hard_card_rim_stub", 26, (40.04, 39.69)),
    ("pbr_hard_card_rim_crescent", 20, (39.59, 40.27)),
    ("pbr_hard_card_on_mat", 16, (40.03, 40.06)),
])
def test_faint_prints_and_cards_under_what_touches_them_are_read(name, marker_id, centre_px):
    gray = cv2.imread(str(FRAMES / f"{name}.png"), cv2.IMREAD_GRAYSCALE)
    assert marker_id not in detect_raw(gray, DICT, expected=frozenset({marker_id}))[0].tolist()
    ids, quads = read_cards(gray, frozenset({marker_id, 7, 14, 21, 43}), DICT, (10.0, 35.0), MarkerDetections.empty())
    assert ids.tolist() == [marker_id]
    refined = refine(gray, CameraModel.guess(gray.shape[1], gray.shape[0]), ids, quads, DICT)
    assert refined.ids.tolist() == [marker_id]
    assert np.linalg.norm(refined.corners_px[0].mean(axis=0) - centre_px) < 0.5


def test_a_faint_print_is_not_read_as_a_wanted_id_whose_pattern_is_near_its_own():
    """Path traced, hard level (seed 1, scene 2, mini 14): a 15 px print on felt, its black lifted
    to 20-40 levels under the white. Id 9's pattern is 6 bits from 14's in a turn; fitted, 9 moves
    to a place where it explains the pixels 1.29 times better than 14 there. Wanted and not on the
    table, 9 must not be read: 14 (not wanted) fitted at its own place explains them as well."""
    gray = cv2.imread(str(FRAMES / "pbr_hard_ambiguous_card.png"), cv2.IMREAD_GRAYSCALE)
    for wanted in ({9}, {9, 7, 21, 43}, {9, 7, 21, 43, 45, 47}):
        ids, _ = read_cards(gray, frozenset(wanted), DICT, (10.0, 35.0), MarkerDetections.empty())
        assert ids.tolist() == [], wanted
        ids, _ = read_outlines(gray, frozenset(wanted), DICT, (10.0, 35.0), _read_elsewhere(15.0))
        assert ids.tolist() == [], wanted


def test_a_print_meeting_the_thresholds_as_another_id_is_read_as_its_own():
    """Path traced, hard level (seed 3, scene 6, mini 28): a blurred 16 px print whose module
    means correlate with id 37's pattern (4 bits from 28's in a turn) past the strict thresholds,
    better than with 28's own. Wanted alone, 37 must not be read here; with 28 wanted, 28 is."""
    gray = cv2.imread(str(FRAMES / "pbr_hard_card_near_id.png"), cv2.IMREAD_GRAYSCALE)
    assert read_cards(gray, frozenset({37}), DICT, (10.0, 35.0), MarkerDetections.empty())[0].tolist() == []
    ids, quads = read_cards(gray, frozenset({37, 28}), DICT, (10.0, 35.0), MarkerDetections.empty())
    assert ids.tolist() == [28]
    assert np.linalg.norm(quads[0].mean(axis=0) - (39.63, 39.71)) < 1.0


def _read_at(quad: np.ndarray) -> MarkerDetections:
    """One marker already read, at these corners (4, 2)."""
    quad = np.asarray(quad, float)
    return MarkerDetections(np.array([1]), quad[None], quad[None], np.array([np.nan]), np.array([True]), quad[None],
                            np.array([0.0]), np.array([0.0]))


def _read_elsewhere(side_px: float) -> MarkerDetections:
    """One marker read far outside a cut-out: the size of the markers read so far."""
    return _read_at(np.array([[0, 0], [side_px, 0], [side_px, side_px], [0, side_px]], float) - 500)


@pytest.mark.parametrize("name, marker_id, centre_px", [
    # Cut from path-traced frames (pbr, hard, seed 0) on felt, whose exposure lifted every
    # print's black to 180-215 against a white of 255: no card of its own shows (the mini's
    # painted body touches it), and OpenCV's thresholds leave an outline it cannot decode.
    # Scene 3, mini 41: trimmed to half a module of margin; scene 3, mini 8; scene 4, mini 48,
    # blurred. The centres are the truth projected.
    ("pbr_hard_outline_trimmed", 41, (39.62, 40.40)),
    ("pbr_hard_outline_faint", 8, (39.69, 40.14)),
    ("pbr_hard_outline_blurred", 48, (40.12, 39.57)),
    # Scene 5, mini 15: 16 px, trimmed to half a module on a cream body, its border broken by
    # glare on two sides: no square outline at all, its dark cells one blob (`_dark_squares`).
    ("pbr_hard_outline_broken", 15, (40.27, 40.06)),
])
def test_prints_with_no_card_of_their_own_are_read_from_their_outlines(name, marker_id, centre_px):
    gray = cv2.imread(str(FRAMES / f"{name}.png"), cv2.IMREAD_GRAYSCALE)
    wanted = frozenset({marker_id, 7, 14, 21, 43})
    assert marker_id not in detect_raw(gray, DICT, expected=frozenset({marker_id}))[0].tolist()
    assert marker_id not in read_cards(gray, wanted, DICT, (10.0, 35.0), MarkerDetections.empty())[0].tolist()
    ids, quads = read_outlines(gray, wanted, DICT, (10.0, 35.0), _read_elsewhere(18.0))
    assert ids.tolist() == [marker_id]
    refined = refine(gray, CameraModel.guess(gray.shape[1], gray.shape[0]), ids, quads, DICT)
    assert refined.ids.tolist() == [marker_id]  # the pattern fit on the frame confirms it
    assert np.linalg.norm(refined.corners_px[0].mean(axis=0) - centre_px) < 0.5


def test_outlines_far_smaller_than_the_markers_read_are_not_read():
    """A 7.5 px square beside a card was read as a knocked-over print of an absent id; outlines
    under 0.6 of the markers read are not looked at (the roster's markers are alike)."""
    gray = cv2.imread(str(FRAMES / "pbr_hard_outline_faint.png"), cv2.IMREAD_GRAYSCALE)
    ids, _ = read_outlines(gray, frozenset({8, 7, 14, 21, 43}), DICT, (5.0, 60.0), _read_elsewhere(40.0))
    assert ids.tolist() == []


def _card(image: np.ndarray, marker_id: int | None, centre: tuple[float, float], angle_deg: float,
          side_px: float, margin_modules: float = 1.0, black: float = 0.0, white: float = 255.0) -> np.ndarray:
    """Draws a print (or a blank card, `marker_id` None) into image; its marker's corners (4, 2)."""
    px_per_module = 10
    bits = cv2.aruco.generateImageMarker(dictionary(DICT), marker_id or 0, 6 * px_per_module, borderBits=1)
    if marker_id is None:
        bits[:] = 255
    pad = int(margin_modules * px_per_module)
    card = np.pad(bits, pad, constant_values=255).astype(np.float32) / 255 * (white - black) + black
    n = card.shape[0]
    a = np.deg2rad(angle_deg)
    turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    scale = side_px / (6 * px_per_module)
    to_image = cv2.getPerspectiveTransform(
        np.float32([[0, 0], [n, 0], [n, n], [0, n]]) - 0.5,
        ((np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * n * scale / 2) @ turn.T + centre).astype(np.float32))
    h, w = image.shape
    drawn = cv2.warpPerspective(card, to_image, (w, h), flags=cv2.INTER_AREA)
    inside = cv2.warpPerspective(np.ones_like(card), to_image, (w, h), flags=cv2.INTER_AREA)
    image[:] = np.clip(image * (1 - inside) + drawn, 0, 255)
    inner = np.float32([[pad, pad], [pad + 60, pad], [pad + 60, pad + 60], [pad, pad + 60]]) - 0.5
    return cv2.perspectiveTransform(inner.reshape(-1, 1, 2), to_image).reshape(4, 2)


def test_cards_are_read_in_every_turn_and_margin_and_nothing_else_is():
    image = np.full((320, 480), 120.0)
    truth = {
        7: _card(image, 7, (80, 80), 20, 40, margin_modules=1.0, black=215, white=250),
        3: _card(image, 3, (220, 90), 110, 36, margin_modules=0.5, black=225, white=252),
        12: _card(image, 12, (360, 100), 200, 44, margin_modules=1.5, black=150, white=250),
        30: _card(image, 30, (90, 230), 290, 38, margin_modules=1.0, black=230, white=250),
    }
    _card(image, None, (240, 240), 15, 40)  # a blank card: no pattern
    _card(image, 40, (380, 240), 35, 40, black=200, white=250)  # a print no one is missing
    rng = np.random.default_rng(3)
    gray = np.clip(image + rng.normal(0, 2.5, image.shape), 0, 255).astype(np.uint8)
    ids, quads = read_cards(gray, frozenset({7, 3, 12, 30, 41}), DICT, (25.0, 60.0), MarkerDetections.empty())
    assert sorted(ids.tolist()) == [3, 7, 12, 30]
    for marker_id, quad in zip(ids, quads):  # corners in OpenCV's order, within a fraction of a pixel
        assert np.abs(quad - truth[int(marker_id)]).max() < 0.5
        assert mean_side_px(quad) == pytest.approx(mean_side_px(truth[int(marker_id)]), rel=0.03)
    # Where a marker was already read, its card is not looked at again.
    ids, _ = read_cards(gray, frozenset({7}), DICT, (25.0, 60.0), _read_at(truth[7]))
    assert ids.tolist() == []


def test_a_print_has_paper_around_its_border_and_a_tables_square_has_not():
    """Read from an outline, a print is taken only with its half module of paper around the
    black border: a table's square or a mini's paint that correlates with some pattern has none."""
    from companion.vision.cards import MARGIN_WHITE, margin_whiteness

    image = np.full((200, 400), 120.0)
    trimmed = _card(image, 9, (100, 100), 25, 40, margin_modules=0.5, black=190, white=250)  # lifted black
    bare = _card(image, 9, (300, 100), 25, 40, margin_modules=0.0)  # the pattern alone, on the table
    gray = image.astype(np.uint8)
    assert MARGIN_WHITE[0] <= margin_whiteness(gray, trimmed, DICT, 9) <= MARGIN_WHITE[1]
    assert margin_whiteness(gray, bare, DICT, 9) < MARGIN_WHITE[0]


def test_a_print_whose_border_merges_with_a_dark_table_is_fitted_at_its_size():
    """Path traced, hard level (seed 1, scene 3): a 15.4 px print trimmed to half a module on dark
    wood; its border merges with the wood and OpenCV's square is 12.6 px, which put the mini 50 mm
    under the table (a misread, not placed). The pattern fit, failing from that square, starts
    again from one a border wider."""
    gray = cv2.imread(str(FRAMES / "pbr_hard_trimmed_on_wood.png"), cv2.IMREAD_GRAYSCALE)
    ids, quads = detect_raw(gray, DICT, expected=frozenset({35}))
    assert ids.tolist() == [35] and mean_side_px(quads[0]) < 13.0
    refined = refine(gray, CameraModel.guess(gray.shape[1], gray.shape[0]), ids, quads, DICT)
    assert refined.ids.tolist() == [35] and refined.refined[0]
    assert abs(mean_side_px(refined.corners_px[0]) - 15.43) < 0.6  # the truth projected: 15.43 px
    assert np.linalg.norm(refined.corners_px[0].mean(axis=0) - (40.24, 39.83)) < 0.5
