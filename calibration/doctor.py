"""`companion doctor`: is this camera, at this place, good enough for the table — and what to fix.

The expected error per roster marker comes from the same model the vision bench measured: a refined
marker side is good to `side_sigma_px(side)`, a height to Cz times its relative error, and a height
error moves the base by its parallax (d / Cz) unless the roster's height takes over.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.setup_file import Setup
from companion.vision.exposure import PAPER_CLIPPED_WARNING
from companion.vision.locator import ROSTER_SIGMA_MM, Locator, height_sigma_mm
from companion.vision.registration import square_corners_mm

BLUR_WARN = 60.0  # Laplacian variance over the anchors; a focused 1080p webcam shows several hundred
DARK_WARN, BRIGHT_WARN = 60, 200  # mean grey level of the table
CLIPPED_WARN = 0.02  # share of saturated pixels
UNEVEN_WARN = 0.35  # anchors' white paper differing by this share


def diagnose(image: np.ndarray, setup: Setup, source: str = "") -> dict:
    h, w = image.shape[:2]
    locator = Locator(setup)
    analysis = locator.analyse(image)
    camera, calibrated = locator.camera(w, h)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    report: dict = {"source": source, "resolution": [w, h], "calibrated": calibrated,
                    "registration": analysis.registration.to_json(), "warnings": [], "markers": []}
    warn = report["warnings"].append
    if not calibrated:
        warn("camera not calibrated: positions hold, heights are approximate (companion calibrate camera)")
    if h < 1000:
        warn(f"{w}x{h}: below 1080p, small markers lose precision fast (see hardware.md)")
    reg = analysis.registration
    if not reg.registered:
        warn(f"{reg.reason}: put the anchors in view")
        report["ok"] = False
        return report
    seen = set(reg.anchors_seen)
    missing = [a.id for a in setup.anchors if a.id not in seen]
    if missing:
        warn(f"anchors {missing} not seen: registration rests on {sorted(seen)}")
    pose = reg.pose
    cz = float(pose.camera_centre_mm[2])
    # Blur and light, measured where we know what should be there: on and around the anchors.
    anchor_px = [pose.project(camera, square_corners_mm(a.x_mm, a.y_mm, a.size_mm * 1.4, a.rotation_deg))
                 for a in setup.anchors if a.id in seen]
    sharp, whites = [], []
    for quad in anchor_px:
        x0, y0 = np.maximum(quad.min(axis=0).astype(int), 0)
        x1, y1 = np.minimum(quad.max(axis=0).astype(int) + 1, (w, h))
        patch = gray[y0:y1, x0:x1]
        if patch.size:
            sharp.append(float(cv2.Laplacian(patch, cv2.CV_64F).var()))
            whites.append(float(np.percentile(patch, 90)))
    report["sharpness"] = round(float(np.median(sharp)), 1) if sharp else None
    if sharp and np.median(sharp) < BLUR_WARN:
        warn(f"the image looks blurred (sharpness {np.median(sharp):.0f}): focus on the table and lock focus")
    table_level = float(np.median(gray))
    clipped = float((gray >= 250).mean())
    report["brightness"] = round(table_level, 1)
    if table_level < DARK_WARN:
        warn(f"dark image (mean grey {table_level:.0f}): more light, or a longer exposure")
    if table_level > BRIGHT_WARN or clipped > CLIPPED_WARN:
        warn(f"overexposed ({clipped:.1%} of pixels saturated): lower the exposure, lock it")
    elif PAPER_CLIPPED_WARNING in analysis.state.warnings:
        # A dark table lets an automatic exposure clip the white paper while few pixels saturate.
        warn(PAPER_CLIPPED_WARNING)
    if len(whites) >= 2 and (max(whites) - min(whites)) / max(max(whites), 1) > UNEVEN_WARN:
        warn(f"uneven light: the anchors' white paper ranges {min(whites):.0f}-{max(whites):.0f}; light the table evenly")
    # Expected error per roster marker, where it is or (not in view) at the table's centre.
    found = {m.id: m for m in analysis.state.minis}
    centre_xy = (setup.table.width_mm / 2, setup.table.depth_mm / 2)
    for spec in setup.minis:
        m = found.get(spec.id)
        x, y = (m.x_mm, m.y_mm) if m else centre_xy
        z = m.z_mm if m else spec.marker_height
        marker_centre = np.array([x, y, z])
        distance = float(np.linalg.norm(marker_centre - pose.camera_centre_mm))
        side_px = spec.marker_mm * camera.focal_px / distance
        sigma_z = height_sigma_mm(side_px, cz)
        if spec.height_given:
            sigma_z = 1 / math.sqrt(1 / sigma_z ** 2 + 1 / ROSTER_SIGMA_MM ** 2)
        parallax = math.hypot(x - pose.camera_centre_mm[0], y - pose.camera_centre_mm[1]) / cz
        xy_p95 = 2.0 * math.hypot(sigma_z * parallax, 0.15)  # 0.15 mm: centre and registration noise
        entry = {"id": spec.id, "name": spec.name, "seen": m is not None, "side_px": round(side_px, 1),
                 "expected_xy_mm_p95": round(xy_p95, 2), "expected_z_mm_p95": round(2 * sigma_z, 2)}
        report["markers"].append(entry)
        if side_px < 14:
            warn(f"marker {spec.id} is only {side_px:.0f} px wide here: use a bigger marker or a closer camera")
    report["ok"] = not report["warnings"]
    return report


def format_report(r: dict) -> str:
    reg = r["registration"]
    lines = [f"camera {r['source']}: {r['resolution'][0]}x{r['resolution'][1]}, "
             f"{'calibrated' if r['calibrated'] else 'not calibrated'}",
             f"table: {'registered from anchors ' + str(reg.get('anchors_seen')) if reg.get('registered') else reg.get('reason')}"
             + (f", residual {reg.get('residual_px')} px" if reg.get("registered") else "")]
    if r.get("sharpness") is not None:
        lines.append(f"sharpness {r['sharpness']}, brightness {r['brightness']}")
    for m in r["markers"]:
        lines.append(f"  marker {m['id']:>3} {m['name'][:18]:<18} {m['side_px']:>5.1f} px  expected error: "
                     f"xy {m['expected_xy_mm_p95']} mm, z {m['expected_z_mm_p95']} mm (p95)"
                     + ("" if m["seen"] else "  [not in view: at the table's centre]"))
    lines += [f"warning: {w}" for w in r["warnings"]] or ["all good"]
    return "\n".join(lines)
