"""The synthetic camera is a measuring instrument: its geometry must be exact."""

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

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


def test_blur_kernels_are_centred_and_as_wide_as_their_sigma():
    # A kernel off centre shifts the whole frame: it once moved every randomised frame by 0.44 px.
    from companion.synth.render import blur_kernel

    # Gaussian and disc: sigma per axis; the motion streak (4 sigma long): its length's spread,
    # 4 / sqrt(12) sigma, all along one axis. (Each pixel's own box adds 1/12 px^2 an axis.)
    for kind, axes, spread in (("gauss", 2, 1.0), ("disc", 2, 1.0), ("motion", 1, 4 / math.sqrt(12))):
        k = blur_kernel(kind, 0.8, motion_deg=30.0)
        n = k.shape[0]
        offsets = np.arange(n) - (n - 1) / 2
        assert abs(k.sum() - 1) < 1e-5
        assert abs(k.sum(axis=1) @ offsets) < 1e-6 and abs(k.sum(axis=0) @ offsets) < 1e-6, kind
        variance = k.sum(axis=0) @ offsets ** 2 + k.sum(axis=1) @ offsets ** 2
        assert abs(math.sqrt(variance / axes) - 0.8 * spread) < 0.12, (kind, math.sqrt(variance / axes))


def test_a_camera_with_a_tone_curve_moves_an_edge_towards_black():
    """The fact the locator's pattern model is built on: blurred in linear light and then encoded,
    a black/white edge crosses its mid grey on the dark side of the true edge."""
    from companion.synth.render import encode

    x = np.linspace(-4, 4, 801)
    linear = 0.04 + 0.86 * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))  # sigma 1 px
    for gamma in (0.0, 2.2):
        display = encode(linear, gamma)
        mid = (display[0] + display[-1]) / 2
        crossing = x[np.argmax(display >= mid)]
        assert -0.6 < crossing < -0.15, (gamma, crossing)


def test_randomised_scenes_keep_the_geometry_and_vary_the_camera():
    plain, varied = random_scene(21), random_scene(21, randomise=True)
    assert plain.minis == varied.minis and plain.bricks == varied.bricks
    assert np.array_equal(plain.camera.matrix, varied.camera.matrix)
    looks = {random_scene(s, randomise=True).imaging for s in range(8)}
    assert len(looks) == 8
    assert {i.blur_kernel for i in looks} >= {"gauss", "disc"} and any(i.gamma != 1.0 for i in looks)


@pytest.mark.slow
def test_a_sequence_renders_only_what_moved_and_gives_the_same_pixels():
    """The renderer keeps the last frame and re-renders only regions whose objects changed: the result
    equals a fresh full render, pixel for pixel (a unit marched, a brick placed, a hand came and went)."""
    from companion.synth.siege import base_scene, siege_scene

    base = base_scene()
    steady = Renderer()
    for frame in (15, 25, 32):  # the march, a brick of the new wall, a hand over the table
        scene = siege_scene(base, frame, 48)
        assert np.array_equal(steady.render(scene), Renderer(shared=False).render(scene)), frame


def test_a_second_renderer_of_a_table_draws_only_what_differs_and_gives_the_same_pixels():
    """Renderers share the tables they drew: another renderer's frame of a table already drawn
    (a brick added, a mini gone, under a bench table's lamps) takes its empty table and last frame
    from the first, and equals a full render of its own, pixel for pixel."""
    from companion.synth.scene import SynthBrick

    scene = random_scene(5, "hard", randomise=True)
    first = Renderer()
    first.render(scene)
    variants = [replace(scene, bricks=scene.bricks + (SynthBrick(300.0, 250.0, 30.0, 2, 2, 0.0, 19.2, "red"),)),
                replace(scene, minis=scene.minis[1:])]
    for k, variant in enumerate(variants):
        second = Renderer()
        frame = second.render(variant)
        assert second.background(variant) is first.background(scene), k  # drawn once
        assert np.array_equal(frame, Renderer(shared=False).render(variant)), k


