import math
from dataclasses import replace

from companion.rules.geometry import point_in_polygon
from companion.rules.knight.moves import climb_ap, outlines, path_cost, reach
from companion.rules.knight.referee import fortifications, knocked_over, sealed
from tests.rules.knight_table import RED, block, table, unit


def inside(regions, k, point):
    return any(point_in_polygon(point, poly) for poly in regions[k - 1].polygons)


def test_path_cost_walks_by_hands_and_climbs_blocks():
    t = table(unit(1, "red", 0, 0), blocks=[block(3, 100, -50, 120, 50, 9.6), block(4, 200, -50, 220, 50, 48)])
    # 150 mm straight: 1 hand; crosses the 9.6 mm wall (partial for a 40 mm unit): +1 AP
    cost = path_cost(t, t.unit(1), [(0, 0), (150, 0)], RED)
    assert (cost.walk_ap, cost.climbs, cost.ap) == (1, ((3, 1),), 2)
    # 250 mm: 2 hands; also onto the 48 mm wall (full for 40 mm): 2 AP x ceil(48 / 40) = 4
    cost = path_cost(t, t.unit(1), [(0, 0), (250, 0)], RED)
    assert cost.ap == 2 + 1 + 4 and climb_ap(t.blocks[1], t.unit(1)) == 4


def test_open_table_reach_is_a_disc_of_hands():
    t = table(unit(1, "red", 500, 400))
    regions = reach(t, 1, 2, RED)
    assert inside(regions, 1, (500 + 170, 400)) and not inside(regions, 1, (500 + 205, 400))
    assert inside(regions, 2, (500 + 350, 400)) and not inside(regions, 2, (500 + 380, 400))
    # area of the 1 AP region: a disc of 1 hand + 1 finger (grace) = 198 mm: pi * 198^2 = 123,000 mm2 (grid: +-5%)
    assert abs(regions[0].area_mm2 - math.pi * 198 ** 2) / (math.pi * 198 ** 2) < 0.05


def test_a_tall_wall_is_walked_around_or_climbed_at_a_price():
    # a 48 mm wall 400 mm long right in front of the unit
    t = table(unit(1, "red", 500, 400), blocks=[block(9, 540, 200, 560, 600, 48)])
    regions = reach(t, 1, 3, RED)
    behind = (620, 400)
    # climbing costs 2 AP x ceil(48 / 40) = 4 AP: too dear. Around the wall's end, the base clearing it by
    # 12.5 mm: to (550, 187.5) is 218 mm, then to (620, 400) 224 mm: 442 mm = 2.5 hands -> 3 AP.
    assert not inside(regions, 2, behind)  # 2 hands + a finger = 376 mm < 442
    assert inside(regions, 3, behind)
    assert inside(regions, 3, (500, 400 + 500))  # along the wall, 500 mm: 3 hands


def test_sarcophagus():
    walls = [block(1, 60, 60, 140, 70, 19.2), block(2, 60, 130, 140, 140, 19.2),
             block(3, 60, 60, 70, 140, 19.2), block(4, 130, 60, 140, 140, 19.2)]
    boxed = table(unit(1, "red", 100, 100), blocks=walls)
    assert sealed(boxed, boxed.unit(1))
    # open one side wider than the 25 mm base
    opened = table(unit(1, "red", 100, 100), blocks=walls[:3] + [block(4, 130, 60, 140, 80, 19.2), block(5, 130, 120, 140, 140, 19.2)])
    assert not sealed(opened, opened.unit(1))
    # a gap of 20 mm (narrower than the base) still seals
    narrow = table(unit(1, "red", 100, 100), blocks=walls[:3] + [block(4, 130, 60, 140, 90, 19.2), block(5, 130, 110, 140, 140, 19.2)])
    assert sealed(narrow, narrow.unit(1))


def test_fortifications_within_three_fingers_cost_one_ap_per_brick():
    before = table(unit(1, "red", 100, 100), unit(2, "blue", 600, 100), blocks=[block(1, 300, 300, 332, 316, 9.6)])
    after = table(*before.units, blocks=[block(1, 300, 300, 332, 316, 19.2),  # a brick stacked on block 1
                                         block(2, 150, 90, 182, 106, 9.6),  # 37.5 mm from unit 1: within 60 + 20
                                         block(3, 400, 400, 432, 416, 9.6)])  # far from every red unit
    found = {f.block: f for f in fortifications(before, after, "red")}
    assert found[2].in_reach and found[2].bricks == 1
    assert not found[3].in_reach and "out of reach" in found[3].why
    assert found[1].bricks == 1 and not found[1].in_reach
    assert sum(f.bricks for f in found.values()) == 3


