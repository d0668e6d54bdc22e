"""`companion synth`: rendered tables with their setup and truth (test data), and the layout
options (walls, towers, touching bricks) the benches share."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from companion.commands import print_json, progress
from companion.errors import InputError
from companion.synth import RENDERERS


def cmd_synth(args: argparse.Namespace) -> int:
    from companion.files import write_image_atomic, write_text_atomic
    from companion.setup_file import setup_to_toml
    from companion.synth.scene import scene_truth
    from companion.synth.worlds import Camera, bench_scene

    if args.scenes < 1:
        raise InputError("--scenes: must be at least 1")
    if args.hands < 0:
        raise InputError("--hands: must be 0 or more")
    out = Path(args.out)
    camera = Camera(args.renderer)
    written = []
    counter = progress(args.json, f"rendering {args.scenes} table(s) with the {args.renderer} camera"
                         + (" (about a minute a frame)" if args.renderer == "pbr" else ""))
    scene_layout = layout(args)
    for k in range(args.scenes):
        scene = bench_scene(args.renderer, args.seed * 100003 + k, args.level, n_hands=args.hands, **scene_layout)
        stem = f"scene_{k:03d}"
        write_image_atomic(out / f"{stem}.png", camera.render(scene))
        write_text_atomic(out / f"{stem}.toml", setup_to_toml(scene.setup(path=str(out / f"{stem}.toml"))))
        write_text_atomic(out / f"{stem}.truth.json", json.dumps(scene_truth(scene), indent=1))
        written.append(stem)
        if counter:
            counter(k + 1, args.scenes)
    if args.json:
        print_json({"out": str(out), "scenes": written})
    else:
        print(f"wrote {len(written)} scenes to {out}: <scene>.png, <scene>.toml (its setup), <scene>.truth.json")
    return 0


def layout_args(p: argparse.ArgumentParser) -> None:
    """What a rendered table holds besides its loose bricks (bench vision, bench verdicts, synth)."""
    p.add_argument("--walls", type=int, default=0,
                   help="walls that turn (L, U, T, castle rings of touching bricks) in every scene")
    p.add_argument("--towers", type=int, default=0, help="towers of 4-12 stacked bricks, colours mixed, in every scene")
    p.add_argument("--touching", type=int, default=0,
                   help="rows of 2-3 touching bricks of different colours and heights in every scene")
    p.add_argument("--standing", type=int, default=0,
                   help="minis more in every scene, each standing on a block of one to three bricks")


def layout(args: argparse.Namespace) -> dict[str, int]:
    counts = {}
    for flag in ("walls", "towers", "touching", "standing"):
        value = getattr(args, flag)
        if value < 0:
            raise InputError(f"--{flag}: must be 0 or more")
        counts[f"n_{flag}"] = value
    return counts


def add_group(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="render synthetic tables with their setup and truth (test data)")
    p.add_argument("--out", required=True, help="folder to write into")
    p.add_argument("--scenes", type=int, default=3, help="how many tables to render (default 3)")
    p.add_argument("--seed", type=int, default=0,
                   help="which set of tables: the same seed renders the same tables (default 0)")
    p.add_argument("--level", choices=["standard", "hard"], default="standard")
    p.add_argument("--hands", type=int, default=0, help="hands over the table per scene")
    layout_args(p)
    p.add_argument("--renderer", choices=RENDERERS, default="plain",
                   help="plain (the ray-caster), raycast (its camera and light randomised) or pbr (path traced, "
                        "Mitsuba 3: the optional extra '.[pbr]')")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_synth)
