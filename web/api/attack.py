"""GET /api/attack?attacker=A&target=B[&player=P&charged=1&descent=1&suicide=1&warriors=N]: the
Knight verdict with every reason, cover block and modifier (as `companion knight attack --json`),
plus short `chips`."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from companion.rules.knight.attack import AttackVerdict, attack
from companion.rules.table import Unit
from web.api import arg_bool, arg_int
from web.context import companion

bp = Blueprint("attack", __name__)


@bp.get("/attack")
def get_attack():
    c = companion()
    view = c.view()
    warriors = arg_int("warriors", 0, 0, 6) or None
    balance = view.game.balance if view.game is not None else (lambda player: 0)
    a, t = arg_int("attacker"), arg_int("target")
    attacker, target = view.table.unit(a), view.table.unit(t)
    c.asking.ask("attack", attacker=a, target=t, player=request.args.get("player") or None)
    verdict = attack(view.table, a, t, request.args.get("player") or None, charged=arg_bool("charged"),
                     descent=arg_bool("descent"), suicide=arg_bool("suicide"), warriors=warriors,
                     attacker_balance=balance(attacker.player), defender_balance=balance(target.player))
    return jsonify(verdict_json(verdict, target))


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
    return out
