"""Saved games in SQLite (standard library): the game's header and its event log.

Every event is committed (WAL, synchronous=FULL) before the request that made it is answered, so a
`kill -9` loses nothing a phone was told about; a restart replays the log into the same game.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from companion.errors import InputError
from companion.rules.knight.game import Event, Game, IllegalEvent, event_from_json
from companion.setup_file import Setup

SCHEMA = """
CREATE TABLE IF NOT EXISTS game (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    mode TEXT NOT NULL,
    players TEXT NOT NULL,          -- JSON list of player names
    castle_holder TEXT,
    created REAL NOT NULL           -- epoch s
);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,        -- 1, 2, 3 ... in the order they were pushed
    event TEXT NOT NULL,            -- the event's JSON
    at REAL NOT NULL,               -- epoch s it was confirmed
    seen TEXT                       -- what the camera saw with it (JSON: the table state, a turn's ledger), or NULL
);
"""


def data_dir() -> Path:
    """The user's data directory for the companion (XDG on Linux, the platform's place elsewhere)."""
    if os.environ.get("COMPANION_DATA_DIR"):
        return Path(os.environ["COMPANION_DATA_DIR"])
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA", Path.home())) / "table-companion"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "table-companion"
    return Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "table-companion"


class GameStore:
    """One saved game per file; thread-safe (requests come from waitress's worker threads).

    `game_type` is the rule system's game (Knight's by default): a class with `new(setup, **params)`,
    `from_json(data, setup)`, `push`, `pop`, `mode`, `players`, `castle_holder` and `log`."""

    def __init__(self, path: Path, setup: Setup, game_type: Any = Game) -> None:
        self.path = path
        self.setup = setup
        self.game_type = game_type
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(events)")}
            if "seen" not in columns:  # a game saved before the camera's evidence was kept
                self._db.execute("ALTER TABLE events ADD COLUMN seen TEXT")
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{path}: not a saved game ({exc})") from None
        self.game: Any = self._load()
        self.version = 0  # bumps on every change, so cached answers know when they are stale

    def _load(self) -> Any:
        row = self._db.execute("SELECT mode, players, castle_holder FROM game WHERE id = 1").fetchone()
        if row is None:
            return None
        events = [json.loads(e) for (e,) in self._db.execute("SELECT event FROM events ORDER BY seq")]
        try:
            return self.game_type.from_json({"mode": row[0], "players": json.loads(row[1]), "castle_holder": row[2],
                                   "events": events}, self.setup)
        except (ValueError, KeyError) as exc:
            raise InputError(f"{self.path}: the saved game does not replay with this setup ({exc})") from None

    def new(self, mode: str | None = None, castle_holder: str | None = None) -> Any:
        """A fresh game (ValueError for a bad mode or holder); the old one is replaced."""
        game = self.game_type.new(self.setup, mode=mode, castle_holder=castle_holder)
        with self._lock, self._transaction():
            self._db.execute("DELETE FROM events")
            self._db.execute("DELETE FROM game")
            self._db.execute("INSERT INTO game VALUES (1, ?, ?, ?, ?)",
                             (game.mode, json.dumps(list(game.players)), game.castle_holder, time.time()))
            self.game = game
            self.version += 1
        return game

    def push(self, event: Event, seen: dict | None = None) -> Any:
        """Check, apply and commit one event (IllegalEvent if not allowed now), with what the camera
        saw when it was confirmed (`seen`), so a dispute later can look back at it."""
        with self._lock:
            game = self._require()
            game.push(event)  # raises IllegalEvent, nothing written
            try:
                with self._transaction():
                    self._db.execute("INSERT INTO events (event, at, seen) VALUES (?, ?, ?)",
                                     (json.dumps(event.to_json()), time.time(),
                                      json.dumps(seen) if seen is not None else None))
            except sqlite3.Error:
                game.pop()  # not on disk: not confirmed either
                raise
            self.version += 1
            return game

    def pop(self) -> Event:
        with self._lock:
            game = self._require()
            event = game.pop()  # raises IllegalEvent when there is nothing to undo
            try:
                with self._transaction():
                    self._db.execute("DELETE FROM events WHERE seq = (SELECT MAX(seq) FROM events)")
            except sqlite3.Error:
                game.push(event)
                raise
            self.version += 1
            return event

    def event_log(self) -> list[dict]:
        """Every event, oldest first, with the turn ledger the camera saw where one was kept."""
        with self._lock:
            out = []
            for seq, e, at, seen in self._db.execute("SELECT seq, event, at, seen FROM events ORDER BY seq"):
                entry = {"seq": seq, "at": at, **json.loads(e)}
                if seen is not None and "ledger" in (evidence := json.loads(seen)):
                    entry["ledger"] = evidence["ledger"]
                out.append(entry)
            return out

    def last_seen(self, kind: str) -> dict | None:
        """What the camera saw with the latest event of this kind (e.g. the table at the turn's start)."""
        with self._lock:
            row = self._db.execute("SELECT seen FROM events WHERE json_extract(event, '$.kind') = ? "
                                   "ORDER BY seq DESC LIMIT 1", (kind,)).fetchone()
            return json.loads(row[0]) if row is not None and row[0] is not None else None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _require(self) -> Any:
        if self.game is None:
            raise IllegalEvent("no game yet: start one (mode and, for a siege, who holds the castle)")
        return self.game

    def _transaction(self):
        return _Transaction(self._db)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def event_or_error(data: object) -> Event:
    """An event from request JSON, or ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError("body: a JSON object with the event's kind and fields")
    return event_from_json(data)
