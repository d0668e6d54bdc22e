"""`companion calibrate camera | hand` and `companion doctor`."""

from __future__ import annotations

import argparse
import math
import sys
from contextlib import nullcontext

from companion.commands import board_args, board_geometry, print_json, tells_progress
from companion.errors import InputError


def cmd_calibrate_camera(args: argparse.Namespace) -> int:
    from companion.calibration.camera import BoardSpec, ViewSet, calibrate
    from companion.calibration.setup_edit import update_setup_file
    from companion.setup_file import load_setup
    from companion.vision.sources import open_source

    load_setup(args.setup)  # a broken setup file is reported before any camera work
    squares, square_mm, marker_mm = board_geometry(args)
    if args.synthetic is not None and args.synthetic < 1:
        raise InputError("--synthetic: at least 1 view")
    views = ViewSet(BoardSpec(squares, square_mm, marker_mm, args.dictionary))
    if args.synthetic:
        from companion.synth.boards import board_views

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
            if tells_progress(args.json):
                bar = "#" * min(done, args.views) + "." * max(args.views - done, 0)
                note = f"rejected: {why}" if why else f"coverage {views.coverage():.0%}; next: {views.advice()}"
                print(f"\r[{bar}] {done}/{args.views} views  {note}"[:160], file=sys.stderr)
            if done >= args.views:
                break
    if tells_progress(args.json):
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
        print_json(data)
    else:
        k = result.matrix
        print(f"calibrated from {result.views_used} views (coverage {result.coverage:.0%}): fx {k[0, 0]:.1f} "
              f"fy {k[1, 1]:.1f} px, centre ({k[0, 2]:.1f}, {k[1, 2]:.1f}), RMS {result.rms_px:.3f} px"
              + (f"; written to [camera] in {args.setup}" if data["written"] else " (dry run: setup unchanged)"))
    return 0


def cmd_calibrate_hand(args: argparse.Namespace) -> int:
    from companion.calibration.setup_edit import update_setup_file
    from companion.rules.knight.measure import hand_size
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    if setup.player(args.player) is None:
        raise InputError(f"--player: {args.player!r} is not in {args.setup} (players: {[p.name for p in setup.players]})")
    if not args.preset and not args.hand_mm and args.frame and args.markers:
        span_mm = _marker_span_mm(setup, args.frame, args.markers)
        size = hand_size(hand_mm=span_mm, finger_mm=args.finger_mm,
                         span_how=f"markers {args.markers[0]} and {args.markers[1]} at the thumb and index tips")
    else:
        size = hand_size(args.preset, args.hand_mm, args.finger_mm)
    hand, finger = size.hand_mm, size.finger_mm
    update_setup_file(args.setup, "players", {"hand_mm": float(hand), "finger_mm": float(finger)},
                      match=("name", args.player))
    if args.json:
        print_json({"player": args.player, **size.to_json()})
    else:
        print(f"{size.to_text(args.player)}; written to {args.setup}")
    return 0


def _marker_span_mm(setup, frame: str, markers: list[int]) -> float:
    """The table distance between two loose markers held at the thumb and index tips."""
    from companion.vision.locator import Locator
    from companion.vision.sources import read_image

    state = Locator(setup).locate(read_image(frame))
    if not state.registered:
        raise InputError(f"{frame}: {state.reason}")
    seen = {u.id: u for u in state.unknown_markers}
    missing = [m for m in markers if m not in seen]
    if missing:
        raise InputError(f"{frame}: marker(s) {missing} not seen (they must not be roster minis or anchors)")
    a, b = seen[markers[0]], seen[markers[1]]
    return math.hypot(a.x_mm - b.x_mm, a.y_mm - b.y_mm)


def cmd_doctor(args: argparse.Namespace) -> int:
    from companion.calibration.doctor import diagnose, format_report
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
        print_json(report)
    else:
        print(format_report(report))
    return 0 if report["registration"].get("registered") else 5


def add_group(sub: argparse._SubParsersAction) -> None:
    from companion.rules.knight.measure import HAND_PRESETS_MM  # pure Python: the parser may know them

    calib = sub.add_parser("calibrate", help="camera intrinsics from a board; a player's hand and finger")
    csub = calib.add_subparsers(dest="what", required=True, metavar="WHAT")
    p = csub.add_parser("camera", help="from views of the printed ChArUco board (companion print board)")
    p.add_argument("--setup", required=True, help="where [camera] is written")
    p.add_argument("--frames", help="a folder of board photos")
    p.add_argument("--camera", help="0 | URL | FILE: take views live")
    p.add_argument("--synthetic", type=int, metavar="N", help="N rendered views with known intrinsics (a dry rehearsal)")
    p.add_argument("--views", type=int, default=20, help="stop after this many good views")
    board_args(p)
    p.add_argument("--dry-run", action="store_true", help="do not write the setup file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate_camera)
    p = csub.add_parser("hand", help="a player's hand (thumb-to-index spread) and finger width")
    p.add_argument("--setup", required=True)
    p.add_argument("--player", required=True)
    p.add_argument("--preset", choices=sorted(HAND_PRESETS_MM))
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
