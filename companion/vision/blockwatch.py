"""Blocks in a live stream: looked for now and then, published once they stand still.

Blocks are built between turns and then stay put, and a full block search costs as much as a
dozen frames of marker tracking: so the stream is searched every `every_s` seconds, sooner
(`recheck_s`) when something on the table changed and settled, and on the next frame after a
search while a new block waits to be confirmed or a known one seems gone; in seconds, so at any
frame rate. A block is published after `confirm` searches in a row found it at the same place
with the same height and colour: a hand passing over the table, or a brick on its way down, is
not. (A later frame with the block's picture unchanged since the searched frame counts as the
second look, one that came while the search ran or else the next one: a search of it would have
read the same pixels; not over a published block.) A published block measured otherwise (another
height, even a plate, or colour name) keeps its reading until `confirm` searches in a row agree on
the new one: the turn's ledger counts a plate's growth as a brick. One not found again is dropped
after two searches that see the bare table where it stood (taken away), or after `forget`
searches that see neither it nor the table there (a hand resting on it is not a removal until it
has stayed that long).
"""

from __future__ import annotations

import math
import multiprocessing
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np

from companion.state import BlockState, MiniState
from companion.vision.blocks import BlockFinder, block_state, same_colour_again, top_colour_matches, within_one_of
from companion.vision.camera import CameraModel, TablePose
from companion.vision.foundblock import FoundBlock
from companion.vision.incremental import SMALL_X, SMALL_Y
from companion.vision.tableview import TableView

SAME_PLACE_MM = 6.0  # footprint centres closer than this are the same block
SAME_HEIGHT_MM = 3.3  # heights within a plate are the same stack
UNCHANGED_HEIGHT_MM = 1.0  # heights come in plates (3.2 mm): closer than this is the same reading
RING_MM = 20.0  # the table around a block is sampled this far out (beyond its own side's image)
GONE_SEARCHES = 2  # searches in a row seeing the bare table where a block stood: it was taken away
STILL_PAD_PX = 8  # a block's picture is compared between frames this far around its outline
# A sample of it changed: by more than twice the frame's noise (the 99th percentile of its samples'
# change: noise has long tails, shot noise on bright pixels and the JPEG's ringing at edges) and at
# least by the floor; a still picture has at most STILL_CHANGED_SHARE of its samples changed. (On
# the live bench's lit tables noise moved up to 5% of a still block's samples by 9-16 levels; a
# brick lifted off a table of nearly its own shade changed 20 of its 66 by 9-31.)
STILL_NOISE_PERCENTILE, STILL_NOISE_TIMES, STILL_FLOOR = 99.0, 2.0, 8.0
STILL_CHANGED_SHARE = 0.1


@dataclass
class _Candidate:
    block: FoundBlock
    table_bgr: np.ndarray  # the table around it when it was found: what shows there once it is gone
    seen: int = 1  # searches in a row that found it
    missed: int = 0  # searches in a row that did not, something else in its place (a hand)
    bare: int = 0  # searches in a row that saw the table where it stood
    published_id: int | None = None
    # A published block measured otherwise (a plate higher, another colour name, a brick put on
    # it): taken once `confirm` searches in a row agree on it, as a new block is published.
    remeasured: FoundBlock | None = None
    remeasured_seen: int = 0


