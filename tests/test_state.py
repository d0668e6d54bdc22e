"""A state read back from a file: numbers every answer can stand on, or a clear refusal."""

import json

import pytest

from companion.errors import InputError
from companion.state import TableState, load_state


def _write(tmp_path, minis, blocks=()):
    path = tmp_path / "state.json"
    # json.dumps writes NaN and Infinity as bare words, as other tools' JSON may.
    path.write_text(json.dumps({"registered": True, "minis": minis, "blocks": list(blocks)}))
    return path


@pytest.mark.parametrize("field", ["x_mm", "y_mm", "z_mm", "heading_deg", "tilt_deg", "z_sigma_mm"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_mini_number_that_is_not_finite_is_refused_naming_the_file_mini_and_field(tmp_path, field, bad):
    mini = {"id": 4, "x_mm": 100.0, "y_mm": 200.0, "z_mm": 30.0, "heading_deg": 90.0}
    mini[field] = bad
    path = _write(tmp_path, [mini])
    with pytest.raises(InputError) as raised:
        load_state(path)
    message = str(raised.value)
    assert str(path) in message and "mini 4" in message and field in message and "\n" not in message


def test_a_block_height_that_is_not_finite_is_refused(tmp_path):
    block = {"footprint_mm": [[0, 0], [10, 0], [10, 10], [0, 10]], "height_mm": float("nan"), "color": "red"}
    with pytest.raises(InputError, match="block 0: height_mm"):
        load_state(_write(tmp_path, [], [block]))


def test_finite_numbers_load(tmp_path):
    state = load_state(_write(tmp_path, [{"id": 4, "x_mm": 1, "y_mm": 2, "z_mm": 3, "heading_deg": 4, "z_sigma_mm": 1.5}]))
    assert state.minis[0].x_mm == 1.0 and state.minis[0].z_sigma_mm == 1.5


def test_a_camera_pose_that_is_not_three_finite_numbers_is_refused(tmp_path):
    state = TableState(registered=True).to_json()
    state["registration"] = {"registered": True, "anchors_seen": [0], "camera_mm": [0, 0, 900],
                             "camera_rotation_mrad": [3141.6, 0, "nan"], "camera_translation_mm": [0, 0, 900]}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    with pytest.raises(InputError, match="registration: camera_rotation_mrad"):
        load_state(path)
