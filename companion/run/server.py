"""Start the whole thing: camera thread, saved game, Flask app under waitress, the join QR code.

Used by `companion serve` (a real camera) and `companion demo` (the synthetic siege). Meant for a
trusted network: anyone who can see the QR code can join.
"""

from __future__ import annotations

import errno
import logging
import secrets
import shutil
import signal
import socket
import sys
import threading
import time
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from waitress.server import create_server

from companion.files import write_text_atomic
from companion.live.camera_loop import CameraLoop
from companion.live.snapshots import SnapshotHub, empty_snapshot
from companion.live.store import GameStore, data_dir
from companion.setup_file import Setup
from companion.vision.sources import FrameSource
from companion.web import create_app
from companion.web.context import Companion
from companion.web.qr import qr_text
from companion.web.rulesets import web_rules

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
THREADS = 24  # waitress workers: each MJPEG viewer holds one for as long as it watches


@dataclass(frozen=True)
class ServeOptions:
    host: str = "0.0.0.0"
    port: int = DEFAULT_PORT
    game_name: str = "game"
    new_game: bool = False  # start fresh (the old save is kept beside it, renamed)
    new_token: bool = False
    open_browser: bool = True
    data_dir: Path | None = None
    min_interval_s: float = 0.0
    exit_after_s: float | None = None  # for scripted runs: stop serving after this long
    allow_hosts: tuple[str, ...] = ()


def lan_address() -> str:
    """The address other devices on the LAN reach us at (no packet is sent: UDP connect only routes)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def load_token(folder: Path, new: bool) -> str:
    path = folder / "token"
    if not new and path.exists():
        token = path.read_text(encoding="utf-8").strip()
        if len(token) >= 16:
            return token
    token = secrets.token_urlsafe(18)
    write_text_atomic(path, token + "\n")
    return token


def open_store(folder: Path, name: str, setup: Setup, new: bool, game_type: Any) -> GameStore:
    path = folder / "games" / f"{name}.sqlite"
    if new and path.exists():
        keep = path.with_name(f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.sqlite")
        shutil.move(str(path), keep)  # nothing a player saved is lost: the old game stays, renamed
        for suffix in ("-wal", "-shm"):
            side = Path(str(path) + suffix)
            if side.exists():
                shutil.move(str(side), str(keep) + suffix)
        print(f"previous game kept as {keep}")
    return GameStore(path, setup, game_type)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or on a free port if that one is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
            sock.close()
            raise
        print(f"port {port} is taken; using a free one")
        sock.bind((host, 0))
    sock.listen(64)
    return sock


class CompanionServer:
    """Everything `serve` runs, built but not yet running: `start_camera`, then `run` (blocking) or
    `run_in_thread`; `close` stops both."""

    def __init__(self, setup: Setup, open_source: Callable[[], FrameSource], description: str,
                 options: ServeOptions, listeners=None) -> None:
        folder = options.data_dir or data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        token = load_token(folder, options.new_token)
        game_type = web_rules(setup.ruleset).game
        self.store = open_store(folder, options.game_name, setup, options.new_game, game_type) if game_type else None
        self.hub = SnapshotHub(empty_snapshot(description))
        lan = lan_address()
        hosts = {"localhost", "127.0.0.1", "::1", lan, socket.gethostname().lower(),
                 socket.gethostname().lower() + ".local", *(h.lower() for h in options.allow_hosts)}
        if options.host not in ("0.0.0.0", "::", ""):
            hosts.add(options.host.lower())
        sock = listen(options.host, options.port)
        self.port = sock.getsockname()[1]
        shown_host = lan if options.host in ("0.0.0.0", "::", "") else options.host
        self.join_url = f"http://{shown_host}:{self.port}/join?t={token}"
        self.host_url = f"http://127.0.0.1:{self.port}/join?t={token}&next=/host"
        self.companion = Companion(setup, self.hub, token, self.store, frozenset(hosts), self.join_url)
        self.app = create_app(self.companion)
        self.server = create_server(self.app, sockets=[sock], threads=THREADS, channel_timeout=30)
        self.loop = CameraLoop(open_source, setup, self.hub, description, options.min_interval_s, listeners,
                               overlay=self.companion.overlay_shapes)
        self.options = options
        self.description = description

    def start_camera(self) -> None:
        self.loop.start()
        threading.Thread(target=self._prepare_views, name="views", daemon=True).start()

    def _prepare_views(self) -> None:
        """Each new snapshot's view and answers are worked out here as soon as it is published, while
        phones poll, so their polls find them ready instead of the first poll after a frame paying."""
        from companion.web.api.state import game_json  # the answers /api/state gives, memoised on the view

        seq = -1
        while True:
            snapshot = self.hub.wait_newer(seq, 5.0)
            if snapshot is None:
                return  # closed
            seq = snapshot.seq
            if not self.companion.polling.active():
                continue
            try:
                view = self.companion.view()
                view.state_json  # noqa: B018 (a cached property: computed now, kept on the view)
                game_json(self.companion)
            except Exception:  # a request would meet the same problem and answer it; nothing to do here
                log.debug("view preparation failed", exc_info=True)

    def run(self) -> None:
        try:
            self.server.run()
        except OSError:
            pass  # the listening socket was closed by close()

    def run_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.run, name="waitress", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        if self.hub.closed:
            return
        self.hub.close()  # streams end first, so no worker writes to a closed server
        self.loop.stop()
        time.sleep(0.1)
        self.server.close()
        if self.store is not None:
            self.store.close()

    def announce(self) -> None:
        setup = self.companion.setup
        print(f"table companion: {self.description}; rules: {setup.ruleset}; saved game: "
              f"{self.store.path if self.store else 'none (these rules keep no turn log)'}")
        print(f"join from a phone on this network (trusted networks only): {self.join_url}")
        print(qr_text(self.join_url))
        print(f"host screen: {self.host_url}")
        sys.stdout.flush()


def serve(setup: Setup, open_source: Callable[[], FrameSource], description: str, options: ServeOptions,
          listeners=None, prepare: Callable[[CompanionServer], None] | None = None) -> int:
    """Run until Ctrl-C (or `exit_after_s`)."""
    app = CompanionServer(setup, open_source, description, options, listeners)
    if prepare is not None:
        prepare(app)
    app.start_camera()
    app.announce()
    if options.open_browser:
        threading.Timer(1.0, webbrowser.open, (app.host_url,)).start()
    timer = threading.Timer(options.exit_after_s, app.close) if options.exit_after_s is not None else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    # SIGTERM (a service manager, `kill`) stops as cleanly as Ctrl-C: streams end, the game is closed.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=app.close, daemon=True).start())
    try:
        app.run()
    except KeyboardInterrupt:
        print("stopping")
    finally:
        if timer is not None:
            timer.cancel()
        app.close()
    return 0
