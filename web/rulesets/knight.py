"""The Knight rules on the phone: squads, who holds each object, a verdict on every enemy, the game."""

from __future__ import annotations

from companion.rules.knight.attack import range_mm, targets
from companion.rules.knight.control import Control, control_all
from companion.rules.knight.game import Game
from companion.rules.knight.measure import in_hands_and_fingers
from companion.rules.knight.squads import squads
from companion.rules.table import Unit
from companion.setup_file import PlayerSpec
from companion.vision.draw import Shape
from web.api import attack, game, moves, objects, squads as squads_api
from web.api.attack import verdict_json
from web.compose import TableView
from web.rulesets import WebRules, only_for


def controls(view: TableView) -> tuple[Control, ...]:
    """Who holds each strategic object now (asked by every state poll and every end of turn)."""
    return view.memo("controls", lambda: tuple(control_all(view.table)))


def state_json(view: TableView) -> dict:
    held = {c.object_id: c for c in controls(view)}
    objects_json = [o | {"controller": held[o["id"]].controller, "why": held[o["id"]].why} if o["id"] in held else o
                    for o in view.base_objects_json]
    return {"squads": [g for g in squads(view.table) if len(g) > 1], "objects": objects_json}


def unit_json(view: TableView, unit: Unit, profile: PlayerSpec) -> dict:
    """Its range in the acting player's hand and a verdict on every enemy, nearest first."""
    reach = range_mm(unit.unit_class, profile)
    return {"range": in_hands_and_fingers(reach, profile).to_json() | {"mm": round(reach, 1)} if reach else None,
            "enemies": [verdict_json(v, view.table.unit(v.target)) for v in targets(view.table, unit.id, player=profile.name)]}


GOOD_BGR, BAD_BGR, FULL_BGR, PARTIAL_BGR, NOTHING_BGR = (60, 200, 60), (60, 60, 230), (40, 40, 220), (0, 170, 255), (170, 170, 170)
REACH_BGR = (230, 200, 60)
MAX_REGION_RECTS = 400  # a region drawn on the host screen: its rectangles, at most this many


def overlay(view: TableView, kind: str, params: dict) -> list[Shape]:
    """The question a phone asked, drawn on the table: the line of attack (green: can attack), the
    blocks crossing it coloured by what they give (red full, amber partial, grey nothing), the
    attacker's range; or the region a unit reaches with its AP."""
    from companion.rules.knight.attack import attack as verdict_of
    from companion.rules.knight.moves import reach

    if kind == "attack":
        v = verdict_of(view.table, params["attacker"], params["target"], params.get("player"))
        a, t = view.table.unit(v.attacker), view.table.unit(v.target)
        shapes = [Shape("line", (a.centre, t.centre), GOOD_BGR if v.legal else BAD_BGR,
                        label="can attack" if v.legal else "cannot attack")]
        colours = {"full": FULL_BGR, "partial": PARTIAL_BGR, "none": NOTHING_BGR}
        shapes += [Shape("polygon", tuple(b.footprint_mm), colours[b.kind], label=f"B{b.id} {b.kind}",
                         height_mm=b.height_mm) for b in v.cover.blocks]
        return shapes + _range(view, a, params.get("player"))
    if kind == "unit":
        return _range(view, view.table.unit(params["unit"]), params.get("player"))
    if kind == "moves":
        unit = view.table.unit(params["unit"])
        regions = reach(view.table, unit.id, params["ap"], view.profile(params.get("player") or unit.player),
                        (view.setup.table.width_mm, view.setup.table.depth_mm), squad=params.get("squad", False))
        if not regions:
            return []
        return [Shape("polygon", tuple(p), REACH_BGR) for p in regions[-1].polygons[:MAX_REGION_RECTS]]
    return []


def _range(view: TableView, unit: Unit, player: str | None) -> list[Shape]:
    profile = view.profile(player or unit.player)
    reach_mm = range_mm(unit.unit_class, profile)
    if not reach_mm:
        return []
    return [Shape("circle", (unit.centre,), REACH_BGR, radius_mm=reach_mm + unit.base_radius_mm,
                  label=f"{unit.id} range {in_hands_and_fingers(reach_mm, profile).text}")]


WEB = WebRules(
    "knight", "Knight level",
    blueprints=tuple(only_for(m.bp, "knight") for m in (attack, moves, squads_api, objects, game)),
    game=Game, state_json=state_json, unit_json=unit_json, game_json=game.game_json, script="rules/knight.js",
    overlay=overlay)
