"""Who may talk to the server: a Host header we serve, the join cookie, and a header token on
state-changing requests. Meant for a trusted network (the README says so): it keeps out other
devices on the LAN that never saw the QR code and pages on other sites, nothing stronger."""

from __future__ import annotations

import hmac

from flask import Blueprint, Response, jsonify, redirect, request

from companion.web.context import companion

COOKIE = "companion_session"
CSRF_HEADER = "X-Companion-Token"
COOKIE_MAX_AGE_S = 30 * 24 * 3600
OPEN_PATHS = ("/join",)  # exact paths (never a prefix: /join.svg carries the token)
OPEN_PREFIXES = ("/static/",)
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

bp = Blueprint("auth", __name__)


def host_name(header: str) -> str:
    """The host part of a Host header ('[::1]:8000' -> '::1', 'pc.local:80' -> 'pc.local')."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


@bp.before_app_request
def guard() -> Response | None:
    c = companion()
    host = host_name(request.host or "")
    if host not in c.allowed_hosts:
        return _refuse(400, f"Host header not served here: {host!r} (open the address the QR code gives)")
    if request.path in OPEN_PATHS or request.path.startswith(OPEN_PREFIXES):
        return None
    if not hmac.compare_digest(request.cookies.get(COOKIE, ""), c.token):
        return _refuse(401, "not joined: scan the QR code on the host screen (or open its join link)")
    if request.method in UNSAFE_METHODS and not hmac.compare_digest(request.headers.get(CSRF_HEADER, ""), c.csrf):
        return _refuse(403, f"missing or wrong {CSRF_HEADER} header (state-changing requests come from the page)")
    return None


def _refuse(status: int, reason: str) -> Response:
    if request.path.startswith("/api/") or request.method != "GET":
        response = jsonify({"error": reason})
    else:
        response = Response(f"<!doctype html><meta name=viewport content='width=device-width'>"
                            f"<title>Table companion</title><p style='font:18px sans-serif;padding:1em'>{reason}</p>",
                            mimetype="text/html")
    response.status_code = status
    return response


@bp.get("/join")
def join() -> Response:
    """`/join?t=TOKEN[&next=/host]`: the QR code's link. Sets the cookie, then a clean URL."""
    c = companion()
    if not hmac.compare_digest(request.args.get("t", ""), c.token):
        return _refuse(403, "this join link is not (or no longer) valid: scan the QR code on the host screen again")
    target = request.args.get("next", "/")
    response = redirect(target if target in ("/", "/host") else "/", code=303)
    response.set_cookie(COOKIE, c.token, max_age=COOKIE_MAX_AGE_S, httponly=True, samesite="Lax")
    return response
