"""GET /api/measure?from=A&to=B&player=P: base edge to base edge, in P's hands and fingers (default:
the owner of A): {from, to, edge_mm, hands, fingers, text, player, hand_mm, finger_mm, in_fingers}."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from companion.rules.knight.measure import measure
from companion.web.api import arg_int, bad
from companion.web.context import companion

bp = Blueprint("measure", __name__)


@bp.get("/measure")
def get_measure():
    a_id, b_id = arg_int("from"), arg_int("to")
    if a_id == b_id:
        raise bad("to", "a different unit than from")
    view = companion().view()
    a, b = view.table.unit(a_id), view.table.unit(b_id)
    profile = view.profile(request.args.get("player") or a.player)
    return jsonify({"from": a.id, "to": b.id, **measure(a, b, profile).to_json()})
