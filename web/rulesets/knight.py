"""The Knight rules on the phone: squads, who holds each object, a verdict on every enemy, the game."""

from __future__ import annotations

from companion.rules.knight.attack import range_mm, targets
from companion.rules.knight.control import Control, control_all
from companion.rules.knight.game import Game
from companion.rules.knight.measure import in_hands_and_fingers
from companion.rules.knight.squads import squads
from companion.rules.table import Unit
from companion.setup_file import PlayerSpec
from companion.web.api import attack, game, moves, objects, squads as squads_api
from companion.web.api.attack import verdict_json
from companion.web.compose import RulesView
from companion.web.rulesets import WebRules, only_for


def controls(view: RulesView) -> tuple[Control, ...]:
    """Who holds each strategic object now (asked by every state poll and every end of turn)."""
    return view.memo("controls", lambda: tuple(control_all(view.table)))


def state_json(view: RulesView) -> dict:
    held = {c.object_id: c for c in controls(view)}
    objects_json = [o | {"controller": held[o["id"]].controller, "why": held[o["id"]].why} if o["id"] in held else o
                    for o in view.base_objects_json]
    return {"squads": [g for g in squads(view.table) if len(g) > 1], "objects": objects_json}


def unit_json(view: RulesView, unit: Unit, profile: PlayerSpec) -> dict:
    """Its range in the acting player's hand and a verdict on every enemy, nearest first."""
    reach = range_mm(unit.unit_class, profile)
    return {"range": in_hands_and_fingers(reach, profile).to_json() | {"mm": round(reach, 1)} if reach else None,
            "enemies": [verdict_json(v, view.table.unit(v.target)) for v in targets(view.table, unit.id, player=profile.name)]}


def unit_overlay(view: RulesView, unit_id: int, player: str | None) -> list:
    return attack.range_shapes(view, view.table.unit(unit_id), player)


WEB = WebRules(
    "knight", "Knight level",
    blueprints=tuple(only_for(m.bp, "knight") for m in (attack, moves, squads_api, objects, game)),
    game=Game, state_json=state_json, unit_json=unit_json, game_json=game.game_json, script="rules/knight.js",
    unit_overlay=unit_overlay)
