"""The `companion` command line. Every answering command takes --json and then prints one JSON
object on stdout and nothing else. Bad input: one line on stderr naming the file or field, and an
exit code (2 setup, 3 input, 4 camera; argparse's own usage errors are 2 as well)."""

from __future__ import annotations

import argparse
from contextlib import nullcontext
import json
import math
import sys
from pathlib import Path
from typing import Callable

from companion.commands import forgod as forgod_commands, load_table, print_json as _print_json
from companion.errors import CompanionError, InputError
from companion.synth import RENDERERS


def _progress(enabled: bool) -> Callable[[int, int], None] | None:
    if not enabled:
        return None

    def show(done: int, total: int) -> None:
        print(f"\r  {done}/{total}", end="" if done < total else "\n", file=sys.stderr, flush=True)

    return show


def _report(args: argparse.Namespace, result: dict, format_table: Callable[[dict], str]) -> int:
    """A bench's figures: one JSON object with --json, else its readable table."""
    if args.json:
        _print_json(result)
    else:
        print(format_table(result))
    return 0


# --- locate ----------------------------------------------------------------------------------------

def cmd_locate(args: argparse.Namespace) -> int:
    from companion.setup_file import load_setup
    from companion.vision.pipeline import Locator
    from companion.vision.sources import read_image

    setup = load_setup(args.setup)
    if args.draw:
        from companion.files import check_image_target

        check_image_target(args.draw)
    image = read_image(args.frame)
    background = read_image(args.background) if args.background else None
    if background is not None and background.shape != image.shape:
        raise InputError(f"{args.background}: the empty table must come from the same camera "
                         f"({background.shape[1]}x{background.shape[0]}, the frame is {image.shape[1]}x{image.shape[0]})")
    locator = Locator(setup)
    analysis = locator.analyse(image, frame=0, background=background)
    state = analysis.state
    if args.draw:
        from companion.files import write_image_atomic
        from companion.vision.draw import TableAnnotator

        camera, _ = locator.camera(image.shape[1], image.shape[0])
        write_image_atomic(args.draw, TableAnnotator().annotate(image, state, setup, camera, analysis.registration.pose))
    if args.json:
        _print_json(state.to_json())
    else:
        print(format_state(state))
    return 0 if state.registered else 5


def format_state(state) -> str:
    if not state.registered:
        return state.reason
    reg = state.registration
    lines = [f"table registered from anchors {reg.get('anchors_seen')} (residual {reg.get('residual_px')} px, "
             f"camera at {reg.get('camera_mm')} mm)",
             f"{'id':>4} {'name':<18}{'player':<8}{'x mm':>8}{'y mm':>8}{'z mm':>7}{'±z':>6}{'heading':>9}"
             f"{'tilt':>6}{'conf':>6}  status"]
    for m in state.minis:
        lines.append(f"{m.id:>4} {m.name[:17]:<18}{m.player[:7]:<8}{m.x_mm:>8.1f}{m.y_mm:>8.1f}{m.z_mm:>7.1f}"
                     f"{m.z_sigma_mm:>6.1f}{m.heading_deg:>8.1f}°{_deg(m.tilt_deg):>6}{m.confidence:>6.2f}  "
                     f"{m.status} ({m.height_source} height)")
    if not state.minis:
        lines.append("  no roster mini in view")
    for o in state.objects:
        lines.append(f"object {o.id} {o.name}: x {o.x_mm:.1f} y {o.y_mm:.1f} mm")
    for u in state.unknown_markers:
        lines.append(f"marker {u.id} is not in the roster: near x {u.x_mm:.0f} y {u.y_mm:.0f} mm (at table level)")
    for d in state.duplicate_markers:
        lines.append(f"marker {d.id} seen more than once: one at x {d.x_mm:.0f} y {d.y_mm:.0f} mm")
    lines += [f"warning: {w}" for w in state.warnings]
    return "\n".join(lines)


def _deg(value: float) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.0f}°"


# --- rules: knight ---------------------------------------------------------------------------------

def _table(args: argparse.Namespace):
    return load_table(args.setup, args.state)


def cmd_measure(args: argparse.Namespace) -> int:
    from companion.rules.knight.measure import measure

    setup, table = _table(args)
    a, b = table.unit(args.from_id), table.unit(args.to_id)
    player = args.player or a.player
    profile = table.player(player) if player else setup.players[0] if setup.players else None
    if profile is None:
        raise InputError("--player: the setup has no players, so there is no hand to measure with")
    result = measure(a, b, profile)
    if args.json:
        _print_json({"from": a.id, "to": b.id, **result.to_json()})
    else:
        print(f"{a.name} ({a.id}) to {b.name} ({b.id}): {result.text} in {result.player}'s hand "
              f"({result.edge_mm:.0f} mm base edge to base edge)")
    return 0


