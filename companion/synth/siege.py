"""The scripted castle siege that `companion demo` plays through the synthetic camera.

A block castle stands in the middle of the table with the blue defenders inside; the red attackers
march on it from the left edge as one squad. Two rounds are played turn by turn, each within its
dice, as the players would tap them on the phone (`taps`): red marches two hands; blue's defender
steps out of the gate and builds a wall in front of it; red closes in and shoots the defender over
the wall; blue's shooter answers through the gate. A hand reaches over the table meanwhile, and
the dead stay on the table (in the Knight game they rise as skeletons). The scene is geometry with
exact truth; everything the companion answers about it comes from the frames.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from companion.setup_file import AnchorSpec, ObjectSpec, PlayerSpec, Setup, TableSpec
from companion.synth.scene import (BRICK_MM, Imaging, Scene, SynthBrick, SynthHand, SynthMini, framing_camera,
                                   look_at_pose)

TABLE = TableSpec(1200.0, 800.0)
CASTLE_CENTRE_MM = (720.0, 400.0)
CASTLE_MARKER_ID = 40
DEFAULT_FRAMES = 48


def _castle() -> tuple[SynthBrick, ...]:
    """Four walls of 2x4 bricks, two high, with a gate gap on the attackers' (left) side."""
    cx, cy = CASTLE_CENTRE_MM
    half = 80.0
    bricks: list[SynthBrick] = []
    for layer in range(2):
        z0 = layer * BRICK_MM
        colour = "gray" if layer == 0 else "white"
        for k in (-2, -1, 0, 1, 2):  # the two side walls
            bricks.append(SynthBrick(cx + k * 32.0, cy + half, 0.0, 4, 2, z0, BRICK_MM, colour))
            bricks.append(SynthBrick(cx + k * 32.0, cy - half, 0.0, 4, 2, z0, BRICK_MM, colour))
        for k in (-1, 0, 1):  # the back wall (right)
            bricks.append(SynthBrick(cx + half, cy + k * 32.0, 90.0, 4, 2, z0, BRICK_MM, colour))
        for k in (-1, 1):  # the front wall (left), the gate in its middle
            bricks.append(SynthBrick(cx - half, cy + k * 32.0, 90.0, 4, 2, z0, BRICK_MM, colour))
    return tuple(bricks)


def _at(frames: int, share: float) -> int:
    """The script's frame at `share` of its length (never the first: the table is seen first)."""
    return max(1, min(frames - 1, int(frames * share)))


def _ramp(frame: int, frames: int, start: float, end: float) -> float:
    """0 before `start`, 1 after `end` (shares of the script), linear between."""
    a, b = _at(frames, start), _at(frames, end)
    return float(np.clip((frame - a) / max(b - a, 1), 0.0, 1.0))


# The script's beats, as shares of its length: red's turn 1, blue's turn 1, red's 2, blue's 2.
MARCH = (0.25, 0.40)  # red's squad marches 300 mm (2 AP)
STEP_OUT = (0.46, 0.50)  # blue's defender 20 steps out of the gate, 80 mm (1 AP)
BRICKS = (0.52, 0.54, 0.56)  # and builds the wall in front of it, a brick at a time (3 AP)
CLOSE_IN = (0.64, 0.72)  # red's squad closes in on the wall, 50 mm (1 AP)
HAND = (0.62, 0.74)  # a player's hand reaches over the table meanwhile
MARCH_MM, CLOSE_IN_MM, STEP_OUT_MM = 300.0, 50.0, 80.0


def _new_wall(frame: int, frames: int) -> tuple[SynthBrick, ...]:
    """The defender builds a wall in front of the gate, one brick at a time."""
    cx, cy = CASTLE_CENTRE_MM
    # Three bricks 12 mm apart: three blocks of one brick, 1 AP each (a bridge or a row of touching
    # bricks would be one block to the camera and to the rules).
    wall = [SynthBrick(cx - 150.0, cy - 44.0, 90.0, 4, 2, 0.0, BRICK_MM, "red"),
            SynthBrick(cx - 150.0, cy, 90.0, 4, 2, 0.0, BRICK_MM, "yellow"),
            SynthBrick(cx - 150.0, cy + 44.0, 90.0, 4, 2, 0.0, BRICK_MM, "red")]
    return tuple(brick for brick, share in zip(wall, BRICKS) if frame >= _at(frames, share))


ROLL, END_TURN = "/api/game/roll", "/api/game/end-turn"  # the phone page's calls a turn starts and ends with


@dataclass(frozen=True)
class Tap:
    """What the players tap on the phone at a frame of the script: a call of the phone page's API
    (`path`, `body`). `waits_for`: what the camera must have seen of the turn before the tap (the
    players look at the ledger first): "moves", or "bricks N" (fortification bricks)."""

    frame: int
    path: str
    body: dict
    says: str
    waits_for: str = ""


