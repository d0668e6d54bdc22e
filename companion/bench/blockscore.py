"""Scoring blocks against the truth, and the plain way to find them (for `companion bench vision`).

A true block is found when a reported footprint overlaps it at IoU >= 0.5 (each report serves one
block, best overlaps first); what is left over is a false block.

The plain way: the table seen from straight above at table level (1 mm a pixel, through the same
registered pose), pixels far from the table's median colour or strongly saturated, opened,
`minAreaRect` of each blob; colour from its mean against the anchors' paper; no height.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.setup_file import Setup
from companion.state import BRICK_MM
from companion.synth.render import hidden_by_hands
from companion.synth.scene import BLOCK_KINDS, Scene, TruthBlock
from companion.vision.localtable import tile_side_mm
from companion.vision.camera import CameraModel, TablePose
from companion.vision.colours import PAPER_ALBEDO, classify_colour
from companion.vision.tableview import TableView

PLAIN_MM = 1.0  # the plain way's top-down view, mm per pixel
PLAIN_DISTANCE = 30.0  # colour distance from the table's median (8-bit levels) that is "not table"
PLAIN_SATURATION = 60  # or this much more saturated than the table (HSV, 0-255)
MIN_BLOCK_MM2 = 100.0
HALF_BRICK_MM = BRICK_MM / 2  # a height this close is the right number of bricks
HIDDEN_BY_HAND = 0.5  # of a block's top a hand hides from the camera: no block a frame can be asked to read


@dataclass(frozen=True)
class Reported:
    footprint_mm: np.ndarray  # (N, 2)
    height_mm: float | None
    color: str
    hidden: bool = False  # reported as hidden whole under a standing mini (its footprint a guess)


def polygon_iou(a, b: np.ndarray, mm_per_px: float = 0.2) -> float:
    """IoU of polygon `a` (N, 2), or of the union of a list of polygons (a wall's bricks), with `b`."""
    parts = [np.asarray(p, float) for p in a] if isinstance(a, (list, tuple)) else [np.asarray(a, float)]
    b = np.asarray(b, float)
    every = np.concatenate(parts)
    lo = np.minimum(every.min(axis=0), b.min(axis=0)) - 1
    hi = np.maximum(every.max(axis=0), b.max(axis=0)) + 1
    if np.any(np.minimum(every.max(axis=0), b.max(axis=0)) < np.maximum(every.min(axis=0), b.min(axis=0))):
        return 0.0  # bounding boxes apart
    size = np.ceil((hi - lo) / mm_per_px).astype(int) + 1
    ma = np.zeros((size[1], size[0]), np.uint8)
    mb = np.zeros_like(ma)
    for part in parts:  # one at a time: fillPoly's even-odd rule would cut overlaps out
        cv2.fillPoly(ma, [np.round((part - lo) / mm_per_px * 4).astype(np.int32)], 1, cv2.LINE_8, 2)
    cv2.fillPoly(mb, [np.round((b - lo) / mm_per_px * 4).astype(np.int32)], 1, cv2.LINE_8, 2)
    union = np.count_nonzero(ma | mb)
    return float(np.count_nonzero(ma & mb)) / union if union else 0.0


@dataclass
class BlockScore:
    name: str
    expected: int = 0
    found: int = 0
    false_blocks: int = 0
    frames: int = 0
    ious: list[float] = field(default_factory=list)
    height_errors_mm: list[float] = field(default_factory=list)
    colour_right: list[bool] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    # Per kind of block (`BLOCK_KINDS`): blocks, found, found with the height within half a brick.
    kinds: dict[str, list[int]] = field(default_factory=lambda: {k: [0, 0, 0] for k in BLOCK_KINDS})
    # (true colour, the colour reported) of every block found; and the true colours of those missed.
    colours: Counter = field(default_factory=Counter)
    missed_colours: Counter = field(default_factory=Counter)
    # Every block not reported right (missed, a height over half a brick off, another colour) and
    # every false block, scene by scene: what a developer looks at next (`--details`).
    wrong: list[dict] = field(default_factory=list)
    # Blocks reported hidden whole under a standing mini: reported, found (IoU >= 0.5), and with a
    # true block under them (one whose footprint holds their centre), IoU or not.
    hidden: list[int] = field(default_factory=lambda: [0, 0, 0])
    # True blocks whose top a hand hides (HIDDEN_BY_HAND of it or more): not expected; a block
    # reported over one is neither found nor false.
    under_hands: int = 0

    def add(self, scene: Scene, reported: list[Reported], ms: float | None) -> None:
        self.frames += 1
        if ms is not None:
            self.ms.append(ms)
        truth = scene.truth_blocks()
        under_hand = {i for i, t in enumerate(truth) if hidden_by_hands(scene, t.footprints, t.height_mm) >= HIDDEN_BY_HAND}
        self.under_hands += len(under_hand)
        self.expected += len(truth) - len(under_hand)
        pairs = sorted(((polygon_iou(t.footprints, r.footprint_mm), i, j) for i, t in enumerate(truth)
                        for j, r in enumerate(reported)), reverse=True)
        used_t: set[int] = set()
        used_r: set[int] = set()
        matched: list[tuple[float, int, int]] = []
        for iou, i, j in pairs:
            if iou < 0.5:
                break
            if i in used_t or j in used_r or i in under_hand:
                continue
            used_t.add(i)
            used_r.add(j)
            matched.append((iou, i, j))
            self.found += 1
            self.ious.append(iou)
            kind = self.kinds[truth[i].kind]
            kind[1] += 1
            if reported[j].height_mm is not None:
                self.height_errors_mm.append(abs(reported[j].height_mm - truth[i].height_mm))
                kind[2] += self.height_errors_mm[-1] <= HALF_BRICK_MM
            self.colour_right.append(reported[j].color == truth[i].colour)
            self.colours[(truth[i].colour, reported[j].color)] += 1
        best_iou = {i: iou for iou, i, _ in reversed(pairs)}  # each true block's best overlap
        for i, t in enumerate(truth):
            if i in under_hand:
                continue
            self.kinds[t.kind][0] += 1
            if i not in used_t:
                self.missed_colours[t.colour] += 1
                self.wrong.append({"scene": self.frames - 1, "truth": _described(t), "seen": None,
                                   "best_iou": round(best_iou.get(i, 0.0), 2)})
        for iou, i, j in matched:
            r, t = reported[j], truth[i]
            if r.color != t.colour or (r.height_mm is not None and abs(r.height_mm - t.height_mm) > HALF_BRICK_MM):
                self.wrong.append({"scene": self.frames - 1, "truth": _described(t), "seen": _seen(r),
                                   "iou": round(iou, 2)})
        # What is seen of a block a hand hides, at its height, is no false block (nor found).
        used_r |= {j for iou, i, j in pairs if i in under_hand and iou > 0 and reported[j].height_mm is not None
                   and abs(reported[j].height_mm - truth[i].height_mm) <= HALF_BRICK_MM}
        for j, r in enumerate(reported):
            if j not in used_r:
                self.wrong.append({"scene": self.frames - 1, "truth": None, "seen": _seen(r)})
        self.false_blocks += len(reported) - len(used_r)
        for j, r in enumerate(reported):
            if r.hidden:
                centre = np.asarray(r.footprint_mm, float).mean(axis=0)
                self.hidden[0] += 1
                self.hidden[1] += j in used_r
                self.hidden[2] += any(cv2.pointPolygonTest(np.asarray(f, np.float32), (float(centre[0]), float(centre[1])),
                                                           False) >= 0 for t in truth for f in t.footprints)

    def summary(self) -> dict:
        def rounded(value: float | None, digits: int = 3) -> float | None:
            return None if value is None else round(float(value), digits)

        return {
            "method": self.name,
            "found": rounded(self.found / self.expected if self.expected else None),
            "mean_iou": rounded(np.mean(self.ious) if self.ious else None),
            "height_mm_p90": rounded(np.percentile(self.height_errors_mm, 90) if self.height_errors_mm else None, 2),
            "height_within_half_brick": rounded(np.mean(np.array(self.height_errors_mm) <= HALF_BRICK_MM)
                                                if self.height_errors_mm else None),
            "colour_right": rounded(np.mean(self.colour_right) if self.colour_right else None),
            "false_per_frame": rounded(self.false_blocks / self.frames if self.frames else None, 2),
            "ms_per_frame": rounded(np.mean(self.ms) if self.ms else None, 1),
            "by_kind": {k: {"blocks": n, "found": rounded(f / n),
                            "height_within_half_brick": rounded(h / n) if self.height_errors_mm else None}
                        for k, (n, f, h) in self.kinds.items() if n},
            "colours": {t: {**{r: c for (tt, r), c in sorted(self.colours.items()) if tt == t},
                            **({"missed": self.missed_colours[t]} if self.missed_colours[t] else {})}
                        for t in sorted({t for t, _ in self.colours} | set(self.missed_colours))},
            "hidden": dict(zip(("reported", "found", "over_a_block"), self.hidden)),
            "under_hands": self.under_hands,
            "wrong": self.wrong,
        }


def _described(t: TruthBlock) -> dict:
    centre = np.concatenate(t.footprints).mean(axis=0)
    return {"kind": t.kind, "colour": t.colour, "height_mm": round(t.height_mm, 1),
            "centre_mm": [round(float(centre[0]), 1), round(float(centre[1]), 1)]}


def _seen(r: Reported) -> dict:
    footprint = np.asarray(r.footprint_mm, float)
    centre, size = footprint.mean(axis=0), np.ptp(footprint, axis=0)
    return {"colour": r.color, "height_mm": None if r.height_mm is None else round(float(r.height_mm), 1),
            "centre_mm": [round(float(centre[0]), 1), round(float(centre[1]), 1)],
            "extent_mm": [round(float(size[0]), 1), round(float(size[1]), 1)]}


def format_wrong(wrong: list[dict], title: str) -> list[str]:
    """`BlockScore.summary()["wrong"]` a line each: the true block and what was reported for it."""
    def block(d: dict) -> str:
        height = "?" if d["height_mm"] is None else f"{d['height_mm']:g}"
        x, y = d["centre_mm"]
        return f"{d['colour']} {height} mm at ({x:.0f}, {y:.0f})"

    lines = [title]
    for w in wrong:
        if w["truth"] is None:
            seen = w["seen"]
            lines.append(f"  scene {w['scene']}: false block: {block(seen)}, "
                         f"{seen['extent_mm'][0]:.0f} x {seen['extent_mm'][1]:.0f} mm across")
        elif w["seen"] is None:
            lines.append(f"  scene {w['scene']}: {w['truth']['kind']} {block(w['truth'])}: missed "
                         f"(best overlap IoU {w['best_iou']})")
        else:
            lines.append(f"  scene {w['scene']}: {w['truth']['kind']} {block(w['truth'])}: "
                         f"seen as {block(w['seen'])} (IoU {w['iou']})")
    return lines


BLOCK_TARGETS = {"found": 0.95, "mean_iou": 0.85, "height_mm_p90": 4.8, "colour_right": 0.95, "false_per_frame": 0.2}
HAND_TARGETS = {"false_per_frame": 0.5}


def plain_blocks(image: np.ndarray, setup: Setup, camera: CameraModel, pose: TablePose) -> list[Reported]:
    """HSV / colour-distance threshold and minAreaRect on the table plane: the plain way."""
    view = TableView(camera, pose)
    w_px = int(math.ceil(setup.table.width_mm / PLAIN_MM))
    h_px = int(math.ceil(setup.table.depth_mm / PLAIN_MM))
    top = view.window(image, 0.0, 0.0, w_px, h_px, PLAIN_MM)
    # The table's colour: a median over ~80 mm (light falls off across a table; a global median
    # would take half of it for blocks).
    small = cv2.resize(top, None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA)
    table = cv2.resize(cv2.medianBlur(small, 21), (w_px, h_px), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    distance = np.sqrt(((top.astype(np.float32) - table) ** 2).sum(axis=2))
    saturation = cv2.cvtColor(top, cv2.COLOR_BGR2HSV)[..., 1].astype(np.int16)
    table_saturation = cv2.cvtColor(table.astype(np.uint8), cv2.COLOR_BGR2HSV)[..., 1].astype(np.int16)
    mask = ((distance > PLAIN_DISTANCE) | (saturation - table_saturation > PLAIN_SATURATION)).astype(np.uint8)
    for a in setup.anchors:  # the anchors are known; leaving them in would only pad the false count
        half = tile_side_mm(a.size_mm) / 2 + 3
        x0, y0 = int((a.x_mm - half) / PLAIN_MM), int((a.y_mm - half) / PLAIN_MM)
        mask[max(y0, 0):int((a.y_mm + half) / PLAIN_MM), max(x0, 0):int((a.x_mm + half) / PLAIN_MM)] = 0
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))  # printed lines, grain
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = []
    for c in contours:
        if cv2.contourArea(c) * PLAIN_MM ** 2 < MIN_BLOCK_MM2:
            continue
        rect = cv2.minAreaRect(c.astype(np.float32))
        corners = (cv2.boxPoints(rect) + 0.5) * PLAIN_MM
        blob = np.zeros(mask.shape, np.uint8)
        cv2.drawContours(blob, [c], -1, 1, -1)
        mean_bgr = np.array(cv2.mean(top, mask=blob)[:3])
        colour, _ = classify_colour(mean_bgr[::-1] / 255.0 / PAPER_ALBEDO)  # paper reads about 255
        out.append(Reported(corners, None, colour))
    return out


def timed_plain(image: np.ndarray, setup: Setup, camera: CameraModel, pose: TablePose) -> tuple[list[Reported], float]:
    start = time.perf_counter()
    found = plain_blocks(image, setup, camera, pose)
    return found, (time.perf_counter() - start) * 1000