def cmd_knight_squads(args: argparse.Namespace) -> int:
    from companion.rules.knight.squads import squads

    _, table = _table(args)
    groups = squads(table)
    if args.json:
        _print_json({"squads": [g for g in groups if len(g) > 1], "singles": [g[0] for g in groups if len(g) == 1]})
    else:
        for g in groups:
            names = ", ".join(f"{table.unit(i).name} ({i})" for i in g)
            print(("squad of %d: " % len(g) if len(g) > 1 else "single: ") + names + f" [{table.unit(g[0]).player}]")
    return 0


def cmd_knight_attack(args: argparse.Namespace) -> int:
    from companion.rules.knight.attack import attack

    _, table = _table(args)
    verdict = attack(table, args.attacker, args.target, args.player, charged=args.charged, descent=args.descent,
                     suicide=args.suicide,
                     warriors=args.warriors, attacker_balance=args.attacker_balance,
                     defender_balance=args.defender_balance)
    if args.json:
        _print_json(verdict.to_json())
        return 0
    v = verdict
    print(("CAN attack: " if v.legal else "CANNOT attack: ") + "; ".join(v.reasons))
    print(f"distance {v.measure.text} ({v.measure.edge_mm:.0f} mm); back attack: {'yes' if v.back_attack else 'no'}; "
          f"cover: {'full' if v.cover.full else f'{v.cover.partial} partial'}")
    for b in v.cover.blocks:
        print(f"  {b.why}")
    print(f"attack +{v.attack_bonus}: " + (", ".join(f"{m.name} {m.value:+d} ({m.why})" for m in v.attack_modifiers) or "none"))
    print(f"defence +{v.defence_bonus}: " + (", ".join(f"{m.name} {m.value:+d} ({m.why})" for m in v.defence_modifiers) or "none"))
    o = v.odds
    print(f"odds: attacker wins {float(o.attacker_wins):.1%} (critical {float(o.attacker_critical):.1%}), "
          f"tie {float(o.tie):.1%}, defender wins {float(o.defender_wins):.1%} (critical {float(o.defender_critical):.1%})")
    for c in v.consequences:
        print(f"note: {c}")
    return 0


def cmd_knight_control(args: argparse.Namespace) -> int:
    from companion.rules.knight.control import control_all

    _, table = _table(args)
    result = control_all(table)
    if args.json:
        _print_json({"objects": [c.to_json() for c in result]})
    else:
        for c in result or []:
            print(f"{c.name} ({c.kind}, marker {c.object_id}): {c.controller or 'nobody'} — {c.why}")
        if not result:
            print("no strategic object on the table (setup [[objects]] with their markers in view)")
    return 0


def cmd_knight_moves(args: argparse.Namespace) -> int:
    from companion.rules.knight.moves import CELL_MM, reach

    setup, table = _table(args)
    unit = table.unit(args.unit)
    if not 0 <= args.ap <= 6:
        raise InputError("--ap: 0 to 6 (the black die)")
    profile = table.player(args.player or unit.player)
    if args.path:
        from companion.rules.knight.moves import path_cost

        try:
            points = [unit.centre] + [tuple(float(v) for v in leg.split(",")) for leg in args.path]
        except ValueError:
            raise InputError("--path: points as X,Y in mm, e.g. --path 300,200 350,260") from None
        cost = path_cost(table, unit, points, profile)
        if args.json:
            _print_json({"unit": unit.id, "player": profile.name, **cost.to_json(), "affordable": cost.ap <= args.ap})
        else:
            climbs = ", ".join(f"block {b} +{a}" for b, a in cost.climbs) or "no climbing"
            print(f"{cost.ap} AP ({cost.walk_mm:.0f} mm walking = {cost.walk_ap} AP; {climbs}); "
                  f"{'within' if cost.ap <= args.ap else 'over'} the {args.ap} AP left")
        return 0
    regions = reach(table, unit.id, args.ap, profile, (setup.table.width_mm, setup.table.depth_mm), squad=args.squad)
    if args.json:
        _print_json({"unit": unit.id, "ap": args.ap, "player": profile.name, "cell_mm": CELL_MM,
                     "regions": [{"ap": r.ap, "area_mm2": r.area_mm2, "polygons": [list(map(list, p)) for p in r.polygons]}
                                 for r in regions]})
    else:
        for r in regions:
            print(f"with {r.ap} AP: {r.area_mm2 / 100:.0f} cm2 of table in reach ({len(r.polygons)} rectangles)")
    return 0


def cmd_knight_watch(args: argparse.Namespace) -> int:
    from companion.rules.knight.watch import fortifications, knocked_over, sealed
    from companion.rules.table import Table
    from companion.state import load_state

    setup, table = _table(args)
    result: dict = {"knocked_over": [u.id for u in knocked_over(table)],
                    "sealed": [u.id for u in table.units if not u.knocked_over and sealed(table, u)]}
    if args.before:
        if not args.player:
            raise InputError("--player: whose turn placed the new blocks (needed with --before)")
        before = Table.from_state(load_state(args.before), setup)
        result["fortifications"] = [f.__dict__ for f in fortifications(before, table, args.player)]
        result["fortification_ap"] = sum(f["bricks"] for f in result["fortifications"])
    if args.json:
        _print_json(result)
    else:
        print(f"knocked over (dead where they lie): {result['knocked_over'] or 'none'}")
        print(f"sealed in a sarcophagus: {result['sealed'] or 'none'}")
        for f in result.get("fortifications", []):
            print(f"fortification: {f['why']}")
    return 0


