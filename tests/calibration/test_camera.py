"""Camera and hand calibration: known intrinsics recovered from rendered board views; bad sets refused;
the setup file keeps every line it had."""

import json
import subprocess
import sys

import cv2
import numpy as np
import pytest

from companion.calibration.camera import BoardSpec, ViewSet, calibrate
from companion.calibration.setup_edit import set_table
from companion.errors import SetupError
from companion.setup_file import load_setup
from companion.synth.boards import TRUE_DISTORTION, TRUE_MATRIX, board_views

pytestmark = pytest.mark.slow  # renders 20 board views (~40 s)


@pytest.fixture(scope="module")
def views():
    images, camera = board_views(20, seed=4)
    return images


@pytest.fixture(scope="module")
def calibrated(views):
    vs = ViewSet(BoardSpec())
    for k, image in enumerate(views):
        vs.add(image, f"view {k}")
    return calibrate(vs)


def test_known_intrinsics_are_recovered(calibrated):
    k = calibrated.matrix
    assert abs(k[0, 0] / TRUE_MATRIX[0, 0] - 1) < 0.005 and abs(k[1, 1] / TRUE_MATRIX[1, 1] - 1) < 0.005
    # the distortion's effect (where the lens moves a point, in pixels) over the whole image, both models
    w, h = calibrated.size
    grid = np.stack(np.meshgrid(np.linspace(0, w - 1, 33), np.linspace(0, h - 1, 19)), -1).reshape(-1, 1, 2)
    ideal = cv2.undistortPoints(grid, TRUE_MATRIX, TRUE_DISTORTION).reshape(-1, 2)
    points = np.concatenate([ideal, np.ones((len(ideal), 1))], axis=1)

    def effect(matrix, distortion):
        moved, _ = cv2.projectPoints(points, np.zeros(3), np.zeros(3), matrix, distortion)
        still, _ = cv2.projectPoints(points, np.zeros(3), np.zeros(3), matrix, np.zeros(5))
        return moved.reshape(-1, 2) - still.reshape(-1, 2)

    difference = np.linalg.norm(effect(TRUE_MATRIX, TRUE_DISTORTION) - effect(calibrated.matrix, calibrated.distortion), axis=1)
    assert difference.max() <= 0.3, f"distortion effect off by {difference.max():.3f} px"
    assert calibrated.rms_px < 0.3 and calibrated.views_used == 20


def test_three_views_are_refused_with_advice(views, tmp_path):
    for k, image in enumerate(views[:3]):
        cv2.imwrite(str(tmp_path / f"v{k}.png"), image)
    (tmp_path / "setup.toml").write_text("[[anchors]]\nid = 0\nx_mm = 45\ny_mm = 45\n")
    out = subprocess.run([sys.executable, "-m", "companion.cli", "calibrate", "camera", "--setup",
                          str(tmp_path / "setup.toml"), "--frames", str(tmp_path), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 3 and "only 3 usable board view(s), 10 needed" in out.stderr
    assert "[camera]" not in (tmp_path / "setup.toml").read_text()


def test_blurred_and_repeated_views_are_rejected(views):
    vs = ViewSet(BoardSpec())
    assert vs.add(views[0]) is None
    assert "repeats an earlier view" in vs.add(views[0])
    assert "blurred" in vs.add(cv2.GaussianBlur(views[1], (0, 0), 2.0))  # still detected, too soft to calibrate


def test_calibration_is_written_into_the_setup_keeping_every_line(views, tmp_path):
    original = ("# my table\n[table]\nwidth_mm = 1200  # measured\n\n[camera]\n# old guess\n"
                "matrix = [\n  [1000.0, 0.0, 640.0],\n  [0.0, 1000.0, 360.0],\n  [0.0, 0.0, 1.0],\n]\n"
                "distortion = [0.0, 0.0, 0.0, 0.0, 0.0]\n\n[[players]]\nname = \"red\"\n")
    (tmp_path / "setup.toml").write_text(original)
    for k, image in enumerate(views[:14]):
        cv2.imwrite(str(tmp_path / f"v{k:02d}.png"), image)
    out = subprocess.run([sys.executable, "-m", "companion.cli", "calibrate", "camera", "--setup",
                          str(tmp_path / "setup.toml"), "--frames", str(tmp_path), "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["written"] and data["views_used"] == 14
    text = (tmp_path / "setup.toml").read_text()
    kept = [line for line in original.splitlines() if not line.startswith(("matrix", "  [", "]", "distortion"))]
    assert all(line in text.splitlines() for line in kept)  # comments, keys, order: all there
    setup = load_setup(tmp_path / "setup.toml")
    assert abs(setup.camera.matrix[0][0] / TRUE_MATRIX[0, 0] - 1) < 0.01


def test_set_table_adds_missing_tables_and_refuses_unknown_players():
    assert set_table("[table]\nwidth_mm = 1\n", "camera", {"distortion": [0.0]}).endswith("[camera]\ndistortion = [0.0]\n")
    with pytest.raises(SetupError, match="no \\[\\[players\\]\\] with name"):
        set_table("[[players]]\nname = \"red\"\n", "players", {"hand_mm": 150.0}, match=("name", "blue"))
