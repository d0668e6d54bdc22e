"""A second, physically based synthetic camera: the scene of `scene.py` path traced by Mitsuba 3.

It shares nothing with the ray-caster but the scene (the truth): its own meshes (bricks with studs,
painted minis of several shapes under their marker cards, hands), its own table textures, glossy
materials, area lamps of 2700-6500 K with soft shadows, daylight from a window, and a camera that
does what a webcam does in the order it does it: a pinhole image in linear light, the lens's
distortion (the scene's intrinsics describe the final image exactly), defocus, auto-exposure that
clips highlights, a white balance that corrects the light's colour imperfectly, shot and read
noise, a tone curve (sRGB or a plain gamma), sharpening, and JPEG with 4:2:0 chroma.

Mitsuba is an optional extra (`pip install -e '.[pbr]'`); nothing in the product imports this.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from companion.errors import InputError
from companion.synth.render import blur_kernel, encode, sharpen, srgb_to_linear
from companion.synth.scene import KELVIN_RANGE, LEGO_RGB, Scene, SynthBrick, SynthMini, kelvin_rgb
from companion.vision.brickfit import STUD_MM
from companion.vision.markers import marker_bits

VERSION = "pbr-2"  # part of the cache key: bump when the linear render of a scene would change
STUD_DIAMETER_MM = 4.8
STUD_HEIGHT_MM = 1.7
TEXEL_PER_MODULE = 16


@dataclass(frozen=True)
class Look:
    """What the room and the webcam are like for one frame (drawn by `random_look`)."""

    lamp_kelvin: float
    lamp_mm: tuple[float, float, float]  # lamp centre in the table frame
    lamp_size_mm: float
    window: bool  # daylight from a window on one side
    window_side_deg: float
    ambient: float  # light bounced by the room, relative to the lamp
    paper_roughness: float  # GGX alpha of the printed paper
    abs_roughness: float  # GGX alpha of the bricks' ABS
    ink: float  # linear albedo of the printed black
    paper: float  # linear albedo of the paper
    shade_jitter: float  # palette shades vary by this fraction per brick
    exposure_bias: float  # auto-exposure's error (1: the target)
    wb_error: tuple[float, float]  # white balance's gain error on red and blue
    defocus_px: float
    noise: float  # shot noise scale (linear light)
    gamma: float  # 0: sRGB
    sharpen: float
    jpeg_quality: int
    samples: int = 48

    def render_key(self) -> tuple:
        """What the path tracer's output depends on (not the webcam's processing after it)."""
        return (self.lamp_kelvin, self.lamp_mm, self.lamp_size_mm, self.window, self.window_side_deg, self.ambient,
                self.paper_roughness, self.abs_roughness, self.ink, self.paper, self.shade_jitter, self.samples)


def random_look(seed: int, camera_mm: np.ndarray | None = None) -> Look:
    """A room and a webcam drawn at random; the lamp hangs above the camera (`camera_mm`, the
    camera's centre in the table frame), off to one side, out of its view."""
    rng = np.random.default_rng([seed, 2024])
    angle = rng.uniform(0, 2 * math.pi)
    reach = rng.uniform(150, 700)
    above = (1000.0 if camera_mm is None else float(camera_mm[2])) + rng.uniform(150, 600)
    return Look(lamp_kelvin=float(rng.uniform(*KELVIN_RANGE)),
                lamp_mm=(600 + reach * math.cos(angle), 400 + reach * math.sin(angle), above),
                lamp_size_mm=float(rng.uniform(60, 300)), window=bool(rng.random() < 0.4),
                window_side_deg=float(rng.choice([0, 90, 180, 270])), ambient=float(rng.uniform(0.04, 0.15)),
                paper_roughness=float(rng.uniform(0.2, 0.5)), abs_roughness=float(rng.uniform(0.04, 0.2)),
                ink=float(rng.uniform(0.02, 0.05)), paper=float(rng.uniform(0.72, 0.86)),
                shade_jitter=float(rng.uniform(0.0, 0.1)), exposure_bias=float(rng.uniform(0.75, 1.25)),
                wb_error=(float(rng.uniform(0.93, 1.07)), float(rng.uniform(0.93, 1.07))),
                defocus_px=float(rng.uniform(0.3, 1.0)), noise=float(rng.uniform(0.5, 1.5)),
                gamma=float(rng.choice([0.0, 0.0, rng.uniform(1.8, 2.4)])),
                sharpen=float(rng.choice([0.0, rng.uniform(0.2, 0.8)])), jpeg_quality=int(rng.integers(72, 93)))


def _mitsuba():
    try:
        import mitsuba as mi
    except ImportError as exc:  # an optional extra
        raise InputError("--renderer pbr: the physically based camera needs Mitsuba 3 (pip install -e '.[pbr]')") from exc
    if mi.variant() is None:
        for variant in ("llvm_ad_rgb", "scalar_rgb"):  # llvm needs libLLVM >= 16 (Debian: libllvm19)
            try:
                mi.set_variant(variant)
                break
            except (ImportError, AttributeError, RuntimeError):
                continue
    return mi


# --- meshes ------------------------------------------------------------------------------------------

@dataclass
class MeshBuilder:
    """Triangles gathered for one material (numpy), turned into one Mitsuba mesh."""

    vertices: list
    faces: list

    @classmethod
    def new(cls) -> "MeshBuilder":
        return cls([], [])

    def add(self, v: np.ndarray, f: np.ndarray) -> None:
        base = sum(len(x) for x in self.vertices)
        self.vertices.append(np.asarray(v, np.float64))
        self.faces.append(np.asarray(f, np.int64) + base)

    def box(self, centre_xy, half_u: float, half_v: float, z0: float, z1: float, heading_deg: float) -> None:
        """An upright box; local v along `heading_deg`."""
        c, s = math.cos(math.radians(heading_deg)), math.sin(math.radians(heading_deg))
        up, right = np.array([c, s]), np.array([s, -c])
        pts = []
        for z in (z0, z1):
            for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                xy = np.asarray(centre_xy, float) + du * half_u * right + dv * half_v * up
                pts.append((xy[0], xy[1], z))
        quads = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)]
        self.add(np.array(pts), _quads_to_tris(quads, np.array(pts)))

    def cylinder(self, centre_xy, r: float, z0: float, z1: float, segments: int = 32, r_top: float | None = None) -> None:
        """A closed cylinder (a frustum if `r_top`)."""
        r_top = r if r_top is None else r_top
        a = np.linspace(0, 2 * math.pi, segments, endpoint=False)
        cx, cy = centre_xy
        bottom = np.stack([cx + r * np.cos(a), cy + r * np.sin(a), np.full(segments, z0)], 1)
        top = np.stack([cx + r_top * np.cos(a), cy + r_top * np.sin(a), np.full(segments, z1)], 1)
        v = np.vstack([bottom, top, [[cx, cy, z0], [cx, cy, z1]]])
        i = np.arange(segments)
        j = (i + 1) % segments
        side = np.concatenate([np.stack([i, j, j + segments], 1), np.stack([i, j + segments, i + segments], 1)])
        caps = np.concatenate([np.stack([np.full(segments, 2 * segments), j, i], 1),
                               np.stack([np.full(segments, 2 * segments + 1), i + segments, j + segments], 1)])
        self.add(v, np.concatenate([side, caps]))

    def ellipsoid(self, centre, radii, heading_deg: float, rings: int = 16, segments: int = 32) -> None:
        c, s = math.cos(math.radians(heading_deg)), math.sin(math.radians(heading_deg))
        axes = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
        th = np.linspace(0, math.pi, rings + 1)
        ph = np.linspace(0, 2 * math.pi, segments, endpoint=False)
        T, P = np.meshgrid(th, ph, indexing="ij")
        local = np.stack([np.sin(T) * np.cos(P), np.sin(T) * np.sin(P), np.cos(T)], -1).reshape(-1, 3) * radii
        v = local @ axes + np.asarray(centre, float)
        faces = []
        for a in range(rings):
            for b in range(segments):
                p, q = a * segments + b, a * segments + (b + 1) % segments
                faces += [(p, p + segments, q), (q, p + segments, q + segments)]
        self.add(v, np.array(faces))

    def to_mitsuba(self, mi, name: str, bsdf):
        v = np.vstack(self.vertices).astype(np.float32)
        f = np.vstack(self.faces).astype(np.uint32)
        props = mi.Properties()
        props["bsdf"] = bsdf
        props["face_normals"] = True
        mesh = mi.Mesh(name, len(v), len(f), props=props, has_vertex_normals=False, has_vertex_texcoords=False)
        params = mi.traverse(mesh)
        params["vertex_positions"] = v.ravel()
        params["faces"] = f.ravel()
        params.update()
        return mesh


