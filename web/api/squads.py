"""GET /api/squads: {"squads": [[ids...]], "singles": [ids]} (Knight: units within a finger of each other)."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.rules.knight.squads import squads
from companion.web.context import companion

bp = Blueprint("squads", __name__)


@bp.get("/squads")
def get_squads():
    groups = squads(companion().view().table)
    return jsonify({"squads": [g for g in groups if len(g) > 1], "singles": [g[0] for g in groups if len(g) == 1]})
