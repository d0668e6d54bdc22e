"""F0R60D on the board of squares (the setup's [forgod] table); answers as `companion forgod ...`.

GET /api/forgod/board -> {square_w_mm, square_d_mm, origin_mm, columns, rows_per_side, players,
squares [[col, row, side, line, [[x, y] x4]]]}.
GET /api/forgod/cells -> {cells {id: {col, row, side, line, in_enemy_field}}, off_board [ids]}.
GET /api/forgod/cards/<id> -> the card, its square, its areas {move, attack, far, charge: [[col, row]]}
and a verdict on every enemy card (legal ones first), with the engagement's standing effects.
GET /api/forgod/attack?attacker=A&target=B[&charge=1&flank=1&far=1] -> the verdict (as `forgod attack`).
GET /api/forgod/odds?attack=A&evasion=E[&damage&absorption&constant_absorption&multiplier&hp] -> odds.
GET /api/forgod/check?bonus_a=A&bonus_d=B -> {attacker_wins, defender_wins, fractions}.
GET /api/forgod/cross?attacker=A&defender=B&kind=fortitude|morale -> a cross-check with both sides' bonuses.
GET /api/forgod/army -> {valid, problems, pc_total, pc_limit, units}.
POST /api/forgod/game {force?}: a new engagement. POST /api/forgod/game/events {kind, ...}: reaction
{rolls {player: d10}}, act {card, action, target?, note?}, resolve {card, outcome}, counter {card,
against}, card_died {card, cause?}, reached_rearguard {card}. POST /api/forgod/game/undo.
"""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from companion.rules.forgod.army import check_army
from companion.rules.forgod.attack import Verdict, attack
from companion.rules.forgod.cards import Forgod
from companion.rules.forgod.checks import KINDS, cross_check, placement_problems
from companion.rules.forgod.game import Act, ForgodGame, event_from_json
from companion.rules.forgod.odds import attack_odds, check_odds
from companion.rules.forgod.squares import Placed, cells_json, place
from companion.vision.draw import Shape
from companion.web.api import ApiError, arg_bool, arg_int, bad, body, event_body, game_store as _store
from companion.web.compose import RulesView
from companion.web.context import Companion, companion

bp = Blueprint("forgod", __name__)


def _rules(c: Companion) -> Forgod:
    return c.setup.rules


def placed(view: RulesView) -> dict[int, Placed]:
    return view.memo("forgod.placed", lambda: place(view.setup.rules, view.table))


def _game(view: RulesView) -> ForgodGame | None:
    return view.game if isinstance(view.game, ForgodGame) else None


def verdict(view: RulesView, attacker: int, target: int, **declared: bool) -> Verdict:
    game = _game(view)
    return attack(view.setup.rules, placed(view), attacker, target, effects=game.effects() if game else (),
                  guarded_by=game.guarded_commander(target) if game else None, **declared)


def chips(v: Verdict) -> list[dict]:
    """Short labels, each from one of the verdict's fields: kind good | bad | info."""
    out = [{"text": "can attack" if v.legal else "cannot attack", "kind": "good" if v.legal else "bad"},
           {"text": "in area" if v.in_area else "out of area", "kind": "good" if v.in_area else "bad"},
           {"text": f"attack {v.total('attack'):+d} vs evasion {v.total('evasion'):+d}", "kind": "info"}]
    if v.multiplier > 1:
        out.append({"text": f"damage x{v.multiplier}", "kind": "good"})
    return out


def verdict_json(view: RulesView, v: Verdict) -> dict:
    target = placed(view)[v.target].card
    return {"name": target.name, "chips": chips(v), **v.to_json()}


@bp.get("/forgod/board")
def get_board():
    rules = _rules(companion())
    b = rules.board
    squares = [[col, row, rules.players[b.side_of(row)], b.line_of(row), [[round(x, 1), round(y, 1)] for x, y in b.corners((col, row))]]
               for row in range(b.rows) for col in range(b.columns)]
    return jsonify({"square_w_mm": b.square_w_mm, "square_d_mm": b.square_d_mm, "origin_mm": [b.origin_x_mm, b.origin_y_mm],
                    "columns": b.columns, "rows_per_side": b.rows_per_side, "players": list(rules.players),
                    "squares": squares})


