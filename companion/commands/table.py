"""`companion locate` (one frame to a table state, and its readable form) and `companion measure`."""

from __future__ import annotations

import argparse
import math

from companion.commands import load_table, print_json, rules_args
from companion.errors import InputError


def cmd_locate(args: argparse.Namespace) -> int:
    from companion.setup_file import load_setup
    from companion.vision.locator import Locator
    from companion.vision.sources import read_image

    setup = load_setup(args.setup, need_anchors=True)
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
        print_json(state.to_json())
    else:
        print(format_state(state))
    return 0 if state.registered else 5


def format_state(state) -> str:
    if not state.registered:
        return state.reason
    reg = state.registration
    camera = f"{[round(v, 1) for v in reg.camera.centre_mm]}" if reg.camera is not None else "unknown"
    lines = [f"table registered from anchors {list(reg.anchors_seen)} (residual {reg.residual_px} px, "
             f"camera at {camera} mm)",
             f"{'id':>4} {'name':<18}{'player':<8}{'x mm':>8}{'y mm':>8}{'z mm':>7}{'±z':>6}{'heading':>9}"
             f"{'tilt':>6}{'conf':>6}  status"]
    for m in state.minis:
        lines.append(f"{m.id:>4} {m.name[:17]:<18}{m.player[:7]:<8}{m.x_mm:>8.1f}{m.y_mm:>8.1f}{m.z_mm:>7.1f}"
                     f"{m.z_sigma_mm:>6.1f}{m.heading_deg:>8.1f}°{_deg(m.tilt_deg):>6}{m.confidence:>6.2f}  "
                     f"{m.status} ({m.height_source} height)")
    if not state.minis:
        lines.append("  no roster mini in view")
    for b in state.blocks:
        xs, ys = [p[0] for p in b.footprint_mm], [p[1] for p in b.footprint_mm]
        lines.append(f"block {b.id}: {b.color or 'unknown colour'}, {b.height_mm:.1f} mm high, over x {min(xs):.0f}-{max(xs):.0f} "
                     f"y {min(ys):.0f}-{max(ys):.0f} mm (confidence {b.confidence:.2f})"
                     + (f"; hidden whole under mini {b.hidden_under}: its extent is a guess"
                        if b.hidden_under is not None else ""))
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


def cmd_measure(args: argparse.Namespace) -> int:
    from companion.rules.knight.measure import measure

    setup, table = load_table(args.setup, args.state)
    a, b = table.unit(args.from_id), table.unit(args.to_id)
    player = args.player or a.player
    profile = table.player(player) if player else setup.players[0] if setup.players else None
    if profile is None:
        raise InputError("--player: the setup has no players, so there is no hand to measure with")
    result = measure(a, b, profile)
    if args.json:
        print_json({"from": a.id, "to": b.id, **result.to_json()})
    else:
        print(f"{a.name} ({a.id}) to {b.name} ({b.id}): {result.text} in {result.player}'s hand "
              f"({result.edge_mm:.0f} mm base edge to base edge)")
    return 0


def add_group(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("locate", help="locate every roster mini and every block in one frame")
    p.add_argument("frame", metavar="FRAME", help="an image file")
    p.add_argument("--setup", required=True, help="the setup file (TOML)")
    p.add_argument("--background", metavar="EMPTY.png",
                   help="the empty table from the same camera, to tell blocks from the table by")
    p.add_argument("--json", action="store_true", help="print the table state as one JSON object")
    p.add_argument("--draw", metavar="OUT.png", help="write the annotated frame here")
    p.set_defaults(func=cmd_locate)

    p = sub.add_parser("measure", help="distance between two units in hands and fingers")
    rules_args(p)
    p.add_argument("--from", dest="from_id", type=int, required=True, metavar="A", help="unit (marker id)")
    p.add_argument("--to", dest="to_id", type=int, required=True, metavar="B", help="unit (marker id)")
    p.add_argument("--player", help="whose hand and finger (default: the owner of A)")
    p.set_defaults(func=cmd_measure)
