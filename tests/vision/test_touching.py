"""Touching bricks fitted together on a colour map (`vision.touching`), checked on maps drawn from
known boxes by an independent route: each point's ray stepped upwards in 0.1 mm steps until it
is inside a box, instead of the closed-form entry heights the fit uses."""

from __future__ import annotations

import numpy as np
import pytest

from companion.vision.brickfit import TableRect
from companion.vision.touching import TABLE, UNKNOWN, Rays, agreement, courses_agreement, fit_touching

FOOT = np.array([600.0, 400.0])
CAMERA_MM = 1000.0


def _brick(centre, studs_long: int, studs_short: int, turn_deg: float) -> TableRect:
    a = np.radians(turn_deg)
    return TableRect(np.asarray(centre, float), np.array([np.cos(a), np.sin(a)]),
                ((8 * studs_long - 0.2) / 2, (8 * studs_short - 0.2) / 2))


def _marched_labels(points: np.ndarray, boxes: list[tuple[TableRect, float]]) -> np.ndarray:
    """Which box each point's ray meets first coming down from the camera, by marching it."""
    labels = np.full(len(points), TABLE)
    highest = np.full(len(points), -1.0)
    for z in np.arange(130.0, -0.05, -0.1):
        at = points + z / CAMERA_MM * (FOOT - points)
        for i, (f, h) in enumerate(boxes):
            if z > h:
                continue
            rel = at - f.centre
            inside = (np.abs(rel @ f.axis) <= f.half_mm[0]) & (np.abs(rel @ f.across) <= f.half_mm[1])
            hit = inside & (highest < 0)
            labels[hit], highest[hit] = i, z
    return labels


def _grid(centre, half_mm: float = 45.0, step_mm: float = 1.0) -> np.ndarray:
    xs = np.arange(-half_mm, half_mm + 1e-9, step_mm)
    gx, gy = np.meshgrid(xs, xs)
    return np.stack([gx.ravel(), gy.ravel()], axis=1) + np.asarray(centre, float)


def test_entry_heights_agree_with_marching_the_rays():
    turn = np.radians(20)
    beside = np.array([-np.sin(turn), np.cos(turn)]) * 16.0  # long sides touching, 0.2 mm apart
    boxes = [(_brick((300, 250), 4, 2, 20), 28.8), (_brick(np.array([300, 250]) + beside, 4, 2, 20), 9.6)]
    points = _grid((300, 255))
    rays = Rays(points, FOOT, CAMERA_MM)
    entries = np.array([rays.entry_heights([f], np.array([h]))[0] for f, h in boxes])
    closed = np.where(entries.max(axis=0) < 0, TABLE, np.argmax(entries, axis=0))
    marched = _marched_labels(points, boxes)
    assert np.mean(closed == marched) > 0.995  # the march's 0.1 mm steps blur the very edges


@pytest.mark.parametrize("heights", [(28.8, 9.6, 19.2), (9.6, 9.6, 28.8), (19.2, 28.8, 9.6)])
def test_a_row_of_touching_bricks_is_recovered_brick_by_brick(heights):
    turn = 35.0
    across = np.array([-np.sin(np.radians(turn)), np.cos(np.radians(turn))])
    centre = np.array([250.0, 200.0])
    truth = [(_brick(centre + d * across, 4, 2, turn), h) for d, h in zip((-16.0, 0.0, 16.0), heights)]
    points = _grid(centre, 50.0)
    labels = _marched_labels(points, truth)
    # Each part starts from its visible top as a camera would see it: the brick's top cast
    # (k about the foot), a millimetre off and not snapped.
    starts = []
    for f, h in truth:
        k = CAMERA_MM / (CAMERA_MM - h)
        top = f.scaled_about(FOOT, k)
        starts.append(TableRect(top.centre + np.array([0.8, -0.6]), top.axis, (top.half_mm[0] - 1.0, top.half_mm[1] - 1.5)))
    placed = fit_touching(points, labels, starts, FOOT, CAMERA_MM)
    for (f, h), p in zip(truth, placed):
        assert abs(p.height_mm - h) <= 3.2 + 1e-6, (h, p.height_mm)
        assert np.linalg.norm(p.footprint.centre - f.centre) < 1.5
        assert p.footprint.half_mm == pytest.approx(f.half_mm, abs=0.01)
        assert p.explained > 0.9
    assert agreement(points, labels, [(p.footprint, p.height_mm) for p in placed], FOOT, CAMERA_MM) > 0.97