class BlockWatch:
    def __init__(self, finder: BlockFinder, every_s: float = 2.0, confirm: int = 2, forget: int = 3,
                 recheck_s: float = 0.25, background: bool = False) -> None:
        """`background`: searches run in a process of their own (`start` returns at once; the camera
        thread never waits for one, and a search's Python does not hold the lock every other
        thread of the server needs: on a thread, phones' requests waited up to 80 ms behind it),
        else `start` searches before it returns."""
        self.finder = finder
        self.every_s = every_s
        self.confirm = confirm
        self.forget = forget
        self.recheck_s = recheck_s
        self._candidates: list[_Candidate] = []
        self._last_search: float | None = None  # the frame time of the last search, s
        self._next_id = 0
        self._states: tuple[BlockState, ...] = ()  # what `states` answers until the next search
        self.searches = 0
        # Whether the last search saw a hand or an arm over the table (`BlockFinder.hands_over_table`):
        # none is read under it, and the blocks it covers are held as they were.
        self.hands_seen = False
        self.searches_s: list[float] = []  # each search's time, from its start to its blocks matched (s)
        self._lock = threading.Lock()
        self._pool = ProcessPoolExecutor(1, multiprocessing.get_context("spawn"), _worker_start,
                                         (finder.setup, finder.palette, finder.memory is not None)) if background else None
        self._running: Future | None = None
        self._buffers: list[np.ndarray | None] = [None, None]  # the frames searched, copied (`_copy`)
        self._turn = 0
        self._latest: tuple[float, np.ndarray] | None = None  # (time, `_samples`) of the last frame seen while a search ran
        # The last search's frame (time, `_samples`) and view while a block it found awaits its
        # second look from the next frame (`look`).
        self._searched: tuple[float, np.ndarray, TableView] | None = None
        if self._pool is not None:
            self._pool.submit(_worker_ready)  # the worker imports while the camera warms up
            # Matching runs here, on the pool's thread, beside the camera's frames: numpy's first
            # median in a process imports numpy.ma (20-40 ms holding the interpreter), paid now.
            np.median(np.zeros((3, 3)), axis=0)

    def start(self, image: np.ndarray, camera: CameraModel, pose: TablePose, minis: tuple[MiniState, ...],
              time_s: float) -> None:
        """A search of this frame: now, or on the search thread (its result published when done)."""
        if self._pool is None:
            self.update(image, camera, pose, minis, time_s)
            return
        self._last_search = time_s  # no second search is started while this one runs
        image = self._copy(image)
        samples = _samples(image)
        began = time.perf_counter()
        self._running = self._pool.submit(_worker_find, image, camera, pose, minis)

        def matched(done: Future) -> None:
            if done.cancelled() or done.exception() is not None:
                return  # shutting down (or a search that failed: the next one tries again)
            with self._lock:
                found, hands = done.result()
                self._match(image, camera, pose, found, time_s, samples, hands)
                self.searches_s.append(time.perf_counter() - began)
        self._running.add_done_callback(matched)

    def _copy(self, image: np.ndarray) -> np.ndarray:
        """The frame copied for a search into one of two buffers kept, in turn: a fresh 6 MB copy
        of a 1080p frame page-faulted for 35 ms on the camera thread now and then. Both are made
        at the stream's first search (a first write into new memory is what costs). A buffer is
        written again two searches later, when its search's match is long done (one search runs
        at a time, and the lock waits for a match still running)."""
        self._turn = 1 - self._turn
        with self._lock:
            if any(b is None or b.shape != image.shape or b.dtype != image.dtype for b in self._buffers):
                self._buffers = [image.copy(), image.copy()]
            buffer = self._buffers[self._turn]
            np.copyto(buffer, image)
        return buffer

    def look(self, image: np.ndarray, time_s: float) -> None:
        """Every frame: while a search runs its frames are kept in brief (the change map's samples),
        so a block it finds whose picture stayed the same since is confirmed without another search;
        after a search during which no frame came, the next frame is that look. (In colour: the
        tracker's change map has green alone, and a green brick lifted off a table of nearly its
        shade changed its green by less than noise does.)"""
        if self._running is not None and not self._running.done():
            self._latest = (time_s, _samples(image))
            return
        searched = self._searched
        if searched is None or time_s <= searched[0]:
            return
        now = _samples(image)
        with self._lock:
            if self._searched is not searched:
                return  # (matched again meanwhile)
            self._searched = None  # one look a search
            still = _still_test((searched[0], searched[1]), (time_s, now))
            if still is None:
                return
            for c in self._candidates:
                if self._awaits_a_look(c) and still(searched[2], c.block):
                    c.seen += 1
            self._publish()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def due(self, time_s: float, changed: bool = False) -> bool:
        """Whether to search the frame taken at `time_s`; `changed`: something on the table changed
        and settled since (a brick put down or taken away, a hand gone)."""
        if self._running is not None and not self._running.done():
            return False
        if self._last_search is None:
            return True
        if any(c.published_id is None or c.bare or c.remeasured is not None for c in self._candidates):
            # A second look decides (a new block confirmed, a gone one dropped, a block measured
            # anew): the next frame after the last search is matched, whatever the frame rate
            # (when `look` at it did not confirm the new block already).
            return time_s > self._last_search
        return time_s - self._last_search >= (self.recheck_s if changed else self.every_s)

    def update(self, image: np.ndarray, camera: CameraModel, pose: TablePose, minis: tuple[MiniState, ...],
               time_s: float) -> None:
        """One search of a colour frame; matches what it found against what was known."""
        began = time.perf_counter()
        found = self.finder.find(image, camera, pose, minis)
        with self._lock:
            self._match(image, camera, pose, found, time_s, _samples(image), self.finder.hands_over_table)
            self.searches_s.append(time.perf_counter() - began)

    def _match(self, image: np.ndarray, camera: CameraModel, pose: TablePose, found: list[FoundBlock], time_s: float,
               samples: np.ndarray | None = None, hands: bool = False) -> None:
        self._last_search = time_s
        self.searches += 1
        self.hands_seen = hands
        view = self.finder.view(camera, pose)
        still = None if samples is None else _still_test((time_s, samples), self._latest)
        matched: set[int] = set()
        for block in found:
            same = next((i for i, c in enumerate(self._candidates) if i not in matched and _same(c.block, block)), None)
            if same is None:
                # A published block measured a little differently (a plate higher, another name for
                # a colour between two): the same block, re-measured, not a second one.
                same = next((i for i, c in enumerate(self._candidates) if i not in matched
                             and c.published_id is not None and _same_place(c.block, block)), None)
            if same is None:
                self._candidates.append(_Candidate(block, _ring_colour(image, view, block)))
                matched.add(len(self._candidates) - 1)
                continue
            matched.add(same)
            c = self._candidates[same]
            c.seen, c.missed, c.bare = c.seen + 1, 0, 0
            if c.published_id is None or _unchanged(c.block, block):
                c.block, c.remeasured, c.remeasured_seen = block, None, 0
            else:
                # One search alone does not change a published block, not even by a plate: a lamp
                # misfound from a castle's walls read every block of a frame one to three plates
                # low, and the turn's ledger took the difference for bricks put down.
                again = c.remeasured is not None and _unchanged(c.remeasured, block)
                c.remeasured, c.remeasured_seen = block, c.remeasured_seen + 1 if again else 1
                if c.remeasured_seen >= self.confirm:
                    c.block, c.remeasured, c.remeasured_seen = block, None, 0
        kept: list[_Candidate] = []
        for i, c in enumerate(self._candidates):
            if i not in matched:
                c.seen, c.remeasured, c.remeasured_seen = 0, None, 0
                if c.published_id is None:
                    continue  # never confirmed: gone
                if top_colour_matches(image, view, c.block):
                    c.missed = c.bare = 0  # still there, only not found this time (a mini leaning on it)
                elif _shows_table(image, view, c):
                    c.bare += 1  # the table shows where it stood: taken away, once a second look agrees
                    if c.bare >= GONE_SEARCHES:
                        continue
                else:
                    c.missed += 1  # something else there (a hand on it): gone only if it stays so
                    c.bare = 0
                    if c.missed >= self.forget:
                        continue
            if self._awaits_a_look(c) and still is not None and still(view, c.block):
                c.seen += 1  # a frame that came meanwhile showed the same picture there: its second look
            kept.append(c)
        self._candidates = kept
        self._publish()
        self._searched = (time_s, samples, view) if samples is not None and any(map(self._awaits_a_look, kept)) else None

    def _awaits_a_look(self, c: _Candidate) -> bool:
        """Whether a block found awaits its last look before it is published, and a later frame's
        picture may be that look: not where a block is published already (a known block fitted
        anew, taller, while a mini passed beside it, stood at the same pixels but not in a second
        search; a brick put on top of one is rarely fitted right at once either)."""
        return (c.published_id is None and c.seen == self.confirm - 1
                and not any(o.published_id is not None and (within_one_of(o.block, [c.block]) or within_one_of(c.block, [o.block])) for o in self._candidates))

    def _publish(self) -> None:
        """The blocks found often enough published (`states`), each keeping its number."""
        for c in self._candidates:
            if c.published_id is None and c.seen >= self.confirm:
                c.published_id, self._next_id = self._next_id, self._next_id + 1
        published = sorted((c for c in self._candidates if c.published_id is not None), key=lambda c: c.published_id)
        self._states = tuple(block_state(c.block, int(c.published_id)) for c in published)

    def wait(self, timeout_s: float = 30.0) -> None:
        """Until the search under way (if any) is matched (tests and benches)."""
        running = self._running
        if running is not None:
            running.result(timeout_s)
            with self._lock:
                pass  # its callback holds the lock while it matches

    def states(self) -> tuple[BlockState, ...]:
        """The published blocks as of the last search (asked for at every frame)."""
        return self._states

    @property
    def seen(self) -> bool:
        """Whether `states` tells what stands on the table: a block is published once `confirm`
        looks found it, so before that many searches an empty answer means nothing yet (a block
        published tells it already)."""
        return self.searches >= self.confirm or bool(self._states)


