"""Render a synthetic scene into a camera frame, by ray casting through the distorted camera.

Every pixel's viewing ray is found exactly (inverse lens distortion), so geometry is exact by
construction. The table texture is evaluated once per pixel; around every object the rays are
supersampled (`Imaging.supersample`^2 per pixel) and box-averaged, which is what a sensor pixel
does -- OpenCV's anti-aliased polygon fill is off by up to a pixel at corners, so it is not used.
Then come uneven light, blur, sensor noise and JPEG.
"""

from __future__ import annotations

import math
import os
import threading
from collections import Counter, OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Callable

import cv2
import numpy as np

from companion.synth.scene import LEGO_RGB, Scene, SynthBoard, SynthBrick, SynthHand, SynthMini
from companion.vision.markers import marker_bits
from companion.vision.pixelboxes import merge_boxes, overlap

INF = np.inf
FLOOR_RGB = np.array([0.18, 0.17, 0.16])
SKIN_RGB = np.array([0.87, 0.66, 0.53])
AMBIENT = 0.45
SHADOW_OFFSET_MM = 0.01  # a shadow ray starts this far off its surface, so it does not hit it again

# (hit distances (N,), albedos (N, 3), unit normals (N, 3)) for N rays; distance inf where the ray
# misses. Primitives only say what a ray meets; `_cast` lights it (lamps, their shadows).
Hit = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class _Primitive:
    corners_mm: np.ndarray  # (8, 3) bounding box, for the pixel region it can touch
    intersect: Callable[[np.ndarray, np.ndarray], Hit]  # ray origins (3,) or (N, 3), directions (N, 3)


def _rot2(deg: float) -> tuple[float, float]:
    return math.cos(math.radians(deg)), math.sin(math.radians(deg))


