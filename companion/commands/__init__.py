"""Command-line groups, one module each, and what they share: loading a setup with a state, JSON out."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

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