def _quads_to_tris(quads, pts: np.ndarray) -> np.ndarray:
    tris = []
    centre = pts.mean(axis=0)
    for a, b, c, d in quads:
        n = np.cross(pts[b] - pts[a], pts[c] - pts[a])
        if n @ (pts[[a, b, c, d]].mean(axis=0) - centre) < 0:  # outward, whatever order the quad came in
            a, b, c, d = d, c, b, a
        tris += [(a, b, c), (a, c, d)]
    return np.array(tris)


def _brick_mesh(builder: MeshBuilder, b: SynthBrick) -> None:
    builder.box((b.x_mm, b.y_mm), b.size_mm[1] / 2, b.size_mm[0] / 2, b.z0_mm, b.top_mm, b.rotation_deg)
    c, s = math.cos(math.radians(b.rotation_deg)), math.sin(math.radians(b.rotation_deg))
    along, across = np.array([c, s]), np.array([-s, c])
    for i in range(b.studs_long):
        for j in range(b.studs_short):
            xy = (np.array([b.x_mm, b.y_mm]) + (i - (b.studs_long - 1) / 2) * STUD_MM * along
                  + (j - (b.studs_short - 1) / 2) * STUD_MM * across)
            builder.cylinder(xy, STUD_DIAMETER_MM / 2, b.top_mm - 0.01, b.top_mm + STUD_HEIGHT_MM, segments=16)


