"""The rules' view of a table state: a unit that cannot be answered for says why, and where to look."""

import pytest

from companion.errors import InputError
from companion.rules.table import Table
from companion.setup_file import MiniSpec, PlayerSpec, Setup, TableSpec
from companion.state import MiniState, TableState


def _table() -> Table:
    setup = Setup(path="club/table.toml", table=TableSpec(1200.0, 800.0), dictionary="DICT_4X4_50", anchors=(),
                  camera=None, players=(PlayerSpec("red"),), minis=(MiniSpec(id=4, name="orc", marker_mm=20.0, player="red"),))
    state = TableState(registered=True, minis=(MiniState(4, 100.0, 100.0, 40.0, 90.0), MiniState(8, 300.0, 100.0, 40.0, 90.0)))
    return Table.from_state(state, setup)


def test_a_unit_placed_but_not_in_the_roster_names_the_setup_file():
    with pytest.raises(InputError) as raised:
        _table().unit(8)
    assert "club/table.toml" in str(raised.value) and "[[minis]]" in str(raised.value)


def test_a_unit_not_placed_lists_the_units_seen():
    with pytest.raises(InputError, match=r"unit 9: not on the table \(units seen: \[4\]\)"):
        _table().unit(9)


def test_a_unit_beyond_the_tables_edge_is_not_in_play_and_says_where_it_was_seen():
    setup = Setup(path="club/table.toml", table=TableSpec(1200.0, 800.0), players=(PlayerSpec("red"),),
                  minis=(MiniSpec(id=4, name="orc", player="red"), MiniSpec(id=5, name="elf", player="red")))
    state = TableState(registered=True, minis=(MiniState(4, -85.0, 100.0, 40.0, 90.0),  # set aside, by the edge
                                               MiniState(5, 1205.0, 400.0, 40.0, 90.0)))  # its base over the edge
    table = Table.from_state(state, setup)
    assert table.unit(5).centre == (1205.0, 400.0)
    with pytest.raises(InputError, match=r"unit 4: off the table, seen at \(-85, 100\) mm, 85 mm beyond its edge "
                                         r"\(the table of club/table.toml\)"):
        table.unit(4)
    assert [u.id for u in table.units] == [5]


def test_how_deep_a_line_crosses_a_footprint_and_how_far_it_passes_beside_one():
    """An L-shaped wall's outline: the depth is the greatest distance from the outline of a point
    of the line inside it, over every part of the line inside (it leaves the L and enters it again)."""
    from companion.rules.geometry import boxes_apart, crossing_depth, segment_polygon_distance

    ell = ((0.0, 0.0), (40.0, 0.0), (40.0, 8.0), (8.0, 8.0), (8.0, 40.0), (0.0, 40.0))
    assert crossing_depth((-10.0, 20.0), (50.0, 20.0), ell) == pytest.approx(4.0, abs=0.15)  # across the 8 mm arm
    assert crossing_depth((-10.0, 4.0), (50.0, 4.0), ell) == pytest.approx(4.0, abs=0.15)  # along the other
    assert crossing_depth((20.0, -10.0), (20.0, 2.0), ell) == pytest.approx(2.0, abs=0.15)  # ends 2 mm inside
    assert crossing_depth((-10.0, 41.0), (50.0, 41.0), ell) == 0.0
    assert segment_polygon_distance((-10.0, 41.0), (50.0, 41.0), ell) == pytest.approx(1.0)
    assert segment_polygon_distance((20.0, 20.0), (30.0, 30.0), ell) == pytest.approx(12.0)  # the L's yard
    assert segment_polygon_distance((-10.0, 4.0), (50.0, 4.0), ell) == 0.0
    # the cheap test before the exact distance never parts what is nearer than its margin
    assert not boxes_apart((-10.0, 41.0), (50.0, 41.0), ell, 1.5) and boxes_apart((-10.0, 41.0), (50.0, 41.0), ell, 1.0)
    assert not boxes_apart((20.0, 20.0), (30.0, 30.0), ell, 1.5)  # boxes overlap, the L's yard 12 mm away
