"""GET /api/log[?limit=N]: the game's event log, oldest first (the last N events with limit): {"log":
[lines], "events": [{seq, at (epoch s), kind, ...fields, ledger (an end of turn's, as the camera saw it)}]}."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.web.api import arg_int
from companion.web.context import companion

bp = Blueprint("log", __name__)


@bp.get("/log")
def get_log():
    c = companion()
    limit = arg_int("limit", 0, 0, 100_000)  # 0: all
    if c.store is None or c.store.game is None:
        return jsonify({"log": [], "events": []})
    log, events = c.store.game.log, c.store.event_log()
    return jsonify({"log": log[-limit:] if limit else log, "events": events[-limit:] if limit else events})