def _mini_body(builder: MeshBuilder, m: SynthMini, card_bottom: float, shape: int) -> None:
    """A painted figure under its card: a base, then one of several bodies."""
    base_h = min(3.0, card_bottom - m.stand_mm)
    if base_h > 0.2:
        builder.cylinder((m.x_mm, m.y_mm), m.base_mm / 2, m.stand_mm, m.stand_mm + base_h)
    z0, z1 = m.stand_mm + base_h, card_bottom
    if z1 - z0 < 0.3:
        return
    r = m.base_mm * 0.3
    if shape == 0:  # a column
        builder.cylinder((m.x_mm, m.y_mm), r, z0, z1)
    elif shape == 1:  # a cloaked figure: wide at the feet
        builder.cylinder((m.x_mm, m.y_mm), r * 1.3, z0, z1, r_top=r * 0.6)
    elif shape == 2:  # a body and a head
        mid = z0 + 0.65 * (z1 - z0)
        builder.ellipsoid((m.x_mm, m.y_mm, (z0 + mid) / 2), (r, r * 0.8, max((mid - z0) / 2, 0.2)), m.heading_deg)
        builder.ellipsoid((m.x_mm, m.y_mm, (mid + z1) / 2), (r * 0.6, r * 0.6, max((z1 - mid) / 2, 0.2)), 0.0)
    else:  # a boxy warrior
        builder.box((m.x_mm, m.y_mm), r, r * 0.7, z0, z1, m.heading_deg)


