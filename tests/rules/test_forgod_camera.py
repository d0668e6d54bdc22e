"""Frame -> squares, end to end: rendered cards (flat markers on a printed battlefield) located by
the real pipeline and read into squares, against the synthetic truth; cards 2 mm from a line."""

from dataclasses import replace

import pytest

from companion.rules.forgod.squares import place
from companion.rules.table import Table
from companion.synth.battlefield import BOARD, base_scene, battlefield_setup, square_centre
from companion.synth.render import Renderer
from companion.vision.locator import Locator

pytestmark = pytest.mark.slow

EDGE_MM = 2.0  # the card's centre this far inside its square's line
HALF_W, HALF_D = BOARD.square_w_mm / 2, BOARD.square_d_mm / 2


def test_rendered_cards_land_in_their_squares_even_2_mm_from_a_line():
    base = base_scene()
    setup = battlefield_setup(base)
    # every card pushed to within 2 mm of one of its square's four lines (and one corner)
    pushes = {4: (HALF_W - EDGE_MM, 0.0), 5: (-(HALF_W - EDGE_MM), 0.0), 6: (0.0, HALF_D - EDGE_MM),
              20: (0.0, -(HALF_D - EDGE_MM)), 21: (HALF_W - EDGE_MM, HALF_D - EDGE_MM), 22: (0.0, 0.0)}
    squares = {4: (3, 1), 5: (2, 2), 6: (4, 1), 20: (3, 4), 21: (2, 3), 22: (5, 3)}
    cards = []
    for m in base.minis:
        x, y = square_centre(squares[m.id], *pushes[m.id])
        cards.append(replace(m, x_mm=x, y_mm=y))
    scene = replace(base, minis=tuple(cards))
    frame = Renderer().render(scene)
    state = Locator(setup).locate(frame)
    assert state.registered
    placed = place(setup.rules, Table.from_state(state, setup))
    for m in scene.minis:
        truth = BOARD.square_at(m.x_mm, m.y_mm)
        seen = next(s for s in state.minis if s.id == m.id)
        assert abs(seen.x_mm - m.x_mm) < EDGE_MM and abs(seen.y_mm - m.y_mm) < EDGE_MM, (m.id, seen, m)
        assert placed[m.id].square == truth == squares[m.id], m.id


def test_curled_cards_tilted_8_to_35_deg_stay_in_their_squares():
    import math

    from companion.synth.battlefield import MARKER_MM

    base = base_scene()
    setup = battlefield_setup(base)
    half = MARKER_MM * (6 + 2) / 6 / 2  # the printed tile: a 4x4 marker (6 modules with its border) and a margin
    tilts = {4: (12, 0), 5: (0, 0), 6: (25, 90), 20: (8, 45), 21: (15, 200), 22: (35, 300)}
    cards = tuple(replace(m, tilt_deg=t, tilt_towards_deg=d, base_mm=10.0, z_mm=0.6 + half * math.sin(math.radians(t)))
                  for m in base.minis for t, d in [tilts[m.id]])  # one edge on the table, the other lifted
    scene = replace(base, minis=cards)
    state = Locator(setup).locate(Renderer().render(scene))
    placed = place(setup.rules, Table.from_state(state, setup))
    for m in scene.minis:
        seen = next(s for s in state.minis if s.id == m.id)
        assert math.hypot(seen.x_mm - m.x_mm, seen.y_mm - m.y_mm) < 4.0, (m.id, seen)
        assert abs(seen.tilt_deg - m.tilt_deg) < 5.0 or m.tilt_deg < 10  # a flat marker's tilt is noisy
        assert placed[m.id].square == BOARD.square_at(m.x_mm, m.y_mm), m.id
