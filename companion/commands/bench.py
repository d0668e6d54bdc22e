"""`companion bench vision | verdicts | rules | live | web`: accuracy and speed against ground truth."""

from __future__ import annotations

import argparse
import math

from companion.commands import progress, report
from companion.commands.synth import layout, layout_args
from companion.errors import InputError
from companion.synth import RENDERERS


def cmd_bench_vision(args: argparse.Namespace) -> int:
    from companion.bench import vision

    if args.scenes < 1:
        raise InputError("--scenes: must be at least 1")
    if args.hands < 0:
        raise InputError("--hands: must be 0 or more")
    scene_layout = layout(args)
    if args.threads is not None:
        if args.threads < 1:
            raise InputError("--threads: must be at least 1")
        import cv2

        cv2.setNumThreads(args.threads)
    result = vision.run(args.scenes, args.seed, args.level, args.hands,
                        progress=progress(args.json, f"{args.scenes} {args.renderer} table(s)"),
                        renderer=args.renderer, layout=scene_layout, absent=args.absent)
    return report(args, result, lambda r: vision.format_table(r, details=args.details))


def cmd_bench_verdicts(args: argparse.Namespace) -> int:
    from companion.bench import verdicts

    if args.scenes < 1:
        raise InputError("--scenes: must be at least 1")
    scene_layout = layout(args)
    return report(args, verdicts.run(args.scenes, args.seed, args.renderer, scene_layout,
                                       progress=progress(args.json, f"{args.scenes} {args.renderer} table(s)")),
                   verdicts.format_table)


def cmd_bench_rules(args: argparse.Namespace) -> int:
    from companion.bench import rules

    return report(args, rules.run(args.tables, args.seed), rules.format_table)


def cmd_bench_live(args: argparse.Namespace) -> int:
    from companion.bench import live

    if args.fps is not None and not (math.isfinite(args.fps) and 1.0 <= args.fps <= 120.0):
        raise InputError("--fps: 1 to 120 frames a second")
    if args.fps is None:
        args.fps = 10.0 if args.sequence == "lift" else 30.0

    if args.sequence == "push":
        return report(args, live.push_run(args.seed, progress=progress(args.json, "pushes")), live.format_push)
    if args.sequence == "bricks":
        counter = progress(args.json, f"a brick put down and taken away at {args.fps:g} frames/s, in real time")
        return report(args, live.bricks_run(args.seed, args.fps, progress=counter, renderer=args.renderer),
                      live.format_bricks)
    if args.sequence == "lift":
        counter = progress(args.json, f"a mini lifted and put down at {args.fps:g} frames/s")
        return report(args, live.lift_run(args.seed, args.fps, progress=counter), live.format_lift)
    if args.sequence == "exposure":
        return report(args, live.exposure_run(args.seed, progress=progress(args.json, "exposure steps")), live.format_exposure)
    if args.frames < 10:
        raise InputError("--frames: must be at least 10 (5 are warm-up)")
    counter = progress(args.json, f"{args.frames} frames at {args.resolution}")
    return report(args, live.run(args.frames, args.seed, progress=counter, height_px=int(args.resolution[:-1])),
                   live.format_table)


def cmd_bench_web(args: argparse.Namespace) -> int:
    from companion.bench import web as bench

    if args.seconds < 5:
        raise InputError("--seconds: at least 5")
    if not 1 <= args.phones <= 200:
        raise InputError("--phones: 1 to 200")
    counter = progress(args.json, f"{args.phones} phones for {args.seconds:g} s")
    return report(args, bench.run(args.seconds, args.phones, progress=counter), bench.format_table)


def add_group(sub: argparse._SubParsersAction) -> None:
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
            p.add_argument("--renderer", choices=["plain", "raycast"], default="plain",
                           help="bricks: a bare table from the project's own camera (plain), or a table with loose "
                                "bricks under lamps, camera and room randomised (raycast)")
        if name == "verdicts":
            p.add_argument("--walls", type=int, default=1, help="walls that turn in every table (default 1)")
            p.add_argument("--towers", type=int, default=1, help="towers of 4-12 bricks in every table (default 1)")
            p.add_argument("--touching", type=int, default=1,
                           help="rows of touching bricks of different colours in every table (default 1)")
            p.add_argument("--standing", type=int, default=0,
                           help="minis more in every table, each standing on a block (default 0)")
            p.add_argument("--renderer", choices=RENDERERS, default="raycast",
                           help="the synthetic camera (as bench vision: raycast, pbr, plain)")
        if name == "vision":
            p.add_argument("--level", choices=["standard", "hard"], default="standard")
            p.add_argument("--hands", type=int, default=0, help="hands over the table in every scene")
            layout_args(p)
            p.add_argument("--threads", type=int, help="OpenCV's threads (1: the one-core figure; default: OpenCV's)")
            p.add_argument("--absent", action="store_true",
                           help="the rosters also list every marker id no one on the table carries (the dead, "
                                "minis in the box): a read of one is a false id")
            p.add_argument("--details", action="store_true",
                           help="list every block missed, reported wrong or false, scene by scene (the JSON "
                                "always has them, under each block method's 'wrong')")
            p.add_argument("--renderer", choices=RENDERERS, default="raycast",
                           help="the synthetic camera: raycast (the ray-caster, camera and light randomised), pbr "
                                "(path traced with Mitsuba 3, the optional extra; frames cached), plain (the "
                                "ray-caster unrandomised)")
    p = bsub.add_parser("web", help="20 phones and an MJPEG viewer against the real server: latency, frame delay")
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--phones", type=int, default=20)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench_web)