def taps(frames: int = DEFAULT_FRAMES) -> tuple[Tap, ...]:
    """Two rounds, each turn within its dice."""
    at = lambda share: _at(frames, share)  # noqa: E731
    roll, end, event = ROLL, END_TURN, "/api/game/events"
    return (
        Tap(at(0.24), roll, {"player": "red", "black": 5, "red": 2, "white": 5},
            "red rolls black 5, red 2, white 5 (the camera referees the turn)"),
        Tap(at(0.44), end, {}, "red ends the turn: the squad marched", "moves"),
        Tap(at(0.44), roll, {"player": "blue", "black": 4, "red": 1, "white": 2}, "blue rolls black 4, red 1, white 2"),
        Tap(at(0.62), end, {}, "blue ends the turn: a defender stepped out and walled the gate", "bricks 3"),
        Tap(at(0.62), roll, {"player": "red", "black": 3, "red": 2, "white": 5}, "red rolls black 3, red 2, white 5"),
        Tap(at(0.76), event, {"kind": "spend", "die": "red", "amount": 1,
                              "what": "shooter 6 shoots defender 20 over the new wall"}, "red's shooter 6 shoots defender 20"),
        Tap(at(0.76), event, {"kind": "unit_died", "unit": 20, "cause": "demo script: shot over the new wall"},
            "defender 20 falls (it rises as a skeleton)"),
        Tap(at(0.80), end, {}, "red ends the turn: the squad closed in", "moves"),
        Tap(at(0.80), roll, {"player": "blue", "black": 2, "red": 2, "white": 2}, "blue rolls black 2, red 2, white 2"),
        Tap(at(0.86), event, {"kind": "spend", "die": "red", "amount": 1,
                              "what": "shooter 21 shoots polearm 5 through the gate"}, "blue's shooter 21 shoots polearm 5"),
        Tap(at(0.86), event, {"kind": "unit_died", "unit": 5, "cause": "demo script: shot through the gate"},
            "polearm 5 falls (it rises as a skeleton)"),
        Tap(at(0.92), end, {}, "blue ends the turn"),
    )


def base_scene() -> Scene:
    cx, cy = CASTLE_CENTRE_MM
    position = np.array([TABLE.width_mm / 2 - 60.0, TABLE.depth_mm / 2 - 180.0, 1150.0])
    pose = look_at_pose(position, np.array([TABLE.width_mm / 2, TABLE.depth_mm / 2, 0.0]))
    camera = framing_camera(TABLE, pose, 1920, 1080, np.array([-0.08, 0.01, 0.0, 0.0, 0.0]), margin=0.05)
    anchors = tuple(AnchorSpec(id=i, x_mm=x, y_mm=y, size_mm=50.0, rotation_deg=90.0)
                    for i, (x, y) in enumerate([(45, 45), (TABLE.width_mm - 45, 45),
                                                (TABLE.width_mm - 45, TABLE.depth_mm - 45), (45, TABLE.depth_mm - 45)]))
    # One squad (bases 25 mm apart, within 2 fingers): it moves, and pays, as one.
    attackers = [SynthMini(4 + i, 140.0, cy - 100.0 + 50.0 * i, 42.0 - 3 * (i % 2), 0.0, 22.0, 25.0,
                           body_rgb=(0.45, 0.15, 0.12)) for i in range(5)]
    defenders = [SynthMini(20, cx - 40.0, cy, 40.0, 180.0, 22.0, 25.0, body_rgb=(0.12, 0.18, 0.42)),
                 SynthMini(21, cx - 40.0, cy + 30.0, 38.0, 180.0, 22.0, 25.0, body_rgb=(0.12, 0.18, 0.42)),
                 SynthMini(22, cx + 30.0, cy, 44.0, 180.0, 22.0, 25.0, body_rgb=(0.12, 0.18, 0.42))]
    castle_card = SynthMini(CASTLE_MARKER_ID, cx + 5.0, cy - 48.0, 1.0, 90.0, 30.0, 40.0, body_rgb=(0.55, 0.5, 0.42))
    return Scene(table=TABLE, surface="felt", anchors=anchors, minis=tuple(attackers + defenders + [castle_card]),
                 bricks=_castle(), hands=(), camera=camera, pose=pose,
                 imaging=Imaging(noise_sigma=1.5, blur_sigma_px=0.5, jpeg_quality=92), texture_seed=7)


def siege_setup(scene: Scene, path: str = "<demo siege>") -> Setup:
    """The setup the demo's players would have written: Knight rules, orcs against humans."""
    base = scene.setup(path, height_noise_mm=0.0)
    classes = {4: "berserker", 5: "polearm", 6: "shooter", 7: "berserker", 8: "priest",
               20: "defender", 21: "shooter", 22: "priest"}
    minis = tuple(replace(m, name=f"{'Orc' if m.id < 20 else 'Human'} {classes[m.id]} {m.id}",
                          player="red" if m.id < 20 else "blue", faction="orcs" if m.id < 20 else "humans",
                          unit_class=classes[m.id])
                  for m in base.minis if m.id != CASTLE_MARKER_ID)
    return replace(base, ruleset="knight", players=(PlayerSpec("red", 178.0, 20.0), PlayerSpec("blue", 165.0, 18.0)),
                   minis=minis, objects=(ObjectSpec(CASTLE_MARKER_ID, "castle", 110.0, "the castle", 30.0),))


def siege_scene(base: Scene, frame: int, frames: int = DEFAULT_FRAMES) -> Scene:
    """Frame `frame` of the script; frames past the end hold the last one."""
    frame = min(frame, frames - 1)
    advance = MARCH_MM * _ramp(frame, frames, *MARCH) + CLOSE_IN_MM * _ramp(frame, frames, *CLOSE_IN)
    out = _ramp(frame, frames, *STEP_OUT)
    minis = tuple(replace(m, x_mm=m.x_mm + advance) if m.id < 20 else
                  replace(m, x_mm=m.x_mm - STEP_OUT_MM * out) if m.id == 20 else m for m in base.minis)
    hands: tuple[SynthHand, ...] = ()
    h_start, h_end = _at(frames, HAND[0]), _at(frames, HAND[1])
    if h_start <= frame < h_end:
        t = (frame - h_start) / max(h_end - h_start - 1, 1)
        hands = (SynthHand(300.0 + 350.0 * t, 90.0 + 120.0 * t, 120.0, 80.0),)
    return replace(base, minis=minis, bricks=base.bricks + _new_wall(frame, frames), hands=hands, noise_seed=frame)
