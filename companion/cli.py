"""The `companion` command line. Every answering command takes --json and then prints one JSON
object on stdout and nothing else. Bad input: one line on stderr naming the file or field, and an
exit code (2 setup, 3 input, 4 camera; argparse's own usage errors are 2 as well)."""

from __future__ import annotations

import argparse
from contextlib import nullcontext
import json
import math
import sys
import time
from pathlib import Path
from typing import Callable

from importlib import import_module

from companion.commands import load_table, print_json as _print_json, rules_args
from companion.errors import CompanionError, InputError
from companion.rules.registry import systems
from companion.synth import RENDERERS


def _progress(json_out: bool, what: str) -> Callable[[int, int], None] | None:
    """A count on stderr while long work runs, with the time taken and left: always in a terminal,
    and without --json anywhere (stdout stays one JSON object either way)."""
    if not _tells_progress(json_out):
        return None
    started = time.monotonic()
    print(f"{what}...", file=sys.stderr, flush=True)

    def show(done: int, total: int) -> None:
        took = time.monotonic() - started
        left = f", ~{took / done * (total - done):.0f} s to go" if 0 < done < total else ""
        print(f"\r  {done}/{total} ({took:.0f} s{left})   ", end="" if done < total else "\n", file=sys.stderr,
              flush=True)

    return show


def _tells_progress(json_out: bool) -> bool:
    return not json_out or sys.stderr.isatty()


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
    for b in state.blocks:
        xs, ys = [p[0] for p in b.footprint_mm], [p[1] for p in b.footprint_mm]
        lines.append(f"block {b.id}: {b.color or 'unknown colour'}, {b.height_mm:.1f} mm high, over x {min(xs):.0f}-{max(xs):.0f} "
                     f"y {min(ys):.0f}-{max(ys):.0f} mm (confidence {b.confidence:.2f})")
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


# --- measure (BodyTape) -----------------------------------------------------------------------------

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
        _print_json({"from": a.id, "to": b.id, **result.to_json()})
    else:
        print(f"{a.name} ({a.id}) to {b.name} ({b.id}): {result.text} in {result.player}'s hand "
              f"({result.edge_mm:.0f} mm base edge to base edge)")
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


def _print_tiled(args: argparse.Namespace, stem: str, pages: list) -> int:
    """A map printed over several sheets: STEM.pdf and one STEM-N.svg a sheet in --out."""
    from calibration.vector import to_pdf, to_svg
    from companion.files import write_bytes_atomic, write_text_atomic

    out = Path(args.out)
    write_bytes_atomic(out / f"{stem}.pdf", to_pdf(pages))
    for k, page in enumerate(pages, start=1):
        write_text_atomic(out / f"{stem}-{k}.svg", to_svg(page))
    if args.json:
        _print_json({"pdf": str(out / f"{stem}.pdf"), "pages": len(pages)})
    else:
        print(f"wrote {out / (stem + '.pdf')} ({len(pages)} sheets): print at 100%, align the crosses")
    return 0


def cmd_print_hexmat(args: argparse.Namespace) -> int:
    from calibration.printing import hexmat_pages
    from companion.rules.contienda import grid_of
    from companion.setup_file import load_setup

    return _print_tiled(args, "hexmat", hexmat_pages(grid_of(load_setup(args.setup)), args.paper))


def cmd_print_battlefield(args: argparse.Namespace) -> int:
    from calibration.printing import battlefield_pages
    from companion.commands import require_ruleset
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    require_ruleset(setup, "forgod", "print battlefield")
    return _print_tiled(args, "battlefield", battlefield_pages(setup.rules.board, setup.rules.players, args.paper))


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
            if _tells_progress(args.json):
                bar = "#" * min(done, args.views) + "." * max(args.views - done, 0)
                note = f"rejected: {why}" if why else f"coverage {views.coverage():.0%}; next: {views.advice()}"
                print(f"\r[{bar}] {done}/{args.views} views  {note}"[:160], file=sys.stderr)
            if done >= args.views:
                break
    if _tells_progress(args.json):
        print(f"solving for the camera from {len(views.image_points)} views (a few seconds to a minute)...",
              file=sys.stderr, flush=True)
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
        from companion.vision.locator import Locator
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

    setup = load_setup(args.setup, need_anchors=True)
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
    progress = _progress(args.json, f"rendering {args.scenes} table(s) with the {args.renderer} camera"
                         + (" (about a minute a frame)" if args.renderer == "pbr" else ""))
    layout = _layout(args)
    for k in range(args.scenes):
        scene = bench_scene(args.renderer, args.seed * 100003 + k, args.level, n_hands=args.hands, **layout)
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


