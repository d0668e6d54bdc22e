"""GET /api/units: every unit (as in /api/state). GET /api/units/<id>?player=P: the tapped unit's
range (hands, fingers, mm in P's hand; default its owner) and a verdict on every enemy, nearest
first: {target, name, chips [{text, kind good|bad|info}], legal, reasons, edge_mm, in_range,
in_view, back_attack, cover, attack_bonus, defence_bonus, odds {attacker_wins, tie, ...}}."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from companion.web.context import companion

bp = Blueprint("units", __name__)


@bp.get("/units")
def list_units():
    return jsonify({"units": companion().view().state_json["units"]})


@bp.get("/units/<int:unit_id>")
def unit_detail(unit_id: int):
    c = companion()
    view = c.view()
    detail = view.unit_detail(unit_id, request.args.get("player") or None)
    if c.rules.unit_overlay is not None:
        c.asking.show(c.rules.unit_overlay(view, unit_id, request.args.get("player") or None))
    return jsonify(detail)
