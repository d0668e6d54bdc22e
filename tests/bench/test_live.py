"""The live bench's camera at another stream size: the same lens, every pixel scaled."""

import numpy as np

from companion.bench.live import at_height, bench_table


def test_a_720p_stream_sees_the_table_where_the_1080p_one_does_scaled_by_two_thirds():
    full = bench_table(0)
    small = at_height(full, 720)
    assert (small.camera.width_px, small.camera.height_px) == (1280, 720)
    points = np.array([[m.x_mm, m.y_mm, m.z_mm] for m in full.minis])
    big_px, small_px = full.pose.project(full.camera, points), small.pose.project(small.camera, points)
    # pixel centres: pixel i of 1080p covers [i - 0.5, i + 0.5); scaled, centre i maps to (i + 0.5) k - 0.5
    np.testing.assert_allclose(small_px, (big_px + 0.5) * (720 / 1080) - 0.5, atol=1e-6)
    assert small.setup().camera.matrix[0][0] == small.camera.matrix[0, 0]  # the setup is calibrated for it
    assert at_height(full, 1080) is full
