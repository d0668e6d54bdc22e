"""The synthetic camera is a measuring instrument: its geometry must be exact."""

import math
from dataclasses import replace

import cv2
import numpy as np

from companion.setup_file import AnchorSpec, TableSpec
from companion.synth.render import Renderer, marker_visible_fraction
from companion.synth.scene import Imaging, SynthHand, look_at_pose, framing_camera, random_scene, Scene
from companion.vision.markers import marker_bits


def _x_junctions(anchor: AnchorSpec, dictionary: str) -> np.ndarray:
    """Table points where two black and two white modules meet diagonally (saddle points)."""
    bits = marker_bits(dictionary, anchor.id) > 0
    cells = bits.shape[0]
    module = anchor.size_mm / cells
    c, s = math.cos(math.radians(anchor.rotation_deg)), math.sin(math.radians(anchor.rotation_deg))
    up, right = np.array([c, s]), np.array([s, -c])
    points = []
    for i in range(1, cells):
        for j in range(1, cells):
            a, b, cc, d = bits[i - 1, j - 1], bits[i - 1, j], bits[i, j - 1], bits[i, j]
            if a == d and b == cc and a != b:
                u, v = -anchor.size_mm / 2 + j * module, anchor.size_mm / 2 - i * module
                xy = np.array([anchor.x_mm, anchor.y_mm]) + u * right + v * up
                points.append([xy[0], xy[1], 0.1])  # printed paper is 0.1 mm thick in the renderer
    return np.array(points)


def test_projected_truth_matches_rendered_corners_within_0_3_px():
    table = TableSpec(1200.0, 800.0)
    pose = look_at_pose(np.array([450.0, 250.0, 1100.0]), np.array([620.0, 420.0, 0.0]), roll_deg=2.0)
    camera = framing_camera(table, pose, 1920, 1080, np.array([-0.15, 0.03, 4e-4, -3e-4, 0.0]))
    anchors = tuple(AnchorSpec(i, x, y, 180.0, rot) for i, (x, y, rot) in
                    enumerate([(150, 150, 90), (1050, 150, 30), (1050, 650, 200), (150, 650, 270), (600, 400, 0)]))
    scene = Scene(table, "felt", anchors, (), (), (), camera, pose,
                  imaging=Imaging(noise_sigma=0, blur_sigma_px=0, jpeg_quality=100, supersample=4))
    gray = cv2.cvtColor(Renderer().render(scene, degrade=False), cv2.COLOR_BGR2GRAY)
    errors = []
    for anchor in anchors:
        truth = pose.project(camera, _x_junctions(anchor, scene.dictionary))
        found = cv2.cornerSubPix(gray, np.round(truth).astype(np.float32).reshape(-1, 1, 2), (6, 6), (-1, -1),
                                 (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT, 100, 1e-4)).reshape(-1, 2)
        errors.extend(np.linalg.norm(found - truth, axis=1))
    assert len(errors) >= 8
    assert max(errors) <= 0.3, f"max corner error {max(errors):.3f} px"


def test_render_is_deterministic_and_noise_varies_per_frame():
    scene = random_scene(7, n_minis=3, n_bricks=2)
    r = Renderer()
    a, b = r.render(scene), r.render(scene)
    assert np.array_equal(a, b)
    c = r.render(replace(scene, noise_seed=1))
    assert not np.array_equal(a, c) and np.abs(a.astype(int) - c.astype(int)).mean() < 5


def test_hand_hides_the_mini_under_it():
    scene = random_scene(8, n_minis=2, n_bricks=0)
    mini = scene.minis[0]
    assert marker_visible_fraction(scene, mini) == 1.0
    covered = replace(scene, hands=(SynthHand(mini.x_mm, mini.y_mm, 120.0, 0.0),))
    assert marker_visible_fraction(covered, mini) == 0.0


def test_scene_truth_mini_heights_and_bricks():
    scene = random_scene(9)
    assert all(0 < m.z_mm <= 50 for m in scene.minis)
    for b in scene.bricks:
        side = np.linalg.norm(b.footprint_mm()[1] - b.footprint_mm()[0])
        assert math.isclose(side, 8 * b.studs_long - 0.2)
        assert b.height_mm in {3.2 * k for k in (1, 2, 3)} | {9.6 * k for k in (1, 2, 3)}
