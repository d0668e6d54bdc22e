"""`companion demo`: the whole product on a built-in synthetic table, no camera needed.

The synthetic camera plays a scripted game: the Knight castle siege (`companion.synth.siege`) or a
F0R60D engagement on a printed battlefield (`companion.synth.battlefield`); everything after the
camera is the real pipeline, the real server and the real saved game. The script's only other
action is what the players would do: tapping "died" when a unit falls, entering the F0R60D turns.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

from companion.live.snapshots import Snapshot
from companion.rules.knight.game import IllegalEvent, StartTurn, UnitDied
from companion.run.server import CompanionServer, ServeOptions, serve
from companion.synth import battlefield
from companion.synth.siege import base_scene, casualties, siege_scene, siege_setup
from companion.synth.source import SyntheticSource
from companion.vision.sources import Frame

PROGRESS_EVERY = 12  # frames between the siege's progress lines


@dataclass
class DemoScript:
    """Watches the snapshots as the script plays: tells the game about casualties, prints progress
    and scores positions against the synthetic truth."""

    frames: int
    server: CompanionServer | None = None
    errors_mm: list[float] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)

    def prepare(self, server: CompanionServer) -> None:
        self.server = server
        if server.store is not None and server.store.game is None:
            server.store.new("siege", castle_holder="blue")

    def on_frame(self, snapshot: Snapshot, frame: Frame) -> None:
        if frame.index >= self.frames:
            return  # the script holds its last frame from here on
        state = snapshot.state
        truth = {m.id: m for m in frame.truth.minis} if frame.truth is not None else {}
        seen = [m for m in state.minis if m.status == "seen" and m.last_seen_frame == frame.index]
        worst = [math.hypot(m.x_mm - truth[m.id].x_mm, m.y_mm - truth[m.id].y_mm) for m in seen if m.id in truth]
        if snapshot.registered_now:
            self.errors_mm += worst
        # The players enter red's dice once the camera sees the table and its blocks (the turn's
        # start is the table as seen then), or by a quarter of the script at the latest.
        if frame.index >= 1 and snapshot.registered_now and (snapshot.state.blocks_seen
                                                              or frame.index >= max(1, self.frames // 4)):
            self._roll(snapshot)
        for c in casualties(self.frames):
            if c.frame == frame.index:
                self._died(c.unit, c.cause)
        if frame.index % PROGRESS_EVERY and frame.index != self.frames - 1:
            return  # a few lines, not one a frame
        print(f"frame {frame.index:>3}/{self.frames}: "
              f"{'registered' if snapshot.registered_now else 'NOT registered: ' + snapshot.reason}; "
              f"{len(seen)} units seen, {len(state.minis) - len(seen)} held"
              f"{' (a hand over the table)' if frame.truth is not None and frame.truth.hands else ''}; "
              f"worst position error {max(worst, default=0.0):.1f} mm; pipeline {snapshot.tracker_ms:.0f} ms", flush=True)
        if frame.index == self.frames - 1:
            e = sorted(self.errors_mm)
            if e:
                print(f"script done: position error over all frames median {e[len(e) // 2]:.2f} mm, max {e[-1]:.2f} mm "
                      f"(against the synthetic truth); still serving, Ctrl-C to stop", flush=True)
            self.done.set()

    def _roll(self, snapshot: Snapshot) -> None:
        """The attackers enter their dice as the march begins: the camera referees their turn from here
        (the phone's game panel shows its ledger as the units advance)."""
        store = self.server.store if self.server else None
        if store is None or store.game is None or store.game.events:
            return  # a resumed game goes on as it was
        store.push(StartTurn("red", 5, 2, 3), {"state": snapshot.state.to_json()})
        print("  the players enter red's dice: black 5, red 2, white 3 (the camera referees the turn)", flush=True)

    def _died(self, unit: int, cause: str) -> None:
        store = self.server.store if self.server else None
        if store is None or store.game is None:
            return
        status = store.game.units.get(unit)
        if status is None or status.status != "alive":
            return  # a resumed game already has it
        try:
            store.push(UnitDied(unit, f"demo script: {cause}"))
            print(f"  the players record: unit {unit} {cause} (it rises as a skeleton)", flush=True)
        except IllegalEvent as exc:  # e.g. the game is already over
            print(f"  (unit {unit}: {exc})", flush=True)


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


def _run_siege(frames: int, options: ServeOptions) -> int:
    base = base_scene()
    setup = siege_setup(base)
    script = DemoScript(frames)

    def open_camera() -> SyntheticSource:
        # Endless: past the script's end the scene holds still (rendered once, then reused).
        return SyntheticSource(lambda i: siege_scene(base, i, frames), 1 << 40, "synthetic siege table (demo)")

    print(f"companion demo: a siege on a {setup.table.width_mm:.0f} x {setup.table.depth_mm:.0f} mm table, "
          f"{len(setup.minis)} units, {frames} scripted frames; the synthetic camera renders only what moves")
    return serve(setup, open_camera, "synthetic siege table (demo)", options, [script.on_frame], script.prepare)


DEMOS = {"knight": _run_siege, "forgod": _run_engagement}  # the built-in tables, by rule system
