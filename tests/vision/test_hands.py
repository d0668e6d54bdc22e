"""Hands and arms over the table: where they are, and that the block finder reads no block there."""

from __future__ import annotations

import cv2
import numpy as np

from companion.bench.blockscore import polygon_iou
from companion.synth.worlds import Camera, bench_scene
from companion.vision.colours import PAPER_ALBEDO
from companion.vision.hands import HAND_RIM_MM, HANDS_WARNING, hand_regions
from companion.vision.locator import Locator
from tests.vision.found_blocks import box_block

MM_PER_PX = 2.0


def _ellipse(shape: tuple[int, int], centre_mm, axes_mm, angle_deg: float) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    cv2.ellipse(mask, (round(centre_mm[0] / MM_PER_PX), round(centre_mm[1] / MM_PER_PX)),
                (round(axes_mm[0] / MM_PER_PX), round(axes_mm[1] / MM_PER_PX)), angle_deg, 0, 360, 1, -1)
    return mask > 0


def test_an_arm_over_a_wooden_table_is_a_hand_and_an_orange_brick_beside_it_and_the_arms_shadow_are_not():
    """On wood the table is skin-toned itself and the block finder's local table (a median over
    60 mm) takes an arm's middle for table; against the table over a wider window, an arm is
    skin, wider than any brick. Its shaded rim is not skin-toned and belongs to it; its shadow and
    an orange brick beside it (skin-toned too, but 16 mm wide) do not."""
    white = np.full(3, PAPER_ALBEDO)  # the paper seen as paper: colours are judged as they are
    wood, skin, rim, orange = (40, 85, 140), (120, 160, 215), (45, 60, 85), (20, 110, 235)  # BGR
    view = np.full((400, 600, 3), wood, np.uint8)
    view += np.random.default_rng(0).integers(0, 6, view.shape, dtype=np.uint8)  # grain
    shadow = _ellipse(view.shape[:2], (560, 460), (170, 45), 30.0)
    view[shadow] = (np.asarray(wood) * 0.45).astype(np.uint8)
    arm = _ellipse(view.shape[:2], (500, 400), (170, 42), 30.0)
    lit = _ellipse(view.shape[:2], (497, 395), (164, 36), 30.0)
    view[arm] = rim
    view[lit] = skin
    brick = np.zeros(view.shape[:2], bool)
    brick[150:158, 330:346] = True  # a 2 x 4 brick's top, 16 x 32 mm, 20 mm from the arm
    view[brick] = orange

    hands = hand_regions(view, white, MM_PER_PX) > 0

    assert hands[arm].mean() >= 0.95
    assert not hands[brick].any()
    assert hands[shadow & ~arm].mean() <= 0.1
    assert not hand_regions(np.where(arm[..., None], np.asarray(wood, np.uint8), view), white, MM_PER_PX).any()


def test_a_pale_arm_in_a_clipped_frame_is_a_hand_with_its_far_side_and_a_sheet_of_paper_is_not():
    """A frame exposed for a dark table clips the paper and an arm held up towards the lamp: the arm
    reads white, its hue lost, and its far side is a gray band a third to a half as bright (a
    path-traced frame read black bricks in it). It is a hand, band and all, for it is wider than
    any brick and rounded; its bluish shadow on the wood is not, nor a sheet of paper as large
    (a rectangle), nor the same arm where the paper is not at the camera's ceiling (a hand would
    show its hue there: pale, it is the table's own)."""
    white = np.ones(3)  # the paper at the camera's ceiling
    wood, pale, far_side, shade = (70, 80, 100), (236, 247, 254), (95, 100, 103), (68, 61, 54)  # BGR
    view = np.full((400, 600, 3), wood, np.uint8)
    view += np.random.default_rng(1).integers(0, 6, view.shape, dtype=np.uint8)
    shadow = _ellipse(view.shape[:2], (560, 470), (170, 45), 30.0)
    view[shadow] = shade
    arm = _ellipse(view.shape[:2], (500, 400), (170, 45), 30.0)
    lit = _ellipse(view.shape[:2], (490, 382), (162, 28), 30.0)
    view[arm] = far_side
    view[lit] = pale
    sheet = np.zeros(view.shape[:2], bool)
    sheet[40:100, 40:130] = True  # 180 x 120 mm of paper
    view[sheet] = pale

    hands = hand_regions(view, white, MM_PER_PX) > 0

    assert hands[arm].mean() >= 0.95
    rim_px = 2 * round(HAND_RIM_MM / MM_PER_PX) + 1  # (the hand's rim, by design, takes the shadow's edge)
    near_arm = cv2.dilate(arm.astype(np.uint8), np.ones((rim_px, rim_px), np.uint8)) > 0
    assert hands[shadow & ~near_arm].mean() <= 0.02
    assert not hands[sheet].any()
    assert not hand_regions(view, np.full(3, 0.75), MM_PER_PX).any()


