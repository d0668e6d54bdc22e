"""The JSON API: one blueprint per resource, all under /api. Bad input -> 400 with a JSON reason
(naming the field); an action not allowed now -> 409. Units: millimetres in the table frame,
degrees counter-clockwise from +x, epoch seconds."""

from __future__ import annotations

import math
from typing import Any, Callable

from flask import Flask, Response, jsonify, request

from companion.errors import CompanionError
from companion.rules.events import IllegalEvent


class ApiError(Exception):
    def __init__(self, status: int, reason: str, field: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.field = status, reason, field


def bad(field: str, reason: str) -> ApiError:
    return ApiError(400, f"{field}: {reason}", field)


def arg_int(name: str, default: int | None = None, low: int | None = None, high: int | None = None) -> int:
    raw = request.args.get(name)
    if raw is None or raw == "":
        if default is None:
            raise bad(name, "required (an integer)")
        return default
    try:
        value = int(raw)
    except ValueError:
        raise bad(name, f"{raw!r} is not an integer") from None
    if (low is not None and value < low) or (high is not None and value > high):
        raise bad(name, f"{value} is outside {low} to {high}")
    return value


def arg_float(name: str, low: float, high: float) -> float:
    """A required finite number within [low, high] (a table point in mm, say); else a 400 naming it."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        raise bad(name, "required (a number)")
    try:
        value = float(raw)
    except ValueError:
        raise bad(name, f"{raw!r} is not a number") from None
    if not math.isfinite(value) or not low <= value <= high:
        raise bad(name, f"{raw} is outside {low:g} to {high:g}")
    return value


def arg_bool(name: str) -> bool:
    raw = request.args.get(name, "").lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise bad(name, f"{raw!r}: true or false")


def body(allowed: set[str] | None = None) -> dict:
    """The request's JSON object; with `allowed`, a key outside it is a 400 naming it."""
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise ApiError(400, "body: a JSON object (Content-Type: application/json)", "body")
    if allowed is not None:
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise bad(unknown[0], f"unknown field (known: {', '.join(sorted(allowed))})")
    return data


def game_store(c: Any) -> Any:
    """The server's saved game (a `companion.live.store.GameStore`), or 409 when this server keeps none."""
    if c.store is None:
        raise ApiError(409, "no saved game on this server")
    return c.store


def event_body(decode: Callable[[dict], Any]) -> Any:
    """A game event from the request's JSON object, or 400 naming the field its decoder names
    ("amount: ..."), or the kind when the problem is the event as a whole ("spend: ...")."""
    data = body()
    try:
        return decode(data)
    except ValueError as exc:
        key, _, reason = str(exc).partition(": ")
        if not reason or key == data.get("kind"):
            raise bad("kind", str(exc)) from None
        raise bad(key, reason) from None


def register(app: Flask) -> None:
    from companion.web.api import health, log, measure, state, units
    from companion.web.rulesets import all_web_rules

    for module in (state, units, measure, log, health):
        app.register_blueprint(module.bp, url_prefix="/api")
    for rules in all_web_rules():  # each rule system's own endpoints (409 on a table playing another)
        for bp in rules.blueprints:
            app.register_blueprint(bp, url_prefix="/api")

    @app.errorhandler(ApiError)
    def api_error(exc: ApiError) -> tuple[Response, int]:
        return jsonify({"error": exc.reason, **({"field": exc.field} if exc.field else {})}), exc.status

    @app.errorhandler(CompanionError)
    def input_error(exc: CompanionError) -> tuple[Response, int]:
        return jsonify({"error": str(exc)}), 400  # the rules name what is wrong (unit not on the table, ...)

    @app.errorhandler(IllegalEvent)
    def not_now(exc: IllegalEvent) -> tuple[Response, int]:
        return jsonify({"error": f"not allowed now: {exc}"}), 409

    @app.errorhandler(404)
    def not_found(exc) -> tuple[Response, int] | Response:
        if request.path.startswith("/api/"):
            return jsonify({"error": f"no such endpoint: {request.path}"}), 404
        return exc

    @app.errorhandler(413)
    def too_large(exc) -> tuple[Response, int] | Response:
        if request.path.startswith("/api/"):
            limit = app.config.get("MAX_CONTENT_LENGTH") or 0
            return jsonify({"error": f"body: over {limit // 1024} kB", "field": "body"}), 413
        return exc

    @app.errorhandler(405)
    def wrong_method(exc) -> tuple[Response, int] | Response:
        if request.path.startswith("/api/"):
            return jsonify({"error": f"{request.method} is not allowed on {request.path}"}), 405
        return exc