@bp.get("/forgod/cells")
def get_cells():
    return jsonify(cells_json(placed(companion().view())))


def _card_id(view: RulesView, card_id: int, field: str = "card") -> Placed:
    here = placed(view)
    if card_id not in here:
        known = sorted(here)
        raise bad(field, f"card {card_id} is not on the table (cards seen: {known})"
                  if view.setup.rules.card(card_id) else f"no card {card_id} in the setup")
    return here[card_id]


@bp.get("/forgod/cards/<int:card_id>")
def get_card(card_id: int):
    view = companion().view()
    rules: Forgod = view.setup.rules
    me = _card_id(view, card_id)
    area = rules.areas[me.card.type]
    side = rules.side_of_player(me.card.player)
    zones = {}
    if me.square is not None:
        zones = {zone: sorted(map(list, area.squares(rules.board, me.square, side, zone))) for zone in ("move", "attack", "far")}
        zones["charge"] = sorted(map(list, area.charge_reach(rules.board, me.square, side)))
    enemies = [verdict(view, card_id, other) for other, p in placed(view).items() if p.card.player != me.card.player]
    companion().asking.show(card_shapes(view, card_id))
    enemies.sort(key=lambda v: (not v.legal, v.target))
    return jsonify({"card": card_id, "name": me.card.name, "player": me.card.player, "type": me.card.type,
                    "cards": me.card.cards, "level": me.card.level, "terrain": me.card.terrain,
                    "attack_type": me.card.attack_type, "cell": me.to_json() if me.square else None,
                    "areas": zones, "enemies": [verdict_json(view, v) for v in enemies]})


@bp.get("/forgod/attack")
def get_attack():
    view = companion().view()
    a, t = arg_int("attacker"), arg_int("target")
    for field, card_id in (("attacker", a), ("target", t)):
        _card_id(view, card_id, field)
    if a == t:
        raise bad("target", "a card cannot attack itself")
    v = verdict(view, a, t, charge=arg_bool("charge"), flank=arg_bool("flank"), far=arg_bool("far"))
    companion().asking.show(attack_shapes(view, v))
    return jsonify(verdict_json(view, v))


def card_shapes(view: RulesView, card_id: int) -> list[Shape]:
    """A card's attack area on the table, for the host screen."""
    rules: Forgod = view.setup.rules
    card = placed(view).get(card_id)
    if card is None or card.square is None:
        return []
    area = rules.areas[card.card.type]
    squares = area.squares(rules.board, card.square, rules.side_of_player(card.card.player), "attack")
    return [Shape("polygon", rules.board.corners(sq), (0, 170, 255)) for sq in sorted(squares)]


def attack_shapes(view: RulesView, v: Verdict) -> list[Shape]:
    """The verdict on the table: the attacker's area, the line to the target and its square (green: legal)."""
    target = placed(view)[v.target]
    if target.square is None:
        return card_shapes(view, v.attacker)
    colour = (60, 200, 60) if v.legal else (60, 60, 230)
    a = next(u.centre for u in view.table.units if u.id == v.attacker)
    t = next(u.centre for u in view.table.units if u.id == v.target)
    return card_shapes(view, v.attacker) + [
        Shape("line", (a, t), colour, label="can attack" if v.legal else "cannot attack"),
        Shape("polygon", view.setup.rules.board.corners(target.square), colour)]


@bp.get("/forgod/odds")
def get_odds():
    hp = arg_int("hp", 0, 0, 10_000)
    return jsonify(attack_odds(arg_int("attack", None, -100, 100), arg_int("evasion", None, -100, 100),
                               arg_int("damage", 0, -1000, 1000), arg_int("absorption", 0, -1000, 1000),
                               arg_int("constant_absorption", 0, -1000, 1000), arg_int("multiplier", 1, 1, 12),
                               hp or None).to_json())


