"""`companion demo`: the whole product on a built-in synthetic table, no camera needed.

The synthetic camera plays a scripted game: the Knight castle siege (`companion.synth.siege`) or a
F0R60D engagement on a printed battlefield (`companion.synth.battlefield`); everything after the
camera is the real pipeline, the real server and the real saved game. The script's only other
action is what the players would do: the siege's taps on the phone page (dice, ends of turns,
attacks, deaths), the F0R60D turns entered.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from companion.live.snapshots import Snapshot
from companion.rules.knight.game import IllegalEvent
from companion.run.server import CompanionServer, ServeOptions, serve
from companion.setup_file import Setup
from companion.synth import battlefield
from companion.synth.siege import END_TURN, ROLL, Tap, base_scene, siege_scene, siege_setup, taps as siege_taps
from companion.synth.source import SyntheticSource
from companion.vision.sources import Frame

PROGRESS_EVERY = 12  # frames between the siege's progress lines
WAIT_FRAMES = 40  # camera frames the players wait for the camera to see their turn before tapping anyway


@dataclass
class DemoScript:
    """Plays the siege's taps (`siege.taps`) as the players would, on the phone page's own API, and
    prints progress with the positions scored against the synthetic truth. The scene's clock is
    the script's: it holds while the players wait for the camera to see their turn (the ledger
    shows the march, the new wall), as players look at the phone before they end a turn."""

    frames: int
    server: CompanionServer | None = None
    errors_mm: list[float] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    clock: int = 0  # the scene's frame
    played: int = 0  # taps made
    waited: int = 0  # camera frames the next tap has waited
    _phone: Any = None
    _printed: int = -1
    taps: tuple[Tap, ...] = ()

    def __post_init__(self) -> None:
        self.taps = siege_taps(self.frames)

    def prepare(self, server: CompanionServer) -> None:
        self.server = server
        store = server.store
        if store is not None and store.game is None:
            store.new("siege", castle_holder="blue")
        game = store.game if store is not None else None
        # A resumed game goes on where it stopped (its events are the taps made).
        self.played = min(len(game.events), len(self.taps)) if game is not None else 0
        if self.played:
            self.clock = self.frames - 1 if self.played == len(self.taps) else self.taps[self.played - 1].frame
        self._phone = server.app.test_client()
        self._phone.get(f"/join?t={server.companion.token}")  # joined like a phone, through the token

    def scene_frame(self, index: int) -> int:
        return self.clock

    def on_frame(self, snapshot: Snapshot, frame: Frame) -> None:
        state = snapshot.state
        truth = {m.id: m for m in frame.truth.minis} if frame.truth is not None else {}
        seen = [m for m in state.minis if m.status == "seen" and m.last_seen_frame == frame.index]
        worst = [math.hypot(m.x_mm - truth[m.id].x_mm, m.y_mm - truth[m.id].y_mm) for m in seen if m.id in truth]
        if snapshot.registered_now:
            self.errors_mm += worst
        waiting = self._play_due(snapshot)
        if self._printed != self.clock and (self.clock % PROGRESS_EVERY == 0 or self.clock == self.frames - 1):
            self._printed = self.clock
            print(f"frame {self.clock:>3}/{self.frames}: "
                  f"{'registered' if snapshot.registered_now else 'NOT registered: ' + snapshot.reason}; "
                  f"{len(seen)} units seen, {len(state.minis) - len(seen)} held"
                  f"{' (a hand over the table)' if frame.truth is not None and frame.truth.hands else ''}; "
                  f"worst position error {max(worst, default=0.0):.1f} mm; pipeline {snapshot.tracker_ms:.0f} ms",
                  flush=True)
        if self.clock == self.frames - 1 and not waiting and not self.done.is_set() \
                and self.played == len(self.taps):
            e = sorted(self.errors_mm)
            if e:
                print(f"script done: position error over all frames median {e[len(e) // 2]:.2f} mm, max {e[-1]:.2f} mm "
                      f"(against the synthetic truth); still serving, Ctrl-C to stop", flush=True)
            self.done.set()
        if not waiting and self.clock < self.frames - 1:
            self.clock += 1

    def _play_due(self, snapshot: Snapshot) -> bool:
        """Makes the taps that are due, in order; whether one is waiting for the camera."""
        while self.played < len(self.taps) and self.taps[self.played].frame <= self.clock:
            tap = self.taps[self.played]
            if not snapshot.registered_now:
                return True  # nobody taps while the camera does not see the table
            # The turn's ledger as the phone shows it, read once for what it waits for and what it prints.
            ledger = self._ledger() if tap.waits_for or tap.path == END_TURN else {}
            missing = self._not_seen_yet(tap, snapshot, ledger)
            if missing and self.waited < WAIT_FRAMES:
                self.waited += 1
                return True
            if missing:
                print(f"  (the camera has not seen {missing} after {self.waited} frames; the players go on)", flush=True)
            self.waited = 0
            self.played += 1
            self._tap(tap, ledger)
        return False

    def _ledger(self) -> dict:
        return self._phone.get("/api/game").get_json().get("ledger") or {}

    @staticmethod
    def _not_seen_yet(tap: Tap, snapshot: Snapshot, ledger: dict) -> str:
        """What the tap waits for that the camera has not shown yet ("" when nothing)."""
        if tap.path == ROLL and not snapshot.state.blocks_seen:
            return "the blocks"  # the turn's start is the table as seen: with its blocks
        if not tap.waits_for:
            return ""
        if tap.waits_for == "moves":
            return "" if ledger.get("moves") else "the march"
        bricks = int(tap.waits_for.split()[1])
        placed = _bricks(ledger)
        return "" if placed >= bricks else f"the new wall ({placed} of {bricks} bricks)"

    def _tap(self, tap: Tap, ledger: dict) -> None:
        if tap.path == END_TURN:
            spent = "; ".join(f"{m['ap']} AP: {m['why']}" for m in ledger.get("moves", []))
            bricks = _bricks(ledger)
            print(f"  the camera's ledger: {ledger.get('ap_spent', 0)} AP of black {ledger.get('ap_die', '?')}"
                  + (f" ({spent})" if spent else "") + (f", {bricks} bricks of fortification" if bricks else "")
                  + "".join(f"; warning: {w}" for w in ledger.get("warnings", [])), flush=True)
        answer = self._phone.post(tap.path, json=tap.body,
                                  headers={"X-Companion-Token": self.server.companion.csrf})
        if answer.status_code != 200:
            print(f"  ({tap.says}: {answer.get_json().get('error', answer.status_code)})", flush=True)
            return
        print(f"  the players tap: {tap.says}", flush=True)


def _bricks(ledger: dict) -> int:
    """Fortification bricks in a turn's ledger (its JSON as /api/game gives it)."""
    return sum(f["bricks"] for f in ledger.get("fortifications", []))


