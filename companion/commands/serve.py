"""`companion demo` and `companion serve`: the phone page, the host screen, the saved game."""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.errors import InputError, SetupError


def _serve_options(args: argparse.Namespace, game_name: str, min_interval_s: float):
    from companion.run.server import ServeOptions

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port: {args.port} is not a port (0-65535; 0 picks a free one)")
    return ServeOptions(host=args.host, port=args.port, game_name=game_name, new_game=args.new,
                        new_token=args.new_token, open_browser=not args.no_browser,
                        data_dir=Path(args.data_dir) if args.data_dir else None, min_interval_s=min_interval_s,
                        exit_after_s=args.exit_after, allow_hosts=tuple(args.allow_host or ()))


def cmd_demo(args: argparse.Namespace) -> int:
    """The whole product on the built-in synthetic siege: camera thread, pipeline, server, saved game."""
    from companion.run.demo import run_demo

    if args.frames < 2:
        raise InputError("--frames: at least 2")
    game_name = "demo" if args.ruleset == "knight" else f"demo-{args.ruleset}"
    return run_demo(args.frames, _serve_options(args, game_name, 1.0 / args.fps), args.ruleset)


def _needs_its_players(setup) -> None:
    """A rule system that keeps a saved game needs two players to play it: said before the server
    starts, naming the key (the phone would only hear it when starting the game)."""
    from companion.web.rulesets import web_rules

    players = {p.name for p in setup.players} or {m.player for m in setup.minis if m.player}
    if web_rules(setup.ruleset).game is not None and len(players) < 2:
        raise SetupError(f"{setup.path}: players: a {setup.ruleset} game is played by two players ([[players]], "
                         f"or [[minis]] with player = ...); the setup names {len(players)}")


def cmd_serve(args: argparse.Namespace) -> int:
    from companion.run.server import serve
    from companion.setup_file import load_setup
    from companion.vision.sources import ImageFolderSource, LoopingSource, open_source

    setup = load_setup(args.setup, need_anchors=True)
    _needs_its_players(setup)
    spec = args.camera.strip()
    live = spec.isdigit() or "://" in spec
    if not live and not Path(spec).exists():
        raise InputError(f"--camera: {spec}: no such file or folder (a device index, a URL, a video or images)")

    def open_camera():
        source = open_source(spec)
        if isinstance(source, ImageFolderSource):  # a still table (photos) is served as a camera
            return LoopingSource(lambda: open_source(spec))
        return source

    if not live or spec.isdigit():
        # A file that is not a readable video or image, or a device that is not there (a typo of
        # its index): say so now, not in a retry loop. A stream URL may come up later: retried.
        open_camera().close()
    game = Path(args.setup).stem
    return serve(setup, open_camera, f"camera {spec}", _serve_options(args, game, 0.0 if live else 1.0 / args.fps))


def add_group(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--ruleset", choices=["knight", "forgod"], default="knight",  # companion.run.demo.DEMOS
                   help="knight: a castle siege (default); forgod: a F0R60D engagement on a printed battlefield")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("serve", help="the companion on a real camera: phone page, host screen, saved game")
    p.add_argument("--camera", required=True, help="device index (0), stream URL, video file, image or folder of images")
    p.add_argument("--setup", required=True, help="the setup file (TOML)")
    server_args(p, 10.0)
    p.set_defaults(func=cmd_serve)