@lru_cache(maxsize=64)
def _marker_texture(dictionary_name: str, marker_id: int, margin_modules: float, look: Look) -> np.ndarray:
    """The printed marker and its white margin, linear albedo, rows flipped (Mitsuba's v runs up)."""
    bits = marker_bits(dictionary_name, marker_id) > 0
    pad = int(round(margin_modules * TEXEL_PER_MODULE))
    up = cv2.resize(bits.astype(np.uint8), None, fx=TEXEL_PER_MODULE, fy=TEXEL_PER_MODULE,
                    interpolation=cv2.INTER_NEAREST) > 0
    full = np.pad(up, pad, constant_values=True)
    tex = np.where(full, look.paper, look.ink).astype(np.float32)
    return np.repeat(np.flipud(tex)[:, :, None], 3, axis=2).copy()


# --- the table ---------------------------------------------------------------------------------------

def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cell_px: float) -> np.ndarray:
    small = rng.random((max(2, int(shape[0] / cell_px) + 2), max(2, int(shape[1] / cell_px) + 2))).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


def table_texture(surface: str, width_mm: float, depth_mm: float, seed: int, px_per_mm: float = 2.0) -> np.ndarray:
    """Linear albedo (rows along +y, Mitsuba's v): planks of wood, felt, or a printed mat."""
    rng = np.random.default_rng([seed, 99])
    h, w = int(depth_mm * px_per_mm), int(width_mm * px_per_mm)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32) / px_per_mm
    if surface == "wood":
        plank_mm = rng.uniform(90, 160)
        plank = np.floor(ys / plank_mm)
        tone = 0.75 + 0.25 * np.asarray(rng.random(int(depth_mm / plank_mm) + 2), np.float32)[plank.astype(int)]
        warp = _smooth_noise(rng, (h, w), 40 * px_per_mm) * 12
        grain = 0.5 + 0.5 * np.sin((ys + warp) * rng.uniform(0.6, 1.4) + _smooth_noise(rng, (h, w), 120 * px_per_mm) * 5)
        seam = (np.abs(ys - (plank + 0.5) * plank_mm) > plank_mm / 2 - 0.6).astype(np.float32)
        base = srgb_to_linear(np.array([0.58, 0.40, 0.24]) * rng.uniform(0.7, 1.1))
        value = tone * (0.8 + 0.2 * grain) * (1 - 0.5 * seam)
        return (base[None, None, :] * value[:, :, None]).astype(np.float32)
    if surface == "felt":
        colour = srgb_to_linear(np.array([[0.20, 0.42, 0.22], [0.30, 0.36, 0.24], [0.16, 0.30, 0.45]][rng.integers(3)]))
        fibres = 0.9 + 0.1 * rng.random((h, w)).astype(np.float32)
        value = fibres * (0.93 + 0.07 * _smooth_noise(rng, (h, w), 60 * px_per_mm))
        return (colour[None, None, :] * value[:, :, None]).astype(np.float32)
    # A printed mat: a beige print with a grid of darker lines and some painted terrain patches.
    base = srgb_to_linear(np.array([0.80, 0.77, 0.68]) * rng.uniform(0.85, 1.0))
    pitch = float(rng.choice([25.0, 25.4, 50.0]))
    line = (np.minimum(np.abs((xs + pitch / 2) % pitch - pitch / 2), np.abs((ys + pitch / 2) % pitch - pitch / 2)) < 0.5)
    patches = _smooth_noise(rng, (h, w), 150 * px_per_mm)
    value = (0.85 + 0.15 * patches) * np.where(line, 0.45, 1.0)
    tint = np.where((patches > 0.7)[:, :, None], srgb_to_linear(np.array([0.55, 0.62, 0.45])) / base, 1.0)
    return (base[None, None, :] * tint * value[:, :, None]).astype(np.float32)


# --- the scene ---------------------------------------------------------------------------------------

def _to_world(mi, m: np.ndarray):
    return mi.ScalarTransform4f(m.astype(np.float64).tolist())