@dataclass
class EngagementScript:
    """The F0R60D demo: enters each beat's event as the players would, when its frame is seen."""

    frames: int
    server: CompanionServer | None = None
    played: int = 0

    def prepare(self, server: CompanionServer) -> None:
        self.server = server
        if server.store is not None and server.store.game is None:
            server.store.new()
        game = server.store.game if server.store is not None else None
        self.played = len(game.events) if game is not None else 0  # a resumed engagement goes on

    def on_frame(self, snapshot: Snapshot, frame: Frame) -> None:
        beats = battlefield.script(self.frames)
        store = self.server.store if self.server else None
        if store is None:
            return
        while self.played < len(beats) and beats[self.played].frame <= frame.index:
            beat = beats[self.played]
            self.played += 1
            try:
                store.push(beat.event)
                print(f"frame {frame.index:>3}: the players enter: {beat.says}", flush=True)
            except IllegalEvent as exc:
                print(f"frame {frame.index:>3}: ({beat.says}: {exc})", flush=True)
        if frame.index == self.frames - 1:
            seen = sum(1 for m in snapshot.state.minis if m.status == "seen")
            print(f"script done: {seen} cards seen; still serving, Ctrl-C to stop", flush=True)


def run_demo(frames: int, options: ServeOptions, ruleset: str = "knight") -> int:
    return DEMOS[ruleset](frames, options)


def _run_engagement(frames: int, options: ServeOptions) -> int:
    base = battlefield.base_scene()
    setup = battlefield.battlefield_setup(base)
    script = EngagementScript(frames)

    def open_camera() -> SyntheticSource:
        return SyntheticSource(lambda i: battlefield.battlefield_scene(base, i, frames), 1 << 40,
                               "synthetic F0R60D battlefield (demo)")

    print(f"companion demo --ruleset forgod: cards on a printed battlefield of {setup.rules.board.columns} x "
          f"{setup.rules.board.rows} squares, {len(setup.minis)} cards, {frames} scripted frames "
          "(a charge and a flank are played out)")
    return serve(setup, open_camera, "synthetic F0R60D battlefield (demo)", options, [script.on_frame], script.prepare)


SIEGE_CAMERA = "synthetic siege table (demo)"


def siege_parts(frames: int) -> tuple[Setup, Callable[[], SyntheticSource], DemoScript]:
    """The siege demo's table setup, its camera and its players' script: what `serve` is given."""
    base = base_scene()
    script = DemoScript(frames)

    def open_camera() -> SyntheticSource:
        # Endless: past the script's end the scene holds still (rendered once, then reused).
        return SyntheticSource(lambda i: siege_scene(base, script.scene_frame(i), frames), 1 << 40, SIEGE_CAMERA)

    return siege_setup(base), open_camera, script


def _run_siege(frames: int, options: ServeOptions) -> int:
    setup, open_camera, script = siege_parts(frames)
    print(f"companion demo: a siege on a {setup.table.width_mm:.0f} x {setup.table.depth_mm:.0f} mm table, "
          f"{len(setup.minis)} units, {frames} scripted frames; the synthetic camera renders only what moves")
    return serve(setup, open_camera, SIEGE_CAMERA, options, [script.on_frame], script.prepare)


DEMOS = {"knight": _run_siege, "forgod": _run_engagement}  # the built-in tables, by rule system
