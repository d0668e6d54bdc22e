"""The `companion` command line. Every answering command takes --json and then prints one JSON
object on stdout and nothing else. Bad input: one line on stderr naming the file or field, and an
exit code (2 setup, 3 input, 4 camera; argparse's own usage errors are 2 as well)."""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from companion.errors import CompanionError
from companion.rules.registry import systems

# The command groups in the order `companion --help` lists them; each rule system's comes after
# `measure` (`companion/commands/<system>.py`), each module adds its own with `add_group`.
BEFORE_SYSTEMS = ("table",)
AFTER_SYSTEMS = ("printing", "calibrate", "synth", "bench", "serve")


class _Parser(argparse.ArgumentParser):
    """argparse, its usage errors on one line (as every other bad input): which command, which
    argument, what was wrong; the usage is a --help away. Subcommands' parsers are of this class
    too (`add_subparsers` makes its parsers the type of the parser it hangs on)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="companion", description=" ".join(__doc__.split()))  # whole sentences
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (*BEFORE_SYSTEMS, *systems(), *AFTER_SYSTEMS):
        import_module(f"companion.commands.{group}").add_group(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CompanionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
