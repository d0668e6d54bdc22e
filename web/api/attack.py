"""GET /api/attack?attacker=A&target=B[&player=P&charged=1&descent=1&suicide=1&warriors=N]: the
Knight verdict with every reason, cover block and modifier (as `companion knight attack --json`),
plus short `chips`."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from companion.rules.knight.attack import AttackVerdict, attack, range_mm
from companion.rules.knight.measure import in_hands_and_fingers
from companion.rules.table import Unit
from companion.vision.draw import Shape
from companion.web.api import arg_bool, arg_int
from companion.web.compose import RulesView
from companion.web.context import companion

GOOD_BGR, BAD_BGR, FULL_BGR, PARTIAL_BGR, NOTHING_BGR = (60, 200, 60), (60, 60, 230), (40, 40, 220), (0, 170, 255), (170, 170, 170)
REACH_BGR = (230, 200, 60)

bp = Blueprint("attack", __name__)


@bp.get("/attack")
def get_attack():
    c = companion()
    view = c.view()
    warriors = arg_int("warriors", 0, 0, 6) or None
    balance = view.game.balance if view.game is not None else (lambda player: 0)
    a, t = arg_int("attacker"), arg_int("target")
    attacker, target = view.table.unit(a), view.table.unit(t)
    verdict = attack(view.table, a, t, request.args.get("player") or None, charged=arg_bool("charged"),
                     descent=arg_bool("descent"), suicide=arg_bool("suicide"), warriors=warriors,
                     attacker_balance=balance(attacker.player), defender_balance=balance(target.player))
    c.asking.show(attack_shapes(view, verdict, request.args.get("player") or None))
    return jsonify(verdict_json(verdict, target))


CLOSE_MARK = " (close call)"  # on the host screen, as the phone's chip says it


def attack_shapes(view: RulesView, v: AttackVerdict, player: str | None) -> list[Shape]:
    """The verdict on the table, for the host screen: the line of attack (green: can attack), the
    blocks crossing it coloured by what they give (red full, amber partial, grey nothing), the range;
    a close call marked on the line and on each block it turns on."""
    a, t = view.table.unit(v.attacker), view.table.unit(v.target)
    shapes = [Shape("line", (a.centre, t.centre), GOOD_BGR if v.legal else BAD_BGR,
                    label=("can attack" if v.legal else "cannot attack") + (CLOSE_MARK if v.close_call else ""))]
    colours = {"full": FULL_BGR, "partial": PARTIAL_BGR, "none": NOTHING_BGR}
    shapes += [Shape("polygon", tuple(b.footprint_mm), colours[b.kind],
                     label=f"B{b.id} {b.kind}" + (CLOSE_MARK if b.close_call else ""), height_mm=b.height_mm)
               for b in v.cover.blocks]
    return shapes + range_shapes(view, a, player)


def range_shapes(view: RulesView, unit: Unit, player: str | None) -> list[Shape]:
    """A unit's attack range as a circle, in the acting player's hand."""
    profile = view.profile(player or unit.player)
    reach_mm = range_mm(unit.unit_class, profile)
    if not reach_mm:
        return []
    return [Shape("circle", (unit.centre,), REACH_BGR, radius_mm=reach_mm + unit.base_radius_mm,
                  label=f"{unit.id} range {in_hands_and_fingers(reach_mm, profile).text}")]


def verdict_json(verdict: AttackVerdict, target: Unit) -> dict:
    return {"target": target.id, "name": target.name, "chips": chips(verdict), **verdict.to_json()}


def chips(v: AttackVerdict) -> list[dict]:
    """Short labels for the verdict, each straight from one of its fields: kind good | bad | info."""
    out = [{"text": "can attack" if v.legal else "cannot attack", "kind": "good" if v.legal else "bad"}]
    out.append({"text": "in range" if v.in_range else f"out of range ({v.measure.text})",
                "kind": "good" if v.in_range else "bad"})
    if not v.in_view:
        out.append({"text": "out of view", "kind": "bad"})
    full = [b for b in v.cover.blocks if b.kind == "full"]
    if full:
        out.append({"text": f"blocked by block {full[0].id}", "kind": "bad"})
    elif v.cover.partial:
        out.append({"text": f"partial cover x{v.cover.partial}", "kind": "info"})
    if v.back_attack:
        bonus = sum(m.value for m in v.attack_modifiers if "back" in m.name)
        out.append({"text": f"back attack {bonus:+d}" if bonus else "back attack", "kind": "good"})
    if v.elevation:
        out.append({"text": "from above", "kind": "info"})
    if v.close_call:  # (why: in the reasons and the cover's lines)
        out.append({"text": "close call: measure it", "kind": "info"})
    return out
