"""F0R60D on the phone: the board of squares, each card's square and detachment, the engagement."""

from __future__ import annotations

from companion.rules.forgod.game import ForgodGame
from web.api import forgod
from companion.vision.draw import Shape
from web.compose import TableView
from web.rulesets import WebRules, only_for


def state_json(view: TableView) -> dict:
    here = forgod.placed(view)
    return {"forgod": {**forgod.cells_json(here),
                       "cards": {str(i): {"cards": p.card.cards, "type": p.card.type, "commander": p.card.commander}
                                 for i, p in here.items()}}}


def overlay(view: TableView, kind: str, params: dict) -> list[Shape]:
    """The card a phone asked about: its attack area's squares; for an attack, the line to the target
    (green: legal) and the target's square."""
    here = forgod.placed(view)
    rules = view.setup.rules
    card = here.get(params.get("attacker", params.get("unit")))
    if card is None or card.square is None:
        return []
    area = rules.areas[card.card.type]
    squares = area.squares(rules.board, card.square, rules.side_of_player(card.card.player), "attack")
    shapes = [Shape("polygon", rules.board.corners(sq), (0, 170, 255)) for sq in sorted(squares)]
    if kind == "attack" and params.get("target") in here and here[params["target"]].square is not None:
        v = forgod.verdict(view, params["attacker"], params["target"], charge=params.get("charge", False),
                           flank=params.get("flank", False), far=params.get("far", False))
        target = here[params["target"]]
        colour = (60, 200, 60) if v.legal else (60, 60, 230)
        a = next(u.centre for u in view.table.units if u.id == params["attacker"])
        t = next(u.centre for u in view.table.units if u.id == params["target"])
        shapes += [Shape("line", (a, t), colour, label="can attack" if v.legal else "cannot attack"),
                   Shape("polygon", rules.board.corners(target.square), colour)]
    return shapes


WEB = WebRules("forgod", "F0R60D", blueprints=(only_for(forgod.bp, "forgod"),), game=ForgodGame,
               state_json=state_json, game_json=forgod.game_json, script="rules/forgod.js", overlay=overlay)
