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


@pytest.mark.parametrize("minis, blocks, says", [
    ([{"id": 4, "x_mm": 1e308, "y_mm": 2, "z_mm": 3, "heading_deg": 0}], [], "mini 4: x_mm is 1e+308 mm, no place"),
    ([{"id": 4, "x_mm": 1, "y_mm": 2, "z_mm": 3, "heading_deg": 0}] * 2, [], "marker ids [4] are given twice"),
    ([], [{"footprint_mm": [[0, 0], [10, 0]], "height_mm": 9.6}], "block 0: footprint_mm must be a list of 3"),
    ([], [{"footprint_mm": "square", "height_mm": 9.6}], "block 0: footprint_mm must be a list of 3"),
    ([], [{"footprint_mm": [[0, 0], [10, 0], [10, 10]], "height_mm": -5}], "block 0: height_mm is -5, below"),
    ([], [{"footprint_mm": [[5, 5], [5, 5], [5, 5]], "height_mm": 9.6}], "block 0: footprint_mm encloses no area"),
    ([], [{"footprint_mm": [[0, 0], [10, 0], [10, 10]], "height_mm": 9.6, "color": 5}], "block 0: color is 5, not a text"),
    ([], [{"footprint_mm": [[0, 0], [10, 0], [10, 10]], "height_mm": 9.6, "height_range_mm": [3.2]}],
     "block 0: height_range_mm must be [lowest, highest]"),
    ([], [{"footprint_mm": [[0, 0], [10, 0], [10, 10]], "height_mm": 9.6, "height_range_mm": [12.8, 48]}],
     "block 0: height_range_mm is [12.8, 48.0]: it must hold height_mm"),
    ([], [{"footprint_mm": [[0, 0], [10, 0], [10, 10]], "height_mm": 9.6, "height_range_mm": [3.2, "tall"]}],
     "block 0: height_range_mm is 'tall', not a number"),
    ([], [{"footprint_mm": [[0, 0], [10, 0], [10, 10]], "height_mm": 9.6, "hidden_under": "mini 7"}],
     "block 0: hidden_under is 'mini 7', not a marker id"),
    ({"4": {"x_mm": 1}}, [], "minis must be a list of objects"),
    ([4], [], "minis must be a list of objects"),
    ([{"id": True, "x_mm": 1, "y_mm": 2, "z_mm": 3, "heading_deg": 0}], [], "mini id is True, not a marker id"),
    ([{"id": 4.5, "x_mm": 1, "y_mm": 2, "z_mm": 3, "heading_deg": 0}], [], "mini id is 4.5, not a marker id"),
    ([{"id": 4, "x_mm": "abc", "y_mm": 2, "z_mm": 3, "heading_deg": 0}], [], "mini 4: x_mm is 'abc', not a number"),
    ([{"id": 4, "x_mm": 1, "y_mm": 2, "z_mm": 3, "heading_deg": 0, "player": 3}], [], "mini 4: player is 3, not a text"),
])
def test_a_state_no_table_can_hold_is_refused_naming_what(tmp_path, minis, blocks, says):
    # Each was taken before: a mini 1e308 mm off reached the rules (and its error printed 309
    # digits), the second of two minis with one id was dropped without a word, a block of two
    # corners, of no area or under the table went to the rules as a block, a number for a colour
    # or a player went on as one, `true` for an id was marker 1, and minis given as an object
    # ended in a traceback.
    with pytest.raises(InputError, match=says.replace("[", r"\[").replace("]", r"\]").replace("+", r"\+")):
        load_state(_write(tmp_path, minis, blocks))


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


def test_a_blocks_height_range_goes_through_a_saved_state_and_is_left_out_when_unknown(tmp_path):
    square = [[0, 0], [10, 0], [10, 10], [0, 10]]
    blocks = [{"footprint_mm": square, "height_mm": 9.6, "height_range_mm": [9.6, 48.0]},
              {"footprint_mm": square, "height_mm": 19.2}]
    state = load_state(_write(tmp_path, [], blocks))
    assert state.blocks[0].height_range_mm == (9.6, 48.0) and state.blocks[1].height_range_mm is None
    again = state.to_json()["blocks"]
    assert again[0]["height_range_mm"] == [9.6, 48.0] and "height_range_mm" not in again[1]


def test_the_mini_hiding_a_block_goes_through_a_saved_state_and_is_left_out_when_seen(tmp_path):
    square = [[0, 0], [10, 0], [10, 10], [0, 10]]
    state = load_state(_write(tmp_path, [], [{"footprint_mm": square, "height_mm": 19.2, "color": "", "hidden_under": 7},
                                             {"footprint_mm": square, "height_mm": 9.6}]))
    assert [b.hidden_under for b in state.blocks] == [7, None]
    again = state.to_json()["blocks"]
    assert again[0]["hidden_under"] == 7 and "hidden_under" not in again[1]
