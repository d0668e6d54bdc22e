"""Synthetic tables with exact ground truth: the test instrument behind the bench and the demo.

A scene is pure geometry in the table frame (mm): anchors, minis (body + marker tile on top),
Lego-like bricks, hands, plus the camera that looks at it and the imaging degradations. The renderer
(`render.py`) turns it into a frame; the scene itself is the truth the pipeline is scored against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from companion.rules.geometry import point_in_polygon, point_polygon_distance
from companion.setup_file import AnchorSpec, CameraSpec, MiniSpec, PlayerSpec, Setup, TableSpec
from companion.vision.brickfit import BRICK_MM, GAP_MM, PLATE_MM, STUD_MM  # bricks as the detector knows them
from companion.vision.camera import CameraModel, TablePose
from companion.vision.colours import LEGO_PALETTE

LEGO_RGB = LEGO_PALETTE  # the bricks are painted in the palette the detector names them by
SURFACES = ("wood", "felt", "grid")  # what random scenes draw from; "paper" (plain print) is also drawn


@dataclass(frozen=True)
class SynthMini:
    id: int
    x_mm: float  # base centre
    y_mm: float
    z_mm: float  # marker (top face of the cap) above the table
    heading_deg: float  # marker up vector, counter-clockwise from +x
    marker_mm: float  # side of the black square
    base_mm: float = 25.0
    stand_mm: float = 0.0  # top of what the mini stands on (0: the table)
    body_rgb: tuple[float, float, float] = (0.25, 0.22, 0.2)
    margin_modules: float = 1.0  # white quiet zone around the black square, in marker modules
    tilt_deg: float = 0.0  # the marker tile tilted from flat about its centre (a curled card, a knocked mini)
    tilt_towards_deg: float = 0.0  # the direction its face leans towards, counter-clockwise from +x


@dataclass(frozen=True)
class SynthBrick:
    x_mm: float  # footprint centre
    y_mm: float
    rotation_deg: float  # long side direction, counter-clockwise from +x
    studs_long: int
    studs_short: int
    z0_mm: float = 0.0  # bottom
    height_mm: float = BRICK_MM
    color: str = "red"

    @property
    def size_mm(self) -> tuple[float, float]:
        return (STUD_MM * self.studs_long - GAP_MM, STUD_MM * self.studs_short - GAP_MM)

    @property
    def top_mm(self) -> float:
        return self.z0_mm + self.height_mm

    def footprint_mm(self) -> np.ndarray:
        """The four footprint corners (4, 2), counter-clockwise."""
        a, b = self.size_mm[0] / 2, self.size_mm[1] / 2
        c, s = math.cos(math.radians(self.rotation_deg)), math.sin(math.radians(self.rotation_deg))
        local = np.array([[-a, -b], [a, -b], [a, b], [-a, b]])
        return local @ np.array([[c, s], [-s, c]]) + [self.x_mm, self.y_mm]


BLOCK_KINDS = ("single", "touching", "wall", "tower", "under a mini")
TOUCHING_MM = 0.5  # bricks of a row stand 0.2 mm apart; loose bricks are placed well clear of each other


class TruthBlock(NamedTuple):
    """One block as a block finder should report it."""

    footprints: list[np.ndarray]  # its bricks' footprints (a wall's several), (4, 2) mm each
    height_mm: float  # its top
    colour: str  # its top brick's
    kind: str  # of BLOCK_KINDS: a loose brick, one of a row of touching bricks, a wall that turns, a tower,
    # a block a mini stands on


def footprint_gap_mm(a: np.ndarray, b: np.ndarray) -> float:
    """The distance between two convex footprints (4, 2): 0 when a corner of one lies inside the
    other, else the least distance from a corner of one to a side of the other (two bars laid
    across each other, no corner inside, are not told apart: bricks do not)."""
    def to(points: np.ndarray, polygon: np.ndarray) -> float:
        outline = [tuple(map(float, q)) for q in polygon]
        return min(point_polygon_distance(tuple(map(float, p)), outline) for p in points)

    return min(to(a, b), to(b, a))


@dataclass(frozen=True)
class SynthHand:
    """A hand reaching over the table: a palm and a forearm back towards the table edge."""

    x_mm: float  # palm centre
    y_mm: float
    z_mm: float  # palm centre height
    towards_deg: float  # direction the fingers point, counter-clockwise from +x


@dataclass(frozen=True)
class SynthBoard:
    """A printed ChArUco board lying flat on the table (for calibration views)."""

    x_mm: float  # its top-left corner
    y_mm: float
    squares: tuple[int, int] = (7, 5)
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = "DICT_5X5_100"


@dataclass(frozen=True)
class Imaging:
    noise_sigma: float = 2.0  # sensor noise, 8-bit levels
    blur_sigma_px: float = 0.6
    jpeg_quality: int = 90
    light_gradient: float = 0.25  # brightness falls by this fraction across the frame
    vignetting: float = 0.2
    supersample: int = 4
    # How a real camera answers light (domain randomisation; the defaults are the plain renderer):
    # the rendered values are taken as display values, decoded to linear light, lit, blurred there,
    # then encoded with `gamma` (0: the sRGB curve; 1: linear, as the plain renderer does).
    gamma: float = 1.0
    exposure: float = 1.0  # gain in linear light (auto-exposure's error, a lamp switched on)
    light_rgb: tuple[float, float, float] = (1.0, 1.0, 1.0)  # the light's colour after white balance
    blur_kernel: str = "gauss"  # gauss | disc (defocus, radius 2 sigma) | motion (a line 4 sigma long)
    motion_deg: float = 0.0  # the motion blur's direction in the image
    sharpen: float = 0.0  # a webcam's unsharp mask in display values (halos at edges)


@dataclass(frozen=True)
class Lamp:
    """A distant lamp: the direction towards it, its share of the direct light, and its apparent
    radius (a lamp 20 cm across 1.5 m away: ~4 degrees), which softens its shadows' edges."""

    towards: tuple[float, float, float]  # unit vector from the table towards the lamp
    share: float
    radius_deg: float


