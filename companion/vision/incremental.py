"""This frame's markers from last frame's: only look where something changed.

Per frame, for under a third of a full-frame detection (`companion bench live`):
- a sparse copy of the green channel (every 4th pixel of every 8th row) is compared with the last
  one, cell by cell, to see where anything changed;
- every marker seen before has a pixel region and a reference patch; a region whose pixels did not
  change beyond sensor noise keeps last frame's corners (so its registration and placement are
  memo hits); a changed region is searched again with room for motion, at most 4 boxes a frame:
  markers in motion, then changed ones, then ones not seen lately, then cells that settled;
- changed cells that no known marker explains are searched (a mini put down, a hand lifted);
  one tile of a 4 x 4 grid is also scanned every 8th frame, so nothing is missed for long;
- a marker in motion keeps OpenCV's corners (fast, right in x and y); once it stops, its corners
  get the full pattern fit once (or, if it stopped exactly where it was last refined, that
  measurement again); on idle frames one still marker is measured afresh, in turn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from companion.setup_file import Setup
from companion.vision.deblur import Spread, detect_listed, read_sharpened
from companion.vision.markers import MarkerDetections, detect_raw, mean_side_px, refine, to_gray
from companion.vision.pixelboxes import Box, merge_boxes
from companion.vision.threads import with_the_pool

CHANGE_LEVEL = 14  # grey levels: a 3x3-averaged pixel differing by more is a change (noise stays under 8)
SMALL_X, SMALL_Y = 4, 8  # the change map samples every 4th column of every 8th row (the row reads are what cost)
SMALL_CHANGE_LEVEL = 40  # single nearest-neighbour pixels are noisier than averaged ones
CELL_X, CELL_Y = 16, 8  # change-map cell, in small pixels (64 x 64 px of the frame)
SEARCH_MARGIN = 0.5  # a changed region is searched this many marker sides around it (10 mm a frame at 20 mm)
SCAN_GRID = (4, 4)
SCAN_EVERY = 8  # frames between two scanned tiles (a backstop: changed cells find new markers first)
MARKER_CONTRAST_SHARE = 0.6  # a changed region is searched only if it keeps this share of the marker's contrast
SEARCH_BUDGET = 4  # searched boxes per frame at most; the rest wait their turn
FOLLOW_SIDES = 4.0  # a marker lost in motion: looked for this many sides further out per frame missed (80 mm at 20 mm)
FOLLOW_MAX_SIDES = 12.0
PUSH_SEARCHES = 2  # boxes a frame searched further out for markers just lost in motion
GLOBAL_CHANGE_SHARE = 0.5  # this share of the known markers changing in one frame: the light changed
CLOSE_WINDOW_PX = 5  # the second, closer threshold window for a marker the quick search missed
RESCUE_EVERY = 8  # frames between slow second looks for a marker that stays hidden (under a hand)
SAME_CORNERS_PX = 0.02
SAME_RAW_PX = 0.05  # OpenCV's integer-ish corners this close to last time's: the same, unmoved marker
UNMOVED_RAW_PX = 1.0  # ... or this close, with the marker's pixels as measured (a shift over ~0.15 px changes them)
FORGET_AFTER_FRAMES = 150  # a region unseen this long is dropped; scans and change cells find it again
REMEASURE_EVERY = 6  # on idle frames, one still marker in this many frames is measured afresh (height learning)


@dataclass
class _Region:
    """What one marker looked like the last time it was measured."""

    detections: MarkerDetections  # one row
    box: Box
    reference: np.ndarray  # 3x3-averaged grey patch of box
    frame: int  # last frame it was seen
    side_px: float = 0.0
    quad_key: bytes = b""  # corners_px bytes: the same corners mean the same, unchanged region
    marker_mask: np.ndarray | None = None  # the marker and its white margin within box (the rest is surroundings)
    stale: bool = False  # it changed since it was measured and was not found again: never reused as is
    velocity_px: tuple[float, float] = (0.0, 0.0)  # its centre's move a frame when last found (0: still)
    missed: int = 0  # frames it changed and was searched for in vain (a push faster than its box)
    last_precise: "_Region | None" = None  # this marker's last refined measurement, while this one is rough
    fit_failed_frame: int | None = None  # when a pattern fit of these very pixels last failed (while unrefined)
    # Set once (the triage asks every frame for every region; numpy's indexing costs microseconds):
    precise: bool = field(init=False)  # its corners were refined
    small_box: tuple[int, int, int, int] = field(init=False)  # rows r0, r1, cols c0, c1 of the change map over box
    centre_px: tuple[float, float] = field(init=False)  # the mean of its corners

    def __post_init__(self) -> None:
        self.precise = bool(self.detections.refined[0])
        self.centre_px = _centre(self.detections.corners_px[0])
        x0, y0, x1, y1 = self.box
        self.small_box = (y0 // SMALL_Y, -(-y1 // SMALL_Y), x0 // SMALL_X, -(-x1 // SMALL_X))


@dataclass
class _Triage:
    """Last frame's markers sorted by what this frame shows of them."""

    kept: list[MarkerDetections] = field(default_factory=list)  # still: their detections stand
    settling: list[tuple[int, Box, _Region]] = field(default_factory=list)  # (row in kept, box, region): stopped, unrefined
    walking: list[Box] = field(default_factory=list)  # search boxes of markers in motion last frame too
    moving: list[Box] = field(default_factory=list)  # of precise markers that changed
    hidden: list[Box] = field(default_factory=list)  # of markers not seen last frame, readable again
    expected: list[tuple[int, Box]] = field(default_factory=list)  # (marker id, box) of every changed one
    due: set[int] = field(default_factory=set)  # ids to look for with every threshold window this frame


