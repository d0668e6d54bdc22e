"""Naming a block's colour from a palette, under the table's own light.

A camera's numbers mix the brick's albedo with the light falling on it, through its tone curve.
The anchors' white paper margin is the reference: in light (the curve undone), a colour divided
by the paper's (and by how much brighter or darker the table is here than at the anchors) is an
albedo relative to paper, comparable with a palette, except for what a glossy top adds of the
lamp's own white, which the model allows for (`name_colour`). A paper the camera clipped is only a
floor; the tops a frame names surely by their hue tell how brightly its tops are lit, clipped or
not (`frame_top_shade`), and every top is named again under that light: none much darker or
brighter, likeliest lit as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

# Lego palette, sRGB 0-1 albedo (Bright Red, Bright Blue, Bright Yellow, Dark Green, White, Black,
# Light Bluish Gray, Orange). `detect_blocks` takes another for other bricks.
LEGO_PALETTE: dict[str, tuple[float, float, float]] = {
    "red": (0.79, 0.10, 0.04),
    "blue": (0.00, 0.33, 0.75),
    "yellow": (0.95, 0.80, 0.22),
    "green": (0.14, 0.47, 0.25),
    "white": (0.93, 0.93, 0.91),
    "black": (0.08, 0.09, 0.11),
    "gray": (0.63, 0.65, 0.66),
    "orange": (0.99, 0.54, 0.09),
}
PAPER_ALBEDO = 0.92  # printer paper, the anchors' margin


# A top face is lit about as the paper is (both face up): its shading relative to the paper under
# the local light lies in this range (sun through a window, a lamp's falloff, a darker corner).
TOP_SHADE = (0.4, 1.6)
HIGHLIGHT_COST = 0.3  # what explaining a colour by a white highlight costs, per unit of it
# A wall faces sideways: in the lamp's light or turned from it, its shading relative to the paper
# lies anywhere from deep shade to a top's.
WALL_SHADE = (0.05, 1.6)
# A paper the camera clipped reads at its ceiling, however much light falls on it: faces are then
# darker against the real paper than against what it reads, by up to this much (an auto-exposure
# metering a dark table to mid grey put the path-traced paper at 1.1-2.9 times the ceiling).
PAPER_HEADROOM = 3.0
CLIPPED = 0.98  # a display value this high is the camera's ceiling, not the colour
# The tops one frame shows are lit alike against its paper: none much darker than those whose hue
# names them surely (`frame_top_shade`). On the ray-cast tables a named top's shade lay within
# 0.73-1.27 of the others' median, path traced 0.43-2.0 (glossy tops, soft light); a black top's
# sheen, taken for a gray top, lay at 0.1-0.2 (its paper clipped, so TOP_SHADE could not tell).
FRAME_TOP_SHADE_LEAST = 0.4
# ... and a top is likelier lit as they are than not: each factor e away from their shade costs
# this much (a gray top and a white one twice as dim explain the same light; on the path-traced
# tables, whose tops sit 1.5-4.5 times their paper, a frame's gray tops at its shade read white).
# Anywhere from 0.1 to 0.4 named the same bricks on both cameras' bench frames.
FRAME_SHADE_COST = 0.2
# A top a mini stands on is seen beside it, maybe in its shadow: lit as the frame's tops at most,
# and as little as this against the paper.
MINIS_SHADE_LEAST = 0.1
CALIBRATING_CONFIDENCE = 0.8  # a top's name this sure may set the frame's shade
CALIBRATING_HUE = 0.5  # a palette colour this far from gray (`hue_of` of its albedo) names a top by its hue
WALL_HUE_LEAST = 0.25  # a wall's `hue_of` from which it names the hue (see `name_colour`)


def srgb_to_linear(values: np.ndarray) -> np.ndarray:
    """The sRGB curve undone (0-1): a webcam's values back to light."""
    v = np.clip(np.asarray(values, float), 0.0, 1.0)
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


