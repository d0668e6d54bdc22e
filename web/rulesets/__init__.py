"""Each rule system's part of the web layer, found by the setup's rule-system name.

`web.rulesets.<name>` holds one `WebRules` value: the API blueprints of that system (answering 409
on a table that plays another one), the saved game it keeps, its fields in /api/state and in a
tapped unit's detail, and the script that draws it on the phone page. The systems themselves come
from `companion.rules.registry`; nothing else in the web layer names a rule system.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any, Callable

from flask import Blueprint

from companion.rules.registry import rule_system

if TYPE_CHECKING:
    from companion.rules.table import Unit
    from companion.setup_file import PlayerSpec
    from companion.web.compose import RulesView
    from companion.web.context import Companion


@dataclass(frozen=True)
class WebRules:
    name: str
    title: str
    blueprints: tuple[Blueprint, ...] = ()
    game: Any = None  # the saved game's class (python-chess style); None: no turn log is kept
    state_json: "Callable[[RulesView], dict] | None" = None  # its fields in /api/state
    unit_json: "Callable[[RulesView, Unit, PlayerSpec], dict] | None" = None  # its part of /api/units/<id>
    game_json: "Callable[[Companion], dict] | None" = None  # /api/game and the state's `game`
    script: str | None = None  # static file drawing its layer on the phone page
    # A tapped unit (id, acting player) as shapes over the host's camera view (its range, its area).
    unit_overlay: "Callable[[RulesView, int, str | None], list] | None" = None


@cache
def web_rules(name: str) -> WebRules:
    return import_module(f"companion.web.rulesets.{name}").WEB


def all_web_rules() -> list[WebRules]:
    from companion.rules.registry import systems

    return [web_rules(name) for name in systems()]


def only_for(bp: Blueprint, name: str) -> Blueprint:
    """The blueprint answers 409 on a table that plays another rule system."""
    title = rule_system(name).title

    @bp.before_request
    def other_rules() -> None:
        from companion.web.api import ApiError
        from companion.web.context import companion

        setup = companion().setup
        if setup.ruleset != name:
            raise ApiError(409, f"this belongs to the {title} rules; this table plays "
                                f"{rule_system(setup.ruleset).title}")

    return bp