def _layout_args(p: argparse.ArgumentParser) -> None:
    """What a rendered table holds besides its loose bricks (bench vision, bench verdicts, synth)."""
    p.add_argument("--walls", type=int, default=0,
                   help="walls that turn (L, U, T, castle rings of touching bricks) in every scene")
    p.add_argument("--towers", type=int, default=0, help="towers of 4-12 stacked bricks, colours mixed, in every scene")
    p.add_argument("--touching", type=int, default=0,
                   help="rows of 2-3 touching bricks of different colours and heights in every scene")


def _layout(args: argparse.Namespace) -> dict[str, int]:
    layout = {}
    for flag in ("walls", "towers", "touching"):
        value = getattr(args, flag)
        if value < 0:
            raise InputError(f"--{flag}: must be 0 or more")
        layout[f"n_{flag}"] = value
    return layout


# --- bench -----------------------------------------------------------------------------------------

def cmd_bench_vision(args: argparse.Namespace) -> int:
    from companion.bench import vision

    if args.scenes < 1:
        raise InputError("--scenes: must be at least 1")
    if args.hands < 0:
        raise InputError("--hands: must be 0 or more")
    layout = _layout(args)
    if args.threads is not None:
        if args.threads < 1:
            raise InputError("--threads: must be at least 1")
        import cv2

        cv2.setNumThreads(args.threads)
    return _report(args, vision.run(args.scenes, args.seed, args.level, args.hands,
                                     progress=_progress(args.json, f"{args.scenes} {args.renderer} table(s)"),
                                    renderer=args.renderer, layout=layout), vision.format_table)


def cmd_bench_verdicts(args: argparse.Namespace) -> int:
    from companion.bench import verdicts

    if args.scenes < 1:
        raise InputError("--scenes: must be at least 1")
    layout = _layout(args)
    return _report(args, verdicts.run(args.scenes, args.seed, args.renderer, layout,
                                       progress=_progress(args.json, f"{args.scenes} {args.renderer} table(s)")),
                   verdicts.format_table)


def cmd_bench_rules(args: argparse.Namespace) -> int:
    from companion.bench import rules

    return _report(args, rules.run(args.tables, args.seed), rules.format_table)


def cmd_bench_live(args: argparse.Namespace) -> int:
    from companion.bench import live

    if args.fps is not None and not (math.isfinite(args.fps) and 1.0 <= args.fps <= 120.0):
        raise InputError("--fps: 1 to 120 frames a second")
    if args.fps is None:
        args.fps = 10.0 if args.sequence == "lift" else 30.0

    if args.sequence == "push":
        return _report(args, live.push_run(args.seed, progress=_progress(args.json, "pushes")), live.format_push)
    if args.sequence == "bricks":
        progress = _progress(args.json, f"a brick put down and taken away at {args.fps:g} frames/s, in real time")
        return _report(args, live.bricks_run(args.seed, args.fps, progress=progress), live.format_bricks)
    if args.sequence == "lift":
        progress = _progress(args.json, f"a mini lifted and put down at {args.fps:g} frames/s")
        return _report(args, live.lift_run(args.seed, args.fps, progress=progress), live.format_lift)
    if args.sequence == "exposure":
        return _report(args, live.exposure_run(args.seed, progress=_progress(args.json, "exposure steps")), live.format_exposure)
    if args.frames < 10:
        raise InputError("--frames: must be at least 10 (5 are warm-up)")
    progress = _progress(args.json, f"{args.frames} frames at {args.resolution}")
    return _report(args, live.run(args.frames, args.seed, progress=progress, height_px=int(args.resolution[:-1])),
                   live.format_table)


def cmd_bench_web(args: argparse.Namespace) -> int:
    from companion.bench import web as bench

    if args.seconds < 5:
        raise InputError("--seconds: at least 5")
    if not 1 <= args.phones <= 200:
        raise InputError("--phones: 1 to 200")
    progress = _progress(args.json, f"{args.phones} phones for {args.seconds:g} s")
    return _report(args, bench.run(args.seconds, args.phones, progress=progress), bench.format_table)


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
    game_name = "demo" if args.ruleset == "knight" else f"demo-{args.ruleset}"
    return run_demo(args.frames, _serve_options(args, game_name, 1.0 / args.fps), args.ruleset)