def _rect(mi, centre, half_u: float, half_v: float, heading_deg: float, z: float, bsdf) -> dict:
    """A rectangle facing up; local +y along `heading_deg` (a marker's up)."""
    c, s = math.cos(math.radians(heading_deg)), math.sin(math.radians(heading_deg))
    up, right = np.array([c, s, 0.0]), np.array([s, -c, 0.0])
    m = np.eye(4)
    m[:3, 0], m[:3, 1], m[:3, 2] = right * half_u, up * half_v, (0, 0, 1)
    m[:3, 3] = (centre[0], centre[1], z)
    return {"type": "rectangle", "to_world": _to_world(mi, m), "bsdf": bsdf}


def _textured(mi, texture: np.ndarray, roughness: float, filter_type: str = "nearest") -> dict:
    return {"type": "roughplastic", "distribution": "ggx", "alpha": roughness, "int_ior": 1.5,
            "diffuse_reflectance": {"type": "bitmap", "bitmap": mi.Bitmap(texture), "raw": True,
                                    "filter_type": filter_type}}


def _plastic(rgb_linear, roughness: float) -> dict:
    return {"type": "roughplastic", "distribution": "ggx", "alpha": roughness, "int_ior": 1.49,
            "diffuse_reflectance": {"type": "rgb", "value": [float(v) for v in rgb_linear]}}


def _film_geometry(scene: Scene) -> tuple[int, int, float]:
    """The pinhole film that covers every ray of the distorted image: (width, height, focal px)."""
    cam = scene.camera
    w, h = cam.width_px, cam.height_px
    edge = np.concatenate([np.stack([np.linspace(0, w - 1, 64), np.zeros(64)], 1),
                           np.stack([np.linspace(0, w - 1, 64), np.full(64, h - 1)], 1),
                           np.stack([np.zeros(64), np.linspace(0, h - 1, 64)], 1),
                           np.stack([np.full(64, w - 1), np.linspace(0, h - 1, 64)], 1)])
    n = np.abs(cam.normalize(edge))
    f = cam.focal_px
    fw = int(math.ceil(2 * (n[:, 0].max() * f + 3)))
    fh = int(math.ceil(2 * (n[:, 1].max() * f + 3)))
    return fw, fh, f


