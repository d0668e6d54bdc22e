"""Where the live tracker looks for new markers: cells of the change map that settled."""

import numpy as np

from companion.synth.scene import random_scene
from companion.vision.incremental import CELL_X, CELL_Y, IncrementalMarkers


def _settle(markers: IncrementalMarkers, frames: list[np.ndarray]) -> tuple[list, bool]:
    previous, out = frames[0], ([], False)
    for small in frames:
        out = markers._settled_cells(small, np.abs(small.astype(int) - previous).astype(np.uint8), [])
        previous = small
    return out


def test_a_hands_trail_is_not_searched_but_what_it_put_down_is():
    markers = IncrementalMarkers(random_scene(5, "standard", n_minis=2, n_bricks=0).setup())
    table = np.full((4 * CELL_Y, 6 * CELL_X), 90, np.uint8)
    hand = table.copy()
    hand[CELL_Y:2 * CELL_Y, 2 * CELL_X:3 * CELL_X] = 200  # over one cell
    put_down = table.copy()
    put_down[CELL_Y + 2:CELL_Y + 5, 2 * CELL_X + 3:2 * CELL_X + 8] = 20  # a dark print left in it

    boxes, settled = _settle(markers, [table, hand, table, table])
    assert settled and boxes == []  # the cell settled as it was before the hand

    markers = IncrementalMarkers(random_scene(5, "standard", n_minis=2, n_bricks=0).setup())
    boxes, settled = _settle(markers, [table, hand, put_down, put_down])
    assert settled and len(boxes) == 1
    x0, y0, x1, y1 = boxes[0]
    assert x0 <= 2 * CELL_X * 4 < x1 and y0 <= CELL_Y * 8 < y1  # around the cell, in frame pixels