def _slabs(o_local: np.ndarray, d_local: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """Rays against an axis-aligned box in its own frame: (t or INF, hit mask, hit points, the axis
    of the face each hit is on, its outward normal), the last three for the hits only."""
    # Axis by axis on 1-D columns: np.fmax/fmin skip NaN as nanmax/nanmin do, at a third of the cost.
    t_near = t_far = None
    near_of_axis = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(3):
            t1 = (lo[k] - o_local[:, k]) / d_local[:, k]
            t2 = (hi[k] - o_local[:, k]) / d_local[:, k]
            near, far = np.minimum(t1, t2), np.maximum(t1, t2)
            near_of_axis.append(near)
            t_near = near if t_near is None else np.fmax(t_near, near)
            t_far = far if t_far is None else np.fmin(t_far, far)
    hit = (t_near <= t_far) & (t_far > 0)
    t = np.where(hit, t_near, INF)
    d_hit = d_local[hit]
    p = o_local[hit] + d_hit * t_near[hit, None]
    t_hit = t_near[hit]
    # the face hit: the first axis whose entry is the latest (nanargmax's choice)
    axis = np.where(near_of_axis[0][hit] == t_hit, 0, np.where(near_of_axis[1][hit] == t_hit, 1, 2))
    n_local = np.zeros((len(p), 3))
    n_local[np.arange(len(p)), axis] = -np.sign(d_hit[np.arange(len(p)), axis])
    return t, hit, p, axis, n_local


def _box(cx: float, cy: float, half_u: float, half_v: float, z0: float, z1: float, heading_deg: float,
         albedo_at: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> _Primitive:
    """An upright box; `heading_deg` is the direction of its local +v axis (a marker's up).

    `albedo_at(u, v, face)` gives colours, with face 0 for the top and 1 for the sides.
    """
    c, s = _rot2(heading_deg)
    up = np.array([c, s])
    right = np.array([s, -c])
    centre = np.array([cx, cy])

    def intersect(origin: np.ndarray, d: np.ndarray) -> Hit:
        if origin.ndim == 1:  # the camera's rays (kept as it was first written: the frames stay the same)
            o_local = np.broadcast_to(np.array([(origin[:2] - centre) @ right, (origin[:2] - centre) @ up,
                                                origin[2]]), d.shape)
        else:
            rel = origin[:, :2] - centre
            o_local = np.stack([rel @ right, rel @ up, origin[:, 2]], axis=1)
        d_local = np.stack([d[:, :2] @ right, d[:, :2] @ up, d[:, 2]], axis=1)
        t, hit, p, axis, n_local = _slabs(o_local, d_local, np.array([-half_u, -half_v, z0]),
                                          np.array([half_u, half_v, z1]))
        albedo, normals = np.zeros((len(d), 3)), np.zeros((len(d), 3))
        if hit.any():
            normals[hit, :2] = n_local[:, :1] * right + n_local[:, 1:2] * up
            normals[hit, 2] = n_local[:, 2]
            albedo[hit] = albedo_at(p[:, 0], p[:, 1], np.where(axis == 2, 0, 1))
        return t, albedo, normals

    corners = []
    for du in (-half_u, half_u):
        for dv in (-half_v, half_v):
            for z in (z0, z1):
                xy = centre + du * right + dv * up
                corners.append((xy[0], xy[1], z))
    return _Primitive(np.array(corners), intersect)


def _tilted_tile(cx: float, cy: float, top_mm: float, half: float, thickness: float, heading_deg: float,
                 tilt_deg: float, towards_deg: float, albedo_at: Callable) -> _Primitive:
    """A marker tile tilted by `tilt_deg` about the centre of its top face, its face leaning towards
    `towards_deg`; local u, v on the face as `_box` lays them (v along `heading_deg`)."""
    c, s = _rot2(heading_deg)
    flat = np.array([[s, -c, 0.0], [c, s, 0.0], [0.0, 0.0, 1.0]])  # rows: local u (right), v (up), w (normal)
    tc, ts = _rot2(towards_deg)
    k = np.array([-ts, tc, 0.0])  # the horizontal axis it tips about: w goes towards (tc, ts)
    a = math.radians(tilt_deg)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    rot = np.eye(3) + math.sin(a) * kx + (1 - math.cos(a)) * kx @ kx  # Rodrigues
    axes = flat @ rot.T
    top = np.array([cx, cy, top_mm])
    centre = top - axes[2] * thickness / 2
    half_extent = np.array([half, half, thickness / 2])

    def intersect(origin: np.ndarray, d: np.ndarray) -> Hit:
        o_local = np.broadcast_to(axes @ (origin - centre), d.shape) if origin.ndim == 1 else (origin - centre) @ axes.T
        t, hit, p, axis, n_local = _slabs(o_local, d @ axes.T, -half_extent, half_extent)
        albedo, normals = np.zeros((len(d), 3)), np.zeros((len(d), 3))
        if hit.any():
            normals[hit] = n_local @ axes
            albedo[hit] = albedo_at(p[:, 0], p[:, 1], np.where((axis == 2) & (n_local[:, 2] > 0), 0, 1))
        return t, albedo, normals

    corners = np.array([centre + axes.T @ (half_extent * np.array([su, sv, sw]))
                        for su in (-1, 1) for sv in (-1, 1) for sw in (-1, 1)])
    return _Primitive(corners, intersect)


def _cylinder(cx: float, cy: float, r: float, z0: float, z1: float, rgb) -> _Primitive:
    colour = np.asarray(rgb, float)

    def intersect(origin: np.ndarray, d: np.ndarray) -> Hit:
        o = np.broadcast_to(origin, d.shape)
        ox, oy, oz = o[:, 0] - cx, o[:, 1] - cy, o[:, 2]
        a = d[:, 0] ** 2 + d[:, 1] ** 2
        b = 2 * (ox * d[:, 0] + oy * d[:, 1])
        cc = ox * ox + oy * oy - r * r
        disc = b * b - 4 * a * cc
        t = np.full(len(d), INF)
        normals = np.zeros((len(d), 3))
        ok = disc >= 0
        sq = np.sqrt(np.where(ok, disc, 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t_side = (-b - sq) / (2 * a)
        z_side = oz + d[:, 2] * t_side
        side = ok & (t_side > 0) & (z_side >= z0) & (z_side <= z1)
        t[side] = t_side[side]
        px = ox[side] + d[side, 0] * t_side[side]
        py = oy[side] + d[side, 1] * t_side[side]
        normals[side, 0], normals[side, 1] = px / r, py / r
        with np.errstate(divide="ignore", invalid="ignore"):
            t_top = (z1 - oz) / d[:, 2]
        tx = ox + d[:, 0] * t_top
        ty = oy + d[:, 1] * t_top
        top = (t_top > 0) & (tx * tx + ty * ty <= r * r) & (t_top < t)
        t[top] = t_top[top]
        normals[top] = (0, 0, 1)
        albedo = np.zeros((len(d), 3))
        albedo[np.isfinite(t)] = colour
        return t, albedo, normals

    corners = np.array([(cx + sx * r, cy + sy * r, z) for sx in (-1, 1) for sy in (-1, 1) for z in (z0, z1)])
    return _Primitive(corners, intersect)


def _ellipsoid(centre, radii, heading_deg: float, rgb) -> _Primitive:
    c, s = _rot2(heading_deg)
    axes = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])  # rows: local x, y, z in the table frame
    centre = np.asarray(centre, float)
    radii = np.asarray(radii, float)
    colour = np.asarray(rgb, float)

    def intersect(origin: np.ndarray, d: np.ndarray) -> Hit:
        dl = (d @ axes.T) / radii
        a = (dl * dl).sum(1)
        if origin.ndim == 1:
            o = (axes @ (origin - centre)) / radii
            b, cc = 2 * dl @ o, o @ o - 1
        else:
            o = ((origin - centre) @ axes.T) / radii
            b, cc = 2 * (dl * o).sum(1), (o * o).sum(1) - 1
        disc = b * b - 4 * a * cc
        ok = disc >= 0
        t_hit = (-b - np.sqrt(np.where(ok, disc, 0))) / (2 * a)
        hit = ok & (t_hit > 0)
        t = np.where(hit, t_hit, INF)
        albedo, normals = np.zeros((len(d), 3)), np.zeros((len(d), 3))
        if hit.any():
            p_local = np.broadcast_to(o, dl.shape)[hit] + dl[hit] * t_hit[hit, None]
            n = (p_local / radii) @ axes
            normals[hit] = n / np.linalg.norm(n, axis=1, keepdims=True)
            albedo[hit] = colour
        return t, albedo, normals

    corners = np.array([centre + (axes.T @ (radii * np.array([sx, sy, sz])))
                        for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return _Primitive(corners, intersect)


def _marker_albedo(bits: np.ndarray, side_mm: float, body_rgb) -> Callable:
    """Printed marker on a tile: black/white modules inside the square, white outside, body colour on the sides."""
    cells = bits.shape[0]
    module = side_mm / cells
    white = np.array([0.92, 0.92, 0.9])
    black = np.array([0.06, 0.06, 0.07])
    side_rgb = np.asarray(body_rgb, float)

    def albedo(u: np.ndarray, v: np.ndarray, face: np.ndarray) -> np.ndarray:
        col = np.floor((u + side_mm / 2) / module).astype(int)
        row = np.floor((side_mm / 2 - v) / module).astype(int)
        inside = (col >= 0) & (col < cells) & (row >= 0) & (row < cells)
        value = np.ones(len(u), bool)
        value[inside] = bits[row[inside], col[inside]] > 0
        out = np.where(value[:, None], white, black)
        out[face == 1] = side_rgb
        return out

    return albedo


def _plain(rgb) -> Callable:
    colour = np.asarray(rgb, float)
    return lambda u, v, face: np.broadcast_to(colour * np.where(face == 0, 1.0, 0.92)[:, None], (len(u), 3)).copy()


def scene_sources(scene: Scene) -> list[tuple[object, list[_Primitive]]]:
    """Every object of the scene (its value: equal values draw the same pixels) with its primitives."""
    out: list[tuple[object, list[_Primitive]]] = []
    for a in scene.anchors:
        bits = marker_bits(scene.dictionary, a.id)
        half = a.size_mm * (bits.shape[0] + 2) / bits.shape[0] / 2  # one module of white around it
        out.append((a, [_box(a.x_mm, a.y_mm, half, half, 0.0, 0.1, a.rotation_deg,
                             _marker_albedo(bits, a.size_mm, (0.9, 0.9, 0.88)))]))
    out += [(m, _mini_primitives(scene, m)) for m in scene.minis]
    out += [(b, [_brick_primitive(b)]) for b in scene.bricks]
    out += [(h, _hand_primitives(h)) for h in scene.hands]
    out += [(b, [_board_primitive(b)]) for b in scene.boards]
    return out


def scene_primitives(scene: Scene) -> list[_Primitive]:
    return [p for _, prims in scene_sources(scene) for p in prims]


@lru_cache(maxsize=8)
def _board_bitmap(board: "SynthBoard", px_per_mm: int = 8) -> np.ndarray:
    """The printed board as a bitmap (True white), y down from its top-left, as OpenCV lays it out:
    top-left square black, markers in the white squares in row-major order."""
    cols, rows = board.squares
    sq = int(round(board.square_mm * px_per_mm))
    image = np.ones((rows * sq, cols * sq), bool)
    inset = (board.square_mm - board.marker_mm) / 2
    k = 0
    for j in range(rows):
        for i in range(cols):
            if (i + j) % 2 == 0:
                image[j * sq:(j + 1) * sq, i * sq:(i + 1) * sq] = False
                continue
            bits = marker_bits(board.dictionary, k) > 0
            k += 1
            cells = bits.shape[0]
            module = board.marker_mm / cells
            for r in range(cells):
                for c in range(cells):
                    if not bits[r, c]:
                        y0 = int(round((j * board.square_mm + inset + r * module) * px_per_mm))
                        x0 = int(round((i * board.square_mm + inset + c * module) * px_per_mm))
                        y1 = int(round((j * board.square_mm + inset + (r + 1) * module) * px_per_mm))
                        x1 = int(round((i * board.square_mm + inset + (c + 1) * module) * px_per_mm))
                        image[y0:y1, x0:x1] = False
    return image


def _board_primitive(board: "SynthBoard") -> _Primitive:
    cols, rows = board.squares
    w, h = cols * board.square_mm, rows * board.square_mm
    bitmap = _board_bitmap(board)
    scale = bitmap.shape[1] / w
    white, black = np.array([0.92, 0.92, 0.9]), np.array([0.06, 0.06, 0.07])

    def albedo(u: np.ndarray, v: np.ndarray, face: np.ndarray) -> np.ndarray:
        # local u to the right (+x), v up (+y); the board's own y runs down from its top edge
        bx, by = u + w / 2, h / 2 - v
        col, row = np.floor(bx * scale).astype(int), np.floor(by * scale).astype(int)
        inside = (col >= 0) & (col < bitmap.shape[1]) & (row >= 0) & (row < bitmap.shape[0])
        value = np.ones(len(u), bool)
        value[inside] = bitmap[row[inside], col[inside]]
        return np.where(value[:, None], white, black)

    # Heading 90: local up is +y, so the board's top edge is at y + h and its rows run towards -y.
    return _box(board.x_mm + w / 2, board.y_mm + h / 2, w / 2 + 4, h / 2 + 4, 0.0, 0.1, 90.0, albedo)


def _mini_primitives(scene: Scene, m: SynthMini) -> list[_Primitive]:
    bits = marker_bits(scene.dictionary, m.id)
    cells = bits.shape[0]
    half_tile = m.marker_mm * (cells + 2 * m.margin_modules) / cells / 2
    thickness = min(1.5, max(m.z_mm - m.stand_mm, 0.05))
    top = m.z_mm
    albedo = _marker_albedo(bits, m.marker_mm, m.body_rgb)
    if m.tilt_deg:
        prims = [_tilted_tile(m.x_mm, m.y_mm, top, half_tile, thickness, m.heading_deg, m.tilt_deg, m.tilt_towards_deg,
                              albedo)]
    else:
        prims = [_box(m.x_mm, m.y_mm, half_tile, half_tile, top - thickness, top, m.heading_deg, albedo)]
    body_top = top - thickness
    base_h = min(3.0, body_top - m.stand_mm)
    if base_h > 0.2:
        prims.append(_cylinder(m.x_mm, m.y_mm, m.base_mm / 2, m.stand_mm, m.stand_mm + base_h, (0.1, 0.1, 0.1)))
    if body_top - m.stand_mm - base_h > 0.2:
        prims.append(_cylinder(m.x_mm, m.y_mm, m.base_mm * 0.3, m.stand_mm + base_h, body_top, m.body_rgb))
    return prims


def _brick_primitive(b: SynthBrick) -> _Primitive:
    # Local +v along the long side: heading = rotation + 90 maps v onto the long axis.
    return _box(b.x_mm, b.y_mm, b.size_mm[1] / 2, b.size_mm[0] / 2, b.z0_mm, b.top_mm,
                b.rotation_deg, _plain(LEGO_RGB[b.color]))


def _hand_primitives(h: SynthHand) -> list[_Primitive]:
    c, s = _rot2(h.towards_deg)
    palm = _ellipsoid((h.x_mm, h.y_mm, h.z_mm), (65, 45, 18), h.towards_deg, SKIN_RGB)
    arm_c = (h.x_mm - c * 200, h.y_mm - s * 200, h.z_mm + 60)
    arm = _ellipsoid(arm_c, (170, 42, 38), h.towards_deg, SKIN_RGB * 0.95)
    return [palm, arm]


# --- the table surface ---------------------------------------------------------------------------------

def _value_noise(x: np.ndarray, y: np.ndarray, scale_mm: float, seed: int) -> np.ndarray:
    """Smooth pseudo-random field in [0, 1], deterministic in the table frame."""
    gx, gy = x / scale_mm, y / scale_mm
    ix, iy = np.floor(gx).astype(np.int64), np.floor(gy).astype(np.int64)
    fx, fy = gx - ix, gy - iy
    fx, fy = fx * fx * (3 - 2 * fx), fy * fy * (3 - 2 * fy)

    def h(i, j):
        v = (i * 374761393 + j * 668265263 + seed * 2147483647) & 0xFFFFFFFF
        v = ((v ^ (v >> 13)) * 1274126177) & 0xFFFFFFFF
        return (v & 0xFFFF) / 65535.0

    a, b, c, d = h(ix, iy), h(ix + 1, iy), h(ix, iy + 1), h(ix + 1, iy + 1)
    return (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy


def surface_albedo(surface: str, x: np.ndarray, y: np.ndarray, footprint_mm: np.ndarray, seed: int) -> np.ndarray:
    if surface == "wood":
        warp = _value_noise(x, y, 60.0, seed) * 9
        grain = 0.5 + 0.5 * np.sin((y + warp) * 0.9 + _value_noise(x, y * 4, 150.0, seed + 1) * 6)
        tone = 0.85 + 0.15 * _value_noise(x, y, 200.0, seed + 2)
        base = np.array([0.56, 0.38, 0.22])
        return base * (tone * (0.88 + 0.12 * grain))[:, None]
    if surface == "felt":
        n = 0.92 + 0.08 * _value_noise(x, y, 3.0, seed) + 0.04 * _value_noise(x, y, 80.0, seed + 1)
        return np.array([0.18, 0.42, 0.20]) * n[:, None]
    # A printed mat: light grey with a 50 mm grid of 1 mm lines, anti-aliased by pixel footprint
    # ("paper": the same light print without the grid, e.g. under a printed battlefield).
    base = np.array([0.78, 0.77, 0.72]) * (0.95 + 0.05 * _value_noise(x, y, 40.0, seed))[:, None]
    if surface == "paper":
        return base
    dist = np.minimum(np.abs((x + 25) % 50 - 25), np.abs((y + 25) % 50 - 25))
    cover = np.clip((0.5 + footprint_mm / 2 - dist) / np.maximum(footprint_mm, 1e-6), 0, 1)
    return base * (1 - 0.55 * cover)[:, None]


PRINTED_LINE_MM = 1.5


def _square_lines(board: tuple[float, float, float, float, int, int], x: np.ndarray, y: np.ndarray,
                  footprint_mm: np.ndarray) -> np.ndarray:
    """How much of each pixel a printed board's lines cover (0-1), anti-aliased by pixel footprint."""
    ox, oy, w, d, cols, rows = board
    inside_x = (x >= ox - PRINTED_LINE_MM) & (x <= ox + cols * w + PRINTED_LINE_MM)
    inside_y = (y >= oy - PRINTED_LINE_MM) & (y <= oy + rows * d + PRINTED_LINE_MM)
    kx = np.clip(np.round((x - ox) / w), 0, cols)
    ky = np.clip(np.round((y - oy) / d), 0, rows)
    dist = np.minimum(np.where(inside_y, np.abs(x - (ox + kx * w)), np.inf),
                      np.where(inside_x, np.abs(y - (oy + ky * d)), np.inf))
    return np.clip((PRINTED_LINE_MM / 2 + footprint_mm / 2 - dist) / np.maximum(footprint_mm, 1e-6), 0, 1)


def _surface(scene: Scene, origin: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the rays meet the table's plane: (distances, points (N, 3), which of them meet the
    table: the floor beyond it is not lit by the scene's light)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = -origin[2] / d[:, 2]
    t = np.where(t > 0, t, INF)
    p = origin + d * np.where(np.isfinite(t), t, 0)[:, None]
    on_table = np.isfinite(t) & (p[:, 0] >= 0) & (p[:, 0] <= scene.table.width_mm) & (p[:, 1] >= 0) & (p[:, 1] <= scene.table.depth_mm)
    return t, p, on_table


def _table_albedo(scene: Scene, p: np.ndarray, pixel_mm: np.ndarray) -> np.ndarray:
    """The table's colour at points (N, 3) on it, each seen over a pixel `pixel_mm` wide."""
    alb = surface_albedo(scene.surface, p[:, 0], p[:, 1], pixel_mm, scene.texture_seed)
    if scene.printed_squares is not None:
        alb = alb * (1 - 0.8 * _square_lines(scene.printed_squares, p[:, 0], p[:, 1], pixel_mm))[:, None]
    return alb


# --- light and shadow --------------------------------------------------------------------------------

GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))


def _unit(v) -> np.ndarray:
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _disc_axes(towards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors square to `towards` and to each other: the plane of a lamp's disc."""
    u = _unit(np.cross(towards, (1.0, 0.0, 0.0) if abs(towards[0]) < 0.9 else (0.0, 1.0, 0.0)))
    return u, np.cross(towards, u)


def _lamp_samples(towards: np.ndarray, radius_deg: float, sample: np.ndarray, samples: int, phase: float) -> np.ndarray:
    """Directions to points spread evenly over a lamp's disc (a Vogel spiral), one per ray by the
    ray's index within its pixel: a pixel's rays together see the lamp partly hidden (a penumbra)."""
    if radius_deg <= 0 or samples <= 1:
        return np.broadcast_to(towards, (len(sample), 3))
    u, v = _disc_axes(towards)
    k = np.arange(samples)
    r = math.tan(math.radians(radius_deg)) * np.sqrt((k + 0.5) / samples)
    angle = k * GOLDEN_ANGLE + phase
    dirs = towards + (r * np.cos(angle))[:, None] * u + (r * np.sin(angle))[:, None] * v
    return (dirs / np.linalg.norm(dirs, axis=1, keepdims=True))[sample]


def _in_box(px: np.ndarray, py: np.ndarray, box) -> np.ndarray:
    """Which rays (through pixel positions px, py) fall in a pixel box."""
    x0, y0, x1, y1 = box
    return (px >= x0 - 0.5) & (px < x1 - 0.5) & (py >= y0 - 0.5) & (py < y1 - 0.5)


def _light(scene: Scene, normals: np.ndarray, points: np.ndarray, px: np.ndarray, py: np.ndarray,
           casters: list, sample: np.ndarray | None, samples: int) -> np.ndarray:
    """How much light each surface point gets (N,), as a share of what a fully lit flat surface
    would: the scene's one light without shadows, or its lamps with the shadows of `casters`
    (primitives with the pixel boxes their shadows can fall in)."""
    if scene.lighting is None:
        light = _unit(scene.light_dir)
        return AMBIENT + (1 - AMBIENT) * np.clip(normals @ light, 0.0, 1.0)
    direct = np.zeros(len(normals))
    for k, lamp in enumerate(scene.lighting.lamps):
        towards = _unit(lamp.towards)
        lambert = np.clip(normals @ towards, 0.0, 1.0)  # from the lamp's centre: a shadow changes only what it hides
        if casters:
            lit = (lambert > 0) & np.isfinite(points[:, 0])
            hidden = np.zeros(len(normals), bool)
            dirs = _lamp_samples(towards, lamp.radius_deg, sample if sample is not None else np.zeros(len(normals), int),
                                 samples, phase=1.3 * k)
            for prim, box in casters:
                rays = np.flatnonzero(lit & ~hidden & _in_box(px, py, box))
                if len(rays):
                    t, _, _ = prim.intersect(points[rays] + SHADOW_OFFSET_MM * normals[rays], dirs[rays])
                    hidden[rays[np.isfinite(t)]] = True
            lambert = np.where(hidden, 0.0, lambert)
        direct += lamp.share * lambert
    return scene.lighting.ambient + (1 - scene.lighting.ambient) * direct


def _light_gain(scene: Scene, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    w, h = scene.camera.width_px, scene.camera.height_px
    im = scene.imaging
    u, v = px / w - 0.5, py / h - 0.5
    gradient = 1 - im.light_gradient * (0.5 + 0.7 * u + 0.3 * v)
    vignette = 1 - im.vignetting * (u * u + v * v) * 2
    return np.clip(gradient * vignette, 0.2, 1.5) * 1.15


# --- rendering ---------------------------------------------------------------------------------------

def _cast(scene: Scene, prims: list[_Primitive], px: np.ndarray, py: np.ndarray,
          boxes: list | None = None, casters: list = (), sample: np.ndarray | None = None,
          samples: int = 1) -> np.ndarray:
    """Colour of the rays through distorted pixel positions (N,) x (N,). With `boxes` (each prim's
    pixel box), a prim is only tested against the rays inside its box: it cannot be seen outside.
    `casters`: primitives with the pixel boxes their shadows can fall in; `sample`: each ray's
    index among its pixel's `samples` rays (which point of a lamp its shadow ray aims at)."""
    normalized = scene.camera.normalize(np.stack([px, py], axis=1))
    origin, d = scene.pose.rays(normalized)
    # Size of one pixel on the table, for anti-aliasing the printed grid lines.
    pixel_mm = (origin[2] / np.clip(-d[:, 2], 1e-3, None)) / scene.camera.focal_px
    best_t, table_points, on_table = _surface(scene, origin, d)
    albedo = np.broadcast_to(FLOOR_RGB, (len(d), 3)).copy()
    normals = np.zeros((len(d), 3))
    normals[:, 2] = 1.0
    seen = on_table.copy()  # what the scene's light falls on
    on_object = np.zeros(len(d), bool)
    for k, prim in enumerate(prims):
        rays = np.arange(len(d))
        if boxes is not None:
            rays = np.flatnonzero(_in_box(px, py, boxes[k]))
            if not len(rays):
                continue
        t, a, n = prim.intersect(origin, d[rays])
        closer = t < best_t[rays]
        best_t[rays[closer]] = t[closer]
        albedo[rays[closer]] = a[closer]
        normals[rays[closer]] = n[closer]
        seen[rays[closer]] = True
        on_object[rays[closer]] = True
    # The table's texture only where it is what the ray meets (under a board or a brick it is not).
    table = on_table & ~on_object
    if table.any():
        albedo[table] = _table_albedo(scene, table_points[table], pixel_mm[table])
    colour = albedo
    if seen.any():
        points = origin + d * np.where(np.isfinite(best_t), best_t, np.nan)[:, None]
        light = _light(scene, normals[seen], points[seen], px[seen], py[seen], list(casters),
                       None if sample is None else sample[seen], samples)
        colour[seen] = albedo[seen] * light[:, None]
    return colour * _light_gain(scene, px, py)[:, None]


_WORKERS = max(1, min(4, os.cpu_count() or 1))


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_WORKERS, thread_name_prefix="render")


# The empty tables and last clean frames of the last few cameras, shared by every Renderer of the
# process: scenes drawn again on a table already drawn (a test's variants of one bench table, a
# bench's second pass) re-render only what differs, to the same pixels (see `Renderer.render`).
# A 1080p entry holds two float arrays, ~100 MB.
_SHARED_CAMERAS = 3
_shared: OrderedDict[tuple, dict] = OrderedDict()
_shared_lock = threading.Lock()


def _shared_entry(key: tuple) -> dict | None:
    with _shared_lock:
        entry = _shared.get(key)
        if entry is not None:
            _shared.move_to_end(key)
        return entry


def _share(key: tuple, **values) -> None:
    with _shared_lock:
        entry = _shared.setdefault(key, {})
        entry.update(values)
        _shared.move_to_end(key)
        while len(_shared) > _SHARED_CAMERAS:
            _shared.popitem(last=False)


class Renderer:
    """Renders scenes; keeps the empty-table background of the last camera, so a sequence seen by a
    fixed camera only re-renders its objects (shared with the process's other renderers)."""

    def __init__(self, shared: bool = True) -> None:
        """`shared`: take and leave tables and frames in the process's shared store (False: a
        renderer of its own, whose first frame of a table is a full render)."""
        self._shared = shared
        self._background_key: tuple | None = None
        self._background: np.ndarray | None = None
        self._clean: tuple | None = None  # the last frame before the camera's degradations, and what drew it

    def background(self, scene: Scene) -> np.ndarray:
        cam = scene.camera
        key = (cam.matrix.tobytes(), cam.distortion.tobytes(), cam.width_px, cam.height_px,
               scene.pose.rotation.tobytes(), scene.pose.translation_mm.tobytes(), scene.surface,
               scene.table, scene.texture_seed, scene.imaging.light_gradient, scene.imaging.vignetting,
               scene.light_dir, scene.lighting, scene.printed_squares)
        if key != self._background_key and self._shared and (shared := _shared_entry(key)) is not None:
            self._background, self._background_key = shared["background"], key
            self._clean = shared.get("clean")
        if key != self._background_key:
            def rows(span: tuple[int, int]) -> np.ndarray:
                ys, xs = np.mgrid[span[0]:span[1], 0:cam.width_px]
                return _cast(scene, [], xs.ravel().astype(float), ys.ravel().astype(float))

            cuts = np.linspace(0, cam.height_px, _WORKERS + 1).astype(int)
            parts = list(_pool().map(rows, zip(cuts[:-1], cuts[1:])))  # numpy lets go of the GIL: bands in parallel
            self._background = np.concatenate(parts).reshape(cam.height_px, cam.width_px, 3)
            self._background.flags.writeable = False  # shared: frames are drawn on copies
            self._background_key = key
            if self._shared:
                _share(key, background=self._background)
        return self._background

    def render(self, scene: Scene, degrade: bool = True) -> np.ndarray:
        """The frame the camera would see (BGR, uint8).

        A sequence seen by a fixed camera re-renders only the regions where an object moved,
        appeared or went; every other region is drawn by the same objects as in the last frame and
        is copied from it (the result is the same image a full render gives, pixel for pixel)."""
        background = self.background(scene)
        sources = scene_sources(scene)
        prims = [p for _, ps in sources for p in ps]
        boxes = [_pixel_box(scene, p) for p in prims]
        # Where each prim's shadow can fall (the lamps' rays from its corners down to the table);
        # the regions re-rendered cover both what it hides and where it shades.
        shadow_boxes = [_shadow_box(scene, p) for p in prims] if scene.lighting is not None else [None] * len(prims)
        reach = [_union(b, sb) for b, sb in zip(boxes, shadow_boxes)]
        regions = merge_boxes([b for b in reach if b is not None])
        drawn = Counter(value for value, _ in sources)
        boxes_of: dict[object, list] = {}
        k = 0
        for value, ps in sources:
            boxes_of.setdefault(value, []).extend(b for b in reach[k:k + len(ps)] if b is not None)
            k += len(ps)
        key = (self._background_key, scene.dictionary, scene.imaging.supersample)
        if self._clean is not None and self._clean[0] == key:
            _, drawn_before, image, regions_before, boxes_before = self._clean
            image = image.copy()
            changed = [b for v in drawn_before - drawn for b in boxes_before.get(v, ())]
            changed += [b for v in drawn - drawn_before for b in boxes_of.get(v, ())]
            kept = {tuple(r) for r in regions_before} & {tuple(r) for r in regions}
            for r in regions_before:
                if tuple(r) not in kept:
                    image[r[1]:r[3], r[0]:r[2]] = background[r[1]:r[3], r[0]:r[2]]
            todo = [r for r in regions if tuple(r) not in kept or any(overlap(tuple(r), c) for c in changed)]
        else:
            image, todo = background.copy(), regions
        ss = scene.imaging.supersample
        offsets = (np.arange(ss) + 0.5) / ss - 0.5
        sub = np.arange(ss)

        def region(box) -> np.ndarray:
            x0, y0, x1, y1 = box
            near = [(p, b) for p, b in zip(prims, boxes) if b is not None and overlap(b, tuple(box))]
            casters = [(p, b) for p, b in zip(prims, shadow_boxes) if b is not None and overlap(b, tuple(box))]
            grid_y = (np.arange(y0, y1)[:, None] + offsets[None, :]).ravel()
            grid_x = (np.arange(x0, x1)[:, None] + offsets[None, :]).ravel()
            gy, gx = np.meshgrid(grid_y, grid_x, indexing="ij")
            sample = np.broadcast_to(sub[None, :, None, None] * ss + sub[None, None, None, :],
                                     (y1 - y0, ss, x1 - x0, ss)).ravel()  # each ray's index within its pixel
            colour = _cast(scene, [p for p, _ in near], gx.ravel(), gy.ravel(), [b for _, b in near],
                           casters, sample, ss * ss)
            return colour.reshape(y1 - y0, ss, x1 - x0, ss, 3).mean(axis=(1, 3))

        for (x0, y0, x1, y1), pixels in zip(todo, _pool().map(region, todo)):  # regions are disjoint
            image[y0:y1, x0:x1] = pixels
        image.flags.writeable = False  # shared: the next frame is drawn on a copy
        self._clean = (key, drawn, image, regions, boxes_of)
        if self._shared:
            _share(self._background_key, background=background, clean=self._clean)  # (its table may have been let go)
        img = np.clip(image[:, :, ::-1] * 255.0, 0, 255).astype(np.float32)  # RGB -> BGR
        if degrade:
            img = degrade_image(img, scene)
        return np.clip(np.round(img), 0, 255).astype(np.uint8)


def render(scene: Scene, degrade: bool = True) -> np.ndarray:
    """The frame the camera would see (BGR, uint8)."""
    return Renderer().render(scene, degrade)


def degrade_image(img: np.ndarray, scene: Scene) -> np.ndarray:
    im = scene.imaging
    rng = np.random.default_rng((scene.texture_seed, scene.noise_seed))
    if _camera_response_differs(im):
        img = _camera_response(img, im)
    elif im.blur_sigma_px > 0:
        img = cv2.GaussianBlur(img, (0, 0), im.blur_sigma_px)
    if im.noise_sigma > 0:
        img = img + rng.normal(0, im.noise_sigma, img.shape).astype(np.float32)
    img = np.clip(np.round(img), 0, 255).astype(np.uint8)
    if 0 < im.jpeg_quality < 100:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(im.jpeg_quality)])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img.astype(np.float32)


def _camera_response_differs(im) -> bool:
    return (im.gamma != 1.0 or im.exposure != 1.0 or tuple(im.light_rgb) != (1.0, 1.0, 1.0)
            or im.blur_kernel != "gauss" or im.sharpen > 0)


def srgb_to_linear(v: np.ndarray) -> np.ndarray:
    return np.where(v <= 0.04045, v / 12.92, ((np.maximum(v, 0) + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(v: np.ndarray) -> np.ndarray:
    v = np.clip(v, 0, 1)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055)


def encode(linear: np.ndarray, gamma: float) -> np.ndarray:
    """Linear light (0-1) to display values with the camera's tone curve (gamma 0: sRGB)."""
    return linear_to_srgb(linear) if gamma == 0 else np.clip(linear, 0, 1) ** (1 / gamma)


def blur_kernel(kind: str, sigma_px: float, motion_deg: float = 0.0) -> np.ndarray:
    """A point spread function of about `sigma_px` spread: a Gaussian, a defocus disc (radius 2
    sigma) or a straight motion streak (4 sigma long), supersampled so sub-pixel sizes stay smooth."""
    ss = 8
    reach = int(math.ceil(3 * sigma_px)) + 1
    n = 2 * reach + 1
    g = (np.arange(n * ss) + 0.5) / ss - reach - 0.5  # pixel p's samples span [p - reach - 0.5, p - reach + 0.5)
    x, y = np.meshgrid(g, g)
    if kind == "disc":
        k = (x * x + y * y <= (2 * sigma_px) ** 2).astype(np.float64)
    elif kind == "motion":
        c, s = math.cos(math.radians(motion_deg)), math.sin(math.radians(motion_deg))
        along, across = x * c + y * s, -x * s + y * c
        k = ((np.abs(along) <= 2 * sigma_px) & (np.abs(across) <= 0.5 / ss + 1e-9)).astype(np.float64)
    else:
        k = np.exp(-(x * x + y * y) / (2 * sigma_px ** 2))
    k = k.reshape(n, ss, n, ss).sum(axis=(1, 3))
    return (k / k.sum()).astype(np.float32)


def _camera_response(img: np.ndarray, im) -> np.ndarray:
    """Light, blur and tone curve as a camera applies them: the scene's values are display values
    (decoded to linear light), the lens blurs linear light, then the tone curve and a sharpening."""
    linear = srgb_to_linear(img / 255.0).astype(np.float32)
    linear *= np.float32(im.exposure) * np.asarray(im.light_rgb, np.float32)[::-1]  # BGR
    if im.blur_sigma_px > 0:
        linear = cv2.filter2D(linear, -1, blur_kernel(im.blur_kernel, im.blur_sigma_px, im.motion_deg),
                              borderType=cv2.BORDER_REPLICATE)
    return sharpen(encode(linear, im.gamma).astype(np.float32), im.sharpen) * 255.0


def sharpen(display: np.ndarray, amount: float) -> np.ndarray:
    """A webcam's unsharp mask (1 px radius) on display values: halos at every edge."""
    if amount <= 0:
        return display
    return display + np.float32(amount) * (display - cv2.GaussianBlur(display, (0, 0), 1.0))


def _pixel_box(scene: Scene, prim: _Primitive) -> tuple[int, int, int, int] | None:
    return _points_box(scene, prim.corners_mm)


def _shadow_box(scene: Scene, prim: _Primitive) -> tuple[int, int, int, int] | None:
    """The pixel box a prim's shadows can fall in: its corners and where the rays from them away
    from every lamp (its centre and its disc's rim) meet the table."""
    points = [prim.corners_mm]
    z = np.clip(prim.corners_mm[:, 2], 0.0, None)
    for lamp in scene.lighting.lamps:
        towards = _unit(lamp.towards)
        u, v = _disc_axes(towards)
        # an octagon of directions around the disc, wide enough to hold it (inradius 1.1 cos 22.5 > 1)
        spread = 1.1 * math.tan(math.radians(lamp.radius_deg))
        rim = [_unit(towards + spread * (math.cos(a) * u + math.sin(a) * v)) for a in np.arange(8) * math.pi / 4]
        for d in [towards] + rim:
            points.append(prim.corners_mm - d * (z / d[2])[:, None])
    return _points_box(scene, np.concatenate(points))


def _union(a, b):
    if a is None or b is None:
        return a if b is None else b
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def _points_box(scene: Scene, points_mm: np.ndarray) -> tuple[int, int, int, int] | None:
    cam = scene.camera
    cam_pts = scene.pose.to_camera(points_mm)
    if (cam_pts[:, 2] <= 1).any():
        return None
    px = scene.pose.project(cam, points_mm)
    x0 = int(math.floor(px[:, 0].min())) - 3
    y0 = int(math.floor(px[:, 1].min())) - 3
    x1 = int(math.ceil(px[:, 0].max())) + 4
    y1 = int(math.ceil(px[:, 1].max())) + 4
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, cam.width_px), min(y1, cam.height_px)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def hidden_by_hands(scene: Scene, footprints: list[np.ndarray], top_mm: float, samples: int = 5) -> float:
    """Share of points on a block's top (its bricks' footprints, (4, 2) mm corners in turn, at
    `top_mm`) that a hand or an arm hides from the camera."""
    if not scene.hands:
        return 0.0
    g = (np.arange(samples) + 0.5) / samples
    u, v = (a.reshape(-1, 1) for a in np.meshgrid(g, g))
    pts = np.concatenate([f[0] + u * (f[1] - f[0]) + v * (f[3] - f[0]) for f in np.asarray(footprints, float)])
    pts3 = np.concatenate([pts, np.full((len(pts), 1), top_mm + 1e-3)], axis=1)
    return float(_hidden_from_camera(scene, pts3, [p for h in scene.hands for p in _hand_primitives(h)]).mean())


def marker_visible_fraction(scene: Scene, mini: SynthMini, samples: int = 5) -> float:
    """Share of points on a mini's marker that the camera sees directly (not behind a hand or a brick)."""
    c, s = _rot2(mini.heading_deg)
    up, right = np.array([c, s]), np.array([s, -c])
    g = (np.arange(samples) + 0.5) / samples - 0.5
    uu, vv = np.meshgrid(g * mini.marker_mm, g * mini.marker_mm)
    pts = np.array([mini.x_mm, mini.y_mm]) + uu.reshape(-1, 1) * right + vv.reshape(-1, 1) * up
    pts3 = np.concatenate([pts, np.full((len(pts), 1), mini.z_mm + 1e-3)], axis=1)
    blockers = [_brick_primitive(b) for b in scene.bricks]
    for h in scene.hands:
        blockers.extend(_hand_primitives(h))
    for other in scene.minis:
        if other.id != mini.id:
            blockers.extend(_mini_primitives(scene, other))
    return float(1.0 - _hidden_from_camera(scene, pts3, blockers).mean())


def _hidden_from_camera(scene: Scene, points_mm: np.ndarray, blockers: list[_Primitive]) -> np.ndarray:
    """Per point (N, 3 mm): whether one of `blockers` stands between it and the camera."""
    towards = scene.pose.camera_centre_mm - points_mm
    length = np.linalg.norm(towards, axis=1)
    hidden = np.zeros(len(points_mm), bool)
    for blocker in blockers:
        t, _, _ = blocker.intersect(points_mm, towards / length[:, None])
        hidden |= t < length
    return hidden
