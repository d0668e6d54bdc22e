"""Blocks in a live stream: looked for now and then, published once they stand still.

Blocks are built between turns and then stay put, and a full block search costs as much as a
dozen frames of marker tracking: so the stream is searched every `every_frames` frames (sooner
while a new block waits to be confirmed). A block is published after `confirm` searches in a row
found it at the same place with the same height and colour: a hand passing over the table, or a
brick on its way down, is not. A published block is dropped after `forget` searches in a row
did not find it and its top no longer shows its colour (a hand resting on it, or over it, is not
a removal until it has stayed that long).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from companion.state import BlockState, MiniState
from companion.vision.blocks import Block, BlockFinder, block_state, top_colour_matches
from companion.vision.camera import CameraModel, TablePose

SAME_PLACE_MM = 6.0  # footprint centres closer than this are the same block
SAME_HEIGHT_MM = 3.3  # heights within a plate are the same stack


@dataclass
class _Candidate:
    block: Block
    seen: int = 1  # searches in a row that found it
    missed: int = 0  # searches in a row that did not
    published_id: int | None = None


class BlockWatch:
    def __init__(self, finder: BlockFinder, every_frames: int = 30, confirm: int = 2, forget: int = 3,
                 recheck_frames: int = 5) -> None:
        self.finder = finder
        self.every_frames = every_frames
        self.confirm = confirm
        self.forget = forget
        self.recheck_frames = recheck_frames
        self._candidates: list[_Candidate] = []
        self._last_search: int | None = None
        self._next_id = 0
        self._states: tuple[BlockState, ...] = ()  # what `states` answers until the next search
        self.searches = 0

    def due(self, frame: int) -> bool:
        if self._last_search is None:
            return True
        waiting = any(c.published_id is None for c in self._candidates)
        gap = self.recheck_frames if waiting else self.every_frames
        return frame - self._last_search >= gap

    def update(self, image: np.ndarray, camera: CameraModel, pose: TablePose, minis: tuple[MiniState, ...],
               frame: int) -> None:
        """One search of a colour frame; matches what it found against what was known."""
        self._last_search = frame
        self.searches += 1
        found = self.finder.find(image, camera, pose, minis)
        matched: set[int] = set()
        for block in found:
            same = next((i for i, c in enumerate(self._candidates) if i not in matched and _same(c.block, block)), None)
            if same is None:
                # A published block measured a little differently (a plate higher, another name for
                # a colour between two): the same block, re-measured, not a second one.
                same = next((i for i, c in enumerate(self._candidates) if i not in matched
                             and c.published_id is not None and _same_place(c.block, block)), None)
            if same is None:
                self._candidates.append(_Candidate(block))
                matched.add(len(self._candidates) - 1)
                continue
            matched.add(same)
            c = self._candidates[same]
            c.block, c.seen, c.missed = block, c.seen + 1, 0
        kept: list[_Candidate] = []
        view = self.finder.view(camera, pose)
        for i, c in enumerate(self._candidates):
            if i not in matched:
                c.seen = 0
                if c.published_id is None:
                    continue  # never confirmed: gone
                if top_colour_matches(image, view, c.block):
                    c.missed = 0  # still there, only not found this time (a mini leaning on it)
                else:
                    c.missed += 1
                    if c.missed >= self.forget:
                        continue
            if c.published_id is None and c.seen >= self.confirm:
                c.published_id, self._next_id = self._next_id, self._next_id + 1
            kept.append(c)
        self._candidates = kept
        published = sorted((c for c in kept if c.published_id is not None), key=lambda c: c.published_id)
        self._states = tuple(block_state(c.block, int(c.published_id)) for c in published)

    def states(self) -> tuple[BlockState, ...]:
        """The published blocks as of the last search (asked for at every frame)."""
        return self._states


def _same_place(a: Block, b: Block) -> bool:
    return math.dist(a.footprint_mm.mean(axis=0), b.footprint_mm.mean(axis=0)) <= SAME_PLACE_MM


def _same(a: Block, b: Block) -> bool:
    return _same_place(a, b) and abs(a.height_mm - b.height_mm) <= SAME_HEIGHT_MM and a.color == b.color