def cmd_serve(args: argparse.Namespace) -> int:
    from companion.setup_file import load_setup
    from companion.vision.sources import ImageFolderSource, LoopingSource, open_source
    from web.server import serve

    setup = load_setup(args.setup, need_anchors=True)
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

    p = sub.add_parser("measure", help="distance between two units in hands and fingers")
    rules_args(p)
    p.add_argument("--from", dest="from_id", type=int, required=True, metavar="A", help="unit (marker id)")
    p.add_argument("--to", dest="to_id", type=int, required=True, metavar="B", help="unit (marker id)")
    p.add_argument("--player", help="whose hand and finger (default: the owner of A)")
    p.set_defaults(func=cmd_measure)

    for system in systems():  # each rule system brings its own command group
        import_module(f"companion.commands.{system}").add_group(sub)

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
    p = psub.add_parser("battlefield", help="F0R60D: the board of squares at exact scale, tiled over pages")
    p.add_argument("--setup", required=True, help="its [forgod] table gives the squares, origin, columns and rows")
    p.add_argument("--out", required=True)
    p.add_argument("--paper", choices=["a4", "letter"], default="a4")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_print_battlefield)
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
    _layout_args(p)
    p.add_argument("--renderer", choices=RENDERERS, default="plain",
                   help="plain (the ray-caster), raycast (its camera and light randomised) or pbr (path traced, "
                        "Mitsuba 3: the optional extra '.[pbr]')")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_synth)

    bench = sub.add_parser("bench", help="measure accuracy and speed against ground truth")
    bsub = bench.add_subparsers(dest="bench", required=True, metavar="BENCH")
    for name, help_text, count, default, func in (
            ("vision", "minis and blocks on rendered tables: pipeline vs plain OpenCV", "--scenes", 20, cmd_bench_vision),
            ("verdicts", "Knight attack verdicts from what the camera saw vs from the truth, pair by pair",
             "--scenes", 12, cmd_bench_verdicts),
            ("rules", "every attack query on a 12-unit, 10-block table, timed", "--tables", 20, cmd_bench_rules),
            ("live", "a moving table: live tracker vs full-frame detectMarkers", "--frames", 40, cmd_bench_live)):
        p = bsub.add_parser(name, help=help_text)
        p.add_argument(count, type=int, default=default)
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=func)
        if name == "live":
            p.add_argument("--sequence", choices=["steady", "push", "exposure", "bricks", "lift"], default="steady",
                           help="steady: two walkers and a hand (cost ratio); push: a mini pushed at 24-60 mm a frame; "
                                "exposure: the whole frame x0.7 and x1.3; bricks: a brick put down and taken away; "
                                "lift: a mini lifted and put down 60-400 mm further on")
            p.add_argument("--resolution", choices=["1080p", "720p"], default="1080p",
                           help="steady: the camera's stream (the same lens; 720p is many webcams' default)")
            p.add_argument("--fps", type=float, default=None,
                           help="the camera's frame rate for bricks (default 30, in real time) and lift (default 10)")
        if name == "verdicts":
            p.add_argument("--walls", type=int, default=1, help="walls that turn in every table (default 1)")
            p.add_argument("--towers", type=int, default=1, help="towers of 4-12 bricks in every table (default 1)")
            p.add_argument("--touching", type=int, default=1,
                           help="rows of touching bricks of different colours in every table (default 1)")
            p.add_argument("--renderer", choices=RENDERERS, default="raycast",
                           help="the synthetic camera (as bench vision: raycast, pbr, plain)")
        if name == "vision":
            p.add_argument("--level", choices=["standard", "hard"], default="standard")
            p.add_argument("--hands", type=int, default=0, help="hands over the table in every scene")
            _layout_args(p)
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
    p.add_argument("--frames", type=int, default=48, help="length of the scripted game in frames (default 48)")
    p.add_argument("--ruleset", choices=["knight", "forgod"], default="knight",  # web.demo.DEMOS
                   help="knight: a castle siege (default); forgod: a F0R60D engagement on a printed battlefield")
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
