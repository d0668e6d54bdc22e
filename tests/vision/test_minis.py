"""Placing a horizontal marker from its corners: exact on exact corners, anywhere on the table."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from companion.setup_file import TableSpec
from companion.synth.scene import framing_camera, look_at_pose
from companion.vision.minis import locate_horizontal_marker
from companion.vision.registration import square_corners_mm


def _camera(height_mm=1100.0, tilt_target=(650.0, 420.0)):
    pose = look_at_pose(np.array([520.0, 300.0, height_mm]), np.array([*tilt_target, 0.0]))
    camera = framing_camera(TableSpec(1200, 800), pose, 1920, 1080, np.array([-0.1, 0.02, 0, 0, 0]))
    return camera, pose


@settings(max_examples=60, deadline=None)
@given(x=st.floats(50, 1150), y=st.floats(50, 750), z=st.floats(0, 60), heading=st.floats(0, 359.99),
       side=st.floats(12, 30))
def test_exact_corners_give_exact_pose(x, y, z, heading, side):
    camera, pose = _camera()
    corners = square_corners_mm(x, y, side, heading, z)
    normalized = camera.normalize(pose.project(camera, corners))
    placed = locate_horizontal_marker(normalized, side, pose, camera.focal_px)
    assert math.hypot(placed.x_mm - x, placed.y_mm - y) < 1e-3
    assert abs(placed.z_mm - z) < 1e-3
    assert abs((placed.heading_deg - heading + 180) % 360 - 180) < 1e-4
    assert placed.fit_residual_px < 1e-4 and placed.tilt_deg < 1.0


def test_a_flat_square_whose_closed_form_pose_comes_out_nan_still_reads_flat():
    """IPPE_SQUARE answers NaN for this exact 12 mm square at the table's edge (a Hypothesis find)."""
    camera, pose = _camera()
    placed = locate_horizontal_marker(camera.normalize(pose.project(camera, square_corners_mm(50, 300, 12, 0, 0))),
                                      12, pose, camera.focal_px)
    assert math.isfinite(placed.tilt_deg) and placed.tilt_deg < 1.0


def test_table_homography_would_be_wrong_by_parallax():
    """The reason for the geometry: a 40 mm mini 0.5 m from the camera's foot, mapped on the table plane."""
    camera, pose = _camera()
    foot = pose.camera_centre_mm[:2]
    x, y = foot[0] + 500.0, foot[1]
    normalized = camera.normalize(pose.project(camera, square_corners_mm(x, y, 20, 90, 40)))
    on_table = pose.intersect_plane(normalized.mean(axis=0, keepdims=True), 0.0)[0]
    assert math.hypot(on_table[0] - x, on_table[1] - y) > 15  # h * d / H = 40 * 500 / 1100 = 18 mm
    placed = locate_horizontal_marker(normalized, 20, pose, camera.focal_px)
    assert math.hypot(placed.x_mm - x, placed.y_mm - y) < 1e-3


def test_known_height_overrides_the_scale_estimate():
    camera, pose = _camera()
    normalized = camera.normalize(pose.project(camera, square_corners_mm(300, 200, 20, 10, 30)))
    placed = locate_horizontal_marker(normalized, 20, pose, camera.focal_px, known_z_mm=30.0)
    assert placed.z_mm == 30.0 and math.hypot(placed.x_mm - 300, placed.y_mm - 200) < 1e-3


def test_a_tilted_marker_reports_its_tilt():
    camera, pose = _camera()
    flat = square_corners_mm(600, 400, 25, 0, 20)
    # Knocked over: rotate the square 70 degrees about its own horizontal axis.
    a = math.radians(70)
    centre = flat.mean(axis=0)
    rot = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    tilted = (flat - centre) @ rot.T + centre
    placed = locate_horizontal_marker(camera.normalize(pose.project(camera, tilted)), 25, pose, camera.focal_px)
    assert 60 < placed.tilt_deg < 80
    assert placed.fit_residual_px > 1.0  # not a flat square: its placement is not to be trusted


def test_the_fit_residual_is_the_corners_distance_from_the_fitted_square():
    camera, pose = _camera()
    corners = square_corners_mm(400, 300, 20, 30, 25)
    pixels = pose.project(camera, corners)
    pixels[2] += (1.0, -0.5)  # one corner off the square
    normalized = camera.normalize(pixels)
    placed = locate_horizontal_marker(normalized, 20, pose, camera.focal_px)
    # The same similarity fit, written out in numpy: corners on the table plane as complex numbers.
    ground = pose.intersect_plane(normalized, 0.0)
    q = ground[:, 0] + 1j * ground[:, 1]
    template = np.array([1 + 1j, 1 - 1j, -1 - 1j, -1 + 1j]) / 2
    c0 = q.mean()
    a = np.vdot(template, q - c0) / np.vdot(template, template).real
    rms_mm = math.sqrt(np.mean(np.abs(q - (c0 + a * template)) ** 2))
    centre = pose.camera_centre_mm
    distance = math.sqrt((c0.real - centre[0]) ** 2 + (c0.imag - centre[1]) ** 2 + centre[2] ** 2)
    assert placed.fit_residual_px == pytest.approx(rms_mm * camera.focal_px / distance, rel=1e-9)
    assert placed.z_mm == pytest.approx(centre[2] * (1 - 20 / abs(a)), abs=1e-6)