def build_scene(scene: Scene, look: Look, samples: int | None = None):
    mi = _mitsuba()
    fw, fh, f = _film_geometry(scene)
    # OpenCV's camera: x right, y down, z forward; Mitsuba's: x left, y up, z forward.
    cam_to_world = np.eye(4)
    cam_to_world[:3, :3] = scene.pose.rotation.T @ np.diag([-1.0, -1.0, 1.0])
    cam_to_world[:3, 3] = scene.pose.camera_centre_mm
    fov_x = math.degrees(2 * math.atan((fw / 2) / f))
    d: dict = {"type": "scene", "integrator": {"type": "path", "max_depth": 5},
               "sensor": {"type": "perspective", "fov": fov_x, "fov_axis": "x", "near_clip": 1.0, "far_clip": 1e5,
                          "to_world": _to_world(mi, cam_to_world),
                          "film": {"type": "hdrfilm", "width": fw, "height": fh, "rfilter": {"type": "box"},
                                   "pixel_format": "rgb"},
                          "sampler": {"type": "independent", "sample_count": samples or look.samples}}}
    t = scene.table
    tex = table_texture(scene.surface, t.width_mm, t.depth_mm, scene.texture_seed)
    d["table"] = _rect(mi, (t.width_mm / 2, t.depth_mm / 2), t.width_mm / 2, t.depth_mm / 2, 90.0, 0.0,
                       _textured(mi, tex, 0.6 if scene.surface != "felt" else 0.9, "bilinear"))
    d["floor"] = _rect(mi, (t.width_mm / 2, t.depth_mm / 2), 6000, 6000, 90.0, -40.0,
                       {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.04, 0.035, 0.03]}})
    rng = np.random.default_rng([scene.texture_seed, 5])
    for k, a in enumerate(scene.anchors):
        bits = marker_bits(scene.dictionary, a.id)
        half = a.size_mm * (bits.shape[0] + 2) / bits.shape[0] / 2
        d[f"anchor{k}"] = _rect(mi, (a.x_mm, a.y_mm), half, half, a.rotation_deg, 0.1,
                                _textured(mi, _marker_texture(scene.dictionary, a.id, 1.0, look), look.paper_roughness))
    for k, m in enumerate(scene.minis):
        cells = marker_bits(scene.dictionary, m.id).shape[0]
        half_tile = m.marker_mm * (cells + 2 * m.margin_modules) / cells / 2
        thickness = min(1.5, max(m.z_mm - m.stand_mm, 0.05))
        card = MeshBuilder.new()
        card.box((m.x_mm, m.y_mm), half_tile * 0.999, half_tile * 0.999, m.z_mm - thickness, m.z_mm - 0.005, m.heading_deg)
        d[f"card{k}"] = card.to_mitsuba(mi, f"card{k}", mi.load_dict(_plastic([look.paper] * 3, 0.5)))
        d[f"print{k}"] = _rect(mi, (m.x_mm, m.y_mm), half_tile, half_tile, m.heading_deg, m.z_mm,
                               _textured(mi, _marker_texture(scene.dictionary, m.id, m.margin_modules, look),
                                         look.paper_roughness))
        body = MeshBuilder.new()
        _mini_body(body, m, m.z_mm - thickness, int(rng.integers(4)))
        if body.vertices:
            paint = srgb_to_linear(np.asarray(m.body_rgb)) * rng.uniform(0.8, 1.2)
            d[f"body{k}"] = body.to_mitsuba(mi, f"body{k}", mi.load_dict(_plastic(np.clip(paint, 0, 1), 0.35)))
    for k, b in enumerate(scene.bricks):
        brick = MeshBuilder.new()
        _brick_mesh(brick, b)
        shade = srgb_to_linear(np.asarray(LEGO_RGB[b.color])) * (1 + rng.uniform(-1, 1, 3) * look.shade_jitter)
        d[f"brick{k}"] = brick.to_mitsuba(mi, f"brick{k}", mi.load_dict(_plastic(np.clip(shade, 0.005, 1), look.abs_roughness)))
    if scene.hands:
        skin = srgb_to_linear(np.array([0.87, 0.66, 0.53]) * rng.uniform(0.7, 1.05))
        for k, h in enumerate(scene.hands):
            hand = MeshBuilder.new()
            c, s = math.cos(math.radians(h.towards_deg)), math.sin(math.radians(h.towards_deg))
            hand.ellipsoid((h.x_mm, h.y_mm, h.z_mm), (65, 45, 18), h.towards_deg)
            hand.ellipsoid((h.x_mm - c * 200, h.y_mm - s * 200, h.z_mm + 60), (170, 42, 38), h.towards_deg)
            d[f"hand{k}"] = hand.to_mitsuba(mi, f"hand{k}", mi.load_dict(_plastic(skin, 0.5)))
    # The lamp: a square emitter facing down; its power set so the table under it is about 1.
    colour = np.array(kelvin_rgb(look.lamp_kelvin))
    lamp = np.eye(4)
    lamp[:3, 0], lamp[:3, 1], lamp[:3, 2] = (look.lamp_size_mm / 2, 0, 0), (0, -look.lamp_size_mm / 2, 0), (0, 0, -1)
    lamp[:3, 3] = look.lamp_mm
    area = look.lamp_size_mm ** 2
    radiance = colour * math.pi * look.lamp_mm[2] ** 2 / area
    d["lamp"] = {"type": "rectangle", "to_world": _to_world(mi, lamp),
                 "emitter": {"type": "area", "radiance": {"type": "rgb", "value": radiance.tolist()}}}
    sky = np.array(kelvin_rgb(6500.0)) * look.ambient
    d["room"] = {"type": "constant", "radiance": {"type": "rgb", "value": (sky * (0.6 + 0.4 * colour)).tolist()}}
    if look.window:
        a = math.radians(look.window_side_deg)
        direction = np.array([-math.cos(a), -math.sin(a), -0.8])
        d["window"] = {"type": "directional", "direction": direction.tolist(),
                       "irradiance": {"type": "rgb", "value": (np.array(kelvin_rgb(6500.0)) * 0.35).tolist()}}
    return mi.load_dict(d), (fw, fh, f)