@dataclass(frozen=True)
class Lighting:
    """Lamps that cast shadows, and the light that comes from everywhere (the room, the ceiling)."""

    lamps: tuple[Lamp, ...]
    ambient: float  # the share of a lit surface's light that reaches it in a lamp's shadow too


@dataclass(frozen=True)
class Scene:
    table: TableSpec
    surface: str
    anchors: tuple[AnchorSpec, ...]
    minis: tuple[SynthMini, ...]
    bricks: tuple[SynthBrick, ...]
    hands: tuple[SynthHand, ...]
    camera: CameraModel
    pose: TablePose
    imaging: Imaging = field(default_factory=Imaging)
    dictionary: str = "DICT_4X4_50"
    texture_seed: int = 0
    noise_seed: int = 0  # sensor noise differs frame to frame in a sequence
    boards: tuple[SynthBoard, ...] = ()
    light_dir: tuple[float, float, float] = (0.3, -0.4, 0.87)  # one light without shadows, when `lighting` is None
    lighting: Lighting | None = None  # lamps that cast shadows
    walls: tuple[tuple[int, ...], ...] = ()  # bricks (indices) that touch to make one wall that turns
    stacks: tuple[tuple[int, ...], ...] = ()  # bricks (indices) stacked on one footprint: one tower
    # A printed battlefield of squares on the surface: (origin x, origin y, square w, square d, columns, rows), mm.
    printed_squares: tuple[float, float, float, float, int, int] | None = None

    def truth_blocks(self) -> list[TruthBlock]:
        """What a block finder should report: each wall that turns as one block (its bricks'
        footprints), each tower as one block (seen from above, its top brick's colour), every other
        brick on its own; with the top's height, the colour and the kind (a loose brick a mini stands
        on: "under a mini")."""
        singles = [i for i in range(len(self.bricks)) if i not in {j for g in self.walls + self.stacks for j in g}]
        footprints = [b.footprint_mm() for b in self.bricks]
        groups = ([(list(g), "wall") for g in self.walls] + [(list(g), "tower") for g in self.stacks]
                  + [([i], "touching" if any(footprint_gap_mm(footprints[i], footprints[j]) <= TOUCHING_MM
                                             for j in singles if j != i) else "single") for i in singles])
        result = []
        standing = [m for m in self.minis if m.stand_mm > 0]
        for g, kind in groups:
            top = max(g, key=lambda i: self.bricks[i].top_mm)
            if kind == "single" and standing:
                outline = [tuple(map(float, q)) for q in footprints[top]]
                if any(point_in_polygon((m.x_mm, m.y_mm), outline) for m in standing):
                    kind = "under a mini"
            result.append(TruthBlock([footprints[i] for i in g], self.bricks[top].top_mm, self.bricks[top].color, kind))
        return result

    def setup(self, path: str = "<synthetic>", with_camera: bool = True, roster_heights: bool = True,
              height_noise_mm: float = 1.0) -> Setup:
        """The setup file a player would have written for this table.

        Players measure their minis with a ruler: roster heights carry `height_noise_mm` of error
        (rounded to 0.5 mm). Without `roster_heights` the roster says nothing about heights.
        """
        rng = np.random.default_rng(self.texture_seed + 5)
        camera = CameraSpec(tuple(tuple(float(v) for v in r) for r in self.camera.matrix),
                            tuple(float(v) for v in self.camera.distortion)) if with_camera else None
        classes = ("defender", "berserker", "polearm", "shooter", "priest")
        minis = tuple(MiniSpec(id=m.id, name=f"{classes[(i // 2) % 5]} {m.id}", marker_mm=m.marker_mm,
                               player="red" if i % 2 == 0 else "blue", base_mm=m.base_mm,
                               faction="orcs" if i % 2 == 0 else "humans", unit_class=classes[(i // 2) % 5],
                               height_mm=max(0.0, round(2 * (m.z_mm - m.stand_mm + rng.normal(0, height_noise_mm))) / 2)
                               if roster_heights else 40.0,
                               height_given=roster_heights)
                      for i, m in enumerate(self.minis))
        return Setup(path=path, table=self.table, dictionary=self.dictionary, anchors=self.anchors,
                     camera=camera, players=(PlayerSpec("red"), PlayerSpec("blue")), minis=minis)

    def with_(self, **changes) -> "Scene":
        return replace(self, **changes)


# --- cameras ----------------------------------------------------------------------------------------

def look_at_pose(camera_mm: np.ndarray, target_mm: np.ndarray, roll_deg: float = 0.0) -> TablePose:
    """A camera at `camera_mm` looking at `target_mm`, its image x along the table's +x (then rolled)."""
    z = np.asarray(target_mm, float) - np.asarray(camera_mm, float)
    z /= np.linalg.norm(z)
    x = np.array([1.0, 0.0, 0.0]) - z * z[0]
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    r = math.radians(roll_deg)
    x, y = math.cos(r) * x + math.sin(r) * y, -math.sin(r) * x + math.cos(r) * y
    rot = np.stack([x, y, z])
    return TablePose(rot, -rot @ np.asarray(camera_mm, float))


def framing_camera(table: TableSpec, pose: TablePose, width_px: int, height_px: int,
                   distortion: np.ndarray, margin: float = 0.04, principal_offset_px=(0.0, 0.0)) -> CameraModel:
    """The focal length that just fits the whole table in the frame (with a margin)."""
    corners = np.array([[0, 0, 0], [table.width_mm, 0, 0], [table.width_mm, table.depth_mm, 0],
                        [0, table.depth_mm, 0]], float)
    cam = pose.to_camera(corners)
    n = cam[:, :2] / cam[:, 2:3]
    cx = (width_px - 1) / 2 + principal_offset_px[0]
    cy = (height_px - 1) / 2 + principal_offset_px[1]
    fx = min((cx * (1 - margin)) / np.abs(n[n[:, 0] < 0, 0]).max(initial=1e-9),
             ((width_px - 1 - cx) * (1 - margin)) / np.abs(n[n[:, 0] > 0, 0]).max(initial=1e-9))
    fy = min((cy * (1 - margin)) / np.abs(n[n[:, 1] < 0, 1]).max(initial=1e-9),
             ((height_px - 1 - cy) * (1 - margin)) / np.abs(n[n[:, 1] > 0, 1]).max(initial=1e-9))
    f = min(fx, fy)
    matrix = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1.0]])
    return CameraModel(matrix, np.asarray(distortion, float), width_px, height_px)


