"""Draw what was located onto the camera frame: table outline, blocks as boxes, minis with id, name
and heading."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from companion.setup_file import Setup
from companion.state import TableState
from companion.vision.camera import CameraModel, TablePose
from companion.vision.colours import LEGO_PALETTE


@dataclass(frozen=True)
class Shape:
    """Something to draw over the camera image, in table mm: what a phone is asking about."""

    kind: str  # line | polygon | circle
    points_mm: tuple[tuple[float, float], ...]  # line: its ends; polygon: its corners; circle: its centre
    colour_bgr: tuple[int, int, int]
    radius_mm: float = 0.0  # circle
    label: str = ""
    height_mm: float = 0.0  # drawn at this height (a block's top)


REFERENCE_WIDTH_PX = 800  # the frame width the annotator's sizes are for
PLAYER_COLOURS_BGR = [(60, 60, 230), (230, 120, 40), (40, 200, 60), (30, 200, 230), (200, 60, 200)]


@dataclass(frozen=True)
class TableAnnotator:
    """Style in the constructor, one `annotate` call per frame (supervision-style)."""

    thickness: int = 2  # at REFERENCE_WIDTH_PX; lines and text grow with the frame
    font_scale: float = 0.5
    arrow_mm: float = 30.0

    @staticmethod
    def scale(width_px: int) -> float:
        """How much larger than at REFERENCE_WIDTH_PX to draw on a frame this wide: the host screen
        shows a 1080p frame at ~900 px, where fixed-size labels came out ~5 px tall."""
        return max(1.0, width_px / REFERENCE_WIDTH_PX)

    def annotate(self, image: np.ndarray, state: TableState, setup: Setup, camera: CameraModel,
                 pose: TablePose | None, overlay: tuple[Shape, ...] = ()) -> np.ndarray:
        k = self.scale(image.shape[1])
        sized = replace(self, thickness=max(1, round(self.thickness * k)), font_scale=self.font_scale * k)
        return sized._draw(image, state, setup, camera, pose, overlay)

    def _draw(self, image: np.ndarray, state: TableState, setup: Setup, camera: CameraModel,
              pose: TablePose | None, overlay: tuple[Shape, ...]) -> np.ndarray:
        out = image.copy()
        if pose is None or not state.registered:
            self.banner(out, state.reason or "table not registered", (0, 0, 255))
            return out
        self._outline(out, setup, camera, pose)
        for shape in overlay:
            self._shape(out, shape, camera, pose)
        for block in state.blocks:
            self._block(out, block, camera, pose)
        players = [p.name for p in setup.players]
        for mini in state.minis:
            colour = PLAYER_COLOURS_BGR[players.index(mini.player) % len(PLAYER_COLOURS_BGR)] \
                if mini.player in players else (255, 255, 255)
            if mini.status != "seen":
                colour = (160, 160, 160)
            spec = setup.mini(mini.id)
            radius = (spec.base_mm if spec else 25.0) / 2
            ring = [(mini.x_mm + radius * math.cos(a), mini.y_mm + radius * math.sin(a), 0.0)
                    for a in np.linspace(0, 2 * math.pi, 24)]
            pts = pose.project(camera, np.array(ring)).round().astype(np.int32)
            cv2.polylines(out, [pts], True, colour, self.thickness, cv2.LINE_AA)
            h = math.radians(mini.heading_deg)
            arrow = np.array([[mini.x_mm, mini.y_mm, 0.0],
                              [mini.x_mm + self.arrow_mm * math.cos(h), mini.y_mm + self.arrow_mm * math.sin(h), 0.0]])
            a, b = pose.project(camera, arrow).round().astype(int)
            cv2.arrowedLine(out, tuple(int(v) for v in a), tuple(int(v) for v in b), colour, self.thickness,
                            cv2.LINE_AA, tipLength=0.3)
            label = f"{mini.id} {mini.name}" + ("" if mini.status == "seen" else f" ({mini.status})")
            gap = round(24 * self.font_scale)
            cv2.putText(out, label, (int(a[0]) + gap, int(a[1]) - gap), cv2.FONT_HERSHEY_SIMPLEX, self.font_scale,
                        (0, 0, 0), self.thickness + 2, cv2.LINE_AA)
            cv2.putText(out, label, (int(a[0]) + gap, int(a[1]) - gap), cv2.FONT_HERSHEY_SIMPLEX, self.font_scale,
                        colour, max(1, self.thickness // 2), cv2.LINE_AA)
        seen = sum(m.status == "seen" for m in state.minis)
        self.banner(out, f"anchors {list(state.registration.anchors_seen)}  minis {seen} seen, "
                         f"{len(state.minis) - seen} held  blocks {len(state.blocks)}  frame {state.frame}",
                    (40, 160, 40))
        return out

    def _shape(self, out: np.ndarray, shape: Shape, camera: CameraModel, pose: TablePose) -> None:
        if shape.kind == "circle":
            (cx, cy), r = shape.points_mm[0], shape.radius_mm
            pts = [(cx + r * math.cos(a), cy + r * math.sin(a)) for a in np.linspace(0, 2 * math.pi, 72)]
        else:
            pts = list(shape.points_mm)
        px = pose.project(camera, np.array([(x, y, shape.height_mm) for x, y in pts])).round().astype(np.int32)
        closed = shape.kind != "line"
        cv2.polylines(out, [px], closed, (0, 0, 0), self.thickness + 3, cv2.LINE_AA)
        cv2.polylines(out, [px], closed, shape.colour_bgr, self.thickness + 1, cv2.LINE_AA)
        if shape.label:
            at = (int(px[:, 0].mean()) + 8, int(px[:, 1].min()) - 8)
            cv2.putText(out, shape.label, at, cv2.FONT_HERSHEY_SIMPLEX, self.font_scale * 1.3, (0, 0, 0),
                        self.thickness + 2, cv2.LINE_AA)
            cv2.putText(out, shape.label, at, cv2.FONT_HERSHEY_SIMPLEX, self.font_scale * 1.3, shape.colour_bgr,
                        max(1, self.thickness // 2), cv2.LINE_AA)

    def _block(self, out: np.ndarray, block, camera: CameraModel, pose: TablePose) -> None:
        """The box as the camera sees it: footprint, top face and the vertical edges between."""
        rgb = LEGO_PALETTE.get(block.color, (0.8, 0.8, 0.8))
        colour = tuple(int(255 * v) for v in rgb[::-1])
        foot = np.array([(x, y, 0.0) for x, y in block.footprint_mm])
        top = foot + [0.0, 0.0, block.height_mm]
        a = pose.project(camera, foot).round().astype(np.int32)
        b = pose.project(camera, top).round().astype(np.int32)
        for outline in (a, b):
            cv2.polylines(out, [outline], True, (0, 0, 0), self.thickness + 2, cv2.LINE_AA)
            cv2.polylines(out, [outline], True, colour, self.thickness, cv2.LINE_AA)
        for p, q in zip(a, b):
            cv2.line(out, tuple(int(v) for v in p), tuple(int(v) for v in q), colour, 1, cv2.LINE_AA)
        label = f"B{block.id} {block.height_mm:g} mm"
        if block.hidden_under is not None:
            label += f", hidden under {block.hidden_under}"  # (its box is a guess: the most the mini hides)
        at = (int(b[:, 0].min()), int(b[:, 1].min()) - 6)
        cv2.putText(out, label, at, cv2.FONT_HERSHEY_SIMPLEX, self.font_scale, (0, 0, 0), self.thickness + 2, cv2.LINE_AA)
        cv2.putText(out, label, at, cv2.FONT_HERSHEY_SIMPLEX, self.font_scale, colour, max(1, self.thickness // 2), cv2.LINE_AA)

    def _outline(self, out: np.ndarray, setup: Setup, camera: CameraModel, pose: TablePose) -> None:
        w, d = setup.table.width_mm, setup.table.depth_mm
        edge = []
        for (x0, y0), (x1, y1) in (((0, 0), (w, 0)), ((w, 0), (w, d)), ((w, d), (0, d)), ((0, d), (0, 0))):
            for t in np.linspace(0, 1, 40, endpoint=False):  # straight on the table, curved by the lens
                edge.append((x0 + (x1 - x0) * t, y0 + (y1 - y0) * t, 0.0))
        pts = pose.project(camera, np.array(edge)).round().astype(np.int32)
        cv2.polylines(out, [pts], True, (0, 220, 255), self.thickness, cv2.LINE_AA)

    def banner(self, out: np.ndarray, text: str, colour) -> None:
        """One line across the top of the frame, sized to it like every label."""
        k = self.scale(out.shape[1])
        cv2.rectangle(out, (0, 0), (out.shape[1], round(34 * k)), (0, 0, 0), -1)
        cv2.putText(out, text, (round(10 * k), round(24 * k)), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * k, colour,
                    max(1, round(k)), cv2.LINE_AA)
