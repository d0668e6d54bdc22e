"""GET /api/objects: strategic objects (castle, mine, obelisk ...) and who controls each, with why:
{"objects": [{id, kind, name, controller, counts {player: units}, units {player: [ids]}, why}]}."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.web.context import companion

bp = Blueprint("objects", __name__)


@bp.get("/objects")
def get_objects():
    from companion.web.rulesets.knight import controls

    return jsonify({"objects": [c.to_json() for c in controls(companion().view())]})
