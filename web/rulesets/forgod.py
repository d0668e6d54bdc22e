"""F0R60D on the phone: the board of squares, each card's square and detachment, the engagement."""

from __future__ import annotations

from companion.rules.forgod.game import ForgodGame
from companion.web.api import forgod
from companion.web.compose import RulesView
from companion.web.rulesets import WebRules, only_for


def state_json(view: RulesView) -> dict:
    here = forgod.placed(view)
    return {"forgod": {**forgod.cells_json(here),
                       "cards": {str(i): {"cards": p.card.cards, "type": p.card.type, "commander": p.card.commander}
                                 for i, p in here.items()}}}


WEB = WebRules("forgod", "F0R60D", blueprints=(only_for(forgod.bp, "forgod"),), game=ForgodGame,
               state_json=state_json, game_json=forgod.game_json, script="rules/forgod.js",
               unit_overlay=lambda view, card_id, player: forgod.card_shapes(view, card_id))
