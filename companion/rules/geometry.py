"""Plane geometry for the rules, in table millimetres. Pure Python: no numpy, no OpenCV."""

from __future__ import annotations

import math

Point = tuple[float, float]
Polygon = tuple[Point, ...]


def distance(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _cross(o: Point, a: Point, b: Point) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _on_segment(p: Point, a: Point, b: Point, eps: float = 1e-9) -> bool:
    return (min(a[0], b[0]) - eps <= p[0] <= max(a[0], b[0]) + eps
            and min(a[1], b[1]) - eps <= p[1] <= max(a[1], b[1]) + eps)


def segments_intersect(p1: Point, p2: Point, q1: Point, q2: Point) -> bool:
    """Closed segments p1p2 and q1q2 share at least one point (touching counts)."""
    d1, d2 = _cross(q1, q2, p1), _cross(q1, q2, p2)
    d3, d4 = _cross(p1, p2, q1), _cross(p1, p2, q2)
    if ((d1 > 0 > d2) or (d1 < 0 < d2)) and ((d3 > 0 > d4) or (d3 < 0 < d4)):
        return True
    return ((abs(d1) < 1e-9 and _on_segment(p1, q1, q2)) or (abs(d2) < 1e-9 and _on_segment(p2, q1, q2))
            or (abs(d3) < 1e-9 and _on_segment(q1, p1, p2)) or (abs(d4) < 1e-9 and _on_segment(q2, p1, p2)))


def point_in_polygon(p: Point, polygon: Polygon) -> bool:
    """Inside or on the boundary."""
    n = len(polygon)
    for i in range(n):
        a, b = polygon[i], polygon[(i + 1) % n]
        if abs(_cross(a, b, p)) < 1e-9 and _on_segment(p, a, b):
            return True
    inside = False
    for i in range(n):
        (x1, y1), (x2, y2) = polygon[i], polygon[(i + 1) % n]
        if (y1 > p[1]) != (y2 > p[1]):
            x = x1 + (p[1] - y1) * (x2 - x1) / (y2 - y1)
            if x > p[0]:
                inside = not inside
    return inside


def segment_meets_polygon(a: Point, b: Point, polygon: Polygon) -> bool:
    if point_in_polygon(a, polygon) or point_in_polygon(b, polygon):
        return True
    n = len(polygon)
    return any(segments_intersect(a, b, polygon[i], polygon[(i + 1) % n]) for i in range(n))


def point_segment_distance(p: Point, a: Point, b: Point) -> float:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2))
    return distance(p, (a[0] + t * dx, a[1] + t * dy))


def point_polygon_distance(p: Point, polygon: Polygon) -> float:
    """0 inside; else the distance to the nearest edge."""
    return 0.0 if point_in_polygon(p, polygon) else _boundary_distance(p, polygon)


def _apart_segments_distance(p1: Point, p2: Point, q1: Point, q2: Point) -> float:
    """The distance between two segments that do not cross: the nearest of each one's ends to the other."""
    return min(point_segment_distance(p1, q1, q2), point_segment_distance(p2, q1, q2),
               point_segment_distance(q1, p1, p2), point_segment_distance(q2, p1, p2))


def boxes_apart(a: Point, b: Point, polygon: Polygon, margin_mm: float) -> bool:
    """Whether the bounding boxes of the segment ab and of the polygon are `margin_mm` or more apart
    along x or y (then so are the segment and the polygon): a cheap test before an exact distance."""
    xs, ys = [p[0] for p in polygon], [p[1] for p in polygon]
    return (min(xs) - max(a[0], b[0]) >= margin_mm or min(a[0], b[0]) - max(xs) >= margin_mm
            or min(ys) - max(a[1], b[1]) >= margin_mm or min(a[1], b[1]) - max(ys) >= margin_mm)


def segment_polygon_distance(a: Point, b: Point, polygon: Polygon) -> float:
    """0 when the segment meets the polygon; else the distance between them."""
    if segment_meets_polygon(a, b, polygon):
        return 0.0
    n = len(polygon)  # (then no edge crosses the segment)
    return min(_apart_segments_distance(a, b, polygon[i], polygon[(i + 1) % n]) for i in range(n))


def crossing_depth(a: Point, b: Point, polygon: Polygon, step_mm: float = 0.25) -> float:
    """How far into the polygon the segment reaches: the greatest distance from the polygon's
    boundary of a point of the segment inside it (0 when it stays outside). Read every `step_mm`
    along the parts of the segment inside, between its crossings of the boundary."""
    n = len(polygon)
    length = distance(a, b)
    if length == 0:
        return _boundary_distance(a, polygon) if point_in_polygon(a, polygon) else 0.0
    ts = [0.0, 1.0]
    for i in range(n):
        q1, q2 = polygon[i], polygon[(i + 1) % n]
        denom = _cross((0.0, 0.0), (b[0] - a[0], b[1] - a[1]), (q2[0] - q1[0], q2[1] - q1[1]))
        if abs(denom) < 1e-12:
            continue
        t = _cross((0.0, 0.0), (q1[0] - a[0], q1[1] - a[1]), (q2[0] - q1[0], q2[1] - q1[1])) / denom
        u = _cross((0.0, 0.0), (q1[0] - a[0], q1[1] - a[1]), (b[0] - a[0], b[1] - a[1])) / denom
        if 0.0 < t < 1.0 and -1e-9 <= u <= 1.0 + 1e-9:
            ts.append(t)
    ts.sort()
    deepest = 0.0
    for t0, t1 in zip(ts, ts[1:]):
        mid = (t0 + t1) / 2
        if t1 - t0 < 1e-12 or not point_in_polygon((a[0] + mid * (b[0] - a[0]), a[1] + mid * (b[1] - a[1])), polygon):
            continue
        samples = max(2, int((t1 - t0) * length / step_mm) + 1)
        for k in range(samples + 1):
            t = t0 + (t1 - t0) * k / samples
            deepest = max(deepest, _boundary_distance((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])), polygon))
    return deepest


def _boundary_distance(p: Point, polygon: Polygon) -> float:
    n = len(polygon)
    return min(point_segment_distance(p, polygon[i], polygon[(i + 1) % n]) for i in range(n))


def angle_between_deg(heading_deg: float, origin: Point, target: Point) -> float:
    """Angle between a heading and the direction origin -> target, in [0, 180]."""
    direction = math.degrees(math.atan2(target[1] - origin[1], target[0] - origin[0]))
    return abs((direction - heading_deg + 180.0) % 360.0 - 180.0)


def circle_polygon(centre: Point, radius: float, sides: int = 32) -> Polygon:
    return tuple((centre[0] + radius * math.cos(2 * math.pi * k / sides),
                  centre[1] + radius * math.sin(2 * math.pi * k / sides)) for k in range(sides))