def light_ratio(here: float, there: float) -> float:
    """How much more light falls on a surface here than there, in linear light, from its display
    values (0-1) at both. (A ratio of display values is no ratio of light: 1.32 times brighter on
    the display is 1.8 times the light, and the curve undone on the ratio itself clips it at 1.)"""
    return float(srgb_to_linear(here)) / max(float(srgb_to_linear(there)), 1e-6)


def colour_costs(rgb: np.ndarray, paper_rgb: np.ndarray, light: float = 1.0,
                 palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE,
                 shade: tuple[float, float] = TOP_SHADE, highlight_cost: float = HIGHLIGHT_COST,
                 likely_shade: float | None = None) -> dict[str, float]:
    """How badly each palette colour explains a face's colour (display values, RGB 0-1) under the
    anchors' paper and the local light: in light (the sRGB curve undone) and relative to the
    paper, the face is the colour's albedo in some shade s (`shade`) plus white from the lamp's
    reflection w >= 0 (which costs: without it every colour would pass for a paler one), fitted by
    least squares; channels the camera clipped count only where the fit falls short of them.
    `light`: how much more light falls here than on the anchors, in linear light (`light_ratio`);
    `likely_shade`: the shade the face most likely has (the frame's tops'), a fit's distance from
    it costing FRAME_SHADE_COST a factor e."""
    observed, clipped, scale, names, albedo = _face_in_light(rgb, paper_rgb, light, palette)
    # observed ~ s albedo + w by least squares (2 x 2 normal equations per colour), and without
    # the highlight; s kept to the shade, w to what is left (>= 0). With one channel clipped the
    # fit is made on the other two (an orange top whose red clipped: its red says nothing of s).
    used = (~clipped).astype(float) if int(clipped.sum()) == 1 else np.ones(3)
    n_used = float(used.sum())
    aa, a1 = (albedo * albedo) @ used, albedo @ used
    ao, o1 = albedo @ (used * observed), float(used @ observed)
    det = np.maximum(n_used * aa - a1 * a1, 1e-12)
    s_free = (n_used * ao - a1 * o1) / det
    s_only = ao / np.maximum(aa, 1e-12)
    costs = np.full(len(names), np.inf)
    for s_try in (s_free, s_only):
        s_try = np.clip(s_try, *shade)[:, None]
        left = observed[None, :] - s_try * albedo
        for w_try in (np.maximum(left @ used[:, None] / n_used, 0.0), np.zeros((len(names), 1))):
            misfit = _counted(observed[None, :] - (s_try * albedo + w_try), clipped)
            cost = (np.linalg.norm(misfit, axis=1) / scale
                    + highlight_cost * w_try[:, 0] / (float(np.mean(observed)) + 0.05))
            if likely_shade is not None:
                cost = cost + FRAME_SHADE_COST * np.abs(np.log(s_try[:, 0] / likely_shade))
            costs = np.minimum(costs, cost)
    return {n: float(c) for n, c in zip(names, costs)}


def _face_in_light(rgb: np.ndarray, paper_rgb: np.ndarray, light: float,
                   palette: dict[str, tuple[float, float, float]]
                   ) -> tuple[np.ndarray, np.ndarray, float, list[str], np.ndarray]:
    """What the colour fits start from: the face as albedo relative to the paper (`observed_albedo`),
    its channels at the camera's ceiling, the misfit's scale, and the palette's names and albedos
    in light (P, 3)."""
    face = np.asarray(rgb, float)
    observed = observed_albedo(face, paper_rgb, light)
    names = list(palette)
    return (observed, face >= CLIPPED, float(np.linalg.norm(observed)) + 0.05, names,
            srgb_to_linear(np.array([palette[n] for n in names], float)))


def _counted(misfit: np.ndarray, clipped: np.ndarray) -> np.ndarray:
    """A fit's misfit (observed - predicted, ..., 3) as it counts: a channel the camera clipped
    only where the fit falls short of it."""
    return np.where(clipped & (misfit <= 0), 0.0, misfit)


