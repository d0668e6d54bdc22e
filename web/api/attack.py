"""GET /api/attack?attacker=A&target=B[&player=P&charged=1&descent=1&suicide=1&warriors=N]: the
Knight verdict with every reason, cover block and modifier (as `companion knight attack --json`),
plus short `chips`."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from companion.rules.knight.attack import attack
from web.api import arg_bool, arg_int, require_ruleset
from web.compose import verdict_json
from web.context import companion

bp = Blueprint("attack", __name__)


@bp.get("/attack")
def get_attack():
    c = companion()
    require_ruleset(c.setup, "knight", "attack verdicts")
    view = c.view()
    warriors = arg_int("warriors", 0, 0, 6) or None
    balance = view.game.balance if view.game is not None else (lambda player: 0)
    a, t = arg_int("attacker"), arg_int("target")
    attacker, target = view.table.unit(a), view.table.unit(t)
    verdict = attack(view.table, a, t, request.args.get("player") or None, charged=arg_bool("charged"),
                     descent=arg_bool("descent"), suicide=arg_bool("suicide"), warriors=warriors,
                     attacker_balance=balance(attacker.player), defender_balance=balance(target.player))
    return jsonify(verdict_json(verdict, target))
