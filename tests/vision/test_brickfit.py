"""Box fitting geometry: walls and top faces in the cast view, step fits, and a whole fit on an
analytic table (no camera, no OpenCV: the sampler paints the cast view from the geometry)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from companion.vision.brickfit import (EDGE_BLUR_PX, PLATE_MM, BoxFit, TableRect, fit_box, normal_cdf, shadow_penalty,
                                       snap_side, step_fit, top_face, wall_and_shadow_fit, wall_penalty, wall_told_from_table,
                                       wall_width_mm, with_shadows)

FOOT = np.array([0.0, 0.0])
CZ = 1100.0


def test_a_near_wall_is_its_distance_times_height_over_the_rest_of_the_camera_height():
    # A side 300 mm from the foot, facing it, of a stack one brick high.
    assert wall_width_mm(-300.0, 9.6, CZ) == pytest.approx(300.0 * 9.6 / (CZ - 9.6))
    assert wall_width_mm(300.0, 9.6, CZ) == 0.0  # facing away: its wall is hidden


def test_the_top_face_is_the_footprint_cast_from_the_camera():
    # A 2x4 brick 9.6 high at (300, 100): its silhouette boxes footprint and cast top together.
    footprint = TableRect(np.array([300.0, 100.0]), np.array([1.0, 0.0]), (15.9, 7.9))
    k = CZ / (CZ - 9.6)
    cast_top = footprint.scaled_about(FOOT, k)
    corners = np.concatenate([footprint.corners(), cast_top.corners()])
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    silhouette = TableRect((lo + hi) / 2, np.array([1.0, 0.0]), tuple((hi - lo) / 2))
    top = top_face(silhouette, FOOT, 9.6, CZ)
    assert np.allclose(top.corners(), cast_top.corners(), atol=1e-9)
    # and the footprint is the top uncast
    assert np.allclose(top.scaled_about(FOOT, 1 / k).corners(), footprint.corners(), atol=1e-9)


def test_rect_from_its_own_corners_and_from_its_side_lines():
    rect = TableRect(np.array([10.0, -4.0]), np.array([math.cos(0.3), math.sin(0.3)]), (12.0, 5.0))
    again = TableRect.from_quad(rect.corners())
    assert np.allclose(again.corners(), rect.corners())
    lines = [(n, float(n @ (rect.centre + n * off))) for n, _, off, _ in rect.sides()]
    assert np.allclose(TableRect.from_lines(lines).corners(), rect.corners())


@pytest.mark.parametrize("length_mm, studs, off_mm", [(31.8, 4, 0.0), (7.8, 1, 0.0), (48.3, 6, 0.5), (2.0, 1, -5.8)])
def test_snap_side(length_mm, studs, off_mm):
    n, off = snap_side(length_mm)
    assert n == studs and off == pytest.approx(off_mm)


def test_step_fit_places_a_blurred_step_to_a_hundredth_of_a_millimetre():
    u = np.arange(-3.0, 3.0, 0.25)
    sigma = 0.5
    truth = 0.37
    profile = (40 + 100 * normal_cdf((u - truth) / sigma))[:, None]
    deltas = np.arange(-1.0, 1.0 + 1e-9, 0.01)
    sse, levels = step_fit(profile, u, deltas[:, None], sigma)
    assert deltas[np.argmin(sse)] == pytest.approx(truth, abs=0.011)
    assert levels[np.argmin(sse), :, 0] == pytest.approx([40, 140], abs=0.5)


def test_a_wall_must_be_its_top_in_shade():
    edges = np.array([[0.0, 2.0], [0.0, 2.0]])
    top = np.array([100.0, 20.0, -10.0])
    shaded = np.stack([top, 0.55 * top, np.array([60.0, 0.0, 0.0])])
    table_coloured = np.stack([top, np.array([60.0, 0.0, 0.0]), np.array([60.0, 0.0, 0.0])])
    pen = wall_penalty(np.stack([shaded, table_coloured]), edges)
    assert pen[0] == pytest.approx(0.0, abs=1e-9) and pen[1] > 100.0


class PaintedTable:
    """The cast view of one brick on a plain table, blurred like a camera: colour at any table point."""

    def __init__(self, footprint: TableRect, height_mm: float, top=(200.0, 30.0, -20.0), walls=(120.0, 18.0, -12.0),
                 table=(90.0, -5.0, 5.0), px_per_mm: float = 1.4, shadow_per_mm: np.ndarray | None = None,
                 shadow_light: float = 0.3) -> None:
        self.footprint, self.height = footprint, height_mm
        self.top_rect = footprint.scaled_about(FOOT, CZ / (CZ - height_mm))
        self.top, self.walls, self.table = (np.array(v) for v in (top, walls, table))
        self.px_per_mm = px_per_mm
        # a lamp's shadow on the table: the footprint swept by the shadow's reach per mm of height
        self.shadow = None if shadow_per_mm is None else np.asarray(shadow_per_mm, float) * height_mm
        self.shadow_light = shadow_light
        rng = np.random.default_rng(0)
        self.offsets = rng.normal(0.0, EDGE_BLUR_PX / px_per_mm, (48, 2))

    def _inside(self, rect: TableRect, pts: np.ndarray) -> np.ndarray:
        rel = pts - rect.centre
        return (np.abs(rel @ rect.axis) <= rect.half_mm[0]) & (np.abs(rel @ rect.across) <= rect.half_mm[1])

    def _hull(self, pts: np.ndarray) -> np.ndarray:
        # The box seen from the camera covers every point between a footprint point and its cast top.
        inside = self._inside(self.footprint, pts) | self._inside(self.top_rect, pts)
        for t in np.linspace(0.0, 1.0, 9):
            k = 1 + t * (CZ / (CZ - self.height) - 1)
            inside |= self._inside(self.footprint.scaled_about(FOOT, k), pts)
        return inside

    def __call__(self, points_mm: np.ndarray) -> np.ndarray:
        shape = points_mm.shape[:-1]
        pts = points_mm.reshape(-1, 2)
        out = np.zeros((len(pts), 3))
        for off in self.offsets:  # blur: the mean over jittered points
            p = pts + off
            colour = np.broadcast_to(self.table, (len(p), 3)).copy()
            if self.shadow is not None:
                shade = np.zeros(len(p), bool)
                for t in np.linspace(0.0, 1.0, 25):
                    shade |= self._inside(TableRect(self.footprint.centre + t * self.shadow, self.footprint.axis,
                                                    self.footprint.half_mm), p)
                colour[shade] = self.shadow_light * self.table
            colour[self._hull(p)] = self.walls
            colour[self._inside(self.top_rect, p)] = self.top
            out += colour
        return (out / len(self.offsets)).reshape(shape + (3,))


@pytest.mark.parametrize("height_mm", [3.2, 9.6, 19.2, 28.8])
def test_a_painted_brick_gives_back_its_footprint_and_height(height_mm):
    axis = np.array([math.cos(math.radians(20)), math.sin(math.radians(20))])
    footprint = TableRect(np.array([260.0, 180.0]), axis, (15.9, 7.9))  # a 2x4 brick 320 mm from the foot
    painted = PaintedTable(footprint, height_mm)
    start = TableRect(painted.top_rect.centre + [0.6, -0.4], axis, (15.4, 7.5))  # a rough top face
    fit = fit_box(painted, start, FOOT, CZ, lambda p, d: painted.px_per_mm, start_is_top=True)
    assert fit is not None
    assert fit.height_mm == pytest.approx(height_mm, abs=PLATE_MM / 2)
    assert np.abs(fit.footprint.corners() - footprint.corners()).max() < 0.5
    assert fit.height_confidence > 0.9


@pytest.mark.parametrize("height_mm", [9.6, 19.2, 28.8])
def test_a_lamps_deep_shadow_along_a_near_wall_is_not_read_as_more_wall(height_mm):
    # A white brick under a lamp beyond it: its walls facing the camera are in shade, and its
    # shadow (0.4 mm a mm of height, a third of the table's light) lies along them, towards the
    # camera's foot. Fitted as top | wall | table, wall and shadow together read as a wall a
    # brick or two taller (as a path-traced white 2x4 of 9.6 mm read 25.6).
    axis = np.array([math.cos(math.radians(20)), math.sin(math.radians(20))])
    footprint = TableRect(np.array([260.0, 180.0]), axis, (15.9, 7.9))
    towards_foot = -footprint.centre / np.linalg.norm(footprint.centre)
    painted = PaintedTable(footprint, height_mm, top=(235.0, 0.0, 0.0), walls=(110.0, 0.0, 0.0),
                           table=(120.0, -6.0, 8.0), shadow_per_mm=0.4 * towards_foot)
    start = TableRect(painted.top_rect.centre + [0.6, -0.4], axis, (15.4, 7.5))
    fit = fit_box(painted, start, FOOT, CZ, lambda p, d: painted.px_per_mm, start_is_top=True)
    assert fit is not None
    assert fit.height_mm == pytest.approx(height_mm, abs=PLATE_MM / 2)
    assert np.abs(fit.footprint.corners() - footprint.corners()).max() < 0.6


def test_the_wall_and_shadow_fit_is_the_step_fit_of_its_three_edges():
    rng = np.random.default_rng(3)
    u = np.arange(-4.0, 20.0, 0.25)
    for shared_outer in (True, False):
        outer = rng.uniform(0.5, 6.0, (1, 5)).repeat(4, axis=0) if shared_outer else rng.uniform(0.5, 6.0, (4, 5))
        walls = np.stack([outer - rng.uniform(0.5, 3.0, (4, 5)), outer], axis=-1)  # (heights, placements, 2)
        for profiles in (rng.normal(100, 30, (len(u), 3)), rng.normal(100, 30, (4, len(u), 3))):
            sse, levels = wall_and_shadow_fit(profiles, u, walls, 0.6)
            edges = with_shadows(walls.reshape(-1, 2))
            each = profiles if profiles.ndim == 2 else np.repeat(profiles, len(edges) // 4, axis=0)
            sse_step, levels_step = step_fit(each, u, edges, 0.6)
            assert np.allclose(sse.reshape(-1), sse_step, rtol=1e-9, atol=1e-6)
            assert np.allclose(levels.reshape(-1, 4, 3), levels_step, atol=1e-4)


def test_a_shadow_is_the_tables_colour_with_less_light_and_darker_than_its_wall():
    edges = np.array([[0.0, 3.0, 8.0]] * 4)
    table = np.array([120.0, -6.0, 8.0])
    top, wall = np.array([235.0, 0.0, 0.0]), np.array([110.0, 0.0, 0.0])
    shadow = 0.3 * table
    green_wall = np.array([40.0, -20.0, -15.0])  # a dark wall of another colour, taken for a shadow
    pale = 0.8 * table  # a light shade: not told from the table
    as_dark_as_wall = np.array([100.0, -5.0, 6.7])  # a wall's outer part: no darker than the wall
    levels = np.stack([np.stack([top, wall, s, table]) for s in (shadow, green_wall, pale, as_dark_as_wall)])
    penalty = shadow_penalty(levels, edges)
    assert penalty[0] == pytest.approx(0.0, abs=1e-6)
    assert all(p > 1000.0 for p in penalty[1:])
    # On wood, a tower's dark green course under its yellow top: dark, so little colour in
    # absolute terms, but of another chromaticity than the wood's. Its cost outweighs a whole
    # profile's misfit (5-10 thousand in these units), not a fraction of it.
    wood, yellow = np.array([103.0, 16.6, -15.0]), np.array([200.0, 10.0, -45.0])
    course = np.array([38.0, -6.5, -3.7])
    wood_levels = np.stack([np.stack([yellow, 0.5 * yellow, s, wood]) for s in (0.3 * wood, course)])
    on_wood = shadow_penalty(wood_levels, edges[:2])
    assert on_wood[0] == pytest.approx(0.0, abs=1e-6) and on_wood[1] > 10000.0


def test_profiles_that_cross_an_adjoining_part_of_a_wall_are_left_out():
    from companion.vision.brickfit import _adjoining_run, _clear_of

    # a side along x at y = 8 (outward +y), t from its middle; another arm stands on it at x 16..32
    other = TableRect(np.array([24.0, 32.0]), np.array([0.0, 1.0]), (24.0, 8.0))
    run = _adjoining_run(other, np.array([0.0, 8.0]), np.array([0.0, 1.0]), np.array([1.0, 0.0]), 4.0)
    assert run == pytest.approx((14.0, 34.0))
    # an arm behind the side (flush with it, on the inside) does not block it
    assert _adjoining_run(TableRect(np.array([0.0, 0.0]), np.array([1.0, 0.0]), (8.0, 8.0)), np.array([0.0, 8.0]),
                          np.array([0.0, 1.0]), np.array([1.0, 0.0]), 4.0) is None
    lo, hi = _clear_of(np.array([-31.0, -20.0]), np.array([31.0, 20.0]), (run,))
    assert list(lo) == [-31.0, -20.0] and list(hi) == [14.0, 14.0]  # the longer clear piece


def test_a_heights_shares_hold_when_another_height_costs_far_less():
    """A touching brick raised to 41.6 mm where its shadows ruled the lower heights out kept the
    lower heights' costs, down to -1900 against its own (ray-cast hands seed 1, table 2):
    exp(1900) overflowed and its height's confidence and range came out NaN. The shares are the
    same at any offset of the costs, and a height ruled out (infinite cost) has none."""
    top = TableRect(np.array([100.0, 100.0]), np.array([1.0, 0.0]), (15.9, 7.9))
    costs = {3.2: -1897.3, 6.4: -1893.2, 38.4: -869.2, 41.6: 0.0, 44.8: 122.4}
    box = BoxFit(top=top, silhouette=top, height_mm=41.6, footprint=top, height_cost=costs)
    assert box.height_confidence == pytest.approx(0.0, abs=1e-9)
    assert box.height_range_mm == (3.2, 41.6)
    shifted = BoxFit(top=top, silhouette=top, height_mm=41.6, footprint=top,
                     height_cost={h: c + 5.0 for h, c in {41.6: 0.0, 44.8: 1.0, 38.4: 2.0}.items()})
    alike = BoxFit(top=top, silhouette=top, height_mm=41.6, footprint=top, height_cost={41.6: 0.0, 44.8: 1.0, 38.4: 2.0})
    assert shifted.height_confidence == pytest.approx(alike.height_confidence)
    ruled_out = BoxFit(top=top, silhouette=top, height_mm=41.6, footprint=top,
                       height_cost={3.2: math.inf, 41.6: 0.0, 54.4: 1.0})
    assert ruled_out.height_confidence == pytest.approx(1 / (1 + math.exp(-1.0)))
    assert ruled_out.height_range_mm[0] == 41.6


def test_a_wall_in_shade_nearer_its_tops_colour_than_the_tables_is_told_from_the_tables_shade():
    """Levels (luma, two colour differences) across a green 1x4 brick's near side on white tiles
    (ray-cast w/t/t seed 5 table 1): its wall in shade is nearly gray, 0.16 from the table's
    chromaticity (under TOLD_BY_COLOUR), yet 2.6 times nearer its green top's; a gray brick's
    wall on a gray table is near both and is not told."""
    table = np.array([[176.0, 0.8, -3.5]])
    assert wall_told_from_table(np.array([[46.0, -6.8, -3.6]]), np.array([[84.0, -17.6, -6.8]]), table)[0]
    assert not wall_told_from_table(np.array([[46.0, 0.5, -1.0]]), np.array([[120.0, 1.0, -3.0]]), table)[0]
