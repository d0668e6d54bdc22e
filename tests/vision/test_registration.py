import numpy as np

from companion.setup_file import AnchorSpec
from companion.synth.scene import random_scene
from companion.vision.markers import MarkerDetections
from companion.vision.registration import register, square_corners_mm


def _detections(scene, anchors, noise_px=0.0, seed=0):
    rng = np.random.default_rng(seed)
    ids, px = [], []
    for a in anchors:
        corners = scene.pose.project(scene.camera, square_corners_mm(a.x_mm, a.y_mm, a.size_mm, a.rotation_deg))
        ids.append(a.id)
        px.append(corners + rng.normal(0, noise_px, corners.shape))
    px = np.array(px)
    norm = np.array([scene.camera.normalize(p) for p in px])
    return MarkerDetections(np.array(ids), px, norm, np.zeros(len(ids)))


def _pose_error_mm(scene, reg):
    probe = np.array([[0, 0, 0], [1200, 800, 0], [600, 400, 50.0]])
    return np.abs(reg.pose.to_camera(probe) - scene.pose.to_camera(probe)).max()


def test_registers_from_four_anchors_and_from_one():
    scene = random_scene(3)
    four = register(_detections(scene, scene.anchors), scene.anchors, scene.camera.focal_px)
    assert four.registered and four.anchors_seen == (0, 1, 2, 3) and four.residual_px < 1e-6
    assert _pose_error_mm(scene, four) < 1e-6
    one = register(_detections(scene, scene.anchors[2:3]), scene.anchors, scene.camera.focal_px)
    assert one.registered and one.anchors_seen == (2,)
    assert _pose_error_mm(scene, one) < 1e-3


def test_no_anchor_means_not_registered():
    scene = random_scene(3)
    reg = register(MarkerDetections.empty(), scene.anchors, scene.camera.focal_px)
    assert not reg.registered and reg.pose is None and "no anchor visible" in reg.reason


def test_a_moved_anchor_is_refused_not_averaged_in():
    scene = random_scene(3)
    moved = list(scene.anchors)
    moved[1] = AnchorSpec(1, moved[1].x_mm - 60, moved[1].y_mm, moved[1].size_mm, moved[1].rotation_deg)
    reg = register(_detections(scene, tuple(moved)), scene.anchors, scene.camera.focal_px)
    assert not reg.registered and "disagree" in reg.reason


def test_an_anchor_that_would_put_the_camera_metres_up_is_no_table():
    # One anchor read out of sensor noise, 6 px wide, fits a pose of its own: the camera ~10 m up.
    scene = random_scene(3)
    a = scene.anchors[2]
    seen = _detections(scene, (a,))
    centre = seen.corners_px[0].mean(axis=0)
    tiny = centre + (seen.corners_px[0] - centre) * 6.0 / np.linalg.norm(seen.corners_px[0][1] - seen.corners_px[0][0])
    far = MarkerDetections(seen.ids, tiny[None], scene.camera.normalize(tiny)[None], np.zeros(1))
    reg = register(far, scene.anchors, scene.camera.focal_px)
    assert not reg.registered and reg.pose is None and "above the table" in reg.reason


def test_the_state_carries_the_pose_it_was_seen_with_through_its_json():
    """A table state's registration gives back the camera pose: in memory exactly, and read back
    from its JSON (rounded to µrad and µm) within a hundredth of a pixel anywhere on the table."""
    from companion.state import TableState
    from companion.vision.camera import TablePose

    scene = random_scene(3)
    reg = register(_detections(scene, scene.anchors), scene.anchors, scene.camera.focal_px)
    state = TableState(registered=True, registration=reg.to_state())
    probe = np.array([[0, 0, 0], [1200, 800, 0], [600, 400, 50.0]])
    exact = reg.pose.project(scene.camera, probe)
    assert np.abs(TablePose.from_state(state.registration.camera).project(scene.camera, probe) - exact).max() < 1e-9
    back = TableState.from_json(state.to_json())
    assert back.registration.anchors_seen == (0, 1, 2, 3) and back.registration.registered
    assert np.abs(TablePose.from_state(back.registration.camera).project(scene.camera, probe) - exact).max() < 0.01
    assert np.allclose(back.registration.camera.centre_mm, reg.pose.camera_centre_mm, atol=0.05)  # JSON: 0.1 mm
    unregistered = register(MarkerDetections.empty(), scene.anchors, scene.camera.focal_px).to_state()
    assert unregistered.camera is None and TableState.from_json(
        TableState(registered=False, registration=unregistered).to_json()).registration == unregistered
