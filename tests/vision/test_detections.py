"""`MarkerDetections`, the vision data model: one row taken by its index is that row, whichever way."""

import numpy as np
import pytest

from companion.vision.markers import MarkerDetections


def _three() -> MarkerDetections:
    corners = np.arange(24, dtype=float).reshape(3, 4, 2)
    return MarkerDetections(np.array([5, 7, 9]), corners, corners / 100, np.array([0.1, 0.2, 0.3]),
                            np.array([True, False, True]), corners + 0.5, np.array([0.0, 0.4, 0.0]),
                            np.array([0.02, np.nan, 0.03]))


@pytest.mark.parametrize("row", [0, 1, 2, -1, np.int64(1)])
def test_a_row_by_its_index_is_that_row(row):
    det = _three()
    one = det[row]
    as_array = det[np.array([int(row) % 3])]
    assert len(one) == 1
    for field in ("ids", "corners_px", "corners_norm", "edge_rms_px", "refined", "raw_px", "margin_dark", "fit_residual"):
        np.testing.assert_array_equal(getattr(one, field), getattr(as_array, field))


def test_a_row_past_the_end_is_an_index_error():
    with pytest.raises(IndexError):
        _three()[3]
    with pytest.raises(IndexError):
        _three()[-4]


def test_the_empty_set_is_shared_and_cannot_be_written():
    empty = MarkerDetections.empty()
    assert len(empty) == 0 and MarkerDetections.empty() is empty
    assert len(MarkerDetections.concat([empty, _three()[1]])) == 1
    with pytest.raises(ValueError):
        empty.ids[...] = 1  # shared by every caller: read-only