def cmd_knight_ledger(args: argparse.Namespace) -> int:
    from companion.rules.knight.ledger import ledger

    setup, now = _table(args)
    _, before = load_table(args.setup, args.before)
    result = ledger(before, now, args.player, (setup.table.width_mm, setup.table.depth_mm))
    if args.json:
        _print_json(result.to_json())
        return 0
    print(f"{args.player}'s turn: {result.ap_spent} AP spent")
    for entry in (*result.moves, *result.turns):
        print(f"  {entry.ap} AP: {entry.why}")
    for f in result.fortifications:
        print(f"  {f.bricks} AP: fortification {f.why}")
    for w in result.warnings:
        print(f"  warning: {w}")
    return 0


def cmd_knight_game(args: argparse.Namespace) -> int:
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
        _print_json(summary)
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


# --- rules: infinity ------------------------------------------------------------------------------

def cmd_infinity_f2f(args: argparse.Namespace) -> int:
    from companion.rules.infinity import face_to_face

    result = face_to_face(args.sv_a, args.burst_a, args.sv_b, args.burst_b)
    if args.json:
        _print_json(result.to_json())
    else:
        print(f"A (SV {args.sv_a}, burst {args.burst_a}) wins {float(result.a_wins):.2%} "
              f"(critical {float(result.a_critical):.2%}), B (SV {args.sv_b}, burst {args.burst_b}) wins "
              f"{float(result.b_wins):.2%}, nobody {float(result.none):.2%}; A's expected hits "
              f"{float(result.a_expected_hits):.3f}")
    return 0


def cmd_infinity_template(args: argparse.Namespace) -> int:
    from companion.rules.infinity import CIRCULAR_TEMPLATE_MM, clamp_mods, template_attack

    setup, table = _table(args)
    diameter = float(setup.sections.get("infinity", {}).get("circular_template_mm", CIRCULAR_TEMPLATE_MM))
    point = None
    if args.point:
        try:
            point = tuple(float(v) for v in args.point.split(","))
        except ValueError:
            raise InputError("--point: X,Y in mm") from None
    reactions = {}
    for spec in args.dodge or []:
        unit, _, ph = spec.partition(":")
        reactions[int(unit)] = {"dodge_ph": int(ph)}
    for spec in args.shoot_back or []:
        unit, _, rest = spec.partition(":")
        sv, _, burst = rest.partition("x")
        reactions[int(unit)] = {"sv": int(sv), "burst": int(burst or 1)}
    result = template_attack(table, args.attacker, args.target, point, diameter / 2,
                             args.sv + clamp_mods(args.mods), args.burst, reactions)
    if args.json:
        _print_json(result.to_json())
        return 0
    print(f"template ({diameter:g} mm) on {'trooper ' + str(result.target) if result.target is not None else 'the point'}: "
          f"affects {list(result.affected) or 'nobody'}")
    if result.cancelled_by:
        print(f"CANCELLED: the template covers the attacker's own trooper(s) {list(result.cancelled_by)}")
    print(("line of fire: " if result.line_of_fire else "") + result.line_of_fire_why)
    for unit, odds in result.odds.items():
        print(f"  trooper {unit} ({odds['reaction']}): hit {odds['a_wins']:.1%}, nothing {odds['none']:.1%}, "
              f"it wins {odds['b_wins']:.1%}")
    if result.odds:
        print(f"expected troopers hit: {result.expected_hits:.2f}")
    return 0


# --- rules: contienda ------------------------------------------------------------------------------

def _hex_table(args: argparse.Namespace):
    from companion.rules.contienda import HexGrid

    setup, table = _table(args)
    return setup, table, HexGrid.from_setup(setup.sections.get("hex", {}))


def cmd_contienda_cells(args: argparse.Namespace) -> int:
    from companion.rules.contienda import cells, deployment_problems

    setup, table, grid = _hex_table(args)
    found = cells(table, grid)
    players = tuple(p.name for p in setup.players)
    problems = deployment_problems(table, grid, players[:2]) if len(players) >= 2 else []
    if args.json:
        _print_json({"cells": {str(k): list(v) for k, v in found.items()}, "deployment_problems": problems})
    else:
        for unit_id, (q, r) in sorted(found.items()):
            print(f"unit {unit_id}: hex ({q}, {r})")
        for p in problems:
            print(f"deployment: {p}")
    return 0


def cmd_contienda_reach(args: argparse.Namespace) -> int:
    from companion.rules.contienda import charge_lanes, reach

    _, table, grid = _hex_table(args)
    result = reach(table, grid, args.unit, args.ap, args.mobility)
    lanes = charge_lanes(table, grid, args.unit)
    if args.json:
        _print_json({"hexes": [list(h) for h in result.hexes], "provoking": [list(h) for h in result.provoking],
                     "charges": lanes})
    else:
        print(f"unit {args.unit}: {len(result.hexes)} hexes in reach with {args.ap} AP "
              f"({len(result.provoking)} only by provoking a counter-strike); {len(lanes)} charge lane(s)")
    return 0


