"""The rule systems, found by the name a setup gives in `[ruleset] name`.

Each system describes itself with one `RuleSystem` value in its own module (the setup table and
roster keys it owns, and how it reads them into a frozen value); this registry only lists where
those modules are. Adding a system is a new module plus one line in `_MODULES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from companion.setup_file import Setup

Problem = Callable[[str, str], None]  # (key, message): one problem of the setup, all reported at once

_MODULES = (
    "companion.rules.knight",
    "companion.rules.contienda",
    "companion.rules.infinity",
    "companion.rules.forgod",
)


@dataclass(frozen=True)
class RuleSystem:
    name: str  # as the setup writes it
    title: str  # as a player reads it
    section: str | None = None  # the setup table it owns ([hex], [forgod], ...)
    section_keys: frozenset[str] = frozenset()
    mini_keys: frozenset[str] = frozenset()  # its own keys in [[minis]]
    # Reads its section and roster keys into a frozen value (Setup.rules), reporting every problem.
    read_setup: Callable[["Setup", Problem], Any] | None = None


@cache
def systems() -> dict[str, RuleSystem]:
    found = [import_module(name).SYSTEM for name in _MODULES]
    return {s.name: s for s in found}


def rule_system(name: str) -> RuleSystem:
    try:
        return systems()[name]
    except KeyError:
        raise KeyError(f"unknown rule system {name!r} (one of {', '.join(systems())})") from None
