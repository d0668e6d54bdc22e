"""What the app factory is given: the setup, the snapshot hub, the saved game, the access token."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field

from flask import current_app

from companion.setup_file import Setup
from web.compose import TableView, ViewCache
from web.rulesets import WebRules, web_rules
from web.snapshots import SnapshotHub
from web.store import GameStore


@dataclass(frozen=True, eq=False)
class Companion:
    setup: Setup
    hub: SnapshotHub
    token: str  # the join secret (in the QR code; becomes the session cookie)
    store: GameStore | None = None  # the saved game, for rule systems that keep one
    allowed_hosts: frozenset[str] = frozenset({"localhost", "127.0.0.1", "::1"})
    join_url: str = ""  # what the QR code says
    views: ViewCache = field(default_factory=ViewCache)

    @property
    def csrf(self) -> str:
        """The header token state-changing requests carry (the page gets it; other sites cannot)."""
        return hmac.new(self.token.encode(), b"state-changing request", hashlib.sha256).hexdigest()

    @property
    def rules(self) -> WebRules:
        return web_rules(self.setup.ruleset)

    def view(self) -> TableView:
        game = self.store.game if self.store is not None else None
        version = self.store.version if self.store is not None else 0
        return self.views.get(self.hub.latest(), self.setup, game, version)


def companion() -> Companion:
    return current_app.extensions["companion"]