def test_a_table_where_nothing_differs_has_no_hand():
    assert not hand_regions(np.full((400, 600, 3), 128, np.uint8), np.ones(3), MM_PER_PX).any()


def test_an_arms_shaded_rim_and_its_shadow_on_wood_are_no_black_bricks():
    """Two arms over a wooden table (ray-cast bench table 8 with two hands): the arms' shaded rims
    along them were read as black bricks 6-29 mm high, 14 x 64 mm (four), and a piece of an
    arm's shadow beside it as a black plate: five false blocks. Now every block found is a true
    brick, and the frame says a hand hides part of the table."""
    scene = bench_scene("raycast", 8, "standard", n_hands=2)
    state = Locator(scene.setup()).analyse(Camera("raycast").render(scene)).state
    bricks = [b.footprint_mm() for b in scene.bricks]
    false = [(b.color, b.height_mm, np.round(np.mean(b.footprint_mm, axis=0))) for b in state.blocks
             if max(polygon_iou(np.asarray(b.footprint_mm), f) for f in bricks) == 0.0]
    assert not false
    assert len(state.blocks) >= 6  # the bricks in the open are still found
    assert HANDS_WARNING in state.warnings


def test_the_top_a_mini_stands_on_is_no_block_where_the_frame_shows_it_on_a_hand(monkeypatch):
    """A mini beside a hand whose frame height read high was looked under, and the top found was the
    hand (ray-cast bench table 11 with two hands: an orange "block" 62 x 61 mm, 6.4 mm high; the
    bench figures are in docs/measurements.md). The top a mini stands on is dropped, as any fitted top is,
    where the frame shows it half on a hand; elsewhere it stands."""
    from companion.synth.scene import random_scene
    from companion.vision.blocks import BlockFinder
    from companion.vision.cutout import COARSE_MM
    from companion.vision.foundblock import FoundBlock
    from companion.vision.brickfit import TableRect
    from companion.vision.tableview import TableView, window_size
    from companion.state import MiniState

    scene = random_scene(11, "standard")  # its geometry only: nothing is rendered
    setup = scene.setup()
    spec = setup.minis[0]
    mini = MiniState(spec.id, 500.0, 400.0, spec.marker_height + 6.4, 0.0)  # stood 6.4 mm up
    footprint = TableRect(np.array([500.0, 400.0]), np.array([1.0, 0.0]), (31.0, 30.0))
    top = box_block(footprint, 6.4, "orange", None, silhouette_fit=0.9)
    monkeypatch.setattr(BlockFinder, "_under_mini", lambda self, *args, **kwargs: top)
    finder = BlockFinder(setup)
    view = TableView(scene.camera, scene.pose)
    w_px, h_px = window_size(setup.table.width_mm, setup.table.depth_mm, COARSE_MM)
    hand = np.zeros((h_px, w_px), np.uint8)
    hand[int(340 / COARSE_MM):int(470 / COARSE_MM), int(440 / COARSE_MM):int(580 / COARSE_MM)] = 1  # over the top

    def under_it(hands: np.ndarray) -> list[FoundBlock]:
        finder.hands_mm2 = float(hands.sum()) * COARSE_MM ** 2
        return finder._under_minis(None, view, (mini,), [], None, 0.0, None, 0.0, {}, hands)

    assert under_it(hand) == []
    assert under_it(np.zeros_like(hand)) == [top]
