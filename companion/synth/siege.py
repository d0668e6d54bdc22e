"""The scripted castle siege that `companion demo` plays through the synthetic camera.

A block castle stands in the middle of the table with the blue defenders inside; the red attackers
advance on it from the left edge, a wall goes up in front of the gate, a hand reaches over the table
and two units fall (they stay on the table: in the Knight game the dead rise as skeletons). The
scene is geometry with exact truth; everything the companion answers about it comes from the frames.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from companion.setup_file import AnchorSpec, ObjectSpec, PlayerSpec, Setup, TableSpec
from companion.synth.scene import BRICK_MM, Imaging, Scene, SynthBrick, SynthHand, SynthMini, framing_camera, \
    look_at_pose

TABLE = TableSpec(1200.0, 800.0)
CASTLE_CENTRE_MM = (720.0, 400.0)
CASTLE_MARKER_ID = 40
DEFAULT_FRAMES = 48


@dataclass(frozen=True)
class Casualty:
    """A unit the script kills at a frame (the demo tells the game, as a player would tap 'died')."""

    frame: int
    unit: int
    cause: str


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


def _new_wall(frame: int, frames: int) -> tuple[SynthBrick, ...]:
    """The defenders build a wall in front of the gate, one brick at a time."""
    start = int(frames * 0.3)
    cx, cy = CASTLE_CENTRE_MM
    wall = [SynthBrick(cx - 150.0, cy - 32.0, 90.0, 4, 2, 0.0, BRICK_MM, "red"),
            SynthBrick(cx - 150.0, cy + 32.0, 90.0, 4, 2, 0.0, BRICK_MM, "red"),
            SynthBrick(cx - 150.0, cy, 90.0, 4, 2, BRICK_MM, BRICK_MM, "yellow")]
    built = min(max(frame - start + 1, 0), len(wall))
    return tuple(wall[:built])


def base_scene() -> Scene:
    cx, cy = CASTLE_CENTRE_MM
    position = np.array([TABLE.width_mm / 2 - 60.0, TABLE.depth_mm / 2 - 180.0, 1150.0])
    pose = look_at_pose(position, np.array([TABLE.width_mm / 2, TABLE.depth_mm / 2, 0.0]))
    camera = framing_camera(TABLE, pose, 1920, 1080, np.array([-0.08, 0.01, 0.0, 0.0, 0.0]), margin=0.05)
    anchors = tuple(AnchorSpec(id=i, x_mm=x, y_mm=y, size_mm=50.0, rotation_deg=90.0)
                    for i, (x, y) in enumerate([(45, 45), (TABLE.width_mm - 45, 45),
                                                (TABLE.width_mm - 45, TABLE.depth_mm - 45), (45, TABLE.depth_mm - 45)]))
    attackers = [SynthMini(4 + i, 140.0, 200.0 + 100.0 * i, 42.0 - 3 * (i % 2), 0.0, 22.0, 25.0,
                           body_rgb=(0.45, 0.15, 0.12)) for i in range(5)]
    defenders = [SynthMini(20, cx - 40.0, cy - 30.0, 40.0, 180.0, 22.0, 25.0, body_rgb=(0.12, 0.18, 0.42)),
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


def casualties(frames: int) -> tuple[Casualty, ...]:
    return (Casualty(int(frames * 0.7), 5, "cut down at the castle gate"),
            Casualty(int(frames * 0.8), 20, "shot on the wall"))


def siege_scene(base: Scene, frame: int, frames: int = DEFAULT_FRAMES) -> Scene:
    """Frame `frame` of the script; frames past the end hold the last one."""
    frame = min(frame, frames - 1)
    march_end = int(frames * 0.6)
    minis = list(base.minis)
    for i, m in enumerate(minis):
        if m.id >= 20:
            continue
        t = min(frame, march_end) / march_end
        target_x = CASTLE_CENTRE_MM[0] - 260.0 + 25.0 * (i % 2)
        target_y = CASTLE_CENTRE_MM[1] + (m.y_mm - 400.0) * 0.55
        heading = math.degrees(math.atan2(CASTLE_CENTRE_MM[1] - m.y_mm, CASTLE_CENTRE_MM[0] - m.x_mm))
        minis[i] = replace(m, x_mm=m.x_mm + (target_x - m.x_mm) * t, y_mm=m.y_mm + (target_y - m.y_mm) * t,
                           heading_deg=heading % 360)
    hands: tuple[SynthHand, ...] = ()
    h_start, h_end = int(frames * 0.45), int(frames * 0.58)
    if h_start <= frame < h_end:
        t = (frame - h_start) / max(h_end - h_start - 1, 1)
        hands = (SynthHand(300.0 + 350.0 * t, 90.0 + 120.0 * t, 120.0, 80.0),)
    return replace(base, minis=tuple(minis), bricks=base.bricks + _new_wall(frame, frames), hands=hands,
                   noise_seed=frame)