def cmd_contienda_odds(args: argparse.Namespace) -> int:
    from companion.rules.contienda import odds

    result = odds(args.mod, 1 if args.advantage else 0, 1 if args.disadvantage else 0, args.attack_number)
    if args.json:
        _print_json(result.to_json())
    else:
        print(f"2d6{args.mod:+d}: 10+ {float(result.full):.1%}, 7-9 {float(result.partial):.1%}, 6- {float(result.miss):.1%}")
    return 0


# --- print -----------------------------------------------------------------------------------------

def cmd_print_markers(args: argparse.Namespace) -> int:
    from calibration.printing import markers_pages
    from calibration.vector import to_pdf, to_svg
    from companion.files import write_bytes_atomic, write_text_atomic
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    pages = markers_pages(setup, args.paper)
    out = Path(args.out)
    write_bytes_atomic(out / "markers.pdf", to_pdf(pages))
    svgs = []
    for k, page in enumerate(pages, start=1):
        write_text_atomic(out / f"markers-{k}.svg", to_svg(page))
        svgs.append(str(out / f"markers-{k}.svg"))
    result = {"pdf": str(out / "markers.pdf"), "svg": svgs, "pages": len(pages),
              "markers": [a.id for a in setup.anchors] + [m.id for m in setup.minis] + [o.id for o in setup.objects]}
    if args.json:
        _print_json(result)
    else:
        print(f"wrote {result['pdf']} ({len(pages)} page(s)) and {len(svgs)} SVG(s): print at 100% scale and check "
              "the 100 mm ruler with a real ruler")
    return 0


def cmd_print_hexmat(args: argparse.Namespace) -> int:
    from calibration.printing import hexmat_pages
    from calibration.vector import to_pdf, to_svg
    from companion.files import write_bytes_atomic, write_text_atomic
    from companion.rules.contienda import HexGrid
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    pages = hexmat_pages(HexGrid.from_setup(setup.sections.get("hex", {})), args.paper)
    out = Path(args.out)
    write_bytes_atomic(out / "hexmat.pdf", to_pdf(pages))
    for k, page in enumerate(pages, start=1):
        write_text_atomic(out / f"hexmat-{k}.svg", to_svg(page))
    if args.json:
        _print_json({"pdf": str(out / "hexmat.pdf"), "pages": len(pages)})
    else:
        print(f"wrote {out / 'hexmat.pdf'} ({len(pages)} sheets): print at 100%, align the crosses")
    return 0


def cmd_print_board(args: argparse.Namespace) -> int:
    from calibration.printing import board_page
    from calibration.vector import to_pdf, to_svg
    from companion.files import write_bytes_atomic, write_text_atomic

    try:
        cols, rows = (int(v) for v in args.squares.lower().split("x"))
    except ValueError:
        raise InputError("--squares: COLSxROWS, e.g. 7x5") from None
    page, _ = board_page((cols, rows), args.square_mm, args.marker_mm, args.dictionary, args.paper)
    out = Path(args.out)
    write_bytes_atomic(out / "board.pdf", to_pdf([page]))
    write_text_atomic(out / "board.svg", to_svg(page))
    if args.json:
        _print_json({"pdf": str(out / "board.pdf"), "svg": str(out / "board.svg"), "squares": [cols, rows],
                     "square_mm": args.square_mm, "marker_mm": args.marker_mm, "dictionary": args.dictionary})
    else:
        print(f"wrote {out / 'board.pdf'} and {out / 'board.svg'}: print at 100% and glue it flat on card")
    return 0


# --- calibrate ---------------------------------------------------------------------------------------

def cmd_calibrate_camera(args: argparse.Namespace) -> int:
    from calibration.camera import BoardSpec, ViewSet, calibrate
    from calibration.setup_edit import update_setup_file
    from companion.setup_file import load_setup
    from companion.vision.sources import open_source

    load_setup(args.setup)  # a broken setup file is reported before any camera work
    try:
        cols, rows = (int(v) for v in args.squares.lower().split("x"))
    except ValueError:
        raise InputError("--squares: COLSxROWS, e.g. 7x5") from None
    views = ViewSet(BoardSpec((cols, rows), args.square_mm, args.marker_mm, args.dictionary))
    if args.synthetic:
        from calibration.synthetic import board_views

        frames = board_views(args.synthetic)[0]
        source_name = f"{args.synthetic} synthetic views"
    else:
        spec = args.frames or args.camera
        if not spec:
            raise InputError("give --frames DIR, --camera 0|URL|FILE or --synthetic N")
        frames = None
        source_name = spec
    total = 0
    with (open_source(args.frames or args.camera) if frames is None else nullcontext()) as source:
        iterator = (f.image for f in source) if frames is None else iter(frames)
        for image in iterator:
            total += 1
            why = views.add(image, f"view {total}")
            done = len(views.image_points)
            if not args.json:
                bar = "#" * min(done, args.views) + "." * max(args.views - done, 0)
                note = f"rejected: {why}" if why else f"coverage {views.coverage():.0%}; next: {views.advice()}"
                print(f"\r[{bar}] {done}/{args.views} views  {note}"[:160], file=sys.stderr)
            if done >= args.views:
                break
    result = calibrate(views)
    data = {**result.to_json(), "source": source_name, "frames_seen": total, "rejected": views.rejected,
            "written": False}
    if not args.dry_run:
        update_setup_file(args.setup, "camera", {"matrix": [[float(v) for v in r] for r in result.matrix],
                                                 "distortion": [float(v) for v in result.distortion]})
        data["written"] = True
    if args.json:
        _print_json(data)
    else:
        k = result.matrix
        print(f"calibrated from {result.views_used} views (coverage {result.coverage:.0%}): fx {k[0, 0]:.1f} "
              f"fy {k[1, 1]:.1f} px, centre ({k[0, 2]:.1f}, {k[1, 2]:.1f}), RMS {result.rms_px:.3f} px"
              + (f"; written to [camera] in {args.setup}" if data["written"] else " (dry run: setup unchanged)"))
    return 0


