"""`companion forgod ...`: squares, odds, cross-checks, attack verdicts and army lists (forgod.md contract)."""

from __future__ import annotations

import argparse

from companion.commands import load_table, print_json, require_ruleset, rules_args
from companion.errors import InputError


def _rules(args: argparse.Namespace, command: str):
    from companion.rules.forgod.squares import place

    setup, table = load_table(args.setup, args.state)
    require_ruleset(setup, "forgod", command)
    return setup.rules, place(setup.rules, table)


def cmd_cells(args: argparse.Namespace) -> int:
    from companion.rules.forgod.squares import cells_json

    rules, placed = _rules(args, "forgod cells")
    result = cells_json(placed)
    if args.json:
        print_json(result)
        return 0
    for card_id, cell in result["cells"].items():
        card = placed[int(card_id)].card
        print(f"{card.name} ({card_id}, {card.player}): col {cell['col']}, row {cell['row']}, {cell['side']}'s "
              f"{cell['line']} line" + (" (enemy field)" if cell["in_enemy_field"] else ""))
    for card_id in result["off_board"]:
        print(f"{placed[card_id].card.name} ({card_id}): off the board")
    return 0


def _fraction_line(odds: dict) -> str:
    f = odds["fractions"]
    return "; ".join(f"{k} {v} ({float(odds[k]):.1%})" for k, v in f.items() if v is not None)


def cmd_odds(args: argparse.Namespace) -> int:
    from companion.rules.forgod.odds import attack_odds

    if args.multiplier < 1:
        raise InputError(f"--multiplier: must be 1 or more, got {args.multiplier}")
    if args.hp is not None and args.hp < 1:
        raise InputError(f"--hp: must be 1 or more, got {args.hp}")
    odds = attack_odds(args.attack, args.evasion, args.damage, args.absorption, args.constant_absorption,
                       args.multiplier, args.hp).to_json()
    if args.json:
        print_json(odds)
    else:
        print(_fraction_line(odds))
        print("damage: " + ", ".join(f"{n}: {p:.1%}" for n, p in odds["damage"].items()))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from companion.rules.forgod.odds import check_odds

    result = check_odds(args.bonus_a, args.bonus_d).to_json()
    if args.json:
        print_json(result)
    else:
        f = result["fractions"]
        print(f"attacker wins {f['attacker_wins']} ({result['attacker_wins']:.1%}), "
              f"defender wins {f['defender_wins']} ({result['defender_wins']:.1%})")
    return 0


def cmd_attack(args: argparse.Namespace) -> int:
    from companion.rules.forgod.attack import attack

    rules, placed = _rules(args, "forgod attack")
    verdict = attack(rules, placed, args.attacker, args.target, charge=args.charge, flank=args.flank, far=args.far)
    result = verdict.to_json()
    if args.json:
        print_json(result)
        return 0
    print(("CAN attack: " if verdict.legal else "CANNOT attack: ") + "; ".join(verdict.reasons))
    for key in ("attack", "evasion", "damage", "absorption", "constant_absorption"):
        parts = [f"{m.name} {m.value:+d} ({m.why})" for m in verdict.modifiers if m.applies_to == key]
        print(f"{key} {verdict.total(key):+d}: " + (", ".join(parts) or "none"))
    print(f"damage x{verdict.multiplier}; odds: " + _fraction_line(result["odds"]))
    return 0


def cmd_army(args: argparse.Namespace) -> int:
    from companion.rules.forgod.army import check_army
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    require_ruleset(setup, "forgod", "forgod army")
    result = check_army(setup.rules)
    if args.json:
        print_json(result.to_json())
        return 0
    print(("army list valid" if result.valid else "army list NOT valid") + f" (PC limit {result.pc_limit})")
    for player in result.units:
        print(f"  {player}: {result.units[player]} units, {result.pc_total[player]} PC")
    for problem in result.problems:
        print(f"  problem: {problem}")
    return 0


def add_group(sub: argparse._SubParsersAction) -> None:
    group = sub.add_parser("forgod", help="F0R60D: squares, attack verdicts, exact odds, army lists")
    gsub = group.add_subparsers(dest="forgod", required=True, metavar="QUESTION")
    p = gsub.add_parser("cells", help="the square, side and formation line of every card")
    rules_args(p)
    p.set_defaults(func=cmd_cells)
    p = gsub.add_parser("odds", help="exact odds of one attack: d10 vs d10, criticals, damage, kill")
    p.add_argument("--attack", type=int, required=True, metavar="A", help="the attacker's total attack bonus")
    p.add_argument("--evasion", type=int, required=True, metavar="E", help="the target's total evasion bonus")
    p.add_argument("--damage", type=int, default=0, metavar="D", help="damage bonus (0)")
    p.add_argument("--absorption", type=int, default=0, metavar="X", help="absorption (0)")
    p.add_argument("--constant-absorption", type=int, default=0, metavar="Y", help="constant absorption (0)")
    p.add_argument("--multiplier", type=int, default=1, metavar="M", help="damage multiplier: 2 charge, 3 charge and flank (1)")
    p.add_argument("--hp", type=int, metavar="H", help="the target's hit points, for the kill probability")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_odds)
    p = gsub.add_parser("check", help="a cross-check (fortitude, morale): d10 + bonus each, exact")
    p.add_argument("--bonus-a", type=int, required=True, metavar="A", help="the checking side's bonus")
    p.add_argument("--bonus-d", type=int, required=True, metavar="B", help="the defending side's bonus (wins ties)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_check)
    p = gsub.add_parser("attack", help="can card A strike card B: area, terrain, every modifier, the odds")
    rules_args(p)
    p.add_argument("--attacker", type=int, required=True, metavar="A", help="card (marker id)")
    p.add_argument("--target", type=int, required=True, metavar="B", help="card (marker id)")
    p.add_argument("--charge", action="store_true", help="declared charge: +4 attack, damage x2")
    p.add_argument("--flank", action="store_true", help="declared flank (fortitude check won): +4 attack and damage")
    p.add_argument("--far", action="store_true", help="archery's far zone: -6 attack")
    p.set_defaults(func=cmd_attack)
    p = gsub.add_parser("army", help="the army lists against the mode and level: every problem at once")
    p.add_argument("--setup", required=True, help="the setup file (TOML)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_army)