def test_a_block_hidden_under_a_unit_that_climbed_onto_it_is_no_fortification():
    """Unit 1 climbed onto block 1 (seen at the turn's start) and its card hides it whole now: the
    camera reports a block hidden under it whose footprint is a guess, off the seen one's centre;
    that is block 1, not a brick placed. A block hidden under a unit where none stood is one."""
    before = table(unit(1, "red", 100, 100), unit(2, "red", 500, 100), blocks=[block(1, 300, 300, 364, 316, 19.2)])
    after = table(unit(1, "red", 310, 308), unit(2, "red", 500, 100),
                  blocks=[replace(block(5, 296, 296, 320, 320, 19.2), hidden_under=1),
                          replace(block(6, 488, 88, 512, 112, 9.6), hidden_under=2)])
    assert [f.block for f in fortifications(before, after, "red")] == [6]


def test_knocked_over_units():
    t = table(unit(1, "red", 0, 0, tilt=70), unit(2, "red", 100, 0, tilt=10))
    assert [u.id for u in knocked_over(t)] == [1]


def test_a_squad_moves_as_far_as_its_slowest_member_allows():
    # unit 2 is boxed in by 48 mm walls (climbing: 2 AP x ceil(48 / 40) = 4 AP); unit 1 stands outside,
    # 165 - 100 - 25 = 40 mm from it: a squad. Alone, unit 1 walks a hand; with its squad it cannot move.
    walls = [block(1, 60, 60, 140, 70, 48), block(2, 60, 130, 140, 140, 48),
             block(3, 60, 60, 70, 140, 48), block(4, 130, 60, 140, 140, 48)]
    t = table(unit(1, "red", 165, 100), unit(2, "red", 100, 100), blocks=walls)
    alone = reach(t, 1, 1, RED)
    together = reach(t, 1, 1, RED, squad=True)
    assert inside(alone, 1, (300, 100)) and alone[0].area_mm2 > 50_000
    # the box is 60 mm inside for a 25 mm base: the squad can only shuffle a cell or so (9 cells of 10 mm)
    assert not inside(together, 1, (300, 100)) and together[0].area_mm2 <= 900


def test_bounds_keep_the_base_on_the_table():
    t = table(unit(1, "red", 30, 30))
    regions = reach(t, 1, 1, RED, bounds_mm=(1200, 800))
    assert not inside(regions, 1, (5, 30)) and inside(regions, 1, (20, 30))


def _inside_outlines(loops, point) -> bool:
    return sum(point_in_polygon(point, loop) for loop in loops) % 2 == 1  # even-odd: holes are loops too


def _signed_area(loop) -> float:
    return sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(loop, loop[1:] + loop[:1])) / 2


def test_a_regions_outline_is_its_cells_without_the_stair_steps():
    cells = {(i, j) for i in range(-20, 21) for j in range(-20, 21) if math.hypot(i, j) <= 19.5}
    cells -= {(i, j) for i in range(-3, 4) for j in range(-25, 26)}  # a strip cut out: two halves
    cells -= {(i, j) for i in range(8, 13) for j in range(-2, 3)}  # and a hole in one of them
    loops = [list(loop) for loop in outlines(cells, (0.0, 0.0), 10.0)]
    assert len(loops) == 2 + 1
    assert sorted(_signed_area(loop) > 0 for loop in loops) == [False, True, True]  # the hole runs clockwise
    area = sum(_signed_area(loop) for loop in loops)
    assert abs(area - len(cells) * 100.0) < 0.02 * len(cells) * 100.0
    centre = lambda i, j: ((i + 0.5) * 10.0, (j + 0.5) * 10.0)  # noqa: E731
    all_cells = [(i, j) for i in range(-22, 23) for j in range(-22, 23)]
    wrong = [c for c in all_cells if _inside_outlines(loops, centre(*c)) != (c in cells)]
    assert len(wrong) <= 0.01 * len(cells)
    for loop in loops:  # a grid's edge turns by 90 degrees at every step; this one turns gently
        for a, b, c in zip(loop[-1:] + loop[:-1], loop, loop[1:] + loop[:1]):
            turn = math.degrees(abs(math.remainder(math.atan2(c[1] - b[1], c[0] - b[0])
                                                   - math.atan2(b[1] - a[1], b[0] - a[0]), math.tau)))
            assert turn < 46.0


def test_reach_carries_the_outline_of_each_region():
    t = table(unit(1, "red", 500, 400), blocks=[block(9, 540, 200, 560, 600, 48)])
    regions = reach(t, 1, 2, RED)
    for region in regions:
        assert region.outlines
        assert all(_inside_outlines(region.outlines, p) == inside(regions, region.ap, p)
                   for p in [(500 + dx, 400 + dy) for dx in range(-390, 391, 37) for dy in range(-390, 391, 41)]
                   if min(abs(math.hypot(p[0] - 500, p[1] - 400) - r) for r in (198, 376)) > 15
                   and not 520 < p[0] < 580)
