"""`companion knight ...`: squads, attacks, moves, what the camera rules on, the turn ledger, the saved game."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from companion.commands import answer, load_table, print_json, rules_args, table_point
from companion.errors import InputError


def cmd_squads(args: argparse.Namespace) -> int:
    from companion.rules.knight.squads import squads

    _, table = load_table(args.setup, args.state)
    groups = squads(table)
    if args.json:
        print_json({"squads": [g for g in groups if len(g) > 1], "singles": [g[0] for g in groups if len(g) == 1]})
    else:
        for g in groups:
            names = ", ".join(f"{table.unit(i).name} ({i})" for i in g)
            print(("squad of %d: " % len(g) if len(g) > 1 else "single: ") + names + f" [{table.unit(g[0]).player}]")
    return 0


def cmd_attack(args: argparse.Namespace) -> int:
    from companion.rules.knight.attack import attack

    _, table = load_table(args.setup, args.state)
    verdict = attack(table, args.attacker, args.target, args.player, charged=args.charged, descent=args.descent,
                     suicide=args.suicide,
                     warriors=args.warriors, attacker_balance=args.attacker_balance,
                     defender_balance=args.defender_balance)
    return answer(args, verdict)


def cmd_control(args: argparse.Namespace) -> int:
    from companion.rules.knight.control import control_all

    _, table = load_table(args.setup, args.state)
    result = control_all(table)
    if args.json:
        print_json({"objects": [c.to_json() for c in result]})
    else:
        for c in result or []:
            print(f"{c.name} ({c.kind}, marker {c.object_id}): {c.controller or 'nobody'} — {c.why}")
        if not result:
            print("no strategic object on the table (setup [[objects]] with their markers in view)")
    return 0


def cmd_moves(args: argparse.Namespace) -> int:
    from companion.rules.knight.moves import CELL_MM, reach

    setup, table = load_table(args.setup, args.state)
    unit = table.unit(args.unit)
    if not 0 <= args.ap <= 6:
        raise InputError("--ap: 0 to 6 (the black die)")
    profile = table.player(args.player or unit.player)
    if args.path:
        from companion.rules.knight.moves import path_cost

        points = [unit.centre] + [table_point(leg, "--path", setup) for leg in args.path]
        cost = path_cost(table, unit, points, profile)
        if args.json:
            print_json({"unit": unit.id, "player": profile.name, **cost.to_json(), "affordable": cost.ap <= args.ap})
        else:
            print(cost.to_text(args.ap))
        return 0
    regions = reach(table, unit.id, args.ap, profile, (setup.table.width_mm, setup.table.depth_mm), squad=args.squad)
    if args.json:
        print_json({"unit": unit.id, "ap": args.ap, "player": profile.name, "cell_mm": CELL_MM,
                     "regions": [r.to_json() for r in regions]})
    else:
        for r in regions:
            print(f"with {r.ap} AP: {r.area_mm2 / 100:.0f} cm2 of table in reach ({len(r.polygons)} rectangles)")
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    from companion.rules.knight.referee import fortifications, knocked_over, sealed
    from companion.rules.table import Table
    from companion.state import load_state

    setup, table = load_table(args.setup, args.state)
    result: dict = {"knocked_over": [u.id for u in knocked_over(table)],
                    "sealed": [u.id for u in table.units if not u.knocked_over and sealed(table, u)]}
    if args.before:
        if not args.player:
            raise InputError("--player: whose turn placed the new blocks (needed with --before)")
        before = Table.from_state(load_state(args.before), setup)
        result["fortifications"] = [f.__dict__ for f in fortifications(before, table, args.player)]
        result["fortification_ap"] = sum(f["bricks"] for f in result["fortifications"])
    if args.json:
        print_json(result)
    else:
        print(f"knocked over (dead where they lie): {result['knocked_over'] or 'none'}")
        print(f"sealed in a sarcophagus: {result['sealed'] or 'none'}")
        for f in result.get("fortifications", []):
            print(f"fortification: {f['why']}")
    return 0


def cmd_ledger(args: argparse.Namespace) -> int:
    from companion.rules.knight.ledger import ledger

    setup, now = load_table(args.setup, args.state)
    _, before = load_table(args.setup, args.before)
    result = ledger(before, now, args.player, (setup.table.width_mm, setup.table.depth_mm))
    return answer(args, result)


def cmd_game(args: argparse.Namespace) -> int:
    from companion.files import write_text_atomic
    from companion.rules.knight import game as g
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    path = Path(args.game)
    if args.action == "new":
        if path.exists() and not args.force:
            raise InputError(f"{path}: a saved game is already there (use --force to start over)")
        try:
            game = g.Game(setup, args.mode, castle_holder=args.castle_holder)
        except ValueError as exc:
            raise InputError(f"{exc}") from None
    else:
        try:
            game = g.Game.from_json(json.loads(path.read_text(encoding="utf-8")), setup)
        except FileNotFoundError:
            raise InputError(f"{path}: no saved game (start one with `knight game new`)") from None
        except (ValueError, KeyError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: not a saved game ({exc})") from None
        event = _game_event(args, game, g)
        try:
            if args.action == "undo":
                game.pop()
            elif event is not None:
                game.push(event)
        except g.IllegalEvent as exc:
            print(f"not allowed now: {exc}", file=sys.stderr)
            return 6
    if args.action != "show":
        write_text_atomic(path, json.dumps(game.to_json(), indent=1))
    summary = game.summary()
    if args.json:
        print_json(summary)
    else:
        head = f"{game.mode}: round {summary['round']}" + (f" of {summary['siege_rounds']}" if summary["siege_rounds"] else "")
        turn = f"{summary['turn']}'s turn, dice left {summary['dice_left']}" if summary["turn"] else f"{summary['next']} to roll"
        print(f"{head}; {turn}" + (f"; WINNER {summary['winner']} ({summary['win_reason']})" if summary["winner"] else ""))
        for line in summary["log"][-5:]:
            print(f"  {line}")
    return 0


def _game_event(args, game, g):
    if args.action == "roll":
        return g.StartTurn(args.player or game.next_player, args.black, args.red, args.white)
    if args.action == "convert":
        return g.Convert(tuple(args.swap), args.lose_on)
    if args.action == "spend":
        return g.Spend(args.die, args.amount, args.what or "")
    if args.action == "interrupt":
        return g.Interrupt(args.player, args.unit)
    if args.action == "died":
        return g.UnitDied(args.unit, args.cause or "")
    if args.action == "end-turn":
        control = {}
        if args.state:
            from companion.rules.knight.control import control_all
            from companion.rules.table import Table
            from companion.state import load_state

            control = {c.kind: c.controller for c in control_all(Table.from_state(load_state(args.state), game.setup))}
        return g.EndTurn(control)
    return None



def add_group(sub: argparse._SubParsersAction) -> None:
    knight = sub.add_parser("knight", help="Knight-level rules")
    ksub = knight.add_subparsers(dest="knight", required=True, metavar="QUESTION")
    p = ksub.add_parser("squads", help="squads and singles")
    rules_args(p)
    p.set_defaults(func=cmd_squads)
    p = ksub.add_parser("attack", help="can A attack B: range, view, cover, bonuses, odds, with reasons")
    rules_args(p)
    p.add_argument("--attacker", type=int, required=True)
    p.add_argument("--target", type=int, required=True)
    p.add_argument("--player", help="whose hand and finger (default: the attacker's owner)")
    p.add_argument("--charged", action="store_true", help="the attacker made a running charge")
    p.add_argument("--descent", action="store_true", help="the attacker descends on the target (polearms strike first)")
    p.add_argument("--suicide", action="store_true", help="an orc declares a suicide attack")
    p.add_argument("--warriors", type=int, help="the white die: most squad units that may act")
    p.add_argument("--attacker-balance", type=int, default=0, help="vengeful spirits: attacker's lost units")
    p.add_argument("--defender-balance", type=int, default=0, help="vengeful spirits: defender's lost units")
    p.set_defaults(func=cmd_attack)
    p = ksub.add_parser("moves", help="the table region a unit reaches with its action points")
    rules_args(p)
    p.add_argument("--unit", type=int, required=True)
    p.add_argument("--ap", type=int, required=True, help="action points left (black die)")
    p.add_argument("--player", help="whose hand and finger (default: the unit's owner)")
    p.add_argument("--squad", action="store_true", help="the unit moves with its squad, keeping formation")
    p.add_argument("--path", nargs="+", metavar="X,Y", help="instead: the AP cost of walking through these points")
    p.set_defaults(func=cmd_moves)
    p = ksub.add_parser("watch", help="what the camera rules on: knocked over, sealed, fortifications")
    rules_args(p)
    p.add_argument("--before", help="the state at the start of the turn: new blocks are fortifications")
    p.add_argument("--player", help="whose turn placed the new blocks")
    p.set_defaults(func=cmd_watch)
    p = ksub.add_parser("ledger", help="what a turn spent between two states: moves, turns, fortifications, in AP")
    rules_args(p)
    p.add_argument("--before", required=True, metavar="START", help="the state at the start of the turn")
    p.add_argument("--player", required=True, help="the acting player (distances in their hand and finger)")
    p.set_defaults(func=cmd_ledger)
    p = ksub.add_parser("game", help="a saved game: turns, dice, rounds, the siege counter, undo")
    p.add_argument("action", choices=["new", "show", "roll", "convert", "spend", "interrupt", "died", "end-turn", "undo"])
    p.add_argument("--setup", required=True)
    p.add_argument("--game", required=True, help="the saved game file (JSON, written atomically)")
    p.add_argument("--mode", choices=["skirmish", "siege", "overlord", "destruction", "plague"], default="siege")
    p.add_argument("--castle-holder", help="siege: the player holding the castle")
    p.add_argument("--force", action="store_true", help="new: replace a saved game")
    p.add_argument("--player")
    p.add_argument("--black", type=int)
    p.add_argument("--red", type=int)
    p.add_argument("--white", type=int)
    p.add_argument("--swap", nargs=2, metavar="DIE")
    p.add_argument("--lose-on", metavar="DIE")
    p.add_argument("--die", choices=["black", "red"])
    p.add_argument("--amount", type=int, default=1)
    p.add_argument("--what")
    p.add_argument("--unit", type=int)
    p.add_argument("--cause")
    p.add_argument("--state", help="end-turn: the table state, for who holds each object")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_game)
    p = ksub.add_parser("control", help="who controls each strategic object")
    rules_args(p)
    p.set_defaults(func=cmd_control)

