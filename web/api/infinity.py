"""Infinity impact templates.

GET /api/infinity/template?attacker=A&target=B[&sv=13&burst=1&mods=0] (or &x=X&y=Y for no-target
ammunition) -> {attacker, target, centre_mm, radius_mm, affected [ids], cancelled_by [ids],
line_of_fire, line_of_fire_why, odds {id: {reaction, a_wins, b_wins, none, ...}}, expected_hits}.
Each affected enemy dodges at PH 10 (PH-3 without line of fire to the attacker) unless
dodge_<id>=PH is given.
GET /api/infinity/f2f?sv_a=&burst_a=&sv_b=&burst_b= -> {a_wins, b_wins, none, ...}."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from companion.rules.infinity import (ATTRIBUTE_RANGE, MODS_RANGE, SUCCESS_VALUE_RANGE, clamp_mods, face_to_face,
                                      template_attack, template_diameter_mm)
from companion.web.api import arg_float, arg_int, bad
from companion.web.context import companion

bp = Blueprint("infinity", __name__)


def _point(width_mm: float, depth_mm: float) -> tuple[float, float] | None:
    """The template's point for no-target ammunition: a point on the table, in mm."""
    if "x" not in request.args and "y" not in request.args:
        return None
    return arg_float("x", 0.0, width_mm), arg_float("y", 0.0, depth_mm)


@bp.get("/infinity/template")
def get_template():
    c = companion()
    table = c.view().table
    diameter = template_diameter_mm(c.setup)
    target = request.args.get("target")
    point = _point(c.setup.table.width_mm, c.setup.table.depth_mm)
    if target is None and point is None:
        raise bad("target", "the Main Target (or x, y for no-target ammunition)")
    reactions = {}
    for key in request.args:
        if key.startswith("dodge_"):
            try:
                unit = int(key[6:])
            except ValueError:
                raise bad(key, "dodge_<unit id>=<PH>") from None
            # an attribute, as sv (a PH of 999 made every die a critical)
            reactions[unit] = {"dodge_ph": arg_int(key, None, *ATTRIBUTE_RANGE)}
    result = template_attack(table, arg_int("attacker"), arg_int("target") if target is not None else None, point,
                             diameter / 2,
                             arg_int("sv", 13, *ATTRIBUTE_RANGE) + clamp_mods(arg_int("mods", 0, *MODS_RANGE)),
                             arg_int("burst", 1, 1, 6), reactions)
    return jsonify(result.to_json())


@bp.get("/infinity/f2f")
def get_f2f():
    return jsonify(face_to_face(arg_int("sv_a", None, *SUCCESS_VALUE_RANGE), arg_int("burst_a", 1, 1, 6),
                                arg_int("sv_b", None, *SUCCESS_VALUE_RANGE), arg_int("burst_b", 1, 1, 6)).to_json())