def render_linear(scene: Scene, look: Look, samples: int | None = None, seed: int = 0) -> np.ndarray:
    """The distorted camera image in linear light, RGB float32, before any camera processing."""
    mi = _mitsuba()
    built, (fw, fh, f) = build_scene(scene, look, samples)
    pinhole = np.asarray(mi.render(built, seed=seed), np.float32)[:, :, :3]
    cam = scene.camera
    ys, xs = np.mgrid[0:cam.height_px, 0:cam.width_px]
    n = cam.normalize(np.stack([xs.ravel(), ys.ravel()], 1).astype(np.float64))
    # Mitsuba's pixel (i, j) spans [i, i+1): its centre is OpenCV's integer coordinate + 0.5.
    map_x = (n[:, 0] * f + fw / 2 - 0.5).reshape(cam.height_px, cam.width_px).astype(np.float32)
    map_y = (n[:, 1] * f + fh / 2 - 0.5).reshape(cam.height_px, cam.width_px).astype(np.float32)
    return cv2.remap(pinhole, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def develop(linear_rgb: np.ndarray, look: Look, seed: int = 0) -> np.ndarray:
    """What the webcam makes of linear light: defocus, auto-exposure, white balance, noise, tone
    curve, sharpening, JPEG (4:2:0). BGR uint8."""
    rng = np.random.default_rng([seed, 7])
    img = cv2.filter2D(linear_rgb, -1, blur_kernel("disc", look.defocus_px / 2), borderType=cv2.BORDER_REPLICATE)
    img = cv2.GaussianBlur(img, (0, 0), 0.35)  # the sensor's own spread (microlenses, demosaicing)
    # White balance: grey world over the frame, off by the camera's error.
    means = img.reshape(-1, 3).mean(axis=0)
    gains = means[1] / np.maximum(means, 1e-6) * np.array([look.wb_error[0], 1.0, look.wb_error[1]])
    img = img * gains.astype(np.float32)
    # Auto-exposure: the frame's mean luminance to ~0.18 (mid grey), off by the bias; highlights clip.
    luma = img @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    img = img * np.float32(0.18 * look.exposure_bias / max(float(np.mean(luma)), 1e-6))
    # Shot noise (variance proportional to the light) and read noise.
    sigma = np.sqrt(np.maximum(img, 0) * 4e-4 * look.noise + (1.5e-3 * look.noise) ** 2)
    img = img + rng.normal(0, 1, img.shape).astype(np.float32) * sigma.astype(np.float32)
    display = sharpen(encode(np.clip(img, 0, 1), look.gamma).astype(np.float32), look.sharpen)
    bgr = np.clip(np.round(display[:, :, ::-1] * 255), 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, look.jpeg_quality,
                                         cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def scene_look(scene: Scene) -> Look:
    """The room and webcam a scene is rendered in: drawn from its texture seed, the lamp above
    its camera (the renders, their cache and the benches' truth all take this one)."""
    return random_look(scene.texture_seed, scene.pose.camera_centre_mm)


def render(scene: Scene, look: Look | None = None, samples: int | None = None) -> np.ndarray:
    """The frame a webcam would give of this scene (BGR uint8)."""
    look = look or scene_look(scene)
    return develop(render_linear(scene, look, samples, seed=scene.noise_seed), look, seed=scene.noise_seed)