@dataclass(frozen=True)
class TrackerStats:
    frames: int = 0
    full_frames: int = 0  # frames searched whole (start, lost registration)
    regions_searched: int = 0
    regions_reused: int = 0


class _SparseGray:
    """A grey frame converted only where it is looked at (most of a frame never is)."""

    def __init__(self, image: np.ndarray, buffer: np.ndarray | None = None) -> None:
        self.image = image
        # The last frame's buffer, written again where it is looked at: a fresh 2 MB array would
        # cost a page fault for every page the searches touch.
        self.gray = buffer if buffer is not None and buffer.shape == image.shape[:2] else np.zeros(image.shape[:2], np.uint8)
        self._done: list[Box] = []

    def ensure(self, box: Box) -> np.ndarray:
        x0, y0, x1, y1 = box
        if not any(d[0] <= x0 and d[1] <= y0 and d[2] >= x1 and d[3] >= y1 for d in self._done):
            self.gray[y0:y1, x0:x1] = to_gray(self.image[y0:y1, x0:x1])
            self._done.append(box)
        return self.gray[y0:y1, x0:x1]


class IncrementalMarkers:
    """The markers of each frame, found from the last frame's (see the module's docstring); a whole
    frame is searched at the start, on a new resolution, and when asked (`detect_whole`)."""

    def __init__(self, setup: Setup, remeasure_every: int = REMEASURE_EVERY) -> None:
        self.setup = setup
        self.remeasure_every = remeasure_every
        self._regions: dict[int, list[_Region]] = {}  # marker id -> one region per physical marker
        self._small: np.ndarray | None = None
        self._gray_buffer: np.ndarray | None = None
        self._rescued_ids: set[int] = set()  # markers only the slow second look has decoded (small, blurred)
        # The lens's spread the last whole-frame search measured (None: sharp enough), and the
        # markers only the frame sharpened with it read: they are looked for sharpened too.
        self._spread: Spread | None = None
        self._sharpened_ids: set[int] = set()
        self._moving_cells: np.ndarray | None = None  # change-map cells that changed last frame
        self._still_small: np.ndarray | None = None  # each change-map sample as of the last frame its cell was still
        self._tile = 0
        self._remeasure_turn = 0
        self._hidden_turn = 0
        self._last_tile: Box = (0, 0, 0, 0)
        self._kept_memo: tuple[list[MarkerDetections], MarkerDetections] = ([], MarkerDetections.empty())
        self.settled = False  # an unexplained change settled since this was last reset (blocks to look at)
        self.stats = TrackerStats()

    def detect(self, image: np.ndarray, camera, frame: int) -> tuple[MarkerDetections, np.ndarray, bool]:
        """This frame's markers, its grey picture (converted where it was looked at), and whether
        the whole frame was searched."""
        self.stats = replace(self.stats, frames=self.stats.frames + 1)
        # The green channel of every 4th pixel of every 8th row: a change map needs no colour
        # conversion, nor a resize call. (Picked from the rows taken flat: numpy's strided copy
        # over three axes took twice as long, 0.09 ms at 1080p.)
        small = _change_samples(image)
        whole = not self._regions or self._small is None or self._small.shape != small.shape
        if whole:
            gray = self._gray_buffer = _own_grey(image)
            detections = self._detect_full(gray, camera)
            self._still_small = small.copy()  # what later changes are compared with
        else:
            gray_view = _SparseGray(image, self._gray_buffer)
            detections = self._detect_incremental(gray_view, small, camera, frame)
            gray = self._gray_buffer = gray_view.gray
        self._small = small
        return detections, gray, whole

    def detect_whole(self, image: np.ndarray, camera) -> tuple[MarkerDetections, np.ndarray]:
        """The whole frame searched again (the registration failed, or the camera moved)."""
        gray = self._gray_buffer = _own_grey(image)
        return self._detect_full(gray, camera), gray

    def _detect_full(self, gray: np.ndarray, camera) -> MarkerDetections:
        # Searched again (the camera moved, the registration was lost), the markers to insist on
        # are the ones being tracked: a roster lists the dead and the minis still in the box, and
        # looking for each of them every way there is took 190 ms of a 1080p frame instead of 45.
        # (A marker no one tracks is still read if the first look reads it.)
        listed = self.setup.listed_ids
        if listed is not None and self._regions:
            listed = listed & (frozenset(self._regions) | self.setup.anchor_ids)
        self._regions.clear()
        self.stats = replace(self.stats, full_frames=self.stats.full_frames + 1)
        with with_the_pool():
            look = detect_listed(gray, camera, self.setup.dictionary, listed, self.setup.anchor_ids,
                                 rescued=self._rescued_ids)
        self._spread = look.spread
        self._sharpened_ids |= look.sharpened_ids
        return look.detections

    def _detect_incremental(self, gray: _SparseGray, small: np.ndarray, camera, frame: int) -> MarkerDetections:
        """This frame's markers from last frame's: the still ones kept, the rest searched for in
        boxes around where they were and where the picture changed."""
        diff_small = cv2.absdiff(small, self._small)
        triage = self._triage(gray, diff_small, frame)
        kept = triage.kept
        if not triage.walking and not triage.moving and not triage.hidden:
            kept = self._settle_one(gray, camera, triage, frame)
        # Cells that changed last frame and are still now: a marker put down becomes readable when
        # the hand has left and the area settles; nothing under a moving hand can be read anyway.
        changed_cells, any_settled = self._settled_cells(small, diff_small, triage.walking + triage.moving + triage.hidden)
        cells = merge_boxes(changed_cells)
        self.settled = self.settled or any_settled  # something no marker explains settled: blocks looked at soon
        search = self._search_boxes(triage, cells)
        known = self._concat_kept(kept)
        found = [self._look(gray, camera, roi, known, triage.expected, frame, triage.due) for roi in merge_boxes(search)]
        found_ids = {int(i) for f in found for i in f.ids}
        # A marker that changed, still shows its contrast nearby and was not in its box has been
        # pushed further than the box in one frame (24-60 mm at 10 frames a second): looked for
        # FOLLOW_SIDES further out this frame, not the next, so a push is followed from its first
        # frame instead of the mini being held at its start meanwhile.
        h, w = gray.gray.shape
        pushed = [_grow(r, w, h, sides=SEARCH_MARGIN + FOLLOW_SIDES) for m, _ in triage.expected
                  if m not in found_ids for r in self._regions.get(m, []) if r.missed == 0]
        if pushed:
            seen_now = MarkerDetections.concat(kept + found)
            found += [self._search(gray, camera, box, seen_now, rescue=False, quick=True)
                      for box in merge_boxes(pushed)[:PUSH_SEARCHES]]
            found_ids = {int(i) for f in found for i in f.ids}
        for marker_id, _ in triage.expected:
            if marker_id not in found_ids:
                for region in self._regions.get(marker_id, []):
                    region.missed += 1  # next time looked for further out
        if frame % SCAN_EVERY == 0:  # the backstop, at the quick settings (the first frame had them all)
            found.append(self._search(gray, camera, self._next_tile(w, h), MarkerDetections.concat(kept + found),
                                      rescue=False, quick=True))
        self.stats = replace(self.stats, regions_searched=self.stats.regions_searched + len(search),
                             regions_reused=self.stats.regions_reused + len(kept))
        if not any(len(f) for f in found):
            return known  # nothing new: the kept regions are distinct markers already
        return _dedupe(MarkerDetections.concat([known] + [self._same_as_before(f) for f in found]))

    def _concat_kept(self, kept: list[MarkerDetections]) -> MarkerDetections:
        """The kept markers as one set: most frames keep the very detections of the last one, and
        concatenating sixteen one-row sets afresh cost a tenth of a millisecond a frame."""
        before, joined = self._kept_memo
        if len(before) == len(kept) and all(a is b for a, b in zip(before, kept)):
            return joined
        joined = MarkerDetections.concat(kept)
        self._kept_memo = (kept, joined)
        return joined

    def _triage(self, gray: _SparseGray, diff_small: np.ndarray, frame: int) -> "_Triage":
        """Each known marker: kept as it was (still), or to be searched for (in motion, changed,
        uncovered after a while); covered ones are left until they change again."""
        h, w = gray.gray.shape
        t = _Triage()
        # The change map sees any edge that moved; only then compare at full size. Its changed
        # samples counted over each box from their running sums (four reads a box, not a slice's
        # maximum: a twentieth of a millisecond a frame).
        _, loud = cv2.threshold(diff_small, SMALL_CHANGE_LEVEL // 2 - 1, 1, cv2.THRESH_BINARY)
        counts = cv2.integral(loud)
        for marker_id, regions in self._regions.items():
            for region in regions:
                r0, r1, c0, c1 = region.small_box
                quiet = counts.item(r1, c1) - counts.item(r0, c1) - counts.item(r1, c0) + counts.item(r0, c0) == 0
                # A marker in motion last frame whose box changed again has moved on: comparing
                # its pixels would only confirm it (a walker's every frame).
                changed = False if quiet else ((not region.precise and region.frame == frame - 1)
                                               or _marker_changed(gray, region))
                if changed:
                    grown = _grow(region, w, h)
                    # Until it is found again, its old corners say nothing about where it is now.
                    region.stale = True
                    if not self._marker_like(gray, grown, region):
                        continue  # covered (a hand): nothing readable there now; looked at again when it changes
                    if region.frame < frame - 1:
                        t.hidden.append(grown)
                    elif not region.precise:
                        t.walking.append(grown)  # already in motion last frame: the likeliest to move on
                    else:
                        t.moving.append(grown)
                    t.expected.append((marker_id, grown))
                else:
                    if region.stale:
                        # Quiet since it changed: if the marker is back exactly as measured (a hand
                        # has left), its corners stand again; if not (lifted away), nothing to read.
                        if quiet and _marker_changed(gray, region):
                            # Not where it was measured, and not found since: lifted away (bare
                            # table), or a small marker that stopped a pixel or two on from where
                            # its last search missed it (a walker at 720p): that one shows its
                            # contrast still, and is looked for closely as it settles (quick
                            # looks missed it in motion), then when due.
                            settling = frame - region.frame <= 2
                            if settling or (frame + marker_id) % RESCUE_EVERY == 0:
                                grown = _grow(region, w, h, sides=SEARCH_MARGIN)
                                if self._marker_like(gray, grown, region):
                                    t.hidden.append(grown)
                                    t.expected.append((marker_id, grown))
                                    if settling:
                                        t.due.add(marker_id)
                            continue
                        region.stale = False
                    t.kept.append(region.detections)
                    # A still marker whose fit failed on these pixels (small, blurred, a thin margin)
                    # is tried again only as often as a still one is measured again: not every
                    # frame, at a full fit's cost each (11 ms a frame on a bench table).
                    if not region.precise and (region.fit_failed_frame is None
                                               or frame - region.fit_failed_frame >= self.remeasure_every):
                        t.settling.append((len(t.kept) - 1, _grow(region, w, h), region))
        return t

    def _settle_one(self, gray: _SparseGray, camera, triage: "_Triage", frame: int) -> list[MarkerDetections]:
        """An idle frame has time for one full pattern fit: first a marker that has stopped moving
        (placed meanwhile from OpenCV's corners at its known height, ~0.3 mm), else every few frames
        a still one again, so heights are learned."""
        kept = list(triage.kept)
        if triage.settling:
            k, grown, region = triage.settling[0]
            before = region.last_precise
            if before is not None and not _marker_changed(gray, before):
                # It stopped where it was last measured (covered for a while, never moved): that
                # measurement stands, no fit needed.
                kept[k] = before.detections
            else:
                gray.ensure(grown)
                quads = kept[k].corners_px
                if region.fit_failed_frame is not None:
                    # The fit failed from these corners (OpenCV's square of one noisy frame can take
                    # in a dark body beside a thin margin): this frame's own are tried instead.
                    quads = self._raw_quad(gray, grown, int(kept[k].ids[0]), quads[0])
                settled = refine(gray.gray, camera, kept[k].ids, quads, self.setup.dictionary)
                if len(settled):
                    kept[k] = settled  # refined, or OpenCV's corners where the pattern matches at them
                if not (len(settled) and settled.refined[0]):
                    region.fit_failed_frame = frame
        elif frame % self.remeasure_every == 0:
            kept = self._remeasure_one(gray, camera, kept)
        return kept

    def _raw_quad(self, gray: _SparseGray, box: Box, marker_id: int, near_px: np.ndarray) -> np.ndarray:
        """OpenCV's corners (1, 4, 2) of the marker nearest `near_px` in box on this frame, or
        `near_px` itself when it is not found there."""
        ids, quads = detect_raw(gray.ensure(box), self.setup.dictionary, box[:2], rescue=False, quick=True)
        same = [q for i, q in zip(ids, quads) if int(i) == marker_id]
        if not same:
            return near_px[None]
        centre = near_px.mean(axis=0)
        return min(same, key=lambda q: float(np.abs(q.mean(axis=0) - centre).max()))[None]

    def _search_boxes(self, triage: "_Triage", cells: list[Box]) -> list[Box]:
        """A budget of searches per frame, most useful first: markers in motion, markers that
        changed, markers not seen lately (taking turns), then settled cells. The lost ones go before
        the cells: their contrast is back (checked by the triage), so the hand has left them, and a
        walker lost under a hand walks on out of its box."""
        hidden = triage.hidden
        if hidden:
            turn = self._hidden_turn % len(hidden)
            hidden = hidden[turn:] + hidden[:turn]
            self._hidden_turn += 1
        budget = SEARCH_BUDGET
        regions_now = sum(len(r) for r in self._regions.values())
        if regions_now and len(triage.expected) >= GLOBAL_CHANGE_SHARE * regions_now:
            # Most markers changed at once while none moved alone: the light or the exposure
            # stepped. Every changed marker is looked at this frame (a small box each), so none is
            # held for seconds while the budget works through them four at a time.
            budget = max(SEARCH_BUDGET, len(triage.expected) + len(cells))
        return (merge_boxes(triage.walking) + merge_boxes(triage.moving) + hidden + cells)[:budget]

    def _look(self, gray: _SparseGray, camera, roi: Box, known: MarkerDetections,
              expected: list[tuple[int, Box]], frame: int, due: set[int]) -> MarkerDetections:
        """The markers in one search box: a quick look, a closer threshold window where an expected
        marker is missing, and the full set (in the missing marker's own box) where one is due."""
        quick = self._search(gray, camera, roi, known, rescue=False, quick=True)
        seen = set(quick.ids.tolist())
        absent = [m for m, box in expected if _contains(roi, box) and m not in seen]
        if absent:
            # A bright hand or block against the white margin fools a 7 px threshold window; a 5 px
            # one adapts closer in: one more window, only near where a missing marker was last
            # seen (the hand touching it is still there). Not the whole search box: merged around
            # a sweeping hand and grown for markers missed under it, it is wide, and searching it
            # twice cost the most frames.
            h, w = gray.gray.shape
            near = [_grow(r, w, h, sides=SEARCH_MARGIN) for m in absent for r in self._regions[m]]
            for box in merge_boxes(near):
                quick = MarkerDetections.concat([quick, self._search(
                    gray, camera, box, MarkerDetections.concat([known, quick]), rescue=False, quick=True,
                    window_px=CLOSE_WINDOW_PX)])
        seen = set(quick.ids.tolist())
        missing = [m for m in absent if m not in seen and ((frame + m) % RESCUE_EVERY == 0 or m in due)]
        if missing:
            # Where one is due, the full set of threshold windows; and for small or blurred markers
            # that only ever decoded at the slow second look, that look too. Each in its own box
            # and at its own size, not the whole search box at every size (a box merged around a
            # hand is wide).
            side_px = min(r.side_px for m in missing for r in self._regions[m])
            slow_look = bool(self._rescued_ids & set(missing))
            for box in merge_boxes([box for m, box in expected if m in missing]):
                quick = MarkerDetections.concat([quick, self._search(
                    gray, camera, box, MarkerDetections.concat([known, quick]), rescue=slow_look, quick=False,
                    rescue_within=[box], side_px=side_px)])
        blurred = frozenset(m for m in absent if m in self._sharpened_ids) - set(quick.ids.tolist())
        if blurred and self._spread is not None:
            # Out of focus: what only the sharpened frame read is looked for in its box sharpened,
            # every frame (a box is a few milliseconds), or it would be held whenever it moves.
            for box in merge_boxes([box for m, box in expected if m in blurred]):
                quick = MarkerDetections.concat([quick, self._search_sharpened(
                    gray, camera, box, MarkerDetections.concat([known, quick]), blurred)])
        return quick

    def _search_sharpened(self, gray: _SparseGray, camera, roi: Box, known: MarkerDetections,
                          wanted: frozenset[int]) -> MarkerDetections:
        # Twice the box: sharpened, a marker near a small crop's edge did not read (the filter's
        # mirrored border, the rescue's margin around its quad).
        h, w = gray.gray.shape
        x0, y0, x1, y1 = roi
        grow_x, grow_y = (x1 - x0) // 2, (y1 - y0) // 2
        roi = (max(x0 - grow_x, 0), max(y0 - grow_y, 0), min(x1 + grow_x, w), min(y1 + grow_y, h))
        x0, y0 = roi[0], roi[1]
        assert self._spread is not None
        ids, quads = read_sharpened(gray.ensure(roi), self._spread, wanted, self.setup.dictionary)
        quads = quads + np.array([x0, y0], float)
        rows = [i for i, marker_id in enumerate(ids.tolist()) if not _near_any(known, marker_id, quads[i])]
        if not rows:
            return MarkerDetections.empty()
        return refine(gray.gray, camera, ids[rows], quads[rows], self.setup.dictionary, precise=False)

    @staticmethod
    def _marker_like(gray: _SparseGray, box: Box, region: _Region) -> bool:
        """Is there still black-and-white contrast like the marker's around where it was? (A marker
        that moved keeps its contrast; one under a hand does not.)"""
        patch = gray.ensure(box)[::2, ::2]
        reference = region.reference
        ref_range = int(reference.max()) - int(reference.min())
        return int(patch.max()) - int(patch.min()) >= MARKER_CONTRAST_SHARE * ref_range

    def _remeasure_one(self, gray: _SparseGray, camera, kept: list[MarkerDetections]) -> list[MarkerDetections]:
        """An idle frame: fit one still, roster marker again on this frame's pixels. Its new corners
        are an independent measurement, so its height is learned over time (round-robin)."""
        candidates = [k for k, d in enumerate(kept) if self.setup.mini(int(d.ids[0])) is not None]
        if not candidates:
            return kept
        self._remeasure_turn = (self._remeasure_turn + 1) % len(candidates)
        k = candidates[self._remeasure_turn]
        det = kept[k]
        region = next((r for r in self._regions.get(int(det.ids[0]), []) if r.detections is det), None)
        if region is not None:
            gray.ensure(_grow(region, *gray.gray.shape[::-1]))
        fresh = refine(gray.gray, camera, det.ids, det.corners_px, self.setup.dictionary)
        if len(fresh):
            kept = kept[:k] + [fresh] + kept[k + 1:]
        return kept

    def _search(self, gray: _SparseGray, camera, roi: Box, known: MarkerDetections, rescue: bool,
                quick: bool, rescue_within: list[Box] | None = None, side_px: float | None = None,
                window_px: int | None = None) -> MarkerDetections:
        """Markers in roi, refined only if not already known at the same place this frame."""
        x0, y0, x1, y1 = roi
        within = None if rescue_within is None else [(b[0] - x0, b[1] - y0, b[2] - x0, b[3] - y0) for b in rescue_within]
        ids, quads = detect_raw(gray.ensure(roi), self.setup.dictionary, (x0, y0), rescue=rescue, quick=quick,
                                rescued=self._rescued_ids,
                                rescue_within=within, min_side_px=side_px or (self._smallest_side_px() if quick else None),
                                rescue_side_px=side_px, window_px=window_px)
        new = [i for i, marker_id in enumerate(ids.tolist()) if not _near_any(known, marker_id, quads[i])]
        rows, again = [], []
        for i in new:
            # OpenCV's corners where they were last time, or the marker's pixels as they were when
            # it was measured (a hand covered it and left): it did not move, its refined corners
            # stand, and no pattern fit is needed.
            regions = self._regions.get(int(ids[i]), [])
            before = next((r.detections for r in regions
                           if np.abs(r.detections.raw_px[0] - quads[i]).max() < SAME_RAW_PX), None)
            if before is None:
                before = next((r.detections for r in regions if r.precise
                               and np.abs(r.detections.raw_px[0] - quads[i]).max() < UNMOVED_RAW_PX
                               and not _marker_changed(gray, r)), None)
            (rows if before is None else again).append(i if before is None else before)
        fresh = refine(gray.gray, camera, ids[rows], quads[rows], self.setup.dictionary, precise=False) \
            if rows else MarkerDetections.empty()
        return MarkerDetections.concat([fresh] + again)

    def _smallest_side_px(self) -> float | None:
        """The smallest marker seen so far (a new one is about that size: the roster's are alike)."""
        sides = [r.side_px for regions in self._regions.values() for r in regions if r.side_px > 0]
        return min(sides) if sides else None

    def _same_as_before(self, det: MarkerDetections) -> MarkerDetections:
        """Rows whose corners moved by less than noise get their previous corners back, bit for bit,
        so the registration and placements built on them are reused instead of recomputed."""
        rows = []
        for row in range(len(det)):
            quad = det.corners_px[row]
            previous = next((r.detections for r in self._regions.get(int(det.ids[row]), [])
                             if r.detections.refined[0] == det.refined[row]
                             and np.abs(r.detections.corners_px[0] - quad).max() < SAME_CORNERS_PX), None)
            rows.append(previous if previous is not None else det[row])
        return MarkerDetections.concat(rows)

    def _settled_cells(self, small: np.ndarray, diff_small: np.ndarray, searched: list[Box]) -> tuple[list[Box], bool]:
        """Frame boxes of cells that changed last frame, are still now, look otherwise than before
        they changed, and no search covers; and whether any cell settled at all (blocks to look at).
        A cell a hand passed over settles as it was: nothing was put down there, and searching
        the hand's trail for markers cost the most of its frames."""
        rows, cols = diff_small.shape[0] // CELL_Y, diff_small.shape[1] // CELL_X
        _, changed = cv2.threshold(diff_small[: rows * CELL_Y, : cols * CELL_X], SMALL_CHANGE_LEVEL, 1.0,
                                   cv2.THRESH_BINARY)
        # Cell means by area averaging (in C, not a numpy reshape): two changed samples make a moving cell.
        share = cv2.resize(changed.astype(np.float32), (cols, rows), interpolation=cv2.INTER_AREA)
        moving = share * (CELL_X * CELL_Y) >= 1.5
        settled = self._moving_cells & ~moving if self._moving_cells is not None and self._moving_cells.shape == moving.shape \
            else np.zeros_like(moving)
        self._moving_cells = moving
        if self._still_small is None or self._still_small.shape != small.shape:
            self._still_small = small.copy()
        still = self._still_small
        s = SMALL_X * CELL_X  # == SMALL_Y * CELL_Y
        pad = s // 2
        h, w = diff_small.shape[0] * SMALL_Y, diff_small.shape[1] * SMALL_X
        boxes = []
        for r, c in zip(*np.nonzero(settled)):
            cell = np.s_[r * CELL_Y:(r + 1) * CELL_Y, c * CELL_X:(c + 1) * CELL_X]
            if cv2.absdiff(small[cell], still[cell]).max() > SMALL_CHANGE_LEVEL:
                boxes.append((max(c * s - pad, 0), max(r * s - pad, 0), min((c + 1) * s + pad, w), min((r + 1) * s + pad, h)))
        # Still cells take this frame's samples: the next change is compared with them.
        still_now = cv2.resize((~moving).astype(np.uint8), (cols * CELL_X, rows * CELL_Y), interpolation=cv2.INTER_NEAREST)
        np.copyto(still[: rows * CELL_Y, : cols * CELL_X], small[: rows * CELL_Y, : cols * CELL_X], where=still_now.astype(bool))
        return [b for b in boxes if not any(_contains(o, b) for o in searched)], bool(settled.any())

    def _next_tile(self, w: int, h: int) -> Box:
        cols, rows = SCAN_GRID
        col, row = self._tile % cols, (self._tile // cols) % rows
        self._tile += 1
        overlap_px = 48  # a marker on a tile border is whole in one of the two tiles
        self._last_tile = (max(col * w // cols - overlap_px, 0), max(row * h // rows - overlap_px, 0),
                           min((col + 1) * w // cols + overlap_px, w), min((row + 1) * h // rows + overlap_px, h))
        return self._last_tile

    def remember(self, detections: MarkerDetections, gray: np.ndarray, frame: int) -> None:
        h, w = gray.shape
        known = {r.quad_key: r for regions in self._regions.values() for r in regions}
        fresh: dict[int, list[_Region]] = {}
        for row, marker_id in enumerate(detections.ids.tolist()):
            quad = detections.corners_px[row]
            key = quad.tobytes()
            region = known.get(key)
            if region is not None:
                region.frame = frame  # unchanged: keep its reference patch
                if region.stale:  # found again where it was, but its pixels changed (the light): new reference
                    x0, y0, x1, y1 = region.box
                    region.reference = cv2.blur(gray[y0:y1, x0:x1], (3, 3)).astype(np.int16)
                region.stale = False
                region.velocity_px, region.missed = (0.0, 0.0), 0
            else:
                side = mean_side_px(quad)
                pad = int(math.ceil(side * 0.45)) + 3  # the marker and its white margin
                # (In plain Python: numpy's reductions cost microseconds each on four corners.)
                xs, ys = quad[:, 0].tolist(), quad[:, 1].tolist()
                x0, y0 = max(math.floor(min(xs)) - pad, 0), max(math.floor(min(ys)) - pad, 0)
                x1, y1 = min(math.ceil(max(xs)) + pad + 1, w), min(math.ceil(max(ys)) + pad + 1, h)
                marker_mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
                cx, cy = _centre(quad)
                grown = [(round((x - cx) * 1.25 + cx - x0), round((y - cy) * 1.25 + cy - y0)) for x, y in zip(xs, ys)]
                cv2.fillConvexPoly(marker_mask, np.array(grown, np.int32), 1)
                region = _Region(detections[row], (x0, y0, x1, y1),
                                 cv2.blur(gray[y0:y1, x0:x1], (3, 3)).astype(np.int16), frame, side, key,
                                 marker_mask.astype(bool))
                if not region.precise:
                    region.last_precise = self._last_precise(marker_id, region.centre_px, side)
                region.velocity_px = self._velocity(marker_id, region.centre_px, side, frame)
            fresh.setdefault(marker_id, []).append(region)
        # Markers not found this frame keep their regions, so they are looked for again when uncovered.
        for marker_id, regions in self._regions.items():
            if marker_id not in fresh:
                alive = [r for r in regions if frame - r.frame <= FORGET_AFTER_FRAMES]
                if alive:
                    fresh[marker_id] = alive
        self._regions = fresh

    def _velocity(self, marker_id: int, centre_px: tuple[float, float], side_px: float, frame: int
                  ) -> tuple[float, float]:
        """How far the marker moved a frame since it was last found (within the last two frames)."""
        best = None
        for region in self._regions.get(marker_id, []):
            if frame - 2 <= region.frame < frame:
                (bx, by), frames = region.centre_px, frame - region.frame
                step = ((centre_px[0] - bx) / frames, (centre_px[1] - by) / frames)
                if best is None or math.hypot(*step) < math.hypot(*best):
                    best = step
        if best is None or math.hypot(*best) < 0.25 * side_px:
            return 0.0, 0.0  # jitter or a nudge: no push to follow
        return best

    def _last_precise(self, marker_id: int, centre_px: tuple[float, float], side_px: float) -> _Region | None:
        """The last refined measurement of the marker now seen roughly at centre_px (within one
        side of it): if the marker turns out not to have moved, it is still right."""
        for region in self._regions.get(marker_id, []):
            before = region if region.precise else region.last_precise
            if before is not None and max(abs(before.centre_px[0] - centre_px[0]),
                                          abs(before.centre_px[1] - centre_px[1])) < side_px:
                return before
        return None

    def mark_seen(self, detections: MarkerDetections, frame: int) -> None:
        for marker_id in {int(i) for i in detections.ids}:
            for region in self._regions.get(marker_id, []):
                region.frame = frame


def _change_samples(image: np.ndarray) -> np.ndarray:
    """image[::SMALL_Y, ::SMALL_X, 1] (or [::SMALL_Y, ::SMALL_X] of a grey frame), contiguous."""
    rows = image[::SMALL_Y]
    if image.ndim == 3 and rows.strides[1:] == (image.shape[2] * image.itemsize, image.itemsize):
        return np.ascontiguousarray(rows.reshape(rows.shape[0], -1)[:, 1::SMALL_X * image.shape[2]])
    return np.ascontiguousarray(image[::SMALL_Y, ::SMALL_X, 1] if image.ndim == 3 else image[::SMALL_Y, ::SMALL_X])


def _centre(quad: np.ndarray) -> tuple[float, float]:
    """The mean of a quad's corners, in plain Python (the same sums as numpy's mean of four)."""
    (ax, ay), (bx, by), (cx, cy), (dx, dy) = quad.tolist()
    return (ax + bx + cx + dx) / 4, (ay + by + cy + dy) / 4


def _own_grey(image: np.ndarray) -> np.ndarray:
    """The frame in grey, in an array of the tracker's own: it becomes the buffer the next frame's
    searches write into, and a grey frame as given belongs to the caller."""
    gray = to_gray(image)
    return gray.copy() if gray is image else gray


def _marker_changed(gray: _SparseGray, region: _Region) -> bool:
    """Does the marker differ from its reference patch? Only a change on the marker itself counts:
    a hand passing its surroundings does not."""
    patch = cv2.blur(gray.ensure(region.box), (3, 3)).astype(np.int16)
    return bool((np.abs(patch - region.reference) >= CHANGE_LEVEL)[region.marker_mask].any())


def _contains(outer: Box, inner: Box) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and outer[2] >= inner[2] and outer[3] >= inner[3]


def _grow(region: _Region, w: int, h: int, sides: float | None = None) -> Box:
    """Where to look for a marker that changed: its box, and ahead of it as far as it moved last
    frame (a push goes on); a marker searched for in vain is looked for FOLLOW_SIDES further out for
    every frame it was missed (it kept going), up to FOLLOW_MAX_SIDES (unless sides is given). Only
    a marker that was moving when it was lost: a still one that changed and is missed is under a
    hand (a push from rest is looked for FOLLOW_SIDES out on its first frame), and growing its box
    each frame had the searches cover half the frame while a hand lay there."""
    vx, vy = region.velocity_px
    if sides is None:
        going = region.missed if (vx or vy) else 0
        sides = min(SEARCH_MARGIN + FOLLOW_SIDES * going, FOLLOW_MAX_SIDES)
    m = int(region.side_px * sides + 0.5 * math.hypot(vx, vy)) + 8
    x0, y0, x1, y1 = region.box
    ax0, ay0, ax1, ay1 = min(x0, x0 + vx), min(y0, y0 + vy), max(x1, x1 + vx), max(y1, y1 + vy)
    return max(int(ax0) - m, 0), max(int(ay0) - m, 0), min(int(ax1) + m, w), min(int(ay1) + m, h)


def _near_any(det: MarkerDetections, marker_id: int, quad_px: np.ndarray, within_px: float = 3.0) -> bool:
    """Whether `det` has this marker within `within_px` of the quad's centre."""
    rows = det.ids == marker_id
    if not rows.any():
        return False  # (most searches find what is not known yet: no centre needed)
    return bool((np.linalg.norm(det.corners_px[rows].mean(axis=1) - _centre(quad_px), axis=1) < within_px).any())


def _dedupe(det: MarkerDetections) -> MarkerDetections:
    """One row per physical marker: the same id at (nearly) the same place, found twice, is one."""
    ids = det.ids.tolist()
    if len(set(ids)) == len(ids):
        return det  # no id twice (most frames): nothing to compare
    centres = det.corners_px.mean(axis=1)
    near = np.linalg.norm(centres[:, None] - centres[None, :], axis=2) < 3.0
    same = (det.ids[:, None] == det.ids[None, :]) & near
    earlier_twin = np.triu(same, k=1).any(axis=0)  # row j repeats an earlier row i < j
    return det if not earlier_twin.any() else det[np.flatnonzero(~earlier_twin)]
