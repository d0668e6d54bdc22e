"""What the app factory is given: the setup, the snapshot hub, the saved game, the access token."""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from flask import current_app

from companion.live.snapshots import SnapshotHub
from companion.live.store import GameStore
from companion.setup_file import Setup
from companion.web.compose import RulesView, ViewCache
from companion.web.rulesets import WebRules, web_rules

ASKING_FOR_S = 60.0  # a question stays drawn on the host screen this long after a phone asked it


class Asking:
    """The answer a phone was last given (an attack, moves, a unit) as shapes for the host screen to
    draw, so the whole table sees what the phone shows. Drawn as computed for the phone: the camera
    thread draws, it never computes a rules answer."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: tuple[float, tuple[Any, ...]] | None = None

    def show(self, shapes: list) -> None:
        with self._lock:
            self._last = (time.monotonic(), tuple(shapes))

    def shapes(self) -> tuple[Any, ...]:
        with self._lock:
            if self._last is None or time.monotonic() - self._last[0] > ASKING_FOR_S:
                return ()
            return self._last[1]


POLLED_WITHIN_S = 2.0  # phones poll every 250 ms: none for this long, and nobody is looking


class Polling:
    """When a phone last asked for the state: each snapshot's answers are worked out ahead of the
    phones only while some poll (a camera with nobody looking costs no rules work)."""

    def __init__(self) -> None:
        self._last_s = -math.inf

    def mark(self) -> None:
        self._last_s = time.monotonic()  # one float written: no lock needed

    def active(self) -> bool:
        return time.monotonic() - self._last_s <= POLLED_WITHIN_S


@dataclass(frozen=True, eq=False)
class Companion:
    setup: Setup
    hub: SnapshotHub
    token: str  # the join secret (in the QR code; becomes the session cookie)
    store: GameStore | None = None  # the saved game, for rule systems that keep one
    allowed_hosts: frozenset[str] = frozenset({"localhost", "127.0.0.1", "::1"})
    join_url: str = ""  # what the QR code says
    views: ViewCache = field(default_factory=ViewCache)
    asking: Asking = field(default_factory=Asking)
    polling: Polling = field(default_factory=Polling)

    @property
    def csrf(self) -> str:
        """The header token state-changing requests carry (the page gets it; other sites cannot)."""
        return hmac.new(self.token.encode(), b"state-changing request", hashlib.sha256).hexdigest()

    @property
    def rules(self) -> WebRules:
        return web_rules(self.setup.ruleset)

    def overlay_shapes(self) -> tuple:
        """What the last answer looks like on the table (vision.draw Shapes), for the host screen."""
        return self.asking.shapes()

    def view(self) -> RulesView:
        game = self.store.game if self.store is not None else None
        version = self.store.version if self.store is not None else 0
        return self.views.get(self.hub.latest(), self.setup, game, version)


def companion() -> Companion:
    return current_app.extensions["companion"]
