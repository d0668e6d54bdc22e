"""GET /api/state: the table as the camera last saw it registered, with the snapshot's age.

Fields: `snapshot` {seq, frame, captured_at (epoch s), state_frame, state_time (epoch s),
registered_now, reason, tracker_ms, camera {state, message, since, ok}}, `age_s` (seconds since the
state's frame), `table` {width_mm, depth_mm}, `ruleset`, `players` [{name, colour, hand_mm,
finger_mm}], `units` [{id, name, player, colour, class, faction, x_mm, y_mm, z_mm, heading_deg,
base_mm, standing_mm, seen (seen|held), status (alive|skeleton|gone)}], `blocks` [{id,
footprint_mm, height_mm, color}], `squads` [[ids]], `objects` [{id, kind, name, x_mm, y_mm,
radius_mm, controller, why}], `game` (Knight: round, turn, dice, winner ...), `warnings`."""

from __future__ import annotations

import time

from flask import Blueprint, jsonify

from companion.web.context import Companion, companion

bp = Blueprint("state", __name__)


def game_json(c: Companion) -> dict:
    """The saved game as its rule system shows it, or why there is none; worked out once per view
    (the view changes with each frame and each event; every phone polls this)."""
    rules = c.rules
    if c.store is None or rules.game_json is None:
        return {"available": False, "why": f"the {rules.title} rules keep no turn log here"}
    return c.view().memo("game json", lambda: rules.game_json(c))


@bp.get("/game")
def get_game():
    return jsonify(game_json(companion()))


@bp.get("/state")
def get_state():
    c = companion()
    c.polling.mark()
    view = c.view()
    snap = c.hub.latest()
    age = time.time() - view.snapshot.state.timestamp if view.snapshot.state.timestamp else None
    return jsonify({"snapshot": snap.meta_json(), "age_s": round(age, 2) if age is not None else None,
                    **view.state_json, "game": game_json(c)})