HAND_PRESETS = {"adult": (178.0, 20.0), "child": (152.0, 16.0)}


def cmd_calibrate_hand(args: argparse.Namespace) -> int:
    from calibration.setup_edit import update_setup_file
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    if setup.player(args.player) is None:
        raise InputError(f"--player: {args.player!r} is not in {args.setup} (players: {[p.name for p in setup.players]})")
    if args.preset:
        hand, finger = HAND_PRESETS[args.preset]
        how = f"the {args.preset} preset"
    elif args.hand_mm:
        hand = args.hand_mm
        finger = args.finger_mm or round(hand * 20.0 / 178.0, 1)
        how = "typed" + ("" if args.finger_mm else " (finger from the hand, in adult proportion)")
    elif args.frame and args.markers:
        from companion.vision.pipeline import Locator
        from companion.vision.sources import read_image

        state = Locator(setup).locate(read_image(args.frame))
        if not state.registered:
            raise InputError(f"{args.frame}: {state.reason}")
        seen = {u.id: u for u in state.unknown_markers}
        missing = [m for m in args.markers if m not in seen]
        if missing:
            raise InputError(f"{args.frame}: marker(s) {missing} not seen (they must not be roster minis or anchors)")
        a, b = seen[args.markers[0]], seen[args.markers[1]]
        hand = round(((a.x_mm - b.x_mm) ** 2 + (a.y_mm - b.y_mm) ** 2) ** 0.5, 1)
        finger = args.finger_mm or round(hand * 20.0 / 178.0, 1)
        how = f"markers {args.markers[0]} and {args.markers[1]} at the thumb and index tips"
    else:
        raise InputError("give --preset adult|child, --hand-mm (and --finger-mm), or --frame IMG --markers A B")
    if not (50 <= hand <= 300 and 5 <= finger <= 40):
        raise InputError(f"a hand of {hand} mm and a finger of {finger} mm are not a person's: measure again")
    update_setup_file(args.setup, "players", {"hand_mm": float(hand), "finger_mm": float(finger)},
                      match=("name", args.player))
    if args.json:
        _print_json({"player": args.player, "hand_mm": hand, "finger_mm": finger, "how": how})
    else:
        print(f"{args.player}: hand {hand} mm, finger {finger} mm ({how}); written to {args.setup}")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from calibration.doctor import diagnose, format_report
    from companion.setup_file import load_setup
    from companion.vision.sources import open_source

    setup = load_setup(args.setup)
    with open_source(args.camera) as source:
        frame = source.read()
    if frame is None:
        from companion.errors import CameraError

        raise CameraError(f"{args.camera}: opened, but gave no frame")
    report = diagnose(frame.image, setup, args.camera)
    if args.json:
        _print_json(report)
    else:
        print(format_report(report))
    return 0 if report["registration"].get("registered") else 5


# --- synth -----------------------------------------------------------------------------------------

def cmd_synth(args: argparse.Namespace) -> int:
    from companion.files import write_image_atomic, write_text_atomic
    from companion.setup_file import setup_to_toml
    from companion.synth.scene import scene_truth
    from companion.synth.worlds import Camera, bench_scene

    out = Path(args.out)
    camera = Camera(args.renderer)
    written = []
    progress = _progress(not args.json)
    for k in range(args.scenes):
        scene = bench_scene(args.renderer, args.seed * 100003 + k, args.level, n_hands=args.hands)
        stem = f"scene_{k:03d}"
        write_image_atomic(out / f"{stem}.png", camera.render(scene))
        write_text_atomic(out / f"{stem}.toml", setup_to_toml(scene.setup(path=str(out / f"{stem}.toml"))))
        write_text_atomic(out / f"{stem}.truth.json", json.dumps(scene_truth(scene), indent=1))
        written.append(stem)
        if progress:
            progress(k + 1, args.scenes)
    if args.json:
        _print_json({"out": str(out), "scenes": written})
    else:
        print(f"wrote {len(written)} scenes to {out}: <scene>.png, <scene>.toml (its setup), <scene>.truth.json")
    return 0