GLARE_SHADES = 65  # `glare_costs`' grid of shades over their range


def glare_costs(rgb: np.ndarray, paper_rgb: np.ndarray, light: float = 1.0,
                palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE,
                shade: tuple[float, float] = TOP_SHADE) -> dict[str, float]:
    """`colour_costs` of a top the camera clipped in two channels under the lamp's glare, any
    amount of it (white w >= 0, free): the clipped channels say only that the colour reached them,
    the channel left must be its albedo in some shade plus the glare (an orange top read
    (254, 250, 131): orange or yellow, not gray, whose channels would all rise alike). Fitted
    exactly (the shade on a grid, the glare where the misfit is least), not as `colour_costs`
    approximates its fit: that left orange a worse fit than yellow."""
    observed, clipped, scale, names, albedo = _face_in_light(rgb, paper_rgb, light, palette)
    s = np.geomspace(shade[0], max(shade[1], shade[0]), GLARE_SHADES)
    residual = observed[None, None, :] - s[None, :, None] * albedo[:, None, :]  # (P, S, 3): the glare's part
    glare = _glare_candidates(residual, clipped)
    misfit = _counted(residual[..., None, :] - glare[..., None], clipped)
    costs = np.linalg.norm(misfit, axis=-1).min(axis=(1, 2)) / scale
    return {n: float(c) for n, c in zip(names, costs)}


def _glare_candidates(residual: np.ndarray, clipped: np.ndarray) -> np.ndarray:
    """Where the least misfit over the glare w >= 0 may lie, for residuals (..., 3) it is to
    explain (a clipped channel counting only while w falls short of it): the misfit is convex in
    w, so its least is at 0, at a clipped channel's residual, or at the mean of one set of channels
    still counting (..., K)."""
    channels = np.flatnonzero(clipped)
    found = [np.zeros(residual.shape[:-1]), *(residual[..., c] for c in channels)]
    for subset in range(1 << len(channels)):
        counting = ~clipped
        counting[[c for bit, c in enumerate(channels) if subset >> bit & 1]] = True
        if counting.any():
            found.append(residual[..., counting].mean(axis=-1))
    return np.maximum(np.stack(found, axis=-1), 0.0)


def hue_of(rgb: np.ndarray, paper_rgb: np.ndarray) -> float:
    """How far a colour is from gray under the paper's white balance: its channels' spread over
    their sum, in light (0 for white, gray and black)."""
    balanced = srgb_to_linear(rgb) / np.maximum(srgb_to_linear(paper_rgb), 1e-3)
    return float((balanced.max() - balanced.min()) / max(float(balanced.sum()), 1e-6))


def clipped_top(top_rgb: np.ndarray) -> bool:
    """A top the camera clipped in two channels or more: its hue is lost (a lamp's glare on a
    glossy top, an exposure for the darker table), and only its walls still show it."""
    return int(np.count_nonzero(np.asarray(top_rgb, float) >= CLIPPED)) >= 2


GLARE_LEVEL = 0.9  # a top within a tenth of the camera's ceiling in some channel may be glare


def glared_top(top_rgb: np.ndarray, paper_rgb: np.ndarray) -> bool:
    """A top near the camera's ceiling that shows little hue: a white or light gray brick, or a
    coloured one paled by the lamp's reflection on its glossy top (a blue top read 231, 248, 251),
    whose walls, turned from the lamp, still show its hue."""
    top = np.asarray(top_rgb, float)
    return float(top.max()) >= GLARE_LEVEL and hue_of(top, paper_rgb) < WALL_HUE_LEAST


def walls_may_name(top_rgb: np.ndarray, paper_rgb: np.ndarray) -> bool:
    """Whether a top's walls are to be read for its colour (`naming_wall`): it is at the ceiling
    in some channel (an orange top whose red clipped reads yellow: the ratio of its channels is
    gone) or glared."""
    return bool((np.asarray(top_rgb, float) >= CLIPPED).any()) or glared_top(top_rgb, paper_rgb)


