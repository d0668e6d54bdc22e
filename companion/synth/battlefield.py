"""The scripted F0R60D engagement that `companion demo --ruleset forgod` plays through the synthetic
camera: cards with markers on a printed battlefield of squares, a charge and a flank played out.

The scene is geometry with exact truth; the script's events are what the players would enter on
the phone (the reaction rolls, each card's action, how a charge or a flank came out).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, replace

import numpy as np

from companion.rules.forgod.board import Board
from companion.rules.forgod.game import Act, Event, Reaction, Resolve
from companion.setup_file import AnchorSpec, MiniSpec, PlayerSpec, Setup, TableSpec, parse_setup, setup_to_toml
from companion.synth.scene import Imaging, Scene, SynthMini, framing_camera, look_at_pose

TABLE = TableSpec(760.0, 700.0)
BOARD = Board()  # the forgod.md defaults: 70 x 95 mm squares from (100, 60), 7 columns, 3 rows a side
DEFAULT_FRAMES = 30
CARD_MM = 56.0  # the round card token under each marker
MARKER_MM = 30.0

# id: (name, player, square, heading, figures); headings face the enemy (red: +y, blue: -y).
CARDS = {
    4: ("Red lord", "red", (3, 1), 90.0, dict(type="cavalry", commander=True, level=5, attack=3, damage=4, evasion=2,
                                               fortitude=3, morale=2, reaction=2, hp=6, pc=300, armour=True, absorption=1)),
    5: ("Red pikes", "red", (2, 2), 90.0, dict(type="infantry", cards=3, attack=1, damage=2, evasion=1, hp=3, pc=50)),
    6: ("Red bows", "red", (4, 1), 90.0, dict(type="archery", cards=2, attack=1, damage=2, hp=2, pc=40)),
    20: ("Blue warden", "blue", (3, 4), 270.0, dict(type="infantry", commander=True, level=6, attack=2, damage=3,
                                                     evasion=2, fortitude=2, reaction=1, hp=6, pc=250)),
    21: ("Blue shields", "blue", (2, 3), 270.0, dict(type="infantry", cards=2, attack=1, damage=1, evasion=2, armour=True,
                                                      absorption=1, constant_absorption=1, hp=4, pc=60)),
    22: ("Blue wyvern", "blue", (5, 3), 270.0, dict(type="beast", terrain="air", level=4, attack=2, damage=3, hp=5)),
}


@dataclass(frozen=True)
class Beat:
    """What the players enter at a frame of the script."""

    frame: int
    event: Event
    says: str


def square_centre(square: tuple[int, int], dx: float = 0.0, dy: float = 0.0) -> tuple[float, float]:
    col, row = square
    return (BOARD.origin_x_mm + (col + 0.5) * BOARD.square_w_mm + dx,
            BOARD.origin_y_mm + (row + 0.5) * BOARD.square_d_mm + dy)


def base_scene() -> Scene:
    position = np.array([TABLE.width_mm / 2 - 40.0, TABLE.depth_mm / 2 - 160.0, 1000.0])
    pose = look_at_pose(position, np.array([TABLE.width_mm / 2, TABLE.depth_mm / 2, 0.0]))
    camera = framing_camera(TABLE, pose, 1920, 1080, np.array([-0.06, 0.01, 0.0, 0.0, 0.0]), margin=0.05)
    w, d = TABLE.width_mm, TABLE.depth_mm
    anchors = tuple(AnchorSpec(id=i, x_mm=x, y_mm=y, size_mm=50.0, rotation_deg=90.0)
                    for i, (x, y) in enumerate([(45, 45), (w - 45, 45), (w - 45, d - 45), (45, d - 45)]))
    cards = []
    for card_id, (_, player, square, heading, _) in CARDS.items():
        x, y = square_centre(square)
        tint = (0.78, 0.52, 0.45) if player == "red" else (0.5, 0.58, 0.78)
        cards.append(SynthMini(card_id, x, y, 0.6, heading, MARKER_MM, CARD_MM, body_rgb=tint))
    return Scene(table=TABLE, surface="paper", anchors=anchors, minis=tuple(cards), bricks=(), hands=(), camera=camera,
                 pose=pose, imaging=Imaging(noise_sigma=1.5, blur_sigma_px=0.5, jpeg_quality=92), texture_seed=11,
                 printed_squares=(BOARD.origin_x_mm, BOARD.origin_y_mm, BOARD.square_w_mm, BOARD.square_d_mm,
                                  BOARD.columns, BOARD.rows))


def battlefield_setup(scene: Scene, path: str = "<demo battlefield>") -> Setup:
    """The setup the demo's players would have written: F0R60D, skirmish at the intermediate level."""
    base = scene.setup(path, height_noise_mm=0.0)
    minis = tuple(MiniSpec(id=i, name=name, marker_mm=MARKER_MM, player=player, base_mm=CARD_MM, height_mm=0.6,
                           height_given=True, extra=tuple(figures.items()))
                  for i, (name, player, _, _, figures) in CARDS.items())
    setup = replace(base, ruleset="forgod", players=(PlayerSpec("red"), PlayerSpec("blue")), minis=minis,
                    sections={"forgod": {"mode": "skirmish", "level": "intermediate"}})
    return parse_setup(tomllib.loads(setup_to_toml(setup)), path)  # read back: the rules value is built and checked