@bp.get("/forgod/check")
def get_check():
    return jsonify(check_odds(arg_int("bonus_a", None, -100, 100), arg_int("bonus_d", None, -100, 100)).to_json())


@bp.get("/forgod/cross")
def get_cross():
    """GET /api/forgod/cross?attacker=A&defender=B&kind=fortitude|morale: a cross-check between two
    cards with each side's bonus line by line (detachments, the commander) and its odds."""
    view = companion().view()
    kind = request.args.get("kind", "fortitude")
    if kind not in KINDS:
        raise bad("kind", f"one of {', '.join(KINDS)}")
    a, d = arg_int("attacker"), arg_int("defender")
    _card_id(view, a, "attacker")
    _card_id(view, d, "defender")
    return jsonify(cross_check(view.setup.rules, placed(view), a, d, kind).to_json())


@bp.get("/forgod/army")
def get_army():
    return jsonify(check_army(_rules(companion())).to_json())


@bp.post("/forgod/game")
def new_game():
    c = companion()
    store = _store(c)
    data = body()
    unknown = set(data) - {"force"}
    if unknown:
        raise bad(sorted(unknown)[0], "unknown field (only force)")
    if store.game is not None and store.game.events and data.get("force") is not True:
        raise ApiError(409, "an engagement is under way: send force=true to start over")
    store.new()
    return jsonify(game_json(c))


@bp.post("/forgod/game/events")
def push_event():
    c = companion()
    event = event_body(event_from_json)
    if isinstance(event, Act):  # what the camera sees against the declaration
        problems = placement_problems(placed(c.view()), event.action, event.card, event.target)
        if problems:
            raise ApiError(409, "not allowed now: " + "; ".join(problems))
    _store(c).push(event)
    return jsonify(game_json(c))


@bp.post("/forgod/game/undo")
def undo():
    c = companion()
    _store(c).pop()
    return jsonify(game_json(c))


def game_json(c: Companion) -> dict:
    """The engagement, with what the camera sees about what is due: whether a charge's target is
    still within reach, whether a flanking card is turned 90 degrees, cards in the enemy rearguard."""
    game = c.store.game
    if game is None:
        return {"available": True, "exists": False, "kind": "forgod"}
    view = c.view()
    here = placed(view)
    rules: Forgod = c.setup.rules
    summary = game.summary()
    for due in summary["due"]:
        charger, target = here.get(due["card"]), here.get(due["target"])
        if charger is None or target is None or charger.square is None or target.square is None:
            due["camera"] = "a card is not on the board"
            continue
        if due["needs"] == "attack roll":
            area = rules.areas[charger.card.type]
            reach = area.charge_reach(rules.board, charger.square, rules.side_of_player(charger.card.player))
            due["camera"] = "the target is within reach" if target.square in reach else \
                "the target moved out of reach: the charge fails"
            due["in_reach"] = target.square in reach
        else:
            unit = next((u for u in view.table.units if u.id == due["card"]), None)
            forward = 90.0 if rules.side_of_player(charger.card.player) == 0 else 270.0
            off = abs((unit.heading_deg - forward + 180) % 360 - 180) if unit else 0.0
            due["turned"] = bool(unit) and 60.0 <= off <= 120.0
            due["camera"] = f"card {due['card']} is {'turned 90 deg' if due['turned'] else 'not turned'} ({off:.0f} deg)"
            check = cross_check(rules, here, due["card"], due["target"], "fortitude").to_json()
            due["cross_check"] = {k: check[k] for k in ("bonus_a", "bonus_d", "attacker_wins", "fractions")}
    rearguard = [i for i, p in sorted(here.items()) if p.square is not None and p.in_enemy_field and p.line == "rearguard"
                 and i not in summary["dead"]]
    return {"available": True, "exists": True, "kind": "forgod", **summary, "players": list(game.players),
            "in_enemy_rearguard": rearguard, "army": check_army(rules).to_json(), "version": c.store.version}
