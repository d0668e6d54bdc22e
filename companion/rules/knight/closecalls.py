"""Where a verdict turns on less than a camera can tell: a close call, said with the verdict.

A camera places a unit's base to about a millimetre and reads its heading to about half a degree
(`companion bench vision`: xy p95 0.3-0.8 mm and heading p95 0.07-0.28 deg on the standard tables,
0.52 deg on the hard level), so a distance within a millimetre or two of a rule's threshold, or a
unit on the edge of another's field of view, may go either way on the table. The verdict still
answers; it also says which of its parts the players should measure by hand.
"""

from __future__ import annotations

import math

from companion.rules.geometry import Point, angle_between_deg
from companion.rules.table import Unit

# Two units' places, each good to ~0.7 mm (p95): a distance between them within this of a
# threshold may fall on either side of it.
PLACE_CLOSE_MM = 1.5
HEADING_CLOSE_DEG = 0.5  # a heading's error (p95 on the path-traced tables: 0.28; the hard level 0.52)


def view_edge_mm(viewer: Unit, point: Point, half_deg: float) -> float:
    """How far a point lies from the edge of a unit's field of view (the two rays at `half_deg`
    either side of its heading), in mm, on whichever side."""
    off = math.radians(abs(angle_between_deg(viewer.heading_deg, viewer.centre, point) - half_deg))
    reach = math.dist(viewer.centre, point)
    return reach * math.sin(off) if off < math.pi / 2 else reach


def near_view_edge(viewer: Unit, point: Point, half_deg: float) -> bool:
    """Whether a point is so near the edge of a unit's field of view that its place and the unit's
    heading, as a camera reads them, may put it either side."""
    reach = math.dist(viewer.centre, point)
    return view_edge_mm(viewer, point, half_deg) <= PLACE_CLOSE_MM + reach * math.sin(math.radians(HEADING_CLOSE_DEG))


def near_threshold(distance_mm: float, threshold_mm: float) -> bool:
    """Whether a distance between two units' places is within what a camera can tell of a threshold."""
    return abs(distance_mm - threshold_mm) <= PLACE_CLOSE_MM