def test_a_lamp_casts_a_bricks_shadow_where_its_direction_puts_it():
    """With lamps (the randomised camera's rooms), a brick's shadow falls on the table away from
    the lamp, as dark as the light from everywhere leaves it, soft at its edge; the table beyond
    is as lit as without the brick, and a scene without lamps is drawn as before (no shadows)."""
    from companion.synth.scene import Lamp, Lighting, SynthBrick

    table = TableSpec(600.0, 400.0)
    pose = look_at_pose(np.array([300.0, 200.0, 900.0]), np.array([300.0, 200.0, 0.0]))
    camera = framing_camera(table, pose, 960, 640, np.zeros(5))
    elevation = math.radians(45)
    lamp = Lamp((math.cos(elevation), 0.0, math.sin(elevation)), 1.0, 2.0)  # to +x, 45 degrees up
    brick = SynthBrick(300.0, 200.0, 0.0, 2, 4, 0.0, 28.8, "white")
    quiet = Imaging(noise_sigma=0.0, blur_sigma_px=0.0, jpeg_quality=100, light_gradient=0.0, vignetting=0.0)
    empty = Scene(table, "paper", (), (), (), (), camera, pose, imaging=quiet, lighting=Lighting((lamp,), 0.3))
    lit = replace(empty, bricks=(brick,))

    def at(image: np.ndarray, x_mm: float, y_mm: float) -> float:
        px = pose.project(camera, np.array([[x_mm, y_mm, 0.0]]))[0]
        return float(image[int(px[1]), int(px[0])].astype(float).mean())

    bare, seen = Renderer().render(empty), Renderer().render(lit)
    near = float(brick.footprint_mm()[:, 0].min())  # its side away from the lamp (292.1 mm)
    end = near - 28.8  # its top edge's shadow: 28.8 mm further, away from the lamp at +x
    in_shadow = at(seen, near - 14.0, 200.0) / at(bare, near - 14.0, 200.0)
    expected = 0.3 / (0.3 + 0.7 * math.sin(elevation))
    assert abs(in_shadow - expected) < 0.03, (in_shadow, expected)
    assert abs(at(seen, end - 10.0, 200.0) - at(bare, end - 10.0, 200.0)) <= 1  # past the shadow's end
    assert abs(at(seen, near + 30.0, 200.0) - at(bare, near + 30.0, 200.0)) <= 1  # the side facing the lamp
    edge = [at(seen, end + d, 200.0) for d in (-2.0, 0.0, 2.0)]  # a penumbra: 2 degrees at 29 mm, ~2 mm
    assert edge[0] > edge[1] > edge[2]
    without = Renderer().render(replace(lit, lighting=None))
    bare_without = Renderer().render(replace(empty, lighting=None))
    assert abs(at(without, near - 14.0, 200.0) - at(bare_without, near - 14.0, 200.0)) <= 1  # no shadow


def test_a_table_let_go_by_the_shared_store_is_drawn_again_when_asked(monkeypatch):
    """The store keeps the last cameras' tables only: a renderer still drawing a table the store
    let go leaves it there whole again, and another renderer of it gives a full render's pixels."""
    import companion.synth.render as render
    from companion.synth.scene import SynthBrick

    monkeypatch.setattr(render, "_SHARED_CAMERAS", 1)
    monkeypatch.setattr(render, "_shared", render.OrderedDict())
    table = TableSpec(400.0, 300.0)
    quiet = Imaging(noise_sigma=0.0, blur_sigma_px=0.0, jpeg_quality=100)

    def scene_from(x_mm: float, bricks: int) -> Scene:
        pose = look_at_pose(np.array([x_mm, 150.0, 700.0]), np.array([200.0, 150.0, 0.0]))
        camera = framing_camera(table, pose, 320, 240, np.zeros(5))
        return Scene(table, "felt", (), (), tuple(SynthBrick(150.0 + 60 * k, 150.0, 0.0, 2, 2) for k in range(bricks)),
                     (), camera, pose, imaging=quiet)

    mine, other = Renderer(), Renderer()
    mine.render(scene_from(200.0, 1))
    other.render(scene_from(260.0, 1))  # another camera: the first table is let go
    mine.render(scene_from(200.0, 2))  # still drawn by the first renderer, and left in the store again
    later = scene_from(200.0, 3)
    assert np.array_equal(Renderer().render(later), Renderer(shared=False).render(later))