def naming_wall(top_rgb: np.ndarray, wall_rgb: np.ndarray | None, paper_rgb: np.ndarray) -> np.ndarray | None:
    """The wall colour `name_colour` is to weigh with a top's, or None: a clipped top's walls
    always; a top clipped in one channel or glared, its walls when they show a hue (a white
    brick's walls are white, and a pale top then names it as before)."""
    if wall_rgb is None or not walls_may_name(top_rgb, paper_rgb):
        return None
    return wall_rgb if clipped_top(top_rgb) or hue_of(wall_rgb, paper_rgb) >= WALL_HUE_LEAST else None


def name_colour(top_rgb: np.ndarray, paper_rgb: np.ndarray, light: float = 1.0,
                palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE,
                wall_rgb: np.ndarray | None = None, top_shade: float | None = None,
                shaded_by_a_mini: bool = False) -> tuple[str, float]:
    """The palette name of a top face's colour, and a 0-1 confidence, from display values (RGB
    0-1) of the top and of the anchors' paper, and how much more light falls on the table here
    than at the anchors (`light`, `light_ratio`): the least `colour_costs`. With `wall_rgb` (a wall's colour, for a
    top the camera clipped), the wall's costs are added, in any shade a wall takes: the top says
    the brick is bright; a wall of a hue (`WALL_HUE_LEAST`) says which, and the top's white is
    then the lamp's (free; a top clipped in two channels is then all glare, and the wall alone
    names it); a wall of none leaves white or gray to the top's lightness and to how
    light the wall is. A paper the camera clipped is a floor, not a level: the faces may then be
    lit up to PAPER_HEADROOM times brighter than it reads (a clipped gray top had to be white).
    `top_shade`: the frame's tops' shade (`frame_top_shade`): this top is lit within
    FRAME_TOP_SHADE_LEAST of it either way, likeliest as it (the tops named by their hue measured
    the light a clipped paper hides: a black top's sheen is no dim gray top, a gray top lit as
    they are no white one in shade). `shaded_by_a_mini`: a top seen beside the mini standing on
    it, maybe in its shadow: lit down to MINIS_SHADE_LEAST, the frame's tops' light its most."""
    hued = wall_rgb is not None and hue_of(wall_rgb, paper_rgb) >= WALL_HUE_LEAST
    room = PAPER_HEADROOM if clipped_top(paper_rgb) else 1.0
    least, most, likely = MINIS_SHADE_LEAST if shaded_by_a_mini else TOP_SHADE[0], TOP_SHADE[1] * room, None
    if top_shade is not None and not clipped_top(top_rgb):  # (a glared top's brightness is the lamp's)
        if not shaded_by_a_mini:
            least = max(least, FRAME_TOP_SHADE_LEAST * top_shade)
        most = max(most, top_shade / FRAME_TOP_SHADE_LEAST)
        likely = top_shade
    if hued and clipped_top(top_rgb):
        costs = glare_costs(top_rgb, paper_rgb, light, palette, (least, max(most, least)))
    else:
        costs = colour_costs(top_rgb, paper_rgb, light, palette, (least, max(most, least)),
                             highlight_cost=0.0 if hued else HIGHLIGHT_COST, likely_shade=likely)
    if wall_rgb is not None:
        wall = colour_costs(wall_rgb, paper_rgb, light, palette, (WALL_SHADE[0], WALL_SHADE[1] * room))
        costs = {n: c + wall[n] for n, c in costs.items()}
    scored = sorted((c, n) for n, c in costs.items())
    best, second = scored[0][0], scored[1][0] if len(scored) > 1 else math.inf
    confidence = 1.0 if not math.isfinite(second) else float(np.clip(2 * (second - best) / max(second, 1e-6), 0, 1))
    return scored[0][1], confidence


