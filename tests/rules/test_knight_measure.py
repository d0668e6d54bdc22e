
import pytest
from hypothesis import given, strategies as st

from companion.rules.knight.measure import (edge_distance_mm, hands_needed, in_hands_and_fingers, measure,
                                            within_for_acting_side)
from companion.rules.knight.squads import squads
from tests.rules.knight_table import BLUE, RED, table, unit


def test_edge_to_edge_in_hands_and_fingers():
    # centres 265 mm apart, 25 mm bases: 265 - 12.5 - 12.5 = 240 mm = 1 hand (178) + 62 mm = 3 fingers (60) + 2 mm
    a, b = unit(1, "red", 0, 0), unit(2, "blue", 265, 0)
    m = measure(a, b, RED)
    assert (m.edge_mm, m.hands, m.fingers, m.text) == (240.0, 1, 3, "1 hand 3 fingers")
    # the same distance in a child's hand: 240 = 1 x 152 + 88 = 5 x 16 + 8
    assert measure(a, b, BLUE).text == "1 hand 5 fingers"


def test_touching_and_overlapping_bases_are_zero_apart():
    assert edge_distance_mm(unit(1, "red", 0, 0), unit(2, "red", 20, 0)) == 0.0
    assert in_hands_and_fingers(0.0, RED).text == "0 fingers"


def test_acting_side_finger_of_grace():
    # range 2 fingers (40 mm), distance 2.7 fingers (54 mm): in range; 3.0 fingers (60 mm): out
    assert within_for_acting_side(54.0, 40.0, RED)
    assert not within_for_acting_side(60.0, 40.0, RED)
    # a move of 1 hand + 0.8 finger costs 1 AP; 1 hand + 1 finger costs 2
    assert hands_needed(178 + 16, RED) == 1
    assert hands_needed(178 + 20, RED) == 2
    assert hands_needed(0, RED) == 0


def test_squads_are_connected_components_within_two_fingers():
    # red 1-2 are 40 mm apart edge to edge (2 fingers exactly: a squad), 2-3 also, 3-4 are 41 mm apart
    units = [unit(1, "red", 0, 0), unit(2, "red", 65, 0), unit(3, "red", 130, 0), unit(4, "red", 196, 0),
             unit(5, "blue", 30, 30)]
    assert squads(table(*units)) == [[1, 2, 3], [4], [5]]


def test_knocked_over_units_are_dead_and_in_no_squad():
    units = [unit(1, "red", 0, 0), unit(2, "red", 65, 0, tilt=80)]
    assert squads(table(*units)) == [[1]]


@given(st.floats(0, 2000), st.floats(10, 300), st.floats(5, 40))
def test_hands_and_fingers_never_overstate(edge, hand, finger):
    m = in_hands_and_fingers(edge, RED.__class__("p", hand, finger))
    shown = m.hands * hand + m.fingers * finger
    assert shown <= edge + 1e-9  # rounded down: never more than the real distance
    assert edge - m.hands * hand < hand + 1e-6  # whole hands first
    assert edge - shown < finger + 1e-6  # what is left over is under a finger


@given(st.lists(st.tuples(st.floats(0, 600), st.floats(0, 400)), min_size=1, max_size=8))
def test_squads_partition_units_and_are_symmetric(points):
    units = [unit(i + 1, "red", x, y) for i, (x, y) in enumerate(points)]
    groups = squads(table(*units))
    assert sorted(i for g in groups for i in g) == [u.id for u in units]
    reversed_groups = squads(table(*reversed(units)))
    assert sorted(map(tuple, groups)) == sorted(map(tuple, reversed_groups))


@given(st.floats(-500, 500), st.floats(-500, 500), st.floats(-500, 500), st.floats(-500, 500),
       st.sampled_from([25.0, 32.0, 40.0]), st.sampled_from([25.0, 55.0]))
def test_measure_is_symmetric(x1, y1, x2, y2, base1, base2):
    a, b = unit(1, "red", x1, y1, base=base1), unit(2, "blue", x2, y2, base=base2)
    assert measure(a, b, RED) == measure(b, a, RED)
    assert edge_distance_mm(a, b) >= 0


@given(st.floats(0, 400), st.floats(1, 400))
def test_tolerance_edge_is_exactly_one_finger(threshold, finger):
    profile = RED.__class__("p", 178.0, finger)
    assert within_for_acting_side(threshold + finger * 0.999, threshold, profile)
    assert not within_for_acting_side(threshold + finger, threshold, profile)
    assert within_for_acting_side(threshold, threshold, profile)


@given(st.lists(st.tuples(st.floats(0, 400), st.floats(0, 300), st.booleans()), min_size=1, max_size=9))
def test_squads_are_exactly_the_connected_components(points):
    """Brute force: two units are in one squad iff a chain of same-player links of <= 2 fingers joins them."""
    units = [unit(i + 1, "red" if red else "blue", x, y) for i, (x, y, red) in enumerate(points)]
    finger = {"red": RED.finger_mm, "blue": BLUE.finger_mm}  # each squad in its owner's fingers
    linked = {(a.id, b.id) for a in units for b in units
              if a.player == b.player and edge_distance_mm(a, b) <= 2 * finger[a.player]}
    reach = {u.id: {u.id} for u in units}
    for _ in units:  # transitive closure by repeated relaxation
        for a, b in linked:
            reach[a] |= reach[b]
    expected = sorted({tuple(sorted(r)) for r in reach.values()})
    assert sorted(tuple(g) for g in squads(table(*units))) == expected


def test_a_hand_from_a_preset_a_typed_span_or_markers_and_an_impossible_one_refused():
    from companion.errors import InputError
    from companion.rules.knight.measure import hand_size

    assert hand_size("child") == hand_size(preset="child") and hand_size("child").hand_mm == 152.0
    typed = hand_size(hand_mm=190.04)
    assert (typed.hand_mm, typed.finger_mm) == (190.0, round(190.0 * 20 / 178, 1)) and "adult proportion" in typed.how
    spread = hand_size(hand_mm=171.26, finger_mm=18.0, span_how="markers 30 and 31 at the thumb and index tips")
    assert (spread.hand_mm, spread.finger_mm) == (171.3, 18.0) and spread.how.startswith("markers 30 and 31")
    assert spread.to_json() == {"hand_mm": 171.3, "finger_mm": 18.0, "how": spread.how}
    for bad in (dict(hand_mm=900.0), dict(hand_mm=170.0, finger_mm=2.0), dict(preset="giant"), {}):
        with pytest.raises(InputError):
            hand_size(**bad)