def test_unknown_points_are_left_out_of_the_score():
    f, h = _brick((400, 300), 2, 2, 0), 19.2
    points = _grid((400, 300), 30.0)
    labels = _marched_labels(points, [(f, h)])
    blurred = labels.copy()
    edge = np.abs(np.linalg.norm(points - f.centre, axis=1) - 9.0) < 1.0
    blurred[edge] = UNKNOWN
    assert agreement(points, blurred, [(f, h)], FOOT, CAMERA_MM) == 1.0
    # a box a brick too high is wrong where its top would be
    assert agreement(points, labels, [(f, h + 9.6)], FOOT, CAMERA_MM) < 1.0


def test_boxes_score_as_the_parts_they_are_given_for():
    """Bricks reported for parts 0 and 2 of a map whose part 1 gave no brick: a box scores its own
    part's points, and part 1's points, which nothing reported predicts, count as wrong."""
    boxes = [(_brick((380, 300), 2, 2, 0), 9.6), (_brick((400, 300), 1, 2, 90), 9.6), (_brick((420, 300), 2, 2, 0), 9.6)]
    points = _grid((400, 300), 40.0)
    labels = _marched_labels(points, boxes)
    assert agreement(points, labels, boxes, FOOT, CAMERA_MM) == 1.0
    reported = [boxes[0], boxes[2]]
    as_parts = agreement(points, labels, reported, FOOT, CAMERA_MM, parts=[0, 2])
    share_of_part_1 = float(np.mean(labels[labels != UNKNOWN] == 1))
    assert 0 < share_of_part_1 and as_parts == pytest.approx(1.0 - share_of_part_1, abs=0.01)
    # numbered 0 and 1 instead, the second box would be scored against part 1's points
    assert agreement(points, labels, reported, FOOT, CAMERA_MM) < as_parts


def _tower_labels(points: np.ndarray, footprint: TableRect, courses: list[tuple[float, int]]) -> np.ndarray:
    """A tower's colour map by marching: courses (top height, colour label) from the table up on
    one footprint, the last one's colour on top."""
    order = [(footprint, h) for h, _ in courses]  # lowest first: the march takes the first box a point is in
    marched = _marched_labels(points, order)
    colours = np.array([label for _, label in courses])
    return np.where(marched == TABLE, TABLE, colours[np.maximum(marched, 0)])


def test_a_tower_of_coloured_courses_explains_its_colour_map():
    tower = _brick((420, 260), 2, 2, 25)
    courses = [(9.6, 1), (12.8, 2), (32.0, 1), (41.6, 2), (60.8, 0)]
    points = _grid((420, 260), 50.0)
    labels = _tower_labels(points, tower, courses)
    assert len(set(labels.tolist())) == 4  # table, three colours
    right = courses_agreement(points, labels, tower, 60.8, FOOT, CAMERA_MM)
    assert right > 0.995
    # two plates too tall or too low: its top is cast where the map shows table, or its walls' courses misplaced
    assert courses_agreement(points, labels, tower, 67.2, FOOT, CAMERA_MM) < right - 0.002
    assert courses_agreement(points, labels, tower, 54.4, FOOT, CAMERA_MM) < right - 0.002
    # one box whose walls must be its top's colour explains far less of it
    assert agreement(points, np.where(labels == TABLE, TABLE, 0), [(tower, 60.8)], FOOT, CAMERA_MM) > 0.995
    assert agreement(points, labels, [(tower, 60.8)], FOOT, CAMERA_MM) < right - 0.01


def test_touching_bricks_side_by_side_are_no_tower_of_courses():
    turn = 35.0
    across = np.array([-np.sin(np.radians(turn)), np.cos(np.radians(turn))])
    centre = np.array([250.0, 200.0])
    truth = [(_brick(centre + d * across, 4, 2, turn), h) for d, h in zip((-8.0, 8.0), (28.8, 9.6))]
    points = _grid(centre, 50.0)
    labels = _marched_labels(points, truth)
    assert agreement(points, labels, truth, FOOT, CAMERA_MM) > 0.995
    # the tower standing on both (4 x 4 studs) as tall as the taller brick, or taller
    both = _brick(centre, 4, 4, turn)
    for height in (28.8, 48.0, 67.2):
        assert courses_agreement(points, labels, both, height, FOOT, CAMERA_MM) < 0.95
