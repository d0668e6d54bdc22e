"""The Knight game: turns, WBR dice, rounds, the siege counter, deaths, undo. Saved in SQLite.

GET /api/game (Knight) -> {available, exists, mode, round, rounds_done, siege_rounds, turn, next, dice_left,
coins, winner, win_reason, units {id: alive|skeleton|gone}, balance, played_this_round, control
{kind: player|null, from the camera now}, version}.
POST /api/game {mode, castle_holder?, force?}: a new game (409 if one is under way, unless force).
POST /api/game/roll {player?, black, red, white}: the acting player's dice (1-6 each).
POST /api/game/events {kind, ...}: any game event (start_turn, convert, spend, interrupt,
unit_died, became_skeleton, hire, destroyed).
POST /api/game/end-turn: ends the turn; who holds each object is read from the camera now.
POST /api/game/end-round: ends the turn that closes the round (409 if another player has not played).
POST /api/game/undo: takes the last event back.
Every POST answers with the new game state once it is on disk."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.rules.knight import game as g
from web.api import ApiError, bad, body
from web.context import Companion, companion
from web.store import event_or_error

bp = Blueprint("game", __name__)  # GET /api/game is web/api/state.py's, for every rule system


def game_json(c: Companion) -> dict:
    """The Knight game as /api/game shows it."""
    game = c.store.game
    if game is None:
        return {"available": True, "exists": False, "modes": list(g.MODES),
                "players": [p.name for p in c.setup.players]}
    return {"available": True, "exists": True, **game.summary(), "castle_holder": game.castle_holder,
            "players": list(game.players), "played_this_round": list(game.played_this_round),
            "control": camera_control(c), "version": c.store.version}


def camera_control(c: Companion) -> dict[str, str | None]:
    from web.rulesets.knight import controls

    return {ctl.kind: ctl.controller for ctl in controls(c.view())}


def _store(c: Companion):
    if c.store is None:
        raise ApiError(409, "no saved game on this server")
    return c.store


@bp.post("/game")
def new_game():
    c = companion()
    store = _store(c)
    data = body()
    mode = data.get("mode", "siege")
    if not isinstance(mode, str) or mode not in g.MODES:
        raise bad("mode", f"one of {', '.join(g.MODES)}")
    if store.game is not None and store.game.events and not data.get("force"):
        raise ApiError(409, "a game is under way: send force=true to start over")
    try:
        store.new(mode, data.get("castle_holder"))
    except ValueError as exc:
        raise bad("castle_holder" if "castle" in str(exc) else "mode", str(exc)) from None
    return jsonify(game_json(c))


def _push(event: g.Event):
    c = companion()
    _store(c).push(event)
    return jsonify(game_json(c))


@bp.post("/game/roll")
def roll():
    c = companion()
    data = body()
    game = _store(c).game
    player = data.get("player") or (game.next_player if game is not None else None)
    dice = {}
    for die in g.DICE:
        value = data.get(die)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 6:
            raise bad(die, "the die's face, an integer 1 to 6")
        dice[die] = value
    return _push(g.StartTurn(str(player), **dice))


@bp.post("/game/events")
def push_event():
    try:
        event = event_or_error(body())
    except ValueError as exc:
        raise bad("kind", str(exc)) from None
    return _push(event)


@bp.post("/game/end-turn")
def end_turn():
    return _push(g.EndTurn(camera_control(companion())))


@bp.post("/game/end-round")
def end_round():
    c = companion()
    game = _store(c).game
    if game is not None and game.turn_player is not None:
        waiting = [p for p in game.players if p not in game.played_this_round and p != game.turn_player]
        if waiting:
            raise ApiError(409, f"not allowed now: {', '.join(waiting)} has not played this round yet "
                                f"(end the turn instead)")
    return _push(g.EndTurn(camera_control(c)))


@bp.post("/game/undo")
def undo():
    c = companion()
    _store(c).pop()
    return jsonify(game_json(c))