# --- bench -----------------------------------------------------------------------------------------

def cmd_bench_vision(args: argparse.Namespace) -> int:
    from companion.bench import vision

    if args.scenes < 1:
        raise InputError("--scenes: must be at least 1")
    if args.hands < 0:
        raise InputError("--hands: must be 0 or more")
    if args.walls < 0:
        raise InputError("--walls: must be 0 or more")
    if args.threads is not None:
        if args.threads < 1:
            raise InputError("--threads: must be at least 1")
        import cv2

        cv2.setNumThreads(args.threads)
    return _report(args, vision.run(args.scenes, args.seed, args.level, args.hands, progress=_progress(not args.json),
                                    walls=args.walls, renderer=args.renderer), vision.format_table)


def cmd_bench_rules(args: argparse.Namespace) -> int:
    from companion.bench import rules

    return _report(args, rules.run(args.tables, args.seed), rules.format_table)


def cmd_bench_live(args: argparse.Namespace) -> int:
    from companion.bench import live

    if args.frames < 10:
        raise InputError("--frames: must be at least 10 (5 are warm-up)")
    return _report(args, live.run(args.frames, args.seed, progress=_progress(not args.json)), live.format_table)


def cmd_bench_web(args: argparse.Namespace) -> int:
    from web import bench

    if args.seconds < 5:
        raise InputError("--seconds: at least 5")
    if not 1 <= args.phones <= 200:
        raise InputError("--phones: 1 to 200")
    return _report(args, bench.run(args.seconds, args.phones, progress=_progress(not args.json)), bench.format_table)


# --- demo and serve --------------------------------------------------------------------------------

def _serve_options(args: argparse.Namespace, game_name: str, min_interval_s: float):
    from web.server import ServeOptions

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port: {args.port} is not a port (0-65535; 0 picks a free one)")
    return ServeOptions(host=args.host, port=args.port, game_name=game_name, new_game=args.new,
                        new_token=args.new_token, open_browser=not args.no_browser,
                        data_dir=Path(args.data_dir) if args.data_dir else None, min_interval_s=min_interval_s,
                        exit_after_s=args.exit_after, allow_hosts=tuple(args.allow_host or ()))


def cmd_demo(args: argparse.Namespace) -> int:
    """The whole product on the built-in synthetic siege: camera thread, pipeline, server, saved game."""
    from web.demo import run_demo

    if args.frames < 2:
        raise InputError("--frames: at least 2")
    return run_demo(args.frames, _serve_options(args, "demo", 1.0 / args.fps))


def cmd_serve(args: argparse.Namespace) -> int:
    from companion.setup_file import load_setup
    from companion.vision.sources import ImageFolderSource, LoopingSource, open_source
    from web.server import serve

    setup = load_setup(args.setup)
    spec = args.camera.strip()
    live = spec.isdigit() or "://" in spec
    if not live and not Path(spec).exists():
        raise InputError(f"--camera: {spec}: no such file or folder (a device index, a URL, a video or images)")

    def open_camera():
        source = open_source(spec)
        if isinstance(source, ImageFolderSource):  # a still table (photos) is served as a camera
            return LoopingSource(lambda: open_source(spec))
        return source

    if not live:
        open_camera().close()  # a file that is not a readable video or image: say so now, not in a retry loop
    game = Path(args.setup).stem
    return serve(setup, open_camera, f"camera {spec}", _serve_options(args, game, 0.0 if live else 1.0 / args.fps))


