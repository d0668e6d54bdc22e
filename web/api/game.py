"""The Knight game: turns, WBR dice, rounds, the siege counter, deaths, undo. Saved in SQLite.

GET /api/game (Knight) -> {available, exists, mode, round, rounds_done, siege_rounds, turn, next, dice_left,
coins, winner, win_reason, units {id: alive|skeleton|gone}, balance, played_this_round, control
{kind: player|null, from the camera now}, ledger (the turn under way as the camera saw it from the
turn's start: moves, turns, fortifications, ap_spent against ap_die, units_acted against
warriors_die, attacks_made, other_side_moved, warnings; null between turns), version}.
POST /api/game {mode, castle_holder?, force?}: a new game (409 if one is under way, unless force).
POST /api/game/roll {player?, black, red, white}: the acting player's dice (1-6 each).
POST /api/game/events {kind, ...}: any game event (start_turn, convert, spend, interrupt,
unit_died, became_skeleton, hire, destroyed).
POST /api/game/end-turn: ends the turn; who holds each object is read from the camera now, and the
turn's ledger is saved with it (GET /api/log shows it with the event).
POST /api/game/end-round: ends the turn that closes the round (409 if another player has not played).
POST /api/game/undo: takes the last event back.
Every POST answers with the new game state once it is on disk."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.live.store import event_or_error
from companion.rules.knight import game as g
from companion.web.api import ApiError, bad, body, event_body, game_store as _store
from companion.web.context import Companion, companion

bp = Blueprint("game", __name__)  # GET /api/game is web/api/state.py's, for every rule system


def game_json(c: Companion) -> dict:
    """The Knight game as /api/game shows it."""
    game = c.store.game
    if game is None:
        return {"available": True, "exists": False, "modes": list(g.MODES),
                "players": [p.name for p in c.setup.players]}
    return {"available": True, "exists": True, **game.summary(), "castle_holder": game.castle_holder,
            "players": list(game.players), "played_this_round": list(game.played_this_round),
            "control": camera_control(c), "ledger": turn_ledger(c), "proposals": proposals(c),
            "version": c.store.version}


LIFTED_AFTER_S = 5.0  # a unit not seen this long, with no hand over its place, is asked about
VANISHED_AFTER_S = 1.0  # ... this long, when something lies where it stood: knocked over?


def proposals(c: Companion) -> list[dict]:
    """What the camera saw that the players should confirm (one tap each, undoable): a unit knocked
    over (its marker tilted more than 45 deg, or vanished where it stood with something lying
    there), a unit gone from the table (not seen for a while, no hand over its place: a hand
    resting on it is not asked about), a unit sealed in a
    sarcophagus. Never applied without a player. (Part of the game's answer, which /api/state
    works out once per view.)"""
    from companion.rules.knight.referee import sealed

    game = c.store.game
    view = c.view()
    state = view.snapshot.state
    statuses = game.statuses()
    out = []
    for unit in view.table.units:
        if statuses.get(unit.id, "alive") == "gone" or game.winner:
            continue
        mini = state.mini(unit.id)
        name = f"{unit.name} ({unit.id})"
        if unit.knocked_over and unit.status == "seen":
            why = f"the camera sees {name} knocked over: its marker is tilted {unit.tilt_deg:.0f} deg"
            out.append({"unit": unit.id, "kind": "knocked_over", "why": why, "ask": f"{name} knocked over: dead?",
                        "event": {"kind": "unit_died", "unit": unit.id, "cause": f"{why} (confirmed on the phone)"}})
        elif (gone := _gone(mini, name, state.timestamp)) is not None:
            kind, ask, why = gone
            out.append({"unit": unit.id, "kind": kind, "why": why, "ask": ask,
                        "event": {"kind": "unit_died", "unit": unit.id, "cause": f"{why} (confirmed on the phone)"}})
        elif unit.status == "seen" and sealed(view.table, unit):
            last = [u for u in view.table.units if u.player == unit.player and statuses.get(u.id, "alive") != "gone"]
            why = f"blocks around {name} leave no gap its base gets out through: sealed in a sarcophagus"
            out.append({"unit": unit.id, "kind": "sealed", "why": why,
                        "ask": f"{name} is sealed" + (": its side's last unit, dead?" if len(last) == 1 else
                                                      " (only artillery frees it)"),
                        "event": {"kind": "unit_died", "unit": unit.id, "cause": f"{why} (confirmed on the phone)"}
                        if len(last) == 1 else None})
    return out


def _gone(mini, name: str, now_s: float) -> tuple[str, str, str] | None:
    """(kind, ask, why) for a held mini no longer under a hand, by what is where it stood
    (`held_place`): something lying there for VANISHED_AFTER_S, a knocked-over candidate; the bare
    table (or no word of it) for LIFTED_AFTER_S, a unit that left the table. None: nothing to ask."""
    if mini is None or mini.status == "seen" or not mini.last_seen_s or mini.held_place == "hand":
        return None
    away_s = now_s - mini.last_seen_s
    if mini.held_place == "other" and away_s > VANISHED_AFTER_S:
        return ("knocked_over", f"{name} knocked over: dead?",
                f"{name}'s marker vanished where it stood {away_s:.0f} s ago, with no hand over its place, "
                "and something lies there")
    if away_s > LIFTED_AFTER_S:
        # No word of its place (the tracker never saw the table around it): said as it is.
        seen = ", with no hand over its place and the table bare where it stood" if mini.held_place == "table" else ""
        return ("left_table", f"{name} left the table: dead?", f"the camera has not seen {name} for {away_s:.0f} s{seen}")
    return None


def turn_ledger(c: Companion) -> dict | None:
    """What the turn under way has spent, as the camera saw it from the turn's start to now (the
    `knight ledger` answer), against the dice: AP against the black die, the units that moved
    against the white die, the attacks entered against the red one."""
    from companion.rules.knight.ledger import ledger
    from companion.rules.table import Table
    from companion.state import TableState

    game = c.store.game
    if game is None or game.turn_player is None:
        return None
    seen = c.store.last_seen("start_turn")
    if not seen or "state" not in seen:
        return None  # a turn started from the command line: the camera did not see its start
    view = c.view()
    start = game.table_view(Table.from_state(TableState.from_json(seen["state"]), c.setup))
    turn = ledger(start, view.table, game.turn_player, (c.setup.table.width_mm, c.setup.table.depth_mm))
    out = turn.to_json()
    acted = sorted({u for m in turn.moves for u in m.units} | {u for t in turn.turns for u in t.units})
    warnings = list(out["warnings"])
    if turn.ap_spent > game.action_points:
        warnings.insert(0, f"the turn spends {turn.ap_spent} AP, the black die allows {game.action_points}")
    if len(acted) > game.warriors:
        warnings.insert(0, f"{len(acted)} units acted ({', '.join(map(str, acted))}), the white die allows {game.warriors}")
    return out | {"warnings": warnings, "ap_die": game.action_points, "units_acted": acted,
                  "warriors_die": game.warriors, "attacks_made": game.attacks_made,
                  "attacks_die": game.dice_left.get("red", 0) + game.attacks_made}


def camera_control(c: Companion) -> dict[str, str | None]:
    from companion.web.rulesets.knight import controls

    return {ctl.kind: ctl.controller for ctl in controls(c.view())}


@bp.post("/game")
def new_game():
    c = companion()
    store = _store(c)
    data = body({"mode", "castle_holder", "force"})
    mode = data.get("mode", "siege")
    if not isinstance(mode, str) or mode not in g.MODES:
        raise bad("mode", f"one of {', '.join(g.MODES)}")
    if store.game is not None and store.game.events and not data.get("force"):
        raise ApiError(409, "a game is under way: send force=true to start over")
    try:
        store.new(mode, data.get("castle_holder"))
    except ValueError as exc:
        field = "castle_holder" if "castle" in str(exc) else "mode"
        raise bad(field, str(exc).removeprefix(f"{field}: ")) from None
    return jsonify(game_json(c))


def _push(event: g.Event, seen: dict | None = None):
    c = companion()
    _store(c).push(event, seen)
    return jsonify(game_json(c))


def _seen_now(c: Companion, with_ledger: bool = False) -> dict:
    """The table as the camera sees it now (and the turn's ledger), kept with the event."""
    seen = {"state": c.view().snapshot.state.to_json()}
    if with_ledger:
        seen["ledger"] = turn_ledger(c)
    return seen


@bp.post("/game/roll")
def roll():
    c = companion()
    data = body({"player", "black", "red", "white"})
    game = _store(c).game
    player = data.get("player") or (game.next_player if game is not None else None)
    dice = {}
    for die in g.DICE:
        value = data.get(die)
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 6:
            raise bad(die, "the die's face, an integer 1 to 6")
        dice[die] = value
    return _push(g.StartTurn(str(player), **dice), _seen_now(c))


@bp.post("/game/events")
def push_event():
    return _push(event_body(event_or_error))


@bp.post("/game/end-turn")
def end_turn():
    c = companion()
    return _push(g.EndTurn(camera_control(c)), _seen_now(c, with_ledger=True))


@bp.post("/game/end-round")
def end_round():
    c = companion()
    game = _store(c).game
    if game is not None and game.turn_player is not None:
        waiting = [p for p in game.players if p not in game.played_this_round and p != game.turn_player]
        if waiting:
            raise ApiError(409, f"not allowed now: {', '.join(waiting)} has not played this round yet "
                                f"(end the turn instead)")
    return _push(g.EndTurn(camera_control(c)), _seen_now(c, with_ledger=True))


@bp.post("/game/undo")
def undo():
    c = companion()
    store = _store(c)
    log = store.game.log if store.game is not None else []
    store.pop()
    return jsonify({**game_json(c), "undone": log[-1] if log else ""})
