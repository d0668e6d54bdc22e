"""Command-line groups, one module each, and what they share: loading a setup with a state, JSON out."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import TYPE_CHECKING, Callable

from companion.errors import InputError, SetupError

if TYPE_CHECKING:
    from companion.rules.table import Table
    from companion.setup_file import Setup


def print_json(data: dict) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")


def rules_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--setup", required=True, help="the setup file (TOML)")
    p.add_argument("--state", required=True, help="a table state (the JSON of `companion locate --json`)")
    p.add_argument("--json", action="store_true")


def table_point(text: str, flag: str, setup: "Setup") -> tuple[float, float]:
    """A point given as X,Y in table mm: two finite numbers on the setup's table (a point off it,
    or 1e308, would be taken as a place)."""
    parts = text.split(",")
    try:
        x, y = (float(v) for v in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        x = y = math.nan
    if not (math.isfinite(x) and math.isfinite(y)):
        raise InputError(f"{flag}: {text!r} is not a point: X,Y in mm, e.g. 300,200")
    width, depth = setup.table.width_mm, setup.table.depth_mm
    if not (0 <= x <= width and 0 <= y <= depth):
        raise InputError(f"{flag}: {text!r} is off the table ({width:g} x {depth:g} mm)")
    return x, y


def board_args(p: argparse.ArgumentParser) -> None:
    """The ChArUco board's options (`print board`, `calibrate camera`: the same board)."""
    p.add_argument("--squares", default="7x5", help="COLSxROWS (default 7x5)")
    p.add_argument("--square-mm", type=float, default=30.0)
    p.add_argument("--marker-mm", type=float, default=22.0, help="smaller than --square-mm")
    p.add_argument("--dictionary", default="DICT_5X5_100")


def board_geometry(args: argparse.Namespace) -> tuple[tuple[int, int], float, float]:
    """(columns, rows), square and marker sides (mm) of `board_args`, checked: OpenCV's board
    takes a NaN side or a 1x1 grid with a SystemError."""
    try:
        cols, rows = (int(v) for v in args.squares.lower().split("x"))
    except ValueError:
        raise InputError("--squares: COLSxROWS, e.g. 7x5") from None
    if cols < 2 or rows < 2:
        raise InputError(f"--squares: {args.squares} has no inner corner: at least 2x2, e.g. 7x5")
    for flag, value in (("--square-mm", args.square_mm), ("--marker-mm", args.marker_mm)):
        if not (math.isfinite(value) and value > 0):
            raise InputError(f"{flag}: {value:g} is not a size in mm")
    if args.marker_mm >= args.square_mm:
        raise InputError("--marker-mm: must be smaller than --square-mm")
    return (cols, rows), args.square_mm, args.marker_mm


def load_table(setup_path: str, state_path: str) -> "tuple[Setup, Table]":
    """The setup and the rules' view of a registered state."""
    from companion.rules.table import Table
    from companion.setup_file import load_setup
    from companion.state import load_state

    setup = load_setup(setup_path)
    state = load_state(state_path)
    if not state.registered:
        raise InputError(f"{state_path}: the table was not registered in this state ({state.reason})")
    return setup, Table.from_state(state, setup)


def require_ruleset(setup: "Setup", name: str, command: str) -> None:
    if setup.ruleset != name:
        raise SetupError(f"{setup.path}: ruleset.name: is {setup.ruleset!r}, `{command}` needs {name!r}")


def progress(json_out: bool, what: str) -> Callable[[int, int], None] | None:
    """A count on stderr while long work runs, with the time taken and left: always in a terminal,
    and without --json anywhere (stdout stays one JSON object either way)."""
    if not tells_progress(json_out):
        return None
    started = time.monotonic()
    print(f"{what}...", file=sys.stderr, flush=True)

    def show(done: int, total: int) -> None:
        took = time.monotonic() - started
        left = f", ~{took / done * (total - done):.0f} s to go" if 0 < done < total else ""
        print(f"\r  {done}/{total} ({took:.0f} s{left})   ", end="" if done < total else "\n", file=sys.stderr,
              flush=True)

    return show


def tells_progress(json_out: bool) -> bool:
    return not json_out or sys.stderr.isatty()


def answer(args: argparse.Namespace, value) -> int:
    """A rules answer (a value with `to_json` and `to_text`): its JSON form with --json, else its text."""
    if args.json:
        print_json(value.to_json())
    else:
        print(value.to_text())
    return 0


def report(args: argparse.Namespace, result: dict, format_table: Callable[[dict], str]) -> int:
    """A bench's figures: one JSON object with --json, else its readable table."""
    if args.json:
        print_json(result)
    else:
        print(format_table(result))
    return 0