# --- parser ----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="companion", description=" ".join(__doc__.split()))  # whole sentences
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("locate", help="locate every roster mini and every block in one frame")
    p.add_argument("frame", metavar="FRAME", help="an image file")
    p.add_argument("--setup", required=True, help="the setup file (TOML)")
    p.add_argument("--background", metavar="EMPTY.png",
                   help="the empty table from the same camera, to tell blocks from the table by")
    p.add_argument("--json", action="store_true", help="print the table state as one JSON object")
    p.add_argument("--draw", metavar="OUT.png", help="write the annotated frame here")
    p.set_defaults(func=cmd_locate)

    def rules_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--setup", required=True, help="the setup file (TOML)")
        p.add_argument("--state", required=True, help="a table state (the JSON of `companion locate --json`)")
        p.add_argument("--json", action="store_true")

    p = sub.add_parser("measure", help="distance between two units in hands and fingers")
    rules_args(p)
    p.add_argument("--from", dest="from_id", type=int, required=True, metavar="A", help="unit (marker id)")
    p.add_argument("--to", dest="to_id", type=int, required=True, metavar="B", help="unit (marker id)")
    p.add_argument("--player", help="whose hand and finger (default: the owner of A)")
    p.set_defaults(func=cmd_measure)

    knight = sub.add_parser("knight", help="Knight-level rules")
    ksub = knight.add_subparsers(dest="knight", required=True, metavar="QUESTION")
    p = ksub.add_parser("squads", help="squads and singles")
    rules_args(p)
    p.set_defaults(func=cmd_knight_squads)
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
    p.set_defaults(func=cmd_knight_attack)
    p = ksub.add_parser("moves", help="the table region a unit reaches with its action points")
    rules_args(p)
    p.add_argument("--unit", type=int, required=True)
    p.add_argument("--ap", type=int, required=True, help="action points left (black die)")
    p.add_argument("--player", help="whose hand and finger (default: the unit's owner)")
    p.add_argument("--squad", action="store_true", help="the unit moves with its squad, keeping formation")
    p.add_argument("--path", nargs="+", metavar="X,Y", help="instead: the AP cost of walking through these points")
    p.set_defaults(func=cmd_knight_moves)
    p = ksub.add_parser("watch", help="what the camera rules on: knocked over, sealed, fortifications")
    rules_args(p)
    p.add_argument("--before", help="the state at the start of the turn: new blocks are fortifications")
    p.add_argument("--player", help="whose turn placed the new blocks")
    p.set_defaults(func=cmd_knight_watch)
    p = ksub.add_parser("ledger", help="what a turn spent between two states: moves, turns, fortifications, in AP")
    rules_args(p)
    p.add_argument("--before", required=True, metavar="START", help="the state at the start of the turn")
    p.add_argument("--player", required=True, help="the acting player (distances in their hand and finger)")
    p.set_defaults(func=cmd_knight_ledger)
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
    p.set_defaults(func=cmd_knight_game)
    infinity = sub.add_parser("infinity", help="Infinity: impact templates and Face to Face odds")
    isub = infinity.add_subparsers(dest="infinity", required=True, metavar="QUESTION")
    p = isub.add_parser("f2f", help="exact Face to Face odds (d20, bursts, criticals)")
    p.add_argument("--sv-a", type=int, required=True)
    p.add_argument("--burst-a", type=int, default=1)
    p.add_argument("--sv-b", type=int, required=True, help="0 for a Normal roll (nobody opposes)")
    p.add_argument("--burst-b", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_infinity_f2f)
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
    p.set_defaults(func=cmd_infinity_template)

    contienda = sub.add_parser("contienda", help="Contienda Arcana: hex cells, reach, odds")
    ysub = contienda.add_subparsers(dest="contienda", required=True, metavar="QUESTION")
    p = ysub.add_parser("cells", help="the hex of every unit, and deployment problems")
    rules_args(p)
    p.set_defaults(func=cmd_contienda_cells)
    p = ysub.add_parser("reach", help="hexes a unit can end on with its AP, provoking paths, charge lanes")
    rules_args(p)
    p.add_argument("--unit", type=int, required=True)
    p.add_argument("--ap", type=int, required=True)
    p.add_argument("--mobility", type=int, default=4, help="hexes per movement action")
    p.set_defaults(func=cmd_contienda_reach)
    p = ysub.add_parser("odds", help="2d6 + mod bands, exact")
    p.add_argument("--mod", type=int, required=True)
    p.add_argument("--advantage", action="store_true")
    p.add_argument("--disadvantage", action="store_true")
    p.add_argument("--attack-number", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_contienda_odds)

    p = ksub.add_parser("control", help="who controls each strategic object")
    rules_args(p)
    p.set_defaults(func=cmd_knight_control)

    forgod_commands.add_group(sub)

    printing = sub.add_parser("print", help="printable markers and the calibration board (PDF and SVG)")
    psub = printing.add_subparsers(dest="what", required=True, metavar="WHAT")
    p = psub.add_parser("markers", help="anchors and every roster marker at exact size")
    p.add_argument("--setup", required=True)
    p.add_argument("--out", required=True, help="folder for markers.pdf and markers-N.svg")
    p.add_argument("--paper", choices=["a4", "letter"], default="a4")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_print_markers)
    p = psub.add_parser("hexmat", help="Contienda: the hex grid at exact scale, tiled over pages")
    p.add_argument("--setup", required=True, help="its [hex] table gives the hex size, origin, columns and rows")
    p.add_argument("--out", required=True)
    p.add_argument("--paper", choices=["a4", "letter"], default="a4")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_print_hexmat)
    p = psub.add_parser("board", help="a ChArUco board for camera calibration")
    p.add_argument("--out", required=True)
    p.add_argument("--squares", default="7x5")
    p.add_argument("--square-mm", type=float, default=30.0)
    p.add_argument("--marker-mm", type=float, default=22.0)
    p.add_argument("--dictionary", default="DICT_5X5_100")
    p.add_argument("--paper", choices=["a4", "letter"], default="a4")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_print_board)

    calib = sub.add_parser("calibrate", help="camera intrinsics from a board; a player's hand and finger")
    csub = calib.add_subparsers(dest="what", required=True, metavar="WHAT")
    p = csub.add_parser("camera", help="from views of the printed ChArUco board (companion print board)")
    p.add_argument("--setup", required=True, help="where [camera] is written")
    p.add_argument("--frames", help="a folder of board photos")
    p.add_argument("--camera", help="0 | URL | FILE: take views live")
    p.add_argument("--synthetic", type=int, metavar="N", help="N rendered views with known intrinsics (a dry rehearsal)")
    p.add_argument("--views", type=int, default=20, help="stop after this many good views")
    p.add_argument("--squares", default="7x5")
    p.add_argument("--square-mm", type=float, default=30.0)
    p.add_argument("--marker-mm", type=float, default=22.0)
    p.add_argument("--dictionary", default="DICT_5X5_100")
    p.add_argument("--dry-run", action="store_true", help="do not write the setup file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate_camera)
    p = csub.add_parser("hand", help="a player's hand (thumb-to-index spread) and finger width")
    p.add_argument("--setup", required=True)
    p.add_argument("--player", required=True)
    p.add_argument("--preset", choices=sorted(HAND_PRESETS))
    p.add_argument("--hand-mm", type=float)
    p.add_argument("--finger-mm", type=float)
    p.add_argument("--frame", help="a photo with two small markers at the thumb and index tips, flat on the table")
    p.add_argument("--markers", type=int, nargs=2, metavar=("A", "B"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate_hand)

    p = sub.add_parser("doctor", help="is this camera good enough for the table, and what to fix")
    p.add_argument("--setup", required=True)
    p.add_argument("--camera", required=True, help="0 | URL | FILE (a video or a photo)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("synth", help="render synthetic tables with their setup and truth (test data)")
    p.add_argument("--out", required=True, help="folder to write into")
    p.add_argument("--scenes", type=int, default=3, help="how many tables to render (default 3)")
    p.add_argument("--seed", type=int, default=0,
                   help="which set of tables: the same seed renders the same tables (default 0)")
    p.add_argument("--level", choices=["standard", "hard"], default="standard")
    p.add_argument("--hands", type=int, default=0, help="hands over the table per scene")
    p.add_argument("--renderer", choices=RENDERERS, default="plain",
                   help="plain (the ray-caster), raycast (its camera and light randomised) or pbr (path traced, "
                        "Mitsuba 3: the optional extra '.[pbr]')")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_synth)

    bench = sub.add_parser("bench", help="measure accuracy and speed against ground truth")
    bsub = bench.add_subparsers(dest="bench", required=True, metavar="BENCH")
    for name, help_text, count, default, func in (
            ("vision", "minis and blocks on rendered tables: pipeline vs plain OpenCV", "--scenes", 20, cmd_bench_vision),
            ("rules", "every attack query on a 12-unit, 10-block table, timed", "--tables", 20, cmd_bench_rules),
            ("live", "a moving table: live tracker vs full-frame detectMarkers", "--frames", 40, cmd_bench_live)):
        p = bsub.add_parser(name, help=help_text)
        p.add_argument(count, type=int, default=default)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=func)
        if name == "vision":
            p.add_argument("--level", choices=["standard", "hard"], default="standard")
            p.add_argument("--hands", type=int, default=0, help="hands over the table in every scene")
            p.add_argument("--walls", type=int, default=0,
                           help="walls that turn (L, U, T, castle rings of touching bricks) in every scene")
            p.add_argument("--threads", type=int, help="OpenCV's threads (1: the one-core figure; default: OpenCV's)")
            p.add_argument("--renderer", choices=RENDERERS, default="raycast",
                           help="the synthetic camera: raycast (the ray-caster, camera and light randomised), pbr "
                                "(path traced with Mitsuba 3, the optional extra; frames cached), plain (the "
                                "ray-caster unrandomised)")
    p = bsub.add_parser("web", help="20 phones and an MJPEG viewer against the real server: latency, frame delay")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--phones", type=int, default=20)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_web)

    def server_args(p: argparse.ArgumentParser, fps: float) -> None:
        p.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all interfaces)")
        p.add_argument("--port", type=int, default=8765, help="port (default 8765; a free one if it is taken)")
        p.add_argument("--no-browser", action="store_true", help="do not open the host screen in a browser")
        p.add_argument("--new", action="store_true", help="start a fresh game (the old save is kept, renamed)")
        p.add_argument("--new-token", action="store_true", help="a new join code: phones joined before must scan again")
        p.add_argument("--data-dir", help="where games and the join token are kept (default: the user's data folder)")
        p.add_argument("--allow-host", action="append", metavar="NAME", help="another Host name to serve (e.g. a DNS name)")
        p.add_argument("--fps", type=float, default=fps, help=f"frames a second from files and the synthetic camera (default {fps:g})")
        p.add_argument("--exit-after", type=float, metavar="SECONDS", help="stop after this long (scripted runs)")

    p = sub.add_parser("demo", help="the whole product on a built-in synthetic siege, no camera needed")
    server_args(p, 4.0)
    p.add_argument("--frames", type=int, default=48, help="length of the scripted siege in frames (default 48)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("serve", help="the companion on a real camera: phone page, host screen, saved game")
    p.add_argument("--camera", required=True, help="device index (0), stream URL, video file, image or folder of images")
    p.add_argument("--setup", required=True, help="the setup file (TOML)")
    server_args(p, 10.0)
    p.set_defaults(func=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CompanionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
