"""GET /api/log: the game's event log, oldest first: {"log": [lines], "events": [{seq, at (epoch s),
kind, ...fields}]}."""

from __future__ import annotations

from flask import Blueprint, jsonify

from web.context import companion

bp = Blueprint("log", __name__)


@bp.get("/log")
def get_log():
    c = companion()
    if c.store is None or c.store.game is None:
        return jsonify({"log": [], "events": []})
    return jsonify({"log": c.store.game.log, "events": c.store.event_log()})
