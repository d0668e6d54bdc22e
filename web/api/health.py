"""GET /api/health: {status ok|degraded, camera {...}, registered_now, frame, age_s (of the last
registered state, s), tracker_ms}."""

from __future__ import annotations

import time

from flask import Blueprint, jsonify

from companion.web.context import companion

bp = Blueprint("health", __name__)


@bp.get("/health")
def get_health():
    snap = companion().hub.latest()
    age = time.time() - snap.state.timestamp if snap.state.timestamp else None
    return jsonify({"status": "ok" if snap.camera.state == "ok" and snap.registered_now else "degraded",
                    "camera": snap.camera.to_json(), "registered_now": snap.registered_now, "reason": snap.reason,
                    "frame": snap.frame, "age_s": round(age, 2) if age is not None else None,
                    "tracker_ms": round(snap.tracker_ms, 2)})