def albedo_of_light(light_rgb: np.ndarray, paper_rgb: np.ndarray) -> np.ndarray:
    """Linear light (RGB, ...) as albedo, against the anchors' paper (display values, RGB 0-1)
    taken as PAPER_ALBEDO."""
    return light_rgb / np.maximum(srgb_to_linear(paper_rgb), 1e-3) * float(srgb_to_linear(PAPER_ALBEDO))


def observed_albedo(rgb: np.ndarray, paper_rgb: np.ndarray, light: float = 1.0) -> np.ndarray:
    """A face's colour (display values, RGB 0-1) as linear albedo relative to the paper's, under
    the local light (`light_ratio`): the palette's albedo in some shade, plus any highlight."""
    return albedo_of_light(srgb_to_linear(np.asarray(rgb, float)), paper_rgb) / max(float(light), 1e-3)


@dataclass(frozen=True)
class TopReading:
    """What a top's colour is named from (display values, RGB 0-1): kept, so that once the frame's
    light is known from all its tops (`frame_top_shade`) each is named again in it."""

    top_rgb: np.ndarray
    paper_rgb: np.ndarray  # the anchors' paper
    light: float  # how much more light falls here than at the anchors (`light_ratio`)
    wall_rgb: np.ndarray | None  # the wall weighed with the top (`naming_wall`), if any
    shaded_by_a_mini: bool = False  # a top seen beside the mini standing on it (`name_colour`)

    def name(self, palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE,
             top_shade: float | None = None) -> tuple[str, float]:
        return name_colour(self.top_rgb, self.paper_rgb, self.light, palette, self.wall_rgb, top_shade,
                           self.shaded_by_a_mini)


def calibrating_shade(reading: TopReading, name: str, confidence: float,
                      palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE) -> float | None:
    """The shade of a top named `name` (its observed albedo over the palette's, least squares)
    when it may set the frame's (`frame_top_shade`): named surely by a hue (a gray, white or black
    top's shade is what is in doubt), no channel at the camera's ceiling; else None."""
    top = np.asarray(reading.top_rgb, float)
    if name not in palette or confidence < CALIBRATING_CONFIDENCE or bool((top >= CLIPPED).any()):
        return None
    if hue_of(np.asarray(palette[name], float), np.ones(3)) < CALIBRATING_HUE:
        return None
    albedo = srgb_to_linear(np.array(palette[name], float))
    observed = observed_albedo(top, reading.paper_rgb, reading.light)
    return float(albedo @ observed / max(float(albedo @ albedo), 1e-9))


def frame_top_shade(shades: list[float]) -> float | None:
    """The frame's tops' shade against its paper (`name_colour`'s `top_shade`): the median of its
    calibrating tops' (`calibrating_shade`), None without one."""
    return float(np.median(shades)) if shades else None


def classify_colour(relative_rgb: np.ndarray, palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE
                    ) -> tuple[str, float]:
    """`name_colour` of an albedo relative to paper (RGB, display values): the paper taken as
    reading PAPER_ALBEDO."""
    paper = np.full(3, PAPER_ALBEDO)
    return name_colour(np.clip(np.asarray(relative_rgb, float) * PAPER_ALBEDO, 0.0, 1.0), paper, 1.0, palette)


def colour_distance(view: np.ndarray, table: np.ndarray, blur_px: float) -> np.ndarray:
    """Per pixel, the Euclidean distance over B, G, R from the table (a green brick on green felt
    differs a little in every channel at once)."""
    d = cv2.subtract(cv2.GaussianBlur(view, (0, 0), blur_px).astype(np.float32), table.astype(np.float32))
    return channel_sum_sqrt(cv2.multiply(d, d))


def channel_sum_sqrt(squares: np.ndarray) -> np.ndarray:
    """sqrt of the sum over channels, in OpenCV's loops (numpy's axis sum was most of the time)."""
    return cv2.sqrt(cv2.transform(squares, np.ones((1, squares.shape[2]), np.float32)))
