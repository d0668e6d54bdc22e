"""`companion infinity ...`: Face to Face odds and the circular template."""

from __future__ import annotations

import argparse
import re

from companion.commands import answer, load_table, print_json, rules_args, table_point
from companion.errors import InputError


def _within(value: int, bounds: tuple[int, int], what: str) -> int:
    if not bounds[0] <= value <= bounds[1]:
        raise InputError(f"{what}: {value} is not {bounds[0]} to {bounds[1]}")
    return value


def cmd_f2f(args: argparse.Namespace) -> int:
    from companion.rules.infinity import SUCCESS_VALUE_RANGE, face_to_face

    result = face_to_face(_within(args.sv_a, SUCCESS_VALUE_RANGE, "--sv-a"), args.burst_a,
                          _within(args.sv_b, SUCCESS_VALUE_RANGE, "--sv-b"), args.burst_b)
    if args.json:
        print_json(result.to_json())
    else:
        print(f"A (SV {args.sv_a}, burst {args.burst_a}) wins {float(result.a_wins):.2%} "
              f"(critical {float(result.a_critical):.2%}), B (SV {args.sv_b}, burst {args.burst_b}) wins "
              f"{float(result.b_wins):.2%}, nobody {float(result.none):.2%}; A's expected hits "
              f"{float(result.a_expected_hits):.3f}")
    return 0


def cmd_template(args: argparse.Namespace) -> int:
    from companion.rules.infinity import (ATTRIBUTE_RANGE, MODS_RANGE, clamp_mods, template_attack,
                                          template_diameter_mm)

    setup, table = load_table(args.setup, args.state)
    diameter = template_diameter_mm(setup)
    point = None
    if args.point:
        if args.target is not None:
            raise InputError("--point: for no-target ammunition only (the template is centred on --target)")
        point = table_point(args.point, "--point", setup)
    reactions = {}
    for spec in args.dodge or []:
        unit, ph = _reaction(spec, "--dodge", "ID:PH", r"(\d+):(\d+)")
        reactions[unit] = {"dodge_ph": _within(int(ph), ATTRIBUTE_RANGE, f"--dodge {spec}: PH")}
    for spec in args.shoot_back or []:
        unit, sv, burst = _reaction(spec, "--shoot-back", "ID:SV or ID:SVxBURST", r"(\d+):(\d+)(?:x(\d+))?")
        reactions[unit] = {"sv": _within(int(sv), ATTRIBUTE_RANGE, f"--shoot-back {spec}: SV"),
                           "burst": int(burst or 1)}
    result = template_attack(table, args.attacker, args.target, point, diameter / 2,
                             _within(args.sv, ATTRIBUTE_RANGE, "--sv")
                             + clamp_mods(_within(args.mods, MODS_RANGE, "--mods")),
                             args.burst, reactions)
    return answer(args, result)


def _reaction(spec: str, flag: str, form: str, pattern: str) -> tuple:
    """A trooper's reaction, ID:VALUE...: the unit id (int), then the pattern's other groups."""
    match = re.fullmatch(pattern, spec.strip())
    if match is None:
        raise InputError(f"{flag}: {spec!r} is not {form} (whole numbers)")
    return (int(match.group(1)), *match.groups()[1:])


def add_group(sub: argparse._SubParsersAction) -> None:
    infinity = sub.add_parser("infinity", help="Infinity: impact templates and Face to Face odds")
    isub = infinity.add_subparsers(dest="infinity", required=True, metavar="QUESTION")
    p = isub.add_parser("f2f", help="exact Face to Face odds (d20, bursts, criticals)")
    p.add_argument("--sv-a", type=int, required=True)
    p.add_argument("--burst-a", type=int, default=1)
    p.add_argument("--sv-b", type=int, required=True, help="0 for a Normal roll (nobody opposes)")
    p.add_argument("--burst-b", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_f2f)
    p = isub.add_parser("template", help="who is under the circular template, line of fire, odds per trooper")
    rules_args(p)
    p.add_argument("--attacker", type=int, required=True)
    p.add_argument("--target", type=int, help="the Main Target")
    p.add_argument("--point", help="X,Y: no-target ammunition (smoke) on a table point")
    p.add_argument("--sv", type=int, default=13, help="the attacker's attribute (BS, PH ...)")
    p.add_argument("--mods", type=int, default=0, help="MODs from the Main Target (capped at +/-12)")
    p.add_argument("--burst", type=int, default=1)
    p.add_argument("--dodge", nargs="*", metavar="ID:PH", help="troopers that dodge, with their PH")
    p.add_argument("--shoot-back", nargs="*", metavar="ID:SVxB", help="troopers that shoot back: SV and burst")
    p.set_defaults(func=cmd_template)