def script(frames: int = DEFAULT_FRAMES) -> tuple[Beat, ...]:
    """Round 1 the commanders; round 2 the pikes charge (landing on red's next turn); round 3 the
    lord flanks the warden, its card turned 90 deg."""
    f = lambda share: max(0, min(frames - 1, int(frames * share)))  # noqa: E731
    return (
        Beat(f(0.04), Reaction({"red": 7, "blue": 4}), "reaction roll: red 7 + 2, blue 4 + 1: red acts first"),
        Beat(f(0.08), Act(4, "move", None, "the lord rides one square forward"), "red's lord moves"),
        Beat(f(0.18), Act(20, "pass"), "blue's warden waits"),
        Beat(f(0.22), Reaction({"red": 3, "blue": 8}), "round 2: blue acts first"),
        Beat(f(0.26), Act(22, "move", None, "the wyvern circles"), "blue's wyvern moves"),
        Beat(f(0.34), Act(5, "charge", 21), "red's pikes charge the shields (landing on red's next turn)"),
        Beat(f(0.40), Act(21, "shield", 20), "blue's shields cover the warden"),
        Beat(f(0.46), Resolve(5, "hit"), "red's turn: the pikes' charge lands, a hit"),
        Beat(f(0.50), Act(6, "attack", 22), "red's bows shoot the wyvern (-2: earth archers against air)"),
        Beat(f(0.56), Act(20, "attack", 5), "blue's warden strikes the pikes; round 2 ends"),
        Beat(f(0.62), Reaction({"red": 9, "blue": 2}), "round 3: red acts first"),
        Beat(f(0.72), Act(4, "flank", 20, "card turned 90 deg"), "red's lord flanks the warden: its card turned 90 deg"),
        Beat(f(0.78), Resolve(4, "won"), "the fortitude cross-check: red wins, +4 attack and damage"),
    )


def battlefield_scene(base: Scene, frame: int, frames: int = DEFAULT_FRAMES) -> Scene:
    """Frame `frame` of the script: the lord advances a square, turns 90 deg for the flank; the pikes
    close on the shields when the charge lands. Frames past the end hold the last one."""
    frame = min(frame, frames - 1)

    def ramp(start: float, end: float) -> float:
        a, b = frames * start, frames * end
        return float(np.clip((frame - a) / max(b - a, 1e-9), 0.0, 1.0))

    cards = []
    for m in base.minis:
        if m.id == 4:  # forward one square, then a quarter turn to flank
            x, y = square_centre((3, 1))
            m = replace(m, y_mm=y + BOARD.square_d_mm * ramp(0.06, 0.14), heading_deg=90.0 - 90.0 * ramp(0.64, 0.7))
        elif m.id == 5:  # the charge lands: the pikes close up to the front of their square
            x, y = square_centre((2, 2))
            m = replace(m, y_mm=y + 30.0 * ramp(0.42, 0.46))
        elif m.id == 22:  # the wyvern circles within its square
            x, y = square_centre((5, 3))
            t = ramp(0.24, 0.3)
            m = replace(m, x_mm=x + 12.0 * math.sin(math.pi * t), heading_deg=270.0 + 20.0 * math.sin(math.pi * t))
        cards.append(m)
    return replace(base, minis=tuple(cards), noise_seed=frame)
