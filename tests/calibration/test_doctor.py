import json
import subprocess
import sys

import cv2
import numpy as np

from companion.calibration.doctor import diagnose
from tests.conftest import rendered


def test_a_good_frame_is_all_good_with_expected_errors():
    scene, image = rendered(101)
    report = diagnose(image, scene.setup(), "synthetic")
    assert report["ok"] and report["registration"]["registered"] and report["warnings"] == []
    assert {m["id"] for m in report["markers"]} == {m.id for m in scene.minis}
    assert all(m["seen"] and m["expected_xy_mm_p95"] < 2.0 for m in report["markers"])


def test_blur_darkness_and_no_calibration_are_warned():
    scene, image = rendered(101)
    blurred = diagnose(cv2.GaussianBlur(image, (0, 0), 3.0), scene.setup(), "blurred")
    # still registered (the anchors are large): the blur is what it must say
    assert blurred["registration"]["registered"] and any("looks blurred" in w for w in blurred["warnings"])
    assert not any("blurred" in w for w in diagnose(image, scene.setup(), "sharp")["warnings"])
    dark = diagnose((image * 0.25).astype(np.uint8), scene.setup(), "dark")
    assert any("dark image" in w for w in dark["warnings"])
    uncalibrated = diagnose(image, scene.setup(with_camera=False), "guess")
    assert any("not calibrated" in w for w in uncalibrated["warnings"])


def test_a_paper_the_camera_clips_is_warned_though_few_pixels_saturate():
    # Twice the light through the camera's sRGB curve: the table stays mid-grey (96), under 1% of
    # the pixels saturate, and the anchors' paper reads at the ceiling.
    from companion.vision.exposure import PAPER_CLIPPED_WARNING
    from tests.vision.test_exposure import _exposed

    scene, image = _exposed(2.0)
    report = diagnose(image, scene.setup(), "bright")
    assert report["brightness"] < 200 and not report["ok"]
    assert report["warnings"] == [PAPER_CLIPPED_WARNING]
    scene, image = _exposed(1.0)
    assert diagnose(image, scene.setup(), "as rendered")["warnings"] == []


def test_doctor_command_exit_codes(tmp_path):
    scene, image = rendered(101)
    from companion.setup_file import setup_to_toml

    (tmp_path / "setup.toml").write_text(setup_to_toml(scene.setup()))
    cv2.imwrite(str(tmp_path / "frame.png"), image)
    cv2.imwrite(str(tmp_path / "blank.png"), np.full((480, 640, 3), 120, np.uint8))
    run = lambda *a: subprocess.run([sys.executable, "-m", "companion.cli", "doctor", "--setup",  # noqa: E731
                                     str(tmp_path / "setup.toml"), *a], capture_output=True, text=True, timeout=120)
    ok = run("--camera", str(tmp_path / "frame.png"), "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["ok"]
    blank = run("--camera", str(tmp_path / "blank.png"))
    assert blank.returncode == 5 and "no anchor visible" in blank.stdout
    missing = run("--camera", "93")
    assert missing.returncode == 4 and "cannot open" in missing.stderr
