"""The pages: the phone page, the host screen, the host's MJPEG stream and the join QR code."""

from __future__ import annotations

from typing import Iterator

from flask import Blueprint, Response, render_template

from companion.web.context import companion
from companion.web.qr import qr_svg

bp = Blueprint("pages", __name__)

STREAM_WAIT_S = 5.0  # a stream with no new frame for this long sends the last one again (keeps proxies awake)


@bp.get("/")
def phone() -> str:
    c = companion()
    return render_template("phone.html", csrf=c.csrf, ruleset=c.setup.ruleset, rules_script=c.rules.script)


@bp.get("/host")
def host() -> str:
    c = companion()
    return render_template("host.html", csrf=c.csrf, join_url=c.join_url, source=c.hub.latest().camera.source)


@bp.get("/join.svg")
def join_qr() -> Response:
    return Response(qr_svg(companion().join_url), mimetype="image/svg+xml",
                    headers={"Cache-Control": "no-store"})


@bp.get("/stream.mjpg")
def stream() -> Response:
    """multipart/x-mixed-replace, one part per new annotated frame with its Content-Length."""
    hub = companion().hub

    def parts() -> Iterator[bytes]:
        seq = -1
        while True:
            snap = hub.wait_newer(seq, STREAM_WAIT_S)
            if snap is None:
                return  # the server is shutting down
            seq = snap.seq
            if snap.jpeg is None:
                continue
            yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + str(len(snap.jpeg)).encode()
                   + b"\r\n\r\n" + snap.jpeg + b"\r\n")

    return Response(parts(), mimetype="multipart/x-mixed-replace; boundary=frame",
                    headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
