"""`companion contienda ...`: hex cells, reach, odds."""

from __future__ import annotations

import argparse

from companion.commands import load_table, print_json, rules_args


def _hex_table(args: argparse.Namespace):
    from companion.rules.contienda import grid_of

    setup, table = load_table(args.setup, args.state)
    return setup, table, grid_of(setup)


def cmd_cells(args: argparse.Namespace) -> int:
    from companion.rules.contienda import cells, deployment_problems

    setup, table, grid = _hex_table(args)
    found = cells(table, grid)
    players = tuple(p.name for p in setup.players)
    problems = deployment_problems(table, grid, players[:2]) if len(players) >= 2 else []
    if args.json:
        print_json({"cells": {str(k): list(v) for k, v in found.items()}, "deployment_problems": problems})
    else:
        for unit_id, (q, r) in sorted(found.items()):
            print(f"unit {unit_id}: hex ({q}, {r})")
        for p in problems:
            print(f"deployment: {p}")
    return 0


def cmd_reach(args: argparse.Namespace) -> int:
    from companion.rules.contienda import charge_lanes, reach

    _, table, grid = _hex_table(args)
    result = reach(table, grid, args.unit, args.ap, args.mobility)
    lanes = charge_lanes(table, grid, args.unit)
    if args.json:
        print_json({"hexes": [list(h) for h in result.hexes], "provoking": [list(h) for h in result.provoking],
                     "charges": [lane.to_json() for lane in lanes]})
    else:
        print(f"unit {args.unit}: {len(result.hexes)} hexes in reach with {args.ap} AP "
              f"({len(result.provoking)} only by provoking a counter-strike); {len(lanes)} charge lane(s)")
    return 0


def cmd_odds(args: argparse.Namespace) -> int:
    from companion.rules.contienda import odds

    result = odds(args.mod, 1 if args.advantage else 0, 1 if args.disadvantage else 0, args.attack_number)
    if args.json:
        print_json(result.to_json())
    else:
        print(f"2d6{args.mod:+d}: 10+ {float(result.full):.1%}, 7-9 {float(result.partial):.1%}, 6- {float(result.miss):.1%}")
    return 0



def add_group(sub: argparse._SubParsersAction) -> None:
    contienda = sub.add_parser("contienda", help="Contienda Arcana: hex cells, reach, odds")
    ysub = contienda.add_subparsers(dest="contienda", required=True, metavar="QUESTION")
    p = ysub.add_parser("cells", help="the hex of every unit, and deployment problems")
    rules_args(p)
    p.set_defaults(func=cmd_cells)
    p = ysub.add_parser("reach", help="hexes a unit can end on with its AP, provoking paths, charge lanes")
    rules_args(p)
    p.add_argument("--unit", type=int, required=True)
    p.add_argument("--ap", type=int, required=True)
    p.add_argument("--mobility", type=int, default=4, help="hexes per movement action")
    p.set_defaults(func=cmd_reach)
    p = ysub.add_parser("odds", help="2d6 + mod bands, exact")
    p.add_argument("--mod", type=int, required=True)
    p.add_argument("--advantage", action="store_true")
    p.add_argument("--disadvantage", action="store_true")
    p.add_argument("--attack-number", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_odds)

