"""What the phone page shows, composed from a snapshot, the setup and the game with the rules core.

Every answer keeps the rules' reasons; the verdict chips are short labels made from the verdict's
own fields, never from anything the rules did not say. A view is built once per snapshot and game
version and shared by every phone asking for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

from companion.live.snapshots import Snapshot
from companion.rules.table import Table
from companion.setup_file import PlayerSpec, Setup
from companion.web.rulesets import WebRules, web_rules

PALETTE = {"red": "#d7263d", "blue": "#1b6fd8", "green": "#2e9e4f", "yellow": "#e0b000", "white": "#e8e8e8",
           "black": "#333333", "orange": "#f07f16", "purple": "#8e44ad"}
FALLBACK_COLOURS = ("#d7263d", "#1b6fd8", "#2e9e4f", "#e0b000", "#8e44ad")


def player_colour(setup: Setup, name: str) -> str:
    if name.lower() in PALETTE:
        return PALETTE[name.lower()]
    names = [p.name for p in setup.players]
    return FALLBACK_COLOURS[names.index(name) % len(FALLBACK_COLOURS)] if name in names else "#888888"


@dataclass(frozen=True, eq=False)
class RulesView:
    """One snapshot seen through the rules (and the game, for Knight)."""

    snapshot: Snapshot
    setup: Setup
    game: Any  # the rule system's saved game, or None
    game_version: int

    @cached_property
    def rules(self) -> WebRules:
        return web_rules(self.setup.ruleset)

    @cached_property
    def _memo(self) -> dict[str, Any]:
        return {}

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A rule system's answer about this view, computed once (a view is immutable)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    @cached_property
    def camera_table(self) -> Table:
        """Every unit the camera placed, gone ones too (the map shows them)."""
        return Table.from_state(self.snapshot.state, self.setup)

    @cached_property
    def table(self) -> Table:
        """The table the rules play on: for a game, its dead as skeletons and its gone left out."""
        return self.game.table_view(self.camera_table) if self.game is not None else self.camera_table

    def profile(self, name: str | None) -> PlayerSpec:
        if name:
            return self.table.player(name)
        return self.setup.players[0] if self.setup.players else PlayerSpec("table")

    @cached_property
    def base_objects_json(self) -> list[dict]:
        """Strategic objects where the camera saw them (a rule system adds who holds them)."""
        return [{"id": o.id, "kind": o.kind, "name": o.name, "x_mm": round(o.centre[0], 1),
                 "y_mm": round(o.centre[1], 1), "radius_mm": o.radius_mm, "controller": None, "why": ""}
                for o in self.table.objects]

    @cached_property
    def state_json(self) -> dict:
        s = self.snapshot.state
        statuses = self.game.statuses() if self.game is not None else {}
        units = []
        for u in self.camera_table.units:
            mini = s.mini(u.id)
            game_status = statuses.get(u.id, "alive")
            units.append({"id": u.id, "name": u.name, "player": u.player, "colour": player_colour(self.setup, u.player),
                          "class": u.unit_class, "faction": u.faction, "x_mm": round(u.centre[0], 1),
                          "y_mm": round(u.centre[1], 1), "z_mm": round(mini.z_mm, 1) if mini else None,
                          "heading_deg": round(u.heading_deg, 1), "base_mm": round(2 * u.base_radius_mm, 1),
                          "standing_mm": round(u.standing_mm, 1), "seen": u.status, "status": game_status,
                          "last_seen_frame": mini.last_seen_frame if mini else None})
        out = {
            "table": {"width_mm": self.setup.table.width_mm, "depth_mm": self.setup.table.depth_mm},
            "ruleset": self.setup.ruleset,
            "players": [{"name": p.name, "colour": player_colour(self.setup, p.name), "hand_mm": p.hand_mm,
                         "finger_mm": p.finger_mm} for p in self.setup.players],
            "registered": s.registered, "reason": s.reason, "frame": s.frame, "timestamp": round(s.timestamp, 3),
            "units": units,
            "blocks": [b.to_json() for b in s.blocks],  # as the table state writes them
            "squads": [],
            "objects": self.base_objects_json,
            "unknown_markers": [m.id for m in s.unknown_markers],
            "blocks_seen": s.blocks_seen,
            "warnings": list(s.warnings) + ([] if s.blocks_seen else ["blocks: not seen yet (the first searches take a few seconds)"]),
        }
        return out | self.rules.state_json(self) if self.rules.state_json else out

    def unit_detail(self, unit_id: int, player: str | None) -> dict:
        """The tapped unit, and what its rule system says about it (range, a verdict on every enemy)."""
        unit = self.table.unit(unit_id)
        profile = self.profile(player or unit.player)
        out = {"id": unit.id, "name": unit.name, "player": unit.player, "class": unit.unit_class,
               "acting_player": profile.name, "range": None, "enemies": []}
        return out | self.rules.unit_json(self, unit, profile) if self.rules.unit_json else out


class ViewCache:
    """The view for the newest snapshot and game version, built once and shared."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._view: RulesView | None = None

    def get(self, snapshot: Snapshot, setup: Setup, game: Any, game_version: int) -> RulesView:
        def fresh(view: RulesView | None) -> bool:
            return view is not None and view.snapshot.state is snapshot.state and view.game is game \
                and view.game_version == game_version

        view = self._view
        if fresh(view):
            return view
        with self._lock:  # built once even when several phones ask at the same moment
            if not fresh(self._view):
                self._view = RulesView(snapshot, setup, game, game_version)
            return self._view
