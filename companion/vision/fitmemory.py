"""The block fits of the last frame, kept for the next one where nothing changed there.

In a live stream the camera stands still and most of the table does too: a block search fits
every candidate again although the pixels under most of them are the last search's up to the
sensor's noise, and fitting is nearly all of a search's time (on a table under lamps, 0.3-2 s a
frame). A candidate whose coarse view, table estimate and nearby minis are as they were is given
the blocks fitted last time; any change there beyond the noise (a brick put down, nudged or taken
away, a hand, a mini moved beside it, the exposure or the lamps) fits it afresh. The lamps,
found from the minis' shadows, are kept likewise while the minis and the view around them stay.

The noise is measured on the whole coarse view against the last frame's (most of the table does
not change from one frame to the next), so the tolerance follows the camera's, whatever it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from companion.state import MiniState

PAD_PX = 8  # the coarse pixels compared around a candidate's box (16 mm: its fit's window and more)
NOISE_TIMES = 6.0  # a value further from last frame's than this many median differences has changed ...
CHANGE_LEAST = 10  # ... and at least this many 8-bit levels (at most CHANGE_MOST: a very noisy camera)
CHANGE_MOST = 30
SHIFT_MOST = 2  # the median change of the whole view, in 8-bit levels, beyond which nothing is kept
CHANGED_SHARE = 0.002  # values of a window that may pass that by chance (noise's tail)
# A fit is given back this many times, then made again on a new frame (a fit is not sure of
# every frame's noise: it gets another look), at most REFITS_PER_FRAME of them a frame (those
# found together would all come due together).
RECALLS_MOST = 8
REFITS_PER_FRAME = 2
SLACK_PX = (2, 2, 3, 3)  # a candidate's box may move this much from the noise at its edges (x, y, w, h)
MINI_REACH_MM = 40.0  # minis this far outside a window still reach into its fit (their masks, shadows)
MINI_MOVED_MM = 1.0
SHADOW_REACH_MM = 100.0  # the view this far around each mini tells its shadows (a 60 mm mini's under a lamp 34 deg up)
# A lamp found elsewhere (its slope over the table moved by this much, or its height by this
# ratio: the search's steps are 0.02 and 1.4-3 times): every fit is made again.
LAMP_SLOPE_MOVED = 0.08
LAMP_HEIGHT_RATIO = 1.5


@dataclass(frozen=True, eq=False)
class _Fitted:
    box: tuple[int, int, int, int]  # x, y, w, h in coarse pixels
    window: tuple[int, int, int, int]  # the padded box compared: x0, y0, x1, y1
    coarse: np.ndarray  # the coarse view there
    table: np.ndarray  # the table estimate there
    minis: tuple[tuple[int, float, float, str], ...]  # id, x, y, status of the minis near it
    blocks: list  # what its fit found (FoundBlock)
    recalls: int = 0  # frames it has been given back in


class FitMemory:
    """Last frame's fits by candidate; `recall` gives them back where nothing changed."""

    def __init__(self) -> None:
        self._kept: list[_Fitted] = []
        self._fresh: list[_Fitted] = []
        self._last_coarse: np.ndarray | None = None
        self._lamps: tuple = ()
        self._limit = float(CHANGE_LEAST)
        self.recalled = 0  # candidates given their last fits in the current frame
        self.fitted = 0  # ... and fitted afresh
        self._refits = 0  # fits made again this frame because they had been given back often
        self._mm_per_px = 1.0
        self._steady = False  # this frame is last frame's up to the noise, as a whole
        self._lamps_seen: tuple[np.ndarray, tuple] | None = None  # the coarse view and minis the lamps were found on
        self._lamp_recalls = 0
        self.lamps_given = False  # the current frame's lamps are an earlier frame's (`lamps_again`)

    def start(self, coarse: np.ndarray, mm_per_px: float) -> None:
        """A new frame's coarse view (uint8), before its lamps are found (`lamps_again`, `lamps`)."""
        last = self._last_coarse
        self._steady = False
        if last is not None and last.shape == coarse.shape:
            diff = coarse[::2, ::2].astype(np.int16) - last[::2, ::2]
            noise = float(np.median(np.abs(diff)))
            # A frame lighter or darker as a whole (the exposure, a lamp) is no noise: all anew.
            self._steady = abs(float(np.median(diff))) <= SHIFT_MOST
            self._limit = float(np.clip(NOISE_TIMES * noise, CHANGE_LEAST, CHANGE_MOST))
        self._kept = self._fresh if self._steady else []
        self._fresh = []
        self._last_coarse = coarse.copy()
        self._mm_per_px = mm_per_px
        self.recalled = self.fitted = 0
        self._refits = 0

    def lamps_again(self, coarse: np.ndarray, minis: tuple[MiniState, ...]) -> tuple | None:
        """The lamps found from the minis' shadows a few frames ago, when the minis stand where they
        stood and the view around them is as it was (their shadows, which the lamps are found
        from, are then too); None when they must be looked for again."""
        if not self._steady or self._lamps_seen is None or self._lamp_recalls >= RECALLS_MOST:
            return None
        then_coarse, then_minis = self._lamps_seen
        now = _standing(minis)
        if _minis_moved(now, then_minis):
            return None
        reach = int(math.ceil(SHADOW_REACH_MM / self._mm_per_px))
        rows, cols = coarse.shape[:2]
        for _, x_mm, y_mm, _ in now:
            x, y = int(x_mm / self._mm_per_px), int(y_mm / self._mm_per_px)
            y0, y1, x0, x1 = max(y - reach, 0), min(y + reach + 1, rows), max(x - reach, 0), min(x + reach + 1, cols)
            if y1 > y0 and x1 > x0 and not self._unchanged(then_coarse[y0:y1, x0:x1], coarse[y0:y1, x0:x1]):
                return None
        self._lamp_recalls += 1
        return self._lamps

    def lamps(self, lamps: tuple, coarse: np.ndarray, minis: tuple[MiniState, ...], found: bool) -> None:
        """This frame's lamps: `found` afresh from the minis' shadows (a lamp found elsewhere fits
        every candidate anew), or given back by `lamps_again`."""
        self.lamps_given = not found
        if not found:
            return
        if len(lamps) != len(self._lamps) or not all(_same_lamp(a, b) for a, b in zip(lamps, self._lamps)):
            self._kept = []
        self._lamps = tuple(lamps)
        self._lamps_seen = (coarse.copy(), _standing(minis))
        self._lamp_recalls = 0

    def _window(self, box: tuple[int, int, int, int], shape: tuple[int, ...]) -> tuple[int, int, int, int]:
        x, y, w, h = box
        return (max(x - PAD_PX, 0), max(y - PAD_PX, 0), min(x + w + PAD_PX, shape[1]), min(y + h + PAD_PX, shape[0]))

    def _near(self, window: tuple[int, int, int, int], minis: tuple[MiniState, ...]) -> tuple:
        x0, y0, x1, y1 = (v * self._mm_per_px for v in window)
        reach = MINI_REACH_MM
        return tuple(sorted((m.id, m.x_mm, m.y_mm, m.status) for m in minis
                            if x0 - reach <= m.x_mm <= x1 + reach and y0 - reach <= m.y_mm <= y1 + reach))

    def _unchanged(self, old: np.ndarray, new: np.ndarray) -> bool:
        changed = np.abs(new.astype(np.int16) - old) > self._limit
        return int(np.count_nonzero(changed)) <= CHANGED_SHARE * changed.size

    def recall(self, box: tuple[int, int, int, int], coarse: np.ndarray, table: np.ndarray,
               minis: tuple[MiniState, ...]) -> list | None:
        """The blocks last frame's fit of this candidate found, when nothing changed around it; None
        when it must be fitted (then `keep` its fit)."""
        for entry in self._kept:
            if any(abs(a - b) > s for a, b, s in zip(entry.box, box, SLACK_PX)):
                continue
            if any(e.box == entry.box and e.window == entry.window for e in self._fresh):
                continue  # each once: a candidate split in two is fitted anew, not given its blocks twice
            x0, y0, x1, y1 = entry.window
            if _minis_moved(self._near(entry.window, minis), entry.minis):
                continue
            if not (self._unchanged(entry.coarse, coarse[y0:y1, x0:x1])
                    and self._unchanged(entry.table, table[y0:y1, x0:x1])):
                continue
            if entry.recalls >= RECALLS_MOST and self._refits < REFITS_PER_FRAME:
                self._refits += 1
                return None
            # (compared with the frame it was fitted on: the noise does not creep up frame by frame)
            self._fresh.append(replace(entry, recalls=entry.recalls + 1))
            self.recalled += 1
            return entry.blocks
        return None

    def keep(self, box: tuple[int, int, int, int], coarse: np.ndarray, table: np.ndarray,
             minis: tuple[MiniState, ...], blocks: list) -> None:
        """A candidate's fresh fit, for the next frame."""
        window = self._window(box, coarse.shape)
        x0, y0, x1, y1 = window
        self._fresh.append(_Fitted(box, window, coarse[y0:y1, x0:x1].copy(), table[y0:y1, x0:x1].copy(),
                                   self._near(window, minis), list(blocks)))
        self.fitted += 1


def _standing(minis: tuple[MiniState, ...]) -> tuple[tuple[int, float, float, str], ...]:
    """The minis seen standing (the lamps are found from their shadows): id, x, y, status."""
    return tuple(sorted((m.id, m.x_mm, m.y_mm, m.status) for m in minis if m.status == "seen"))


def _minis_moved(now: tuple, then: tuple) -> bool:
    """Whether two frames' minis (id, x, y, status; sorted) differ: one came or went, changed its
    status or moved more than MINI_MOVED_MM."""
    return len(now) != len(then) or any(a[0] != b[0] or a[3] != b[3] or math.hypot(a[1] - b[1], a[2] - b[2]) > MINI_MOVED_MM
                                        for a, b in zip(now, then))


def _same_lamp(a, b) -> bool:
    """Whether two lamps (`FoundLamp`) found in two frames are one: the shadows they cast agree."""
    (ax, ay, az), (bx, by, bz) = a.position_mm, b.position_mm
    return (max(az, bz) <= LAMP_HEIGHT_RATIO * min(az, bz)
            and math.hypot(ax / az - bx / bz, ay / az - by / bz) <= LAMP_SLOPE_MOVED)
