"""Saved games: replayed on restart, and nothing confirmed is lost to a kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from companion.live.store import GameStore
from companion.rules.knight.game import EndTurn, IllegalEvent, StartTurn, UnitDied
from companion.synth.siege import base_scene, siege_setup
from tests.conftest import stop


@pytest.fixture(scope="module")
def setup():
    return siege_setup(base_scene())


def test_a_restart_resumes_the_same_game(setup, tmp_path):
    path = tmp_path / "g.sqlite"
    store = GameStore(path, setup)
    store.new("siege", "blue")
    for event in (StartTurn("red", 4, 2, 3), EndTurn({"castle": "blue"}), StartTurn("blue", 2, 2, 2),
                  UnitDied(5, "arrow")):
        store.push(event)
    store.pop()
    summary = store.game.summary()
    store.close()
    again = GameStore(path, setup)
    assert again.game.summary() == summary and len(again.event_log()) == 3
    assert again.game.turn_player == "blue" and again.game.units[5].status == "alive"


def test_an_illegal_event_is_not_saved(setup, tmp_path):
    store = GameStore(tmp_path / "g.sqlite", setup)
    store.new("siege", "blue")
    with pytest.raises(IllegalEvent):
        store.push(EndTurn())
    assert store.event_log() == []


def test_not_a_database_is_a_clear_error(setup, tmp_path):
    from companion.errors import InputError

    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError, match="bad.sqlite"):
        GameStore(bad, setup)


WRITER = textwrap.dedent("""
    import sys
    from companion.rules.knight.game import EndTurn, StartTurn
    from companion.synth.siege import base_scene, siege_setup
    from companion.live.store import GameStore

    store = GameStore(__import__("pathlib").Path(sys.argv[1]), siege_setup(base_scene()))
    store.new("siege", "blue")
    n = 0
    while True:
        store.push(StartTurn(store.game.next_player, 3, 3, 3))
        store.push(EndTurn({"castle": "blue"}))
        n += 2
        print(n, flush=True)  # confirmed: what a phone would have been told
""")


def test_kill_minus_9_loses_nothing_confirmed(setup, tmp_path):
    path = tmp_path / "g.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.getcwd()})
    confirmed = 0
    try:
        for line in proc.stdout:
            confirmed = int(line)
            if confirmed >= 40:
                break
    finally:
        stop(proc, signal.SIGKILL)
    store = GameStore(path, setup)
    assert len(store.event_log()) >= confirmed
    assert store.game.rounds_done >= confirmed // 4  # two turns a round, two events a turn
