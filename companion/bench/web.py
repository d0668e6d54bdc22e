"""`companion bench web`: the real server under a table's worth of phones.

The siege is rendered once into a folder of frames, served as a camera (looped at 10 frames a
second) through the whole pipeline and the real waitress server on loopback. A separate process
runs 20 simulated phones polling /api/state at 4 Hz and one MJPEG viewer for the duration. It
prints the API latency (p50 / p99 / max) and the delay from a frame's capture to the moment a phone
first sees the state made from it (which includes up to one polling interval, 250 ms).
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from companion.run.server import CompanionServer, ServeOptions
from companion.synth.render import Renderer
from companion.synth.siege import DEFAULT_FRAMES, base_scene, siege_scene, siege_setup
from companion.vision.sources import LoopingSource, open_source

POLL_HZ = 4.0


def _phone(port: int, cookie: str, until: float, out: list) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    latencies, delays, errors, seen = [], [], 0, set()
    next_at = time.time()
    while time.time() < until:
        start = time.perf_counter()
        try:
            conn.request("GET", "/api/state", headers={"Cookie": cookie})
            response = conn.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException):
            errors += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            continue
        received = time.time()
        latencies.append((time.perf_counter() - start) * 1000)
        if response.status != 200:
            errors += 1
        else:
            snap = json.loads(body)["snapshot"]
            if snap["state_frame"] not in seen:
                seen.add(snap["state_frame"])
                if len(seen) > 1:  # the first is whatever was there when the phone arrived
                    delays.append((received - snap["state_time"]) * 1000)
        next_at += 1.0 / POLL_HZ
        time.sleep(max(0.0, next_at - time.time()))
    out.append((latencies, delays, errors))


def _viewer(port: int, cookie: str, until: float, out: list) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/stream.mjpg", headers={"Cookie": cookie})
    response = conn.getresponse()
    parts, bad, total = 0, 0, 0
    while time.time() < until:
        line = response.fp.readline()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
            response.fp.readline()  # the blank line
            data = response.fp.read(length)
            total += length
            parts += 1
            if cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) is None:
                bad += 1
    conn.close()
    out.append((parts, bad, total))


def _clients(port: int, cookie: str, phones: int, seconds: float, queue) -> None:
    until = time.time() + seconds
    phone_out: list = []
    viewer_out: list = []
    threads = [threading.Thread(target=_phone, args=(port, cookie, until, phone_out)) for _ in range(phones)]
    threads.append(threading.Thread(target=_viewer, args=(port, cookie, until, viewer_out)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put((phone_out, viewer_out))


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def run(seconds: float = 30.0, phones: int = 20, frames: int = 8, progress=None) -> dict:
    base = base_scene()
    setup = siege_setup(base)
    folder = Path(tempfile.mkdtemp(prefix="companion-bench-web-"))
    renderer = Renderer()
    steps = np.linspace(0, DEFAULT_FRAMES * 0.6, frames).round().astype(int)  # the march: units move frame to frame
    for k, step in enumerate(steps):
        cv2.imwrite(str(folder / f"frame_{k:03d}.png"), renderer.render(siege_scene(base, int(step))))
        if progress:
            progress(k + 1, frames)
    data = Path(tempfile.mkdtemp(prefix="companion-bench-web-data-"))
    server = CompanionServer(setup, lambda: LoopingSource(lambda: open_source(str(folder))), "rendered siege frames",
                             ServeOptions(host="127.0.0.1", port=0, data_dir=data, open_browser=False,
                                          min_interval_s=0.1))
    server.store.new("siege", "blue")
    server.start_camera()
    server.run_in_thread()
    while not server.hub.latest().state.registered:
        time.sleep(0.05)
    cookie = f"companion_session={server.companion.token}"
    first_seq = server.hub.latest().seq
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_clients, args=(server.port, cookie, phones, seconds, queue))
    started = time.time()
    proc.start()
    phone_out, viewer_out = queue.get(timeout=seconds + 120)
    proc.join()
    elapsed = time.time() - started
    frames_processed = server.hub.latest().seq - first_seq
    tracker_ms = server.hub.latest().tracker_ms
    server.close()
    latencies = [v for lat, _, _ in phone_out for v in lat]
    delays = [v for _, d, _ in phone_out for v in d]
    errors = sum(e for _, _, e in phone_out)
    parts, bad, total = viewer_out[0] if viewer_out else (0, 0, 0)
    return {
        "seconds": seconds, "phones": phones, "poll_hz": POLL_HZ, "requests": len(latencies), "errors": errors,
        "latency_ms": {"p50": _pct(latencies, 50), "p99": _pct(latencies, 99), "max": max(latencies, default=float("nan"))},
        "frame_to_phone_ms": {"p50": _pct(delays, 50), "p95": _pct(delays, 95), "max": max(delays, default=float("nan")),
                              "samples": len(delays)},
        "camera_fps": frames_processed / elapsed, "tracker_ms_last": tracker_ms,
        "mjpeg": {"frames": parts, "undecodable": bad, "fps": parts / seconds, "mean_kb": total / max(parts, 1) / 1024},
        "targets": {"latency_p99_ms": 30.0, "frame_to_phone_ms": 500.0},
    }


def format_table(r: dict) -> str:
    lat, d, m = r["latency_ms"], r["frame_to_phone_ms"], r["mjpeg"]
    ok_lat = "met" if lat["p99"] <= r["targets"]["latency_p99_ms"] else "NOT met"
    ok_delay = "met" if d["max"] <= r["targets"]["frame_to_phone_ms"] else "NOT met"
    return "\n".join([
        f"{r['phones']} phones polling /api/state at {r['poll_hz']:g} Hz + 1 MJPEG viewer, {r['seconds']:g} s on loopback",
        f"  API latency: p50 {lat['p50']:.1f} ms, p99 {lat['p99']:.1f} ms, max {lat['max']:.1f} ms over "
        f"{r['requests']} requests, {r['errors']} errors (target p99 <= 30 ms: {ok_lat})",
        f"  frame -> phone delay: p50 {d['p50']:.0f} ms, p95 {d['p95']:.0f} ms, max {d['max']:.0f} ms over "
        f"{d['samples']} new states (target <= 500 ms: {ok_delay}; includes up to one 250 ms polling interval)",
        f"  camera: {r['camera_fps']:.1f} frames/s through the pipeline; MJPEG viewer got {m['frames']} frames "
        f"({m['fps']:.1f}/s, {m['mean_kb']:.0f} kB each, {m['undecodable']} undecodable)",
    ])
