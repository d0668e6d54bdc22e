"""GET /api/moves?unit=A&ap=N[&player=P&squad=1]: where the unit can get with N action points (0-6),
as rectangles on the table and as outlines: {unit, ap, player, cell_mm, regions [{ap, area_mm2,
polygons [[[x,y]..]], outlines [[[x,y]..]]}]} (region k: reachable with k AP or fewer; its outlines
are closed loops, holes included, to fill even-odd)."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from companion.rules.knight.moves import CELL_MM, Region, reach
from companion.vision.draw import Shape
from companion.web.api import arg_bool, arg_int
from companion.web.api.attack import REACH_BGR
from companion.web.context import companion

MAX_REGION_RECTS = 400  # a region drawn on the host screen: its rectangles, at most this many

bp = Blueprint("moves", __name__)


@bp.get("/moves")
def get_moves():
    c = companion()
    view = c.view()
    unit = view.table.unit(arg_int("unit"))
    ap = arg_int("ap", None, 0, 6)
    profile = view.profile(request.args.get("player") or unit.player)
    regions = reach(view.table, unit.id, ap, profile, (c.setup.table.width_mm, c.setup.table.depth_mm),
                    squad=arg_bool("squad"))
    c.asking.show(region_shapes(regions))
    return jsonify({"unit": unit.id, "ap": ap, "player": profile.name, "cell_mm": CELL_MM,
                    "regions": [r.to_json() for r in regions]})


def region_shapes(regions: list[Region]) -> list[Shape]:
    """The region reached with all the AP, for the host screen."""
    return [Shape("polygon", tuple(p), REACH_BGR) for p in regions[-1].polygons[:MAX_REGION_RECTS]] if regions else []
