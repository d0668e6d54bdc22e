"""Real photographs (../shared/realdata, see its MANIFEST.md): the ids its gold data lists are found.

The gold corners are OpenCV regression values (CORNER_REFINE_NONE, ~0.5 px inside the true edge,
rounded to whole pixels), not hand-labelled truth: our refined corners are expected within 2 px."""

import json

import numpy as np
import pytest

from companion.vision.camera import CameraModel
from companion.vision.markers import detect, to_gray
from companion.vision.sources import read_image
from tests.conftest import REALDATA

pytestmark = pytest.mark.skipif(not REALDATA.exists(), reason="../shared/realdata is not beside the project")


def _gold():
    if not REALDATA.exists():
        return []  # parametrize runs at collection, before the skip mark applies
    data = json.loads((REALDATA / "opencv_contrib" / "GOLD_tutorial_corners.json").read_text())
    return [(name, entry) for name, entry in data.items()
            if not name.startswith("_") and entry.get("dictionary", "").startswith("DICT_") and "corners" in entry]


@pytest.mark.parametrize("name, entry", _gold(), ids=lambda v: v if isinstance(v, str) else "")
def test_tutorial_photos_every_gold_id_found(name, entry):
    image = read_image(REALDATA / "opencv_contrib" / "modules" / "aruco" / name)
    gray = to_gray(image)
    found = detect(gray, CameraModel.guess(gray.shape[1], gray.shape[0]), entry["dictionary"])
    ids = [int(i) for i in found.ids]
    for marker_id, gold in entry["corners"].items():
        assert int(marker_id) in ids, f"{name}: id {marker_id} not found"
        corners = found.corners_px[ids.index(int(marker_id))]
        assert np.abs(corners - np.array(gold, float)).max() < 2.0


def _apriltag_reference(path):
    tags = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        _, rest = line.split(",", 1)
        pts = [tuple(float(v) for v in p.strip(" ()").split()) for p in rest.split("),")]
        tags.append(np.array(pts).mean(axis=0))
    return tags


@pytest.mark.parametrize("stem, opencv_matched", [("33369213973_9d9bb4cc96_c", 12), ("34085369442_304b6bafd9_c", 15),
                                                  ("34139872896_defdb2f8d9_c", 9)])
def test_nasa_apriltag_photos_at_least_as_many_as_plain_opencv(stem, opencv_matched):
    """The manifest's counts are what OpenCV 5's ArucoDetector matched; we must match as many."""
    folder = REALDATA / "apriltag" / "test" / "data"
    gray = to_gray(read_image(folder / f"{stem}.jpg"))
    found = detect(gray, CameraModel.guess(gray.shape[1], gray.shape[0]), "DICT_APRILTAG_36h11")
    centres = found.corners_px.mean(axis=1)
    matched = sum(any(np.linalg.norm(c - r) < 3 for c in centres) for r in _apriltag_reference(folder / f"{stem}.txt"))
    assert matched >= opencv_matched