def _samples(image: np.ndarray) -> np.ndarray:
    """The frame's colour at the change map's samples (every SMALL_X-th pixel of every SMALL_Y-th
    row), 0.12 ms at 1080p. Each channel from the rows taken flat: numpy's strided copy over three
    axes took 0.6 ms, and cv2.resize (0.11 ms) runs on OpenCV's threads, which spun up to 40 ms on
    the camera thread waiting for a core while the search process held the other."""
    rows = image[::SMALL_Y]
    flat = rows.reshape(rows.shape[0], -1)
    step = SMALL_X * image.shape[2]
    return np.stack([flat[:, c::step] for c in range(image.shape[2])], axis=-1)


def _still_test(searched: tuple[float, np.ndarray], later: tuple[float, np.ndarray] | None
                ) -> Callable[[TableView, FoundBlock], bool] | None:
    """Whether a block's picture stayed the same (a test of a view and a block) from the searched
    frame to a later one, each (time, `_samples`); None when there is no later frame. The frames'
    noise is measured once, at the first block asked about."""
    then_s, then_samples = searched
    if later is None or later[0] <= then_s or later[1].shape != then_samples.shape:
        return None
    now_samples = later[1]
    level: list[float] = []

    def still(view: TableView, block: FoundBlock) -> bool:
        outline = np.concatenate([view.to_pixels(block.footprint_mm),
                                  view.to_pixels(view.cast(block.footprint_mm, block.height_mm))])
        (x0, y0), (x1, y1) = outline.min(axis=0) - STILL_PAD_PX, outline.max(axis=0) + STILL_PAD_PX
        rows = slice(max(int(y0) // SMALL_Y, 0), max(-int(-y1 // SMALL_Y), 0))
        cols = slice(max(int(x0) // SMALL_X, 0), max(-int(-x1 // SMALL_X), 0))
        then, now = then_samples[rows, cols], now_samples[rows, cols]
        if then.size == 0:
            return False
        if not level:
            noise = float(np.percentile(_change(then_samples[::3, ::3], now_samples[::3, ::3]), STILL_NOISE_PERCENTILE))
            level.append(max(STILL_NOISE_TIMES * noise, STILL_FLOOR))
        changed = _change(then, now) > level[0]
        return int(np.count_nonzero(changed)) <= max(1, int(STILL_CHANGED_SHARE * changed.size))
    return still


def _change(then: np.ndarray, now: np.ndarray) -> np.ndarray:
    """Per sample, the largest change of a channel (grey levels)."""
    return np.abs(then.astype(np.int16) - now.astype(np.int16)).max(axis=2)


def _ring_colour(image: np.ndarray, view, block: FoundBlock) -> np.ndarray:
    """The median colour of the table in a ring RING_MM around the block's footprint."""
    centre = block.footprint_mm.mean(axis=0)
    out = []
    for corner in block.footprint_mm:
        away = corner - centre
        away = away / max(float(np.linalg.norm(away)), 1e-6)
        out.append(corner + away * RING_MM)
    for a, b in zip(block.footprint_mm, np.roll(block.footprint_mm, -1, axis=0)):
        mid, edge = (a + b) / 2, b - a
        normal = np.array([edge[1], -edge[0]]) / max(float(np.linalg.norm(edge)), 1e-6)
        normal = normal if np.dot(normal, mid - centre) > 0 else -normal
        out.append(mid + normal * RING_MM)
    return np.median(view.sample(image, np.array(out)), axis=0)


def _shows_table(image: np.ndarray, view, c: _Candidate) -> bool:
    """Whether the table plane inside the footprint looks like the table around it did: the block
    is gone (a hand or anything else there looks otherwise)."""
    centre = c.block.footprint_mm.mean(axis=0)
    inner = centre + (c.block.footprint_mm - centre) * 0.6
    points = np.concatenate([inner, [centre], (inner + np.roll(inner, -1, axis=0)) / 2])
    return same_colour_again(np.median(view.sample(image, points), axis=0), c.table_bgr)


def _same_place(a: FoundBlock, b: FoundBlock) -> bool:
    return math.dist(a.footprint_mm.mean(axis=0), b.footprint_mm.mean(axis=0)) <= SAME_PLACE_MM


def _unchanged(a: FoundBlock, b: FoundBlock) -> bool:
    """The same block at the same height (to well under a plate) and colour."""
    return _same_place(a, b) and abs(a.height_mm - b.height_mm) < UNCHANGED_HEIGHT_MM and a.color == b.color


def _same(a: FoundBlock, b: FoundBlock) -> bool:
    return _same_place(a, b) and abs(a.height_mm - b.height_mm) <= SAME_HEIGHT_MM and a.color == b.color


# --- the search process ---------------------------------------------------------------------------

_worker_finder: BlockFinder | None = None


def _worker_start(setup, palette, remember: bool) -> None:
    global _worker_finder
    _worker_finder = BlockFinder(setup, palette, remember)  # as the finder the watch was given


def _worker_ready() -> bool:
    return _worker_finder is not None


def _worker_find(image: np.ndarray, camera: CameraModel, pose: TablePose, minis: tuple[MiniState, ...]
                 ) -> tuple[list[FoundBlock], bool]:
    """The blocks found, and whether a hand was seen over the table."""
    assert _worker_finder is not None
    return _worker_finder.find(image, camera, pose, minis), _worker_finder.hands_over_table