# --- random scenes -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Level:
    name: str
    height_mm: tuple[float, float]
    tilt_deg: tuple[float, float]
    marker_mm: tuple[float, float]
    k1: tuple[float, float]
    imaging: Imaging
    trimmed_share: float = 0.0  # minis whose print is trimmed to a half-module white margin


LEVELS = {
    "standard": Level("standard", (950, 1250), (0, 15), (18, 25), (-0.12, 0.02),
                      Imaging(noise_sigma=2.0, blur_sigma_px=0.6, jpeg_quality=90)),
    "hard": Level("hard", (800, 1400), (10, 35), (15, 22), (-0.25, 0.05),
                  Imaging(noise_sigma=4.0, blur_sigma_px=0.9, jpeg_quality=80, light_gradient=0.4),
                  trimmed_share=0.3),
}


KELVIN_RANGE = (2700.0, 6500.0)


def kelvin_rgb(kelvin: float) -> tuple[float, float, float]:
    """A black body's colour in linear RGB, green 1 (Tanner Helland's fit of the CIE tables)."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = 99.4708025861 * math.log(t) - 161.1195681661 if t <= 66 else 288.1221695283 * (t - 60) ** -0.0755148492
    b = 255.0 if t >= 66 else 0.0 if t <= 19 else 138.5177312231 * math.log(t - 10) - 305.0447927307
    srgb = np.clip(np.array([r, g, b]) / 255.0, 1e-3, 1.0)
    lin = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    return tuple(float(v) for v in lin / lin[1])


def randomised_imaging(rng: np.random.Generator, base: Imaging) -> Imaging:
    """What a real room and webcam vary, drawn at random around a level's imaging: the tone curve
    (sRGB or a gamma of 1.8-2.4), sharpening, the blur's shape, exposure, and the light's colour
    (2700-6500 K) as an automatic white balance leaves it (it corrects about two thirds)."""
    light = np.array(kelvin_rgb(rng.uniform(*KELVIN_RANGE)))
    light = light ** (1 / 3)  # what an auto white balance leaves of the cast
    return replace(base,
                   gamma=float(rng.choice([0.0, 0.0, rng.uniform(1.8, 2.4)])),
                   exposure=float(rng.uniform(0.7, 1.25)),
                   light_rgb=tuple(float(v) for v in light / light.max()),
                   blur_kernel=str(rng.choice(["gauss", "disc", "motion"])),
                   motion_deg=float(rng.uniform(0, 180)),
                   blur_sigma_px=float(base.blur_sigma_px * rng.uniform(0.8, 1.2)),
                   sharpen=float(rng.choice([0.0, rng.uniform(0.3, 1.0)])),
                   jpeg_quality=int(rng.integers(75, 93)))


def random_lighting(rng: np.random.Generator) -> Lighting:
    """One to three lamps (a ceiling lamp, a desk lamp, a window) at 40-85 degrees above the table
    from any side, sharing the direct light unevenly, 1-6 degrees across (hard to soft shadows),
    and 15-50% of the light from everywhere (a dark room's deep shadows to a bright room's faint
    ones)."""
    count = int(rng.choice([1, 2, 2, 3]))
    shares = rng.dirichlet(np.full(count, 1.5))
    lamps = []
    for share in shares:
        elevation, azimuth = math.radians(rng.uniform(40, 85)), rng.uniform(0, 2 * math.pi)
        lamps.append(Lamp((math.cos(elevation) * math.cos(azimuth), math.cos(elevation) * math.sin(azimuth),
                           math.sin(elevation)), float(share), float(rng.uniform(1, 6))))
    return Lighting(tuple(lamps), float(rng.uniform(0.15, 0.5)))


def random_camera(rng: np.random.Generator, table: TableSpec, level: Level,
                  width_px: int = 1920, height_px: int = 1080) -> tuple[CameraModel, TablePose]:
    height = rng.uniform(*level.height_mm)
    tilt = math.radians(rng.uniform(*level.tilt_deg))
    azimuth = rng.uniform(0, 2 * math.pi)
    target = np.array([table.width_mm / 2 + rng.uniform(-40, 40), table.depth_mm / 2 + rng.uniform(-40, 40), 0.0])
    offset = height * math.tan(tilt)
    position = target + np.array([-offset * math.cos(azimuth), -offset * math.sin(azimuth), 0.0])
    position[2] = height
    pose = look_at_pose(position, target, roll_deg=rng.uniform(-3, 3))
    k1 = rng.uniform(*level.k1)
    distortion = np.array([k1, -0.3 * k1 * rng.uniform(0, 1), rng.uniform(-5e-4, 5e-4),
                           rng.uniform(-5e-4, 5e-4), 0.0])
    camera = framing_camera(table, pose, width_px, height_px, distortion, margin=0.05,
                            principal_offset_px=(rng.uniform(-15, 15), rng.uniform(-15, 15)))
    return camera, pose


WALL_KINDS = ("L", "U", "T", "ring")


def wall_bricks(kind: str, x_mm: float, y_mm: float, rotation_deg: float, height_mm: float, colour: str
                ) -> tuple[SynthBrick, ...]:
    """Bricks 2 studs thick that touch to make a wall that turns, on the stud grid, centred near
    (x, y): an L (8 + 6 studs), a U (10 + 6 + 6), a T (10 + 6) or a ring 80 mm square."""
    c, s = math.cos(math.radians(rotation_deg)), math.sin(math.radians(rotation_deg))

    def at(dx: float, dy: float, turn: float, studs: int) -> SynthBrick:
        return SynthBrick(x_mm + c * dx - s * dy, y_mm + s * dx + c * dy, rotation_deg + turn, studs, 2, 0.0,
                          height_mm, colour)

    shapes = {"L": [at(0, 0, 0, 8), at(24, 32, 90, 6)],
              "U": [at(0, 0, 0, 10), at(-32, 32, 90, 6), at(32, 32, 90, 6)],
              "T": [at(0, 0, 0, 10), at(0, 32, 90, 6)],
              "ring": [at(0, 40, 0, 10), at(0, -40, 0, 10), at(-32, 0, 90, 8), at(32, 0, 90, 8)]}
    return tuple(shapes[kind])


def tower_bricks(rng: np.random.Generator, x_mm: float, y_mm: float, colours: list[str]) -> tuple[SynthBrick, ...]:
    """4-12 bricks (a plate now and then) stacked on one footprint at (x, y): a castle's tower,
    in runs of colours as players build them."""
    long, short = [(2, 2), (2, 4), (2, 3), (1, 4), (2, 2)][rng.integers(5)]
    rotation = float(rng.uniform(0, 180))
    colour = colours[rng.integers(len(colours))]
    bricks, z = [], 0.0
    for _ in range(int(rng.integers(4, 13))):
        if rng.random() < 0.35:
            colour = colours[rng.integers(len(colours))]
        h = PLATE_MM if rng.random() < 0.15 else BRICK_MM
        bricks.append(SynthBrick(x_mm, y_mm, rotation, long, short, z, h, colour))
        z += h
    return tuple(bricks)


def touching_bricks(rng: np.random.Generator, x_mm: float, y_mm: float, colours: list[str]) -> tuple[SynthBrick, ...]:
    """2-3 bricks side by side on the stud grid, long sides touching (0.2 mm apart), each a
    different colour and 1-3 bricks high: what a player puts down as a quick barricade."""
    n = int(rng.integers(2, 4))
    long = int(rng.choice([2, 4, 6]))
    rotation = float(rng.uniform(0, 180))
    c, s = math.cos(math.radians(rotation)), math.sin(math.radians(rotation))
    picked = rng.permutation(len(colours))[:n]
    shorts = [int(rng.choice([1, 2])) for _ in range(n)]
    offsets = np.cumsum([0] + [(a + b) * STUD_MM / 2 for a, b in zip(shorts, shorts[1:])])
    offsets -= offsets.mean()
    return tuple(SynthBrick(x_mm - s * d, y_mm + c * d, rotation, long, sh, 0.0, BRICK_MM * int(rng.integers(1, 4)),
                            colours[k]) for d, sh, k in zip(offsets, shorts, picked))


def _body_colour(rng: np.random.Generator) -> tuple[float, float, float]:
    palette = [(0.22, 0.2, 0.18), (0.35, 0.25, 0.15), (0.15, 0.25, 0.15), (0.5, 0.48, 0.45),
               (0.3, 0.12, 0.1), (0.12, 0.12, 0.2), (0.6, 0.55, 0.4)]
    return palette[rng.integers(len(palette))]


def _free(x: float, y: float, r: float, taken: list[tuple[float, float, float]]) -> bool:
    return all(math.hypot(x - tx, y - ty) > r + tr for tx, ty, tr in taken)


def _spot(rng: np.random.Generator, table: TableSpec, margin_mm: float, radius_mm: float,
          taken: list[tuple[float, float, float]], tries: int = 200) -> tuple[float, float]:
    """A random place `margin_mm` in from the table's edges, `radius_mm` clear of what is taken
    (the last one tried when none is)."""
    for _ in range(tries):
        x, y = rng.uniform(margin_mm, table.width_mm - margin_mm), rng.uniform(margin_mm, table.depth_mm - margin_mm)
        if _free(x, y, radius_mm, taken):
            break
    return x, y


def random_scene(seed: int, level: str = "standard", n_minis: int = 12, n_bricks: int = 8,
                 n_hands: int = 0, table: TableSpec | None = None, surface: str | None = None,
                 width_px: int = 1920, height_px: int = 1080, n_walls: int = 0, randomise: bool = False,
                 n_towers: int = 0, n_touching: int = 0, n_standing: int = 0) -> Scene:
    """A reproducible random table at one of the bench levels; `n_walls` walls that turn (L, U,
    T, ring), `n_towers` towers (4-12 bricks and plates stacked, colours mixed), `n_touching`
    rows of 2-3 touching bricks of different colours and heights and `n_standing` minis more, each
    standing on a block of its own (one to three bricks high), besides the loose bricks (each
    drawn from its own random stream: the scene is otherwise the same as without them); `randomise`:
    the camera's response and the light drawn at random too (`randomised_imaging`, lamps that cast
    shadows: `random_lighting`), the geometry the same as without."""
    rng = np.random.default_rng(seed)
    lv = LEVELS[level]
    table = table or TableSpec(1200.0, 800.0)
    camera, pose = random_camera(rng, table, lv, width_px, height_px)
    anchors = tuple(AnchorSpec(id=i, x_mm=x, y_mm=y, size_mm=50.0, rotation_deg=float(rng.choice([0, 90, 180, 270])))
                    for i, (x, y) in enumerate([(45, 45), (table.width_mm - 45, 45),
                                                (table.width_mm - 45, table.depth_mm - 45), (45, table.depth_mm - 45)]))
    taken: list[tuple[float, float, float]] = [(a.x_mm, a.y_mm, 45.0) for a in anchors]
    minis = []
    id_order = rng.permutation(np.arange(4, 50))
    ids = id_order[:n_minis]
    for marker_id in ids:
        marker = float(rng.uniform(*lv.marker_mm))
        base = float(rng.choice([25.0, 25.0, 32.0, 40.0]))
        radius = max(base / 2, marker * 8 / 6 * 0.72) + 6
        x, y = _spot(rng, table, 60.0, radius, taken)
        taken.append((x, y, radius))
        minis.append(SynthMini(id=int(marker_id), x_mm=float(x), y_mm=float(y), z_mm=float(rng.uniform(0.5, 50.0)),
                               heading_deg=float(rng.uniform(0, 360)), marker_mm=marker, base_mm=base,
                               body_rgb=_body_colour(rng)))
    bricks = []
    colours = list(LEGO_RGB)
    for _ in range(n_bricks):
        long, short = [(2, 2), (2, 4), (1, 4), (2, 6), (1, 6), (2, 3), (1, 8)][rng.integers(7)]
        layers = int(rng.integers(1, 4))
        plate = rng.random() < 0.15
        h = PLATE_MM * layers if plate else BRICK_MM * layers
        r = math.hypot(long, short) * 4 + 4
        x, y = _spot(rng, table, 80.0, r, taken)
        taken.append((x, y, r))
        bricks.append(SynthBrick(float(x), float(y), float(rng.uniform(0, 180)), long, short, 0.0, h,
                                 colours[rng.integers(len(colours))]))
    hands = tuple(SynthHand(float(rng.uniform(200, table.width_mm - 200)), float(rng.uniform(150, table.depth_mm - 150)),
                            float(rng.uniform(90, 160)), float(rng.uniform(0, 360))) for _ in range(n_hands))
    scene = Scene(table=table, surface=surface or SURFACES[rng.integers(len(SURFACES))], anchors=anchors,
                  minis=tuple(minis), bricks=tuple(bricks), hands=hands, camera=camera, pose=pose,
                  imaging=lv.imaging, texture_seed=int(rng.integers(1 << 30)))
    walls_rng = np.random.default_rng([seed, 7])  # its own stream: the rest of the scene stays as it was
    walls = []
    for _ in range(n_walls):
        x, y = _spot(walls_rng, table, 150.0, 75.0, taken, tries=400)
        taken.append((x, y, 75.0))
        kind = WALL_KINDS[walls_rng.integers(len(WALL_KINDS))]
        height = BRICK_MM * int(walls_rng.integers(1, 3))
        added = wall_bricks(kind, float(x), float(y), float(walls_rng.uniform(0, 90)), height,
                            colours[walls_rng.integers(len(colours))])
        walls.append(tuple(range(len(bricks), len(bricks) + len(added))))
        bricks += added
    stacks = []
    towers_rng = np.random.default_rng([seed, 17])
    for _ in range(n_towers):
        added = tower_bricks(towers_rng, *_spot(towers_rng, table, 100.0, 40.0, taken, tries=400), colours)
        taken.append((added[0].x_mm, added[0].y_mm, 40.0))
        stacks.append(tuple(range(len(bricks), len(bricks) + len(added))))
        bricks += added
    touching_rng = np.random.default_rng([seed, 19])
    for _ in range(n_touching):
        x, y = _spot(touching_rng, table, 100.0, 45.0, taken, tries=400)
        taken.append((x, y, 45.0))
        bricks += touching_bricks(touching_rng, x, y, colours)
    standing_rng = np.random.default_rng([seed, 23])
    for marker_id in sorted(int(i) for i in id_order[n_minis:])[:n_standing]:
        long, short = [(2, 4), (2, 6), (2, 8), (4, 4), (4, 6)][standing_rng.integers(5)]
        top = BRICK_MM * int(standing_rng.integers(1, 4))
        x, y = _spot(standing_rng, table, 100.0, 50.0, taken, tries=400)
        taken.append((x, y, 50.0))
        bricks.append(SynthBrick(float(x), float(y), float(standing_rng.uniform(0, 180)), long, short, 0.0, top,
                                 colours[standing_rng.integers(len(colours))]))
        minis.append(SynthMini(id=marker_id, x_mm=float(x), y_mm=float(y),
                               z_mm=top + float(standing_rng.uniform(12.0, 50.0)), heading_deg=float(standing_rng.uniform(0, 360)),
                               marker_mm=float(standing_rng.uniform(*lv.marker_mm)), base_mm=25.0,
                               body_rgb=_body_colour(standing_rng), stand_mm=top))
    scene = replace(scene, minis=tuple(minis), bricks=tuple(bricks), walls=tuple(walls), stacks=tuple(stacks))
    if lv.trimmed_share > 0:  # players trim prints to fit a small head: its own stream, as the walls
        trim_rng = np.random.default_rng([seed, 13])
        scene = replace(scene, minis=tuple(replace(m, margin_modules=0.5) if trim_rng.random() < lv.trimmed_share else m
                                           for m in scene.minis))
    if randomise:
        scene = replace(scene, imaging=randomised_imaging(np.random.default_rng([seed, 11]), lv.imaging),
                        lighting=random_lighting(np.random.default_rng([seed, 23])))
    return scene


def scene_truth(scene: Scene) -> dict:
    """The ground truth as JSON: what `locate` should find, in the same units and frame."""
    return {
        "minis": [{"id": m.id, "x_mm": m.x_mm, "y_mm": m.y_mm, "z_mm": m.z_mm, "heading_deg": m.heading_deg % 360,
                   "marker_mm": m.marker_mm, "base_mm": m.base_mm, "stand_mm": m.stand_mm, "tilt_deg": m.tilt_deg}
                  for m in scene.minis],
        "blocks": [{"footprint_mm": [[float(x), float(y)] for x, y in b.footprint_mm()], "height_mm": b.top_mm,
                    "bottom_mm": b.z0_mm, "color": b.color} for b in scene.bricks],
        "hands": [{"x_mm": h.x_mm, "y_mm": h.y_mm, "z_mm": h.z_mm} for h in scene.hands],
        "camera": {"matrix": scene.camera.matrix.tolist(), "distortion": scene.camera.distortion.tolist(),
                   "position_mm": scene.pose.camera_centre_mm.tolist(), "rvec": scene.pose.rvec.tolist(),
                   "tvec": scene.pose.translation_mm.tolist()},
        "surface": scene.surface,
    }
