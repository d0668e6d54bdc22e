"""The live tracker: frame after frame, the table state from what changed.

The markers come from `incremental` (only where something changed is looked at); the table is
registered from the anchors' corners every frame, and if that fails (or the camera moved) the whole
frame is searched. Per mini: the marker height is learned over the frames it stands still
(re-learned when it steps onto something; a mini in motion is placed from OpenCV's corners at its
learned height); a mini not seen is **held** at its last position, never moved or dropped; small
jitter is averaged, real moves are followed at once (hysteresis); what is where a held mini stood
is said every frame (a hand; the bare table: lifted; something else: knocked over?). Blocks are
searched at their own pace (`blockwatch`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from companion.setup_file import Setup
from companion.state import MiniState, TableState
from companion.vision.blocks import BlockFinder
from companion.vision.blockwatch import BlockWatch
from companion.vision.camera import TablePose
from companion.vision.exposure import PAPER_CLIPPED_WARNING, with_exposure_warning
from companion.vision.hands import LIVE_HANDS_WARNING
from companion.vision.incremental import REMEASURE_EVERY, IncrementalMarkers, TrackerStats
from companion.vision.locator import Locator
from companion.vision.markers import MarkerDetections, median_rows
from companion.vision.registration import Registration
from companion.vision.tableview import TableView, sample_pixels
from companion.vision.threads import on_this_thread

CAMERA_MOVED_MM = 3.0  # a registration whose camera moved more than this: everything moved, search all
LEARN_AFTER = 4  # still frames before a learned height replaces the single-frame one
LEARN_WINDOW = 40  # the learned height follows at most this many frames
RELEARN_MM = 4.0  # a height this far off the learned one, 3 times in a row, is a new level
# Where a held mini stood is covered (a hand) when the table around it has changed: most of
# RING_POINTS points on a ring RING_SIDES marker sides (or base radii) out, each by more than
# RING_CHANGE_LEVEL grey levels in a channel, since it was last seen there (sensor noise stays
# under ~10; another mini or a brick within the ring changes a few points, a hand most). Its
# marker's square is bare table when its median is the ring's within RING_CHANGE_LEVEL too.
RING_POINTS = 24
RING_SIDES = 1.5
RING_CHANGE_LEVEL = 40
RING_COVERED_SHARE = 0.5
RING_RETAKE_MM = 10.0  # a seen mini's ring is taken again once it is this far from where it was taken
ROUGH_MAX_RESIDUAL_PX = 0.8  # an unrefined sighting further than this from a flat square is ignored (raw corners: ~0.3)
JITTER_MM = 0.8  # moves under this are averaged; above it the mini has moved
JITTER_DEG = 1.5
_RING_ANGLES = np.linspace(0, 2 * math.pi, RING_POINTS, endpoint=False)
_RING_UNIT = np.stack([np.cos(_RING_ANGLES), np.sin(_RING_ANGLES)], axis=1)


@dataclass
class _Track:
    state: MiniState
    z_samples: list[float] = field(default_factory=list)
    off_level: int = 0  # consecutive measurements disagreeing with the learned height
    last_z: float | None = None  # unchanged corners give this same value again: no new information
    ring: tuple[tuple[float, float], np.ndarray] | None = None  # (where, the table around it then): `_with_places`
    spot: "_Spot | None" = None  # where it is looked at while held

    @property
    def learned_z(self) -> float | None:
        # plain Python: asked for every mini every frame, and np.mean costs ~6 us on a short list
        return sum(self.z_samples) / len(self.z_samples) if len(self.z_samples) >= LEARN_AFTER else None


@dataclass(frozen=True)
class _Spot:
    """Where a held mini is looked at on one pose: the pixels of the ring around its base and its
    marker's square. A held mini stays put, so they are projected once, not every frame."""

    at_mm: tuple[float, float, float]
    pose: TablePose  # the one they were projected with (the same object while the camera is still)
    ring_x_px: np.ndarray  # (1, RING_POINTS) float32: remap's maps
    ring_y_px: np.ndarray
    square_px: tuple[int, int, int, int]  # x0, y0, x1, y1

    def ring(self, image: np.ndarray) -> np.ndarray:
        """The frame's colours (RING_POINTS, 3) on the ring (bilinear, as `TableView.sample`)."""
        return sample_pixels(image, self.ring_x_px, self.ring_y_px).reshape(RING_POINTS, -1)


class LiveTracker:
    def __init__(self, setup: Setup, remeasure_every: int = REMEASURE_EVERY, blocks: bool = True,
                 blocks_in_background: bool = False) -> None:
        """`blocks_in_background`: block searches run on their own thread, so no frame waits for one
        (the live camera); else each runs within the `update` that starts it (reproducible runs)."""
        self.setup = setup
        self.locator = Locator(setup, blocks=False)
        self._markers = IncrementalMarkers(setup, remeasure_every)
        # Blocks at their own pace (a search costs a dozen tracked frames; they rarely move).
        self.block_watch = BlockWatch(BlockFinder(setup, remember=True), background=blocks_in_background) if blocks else None
        self._tracks: dict[int, _Track] = {}
        self._last_state: TableState | None = None
        self._exposure_warnings: tuple[str, ...] = ()  # as of the last block search
        self._last_key: bytes = b""
        self._registration: Registration | None = None  # of the last frame

    @property
    def stats(self) -> TrackerStats:
        return self._markers.stats

    # --- per frame -------------------------------------------------------------------------------
    def close(self) -> None:
        """Stops the block search thread, if any (waits for a search under way)."""
        if self.block_watch is not None:
            self.block_watch.close()

    def update(self, image: np.ndarray, frame: int, timestamp: float) -> TableState:
        camera, _ = self.locator.camera(image.shape[1], image.shape[0])
        with on_this_thread():  # small calls (`threads`); a whole-frame search takes the pool back
            state, key = self._markers_state(image, camera, frame, timestamp)
        state = self._last_state = self._with_blocks(state, image, camera, frame)
        self._last_key = key
        return state

    def _markers_state(self, image: np.ndarray, camera, frame: int, timestamp: float) -> tuple[TableState, bytes]:
        """This frame's state from its markers (last frame's blocks), and its markers' key."""
        detections, gray, whole = self._markers.detect(image, camera, frame)
        key = detections.ids.tobytes() + detections.corners_norm.tobytes()
        if self._last_state is not None and key == self._last_key and self._last_state.registered:
            # Nothing moved: same corners give the same answer; only the clock advances.
            self._markers.mark_seen(detections, frame)
            state = replace(self._last_state, frame=frame, timestamp=timestamp,
                            minis=tuple(m.seen_at(frame, timestamp) if m.status == "seen" else m
                                        for m in self._last_state.minis))
            return self._with_places(state, image, camera), key  # a hand may come or go over a held mini
        analysis = self.locator.analyse(gray, frame, timestamp, detections=detections,
                                        known_z_mm=self._known_heights(detections))
        if not whole and (not analysis.registration.registered or self._camera_moved(analysis.registration)):
            detections, gray = self._markers.detect_whole(image, camera)
            analysis = self.locator.analyse(gray, frame, timestamp, detections=detections,
                                            known_z_mm=self._known_heights(detections))
        self._markers.remember(detections, gray, frame)
        self._registration = analysis.registration
        if not analysis.registration.registered:
            # Never move anything without a pose from this frame: everyone known is held.
            held = tuple(replace(t.state, status="held") for t in self._tracks.values())
            state = replace(analysis.state, minis=tuple(sorted(held, key=lambda m: m.id)))
        else:
            precise = {int(i) for i, ok in zip(detections.ids, detections.refined) if ok}
            state = replace(analysis.state, minis=self._follow(analysis, frame, precise))
        return self._with_places(state, image, camera), key

    def _with_places(self, state: TableState, image: np.ndarray, camera) -> TableState:
        """Each held mini says what is where it stood now (`held_place`): "hand" when the table in
        a ring around its base, as it looked when the mini was last seen there, has mostly changed
        (something large covers the place); else "table" when its marker's square now shows the
        table's colour (the ring's: lifted away), or "other" (something lies there: knocked over?)."""
        pose = self._registration.pose if self._registration is not None else None
        if pose is None or image.ndim != 3:
            return state
        if all(m.status == "seen" and not m.held_place and (t := self._tracks.get(m.id)) is not None
               and t.ring is not None and _near(t.ring[0], m) for m in state.minis):
            return state  # everyone seen near where its ring was taken: the usual frame
        view = TableView(camera, pose)
        minis = []
        for m in state.minis:
            track = self._tracks.get(m.id)
            place = ""
            if track is not None and m.status == "seen":
                if track.ring is None or not _near(track.ring[0], m):
                    track.ring = ((m.x_mm, m.y_mm), self._ring(m, image, view))  # (rarely: it moved)
            elif track is not None and m.status == "held" and track.ring is not None:
                place = self._place_now(m, track, image, view)
            minis.append(m if m.held_place == place else replace(m, held_place=place))
        return replace(state, minis=tuple(minis))

    def _place_now(self, mini: MiniState, track: _Track, image: np.ndarray, view: TableView) -> str:
        spot = track.spot
        if spot is None or spot.pose is not view.pose or spot.at_mm != (mini.x_mm, mini.y_mm, mini.z_mm):
            spot = track.spot = self._spot(mini, view, image.shape)
        ring_now = spot.ring(image)
        assert track.ring is not None
        changed = np.abs(ring_now - track.ring[1]).max(axis=1) > RING_CHANGE_LEVEL
        if np.mean(changed) > RING_COVERED_SHARE:
            return "hand"
        x0, y0, x1, y1 = spot.square_px
        square = image[y0:y1, x0:x1].reshape(-1, 3)
        if not len(square):
            return ""
        # (medians by a partition: np.median's first call cost the frame a hand first covered a mini 7 ms)
        table = np.abs(median_rows(square.T) - median_rows(ring_now.T)).max() <= RING_CHANGE_LEVEL
        return "table" if table else "other"

    def _spot(self, mini: MiniState, view: TableView, shape: tuple[int, ...]) -> _Spot:
        ring_px = view.to_pixels(self._ring_points(mini)).astype(np.float32)
        spec = self.setup.mini(mini.id)
        half = (spec.marker_mm if spec else 20.0) / 2
        corners = view.pose.project(view.camera, np.array([[mini.x_mm + dx, mini.y_mm + dy, mini.z_mm]
                                                           for dx in (-half, half) for dy in (-half, half)]))
        h, w = shape[:2]
        x0, y0 = np.clip(np.floor(corners.min(axis=0)), 0, (w, h)).astype(int)
        x1, y1 = np.clip(np.ceil(corners.max(axis=0)), 0, (w, h)).astype(int)
        return _Spot((mini.x_mm, mini.y_mm, mini.z_mm), view.pose, np.ascontiguousarray(ring_px[None, :, 0]),
                     np.ascontiguousarray(ring_px[None, :, 1]), (int(x0), int(y0), int(x1), int(y1)))

    def _ring(self, mini: MiniState, image: np.ndarray, view: TableView) -> np.ndarray:
        """The frame's colours (RING_POINTS, 3) on the table in a ring around a mini's base."""
        return view.sample(image, self._ring_points(mini))

    def _ring_points(self, mini: MiniState) -> np.ndarray:
        """(RING_POINTS, 2) mm: the ring RING_SIDES marker sides (or base radii) around its base."""
        spec = self.setup.mini(mini.id)
        radius = RING_SIDES * max(spec.base_mm / 2 if spec else 0.0, spec.marker_mm if spec else 25.0)
        return np.array([mini.x_mm, mini.y_mm]) + radius * _RING_UNIT

    def _with_blocks(self, state: TableState, image: np.ndarray, camera, frame: int) -> TableState:
        """The state with the blocks that stood still (searched when due, in colour frames)."""
        watch = self.block_watch
        if watch is None or image.ndim != 3:
            return state
        watch.look(image, state.timestamp)
        if state.registered and self._registration is not None and self._registration.pose is not None \
                and watch.due(state.timestamp, self._markers.settled):
            watch.start(image, camera, self._registration.pose, state.minis + state.objects, state.timestamp)
            self._markers.settled = False
            # The exposure is judged when blocks are looked for: their colours are what it spoils.
            self._exposure_warnings = with_exposure_warning((), image, TableView(camera, self._registration.pose),
                                                            self.setup)
        # (A frame where nothing moved carries the last state's warnings: the searches' own are set anew.)
        warnings = (tuple(w for w in state.warnings if w not in (PAPER_CLIPPED_WARNING, LIVE_HANDS_WARNING))
                    + self._exposure_warnings + ((LIVE_HANDS_WARNING,) if watch.hands_seen else ()))
        return replace(state, blocks=watch.states(), blocks_seen=watch.seen, warnings=warnings)

    def _camera_moved(self, registration: Registration) -> bool:
        if self._registration is None or self._registration.pose is None or registration.pose is None:
            return False
        shift = np.linalg.norm(registration.pose.camera_centre_mm - self._registration.pose.camera_centre_mm)
        return bool(shift > CAMERA_MOVED_MM)

    def _known_heights(self, detections: MarkerDetections) -> dict[int, float]:
        """Learned heights; and for a marker seen only roughly (in motion), its last height: rough
        corners give a fair centre but no height."""
        known = {i: z for i, t in self._tracks.items() if (z := t.learned_z) is not None}
        for marker_id, refined in zip(detections.ids, detections.refined):
            if not refined and int(marker_id) not in known and int(marker_id) in self._tracks:
                known[int(marker_id)] = self._tracks[int(marker_id)].state.z_mm
        return known

    # --- minis -----------------------------------------------------------------------------------
    def _follow(self, analysis, frame: int, precise: set[int]) -> tuple[MiniState, ...]:
        out: dict[int, MiniState] = {}
        for mini in analysis.state.minis:
            measured_z = analysis.poses[mini.id].z_mm
            track = self._tracks.get(mini.id)
            if mini.id not in precise and analysis.poses[mini.id].fit_residual_px > ROUGH_MAX_RESIDUAL_PX \
                    and track is not None:
                continue  # a rough sighting that is not a clean square (half under a hand): not evidence of a move
            if track is None:
                track = self._tracks[mini.id] = _Track(mini, [measured_z] if mini.id in precise else [])
                out[mini.id] = mini
                continue
            if mini.id in precise and measured_z != track.last_z:
                _learn_height(track, measured_z)
                track.last_z = measured_z
            track.state = _steady(track.state, mini)
            out[mini.id] = track.state
        for marker_id, track in self._tracks.items():
            if marker_id not in out:
                if track.state.status == "seen":
                    track.state = replace(track.state, status="held")
                out[marker_id] = track.state
        return tuple(out[i] for i in sorted(out))


def _near(where: tuple[float, float], mini: MiniState) -> bool:
    """Within RING_RETAKE_MM of where a mini's ring was taken (a walker's is not taken every frame)."""
    return abs(where[0] - mini.x_mm) < RING_RETAKE_MM and abs(where[1] - mini.y_mm) < RING_RETAKE_MM


def _learn_height(track: _Track, measured_z: float) -> None:
    learned = track.learned_z
    if learned is not None and abs(measured_z - learned) > RELEARN_MM:
        track.off_level += 1
        if track.off_level >= 3:  # it stepped onto (or off) something: learn the new level
            track.z_samples = [measured_z]
            track.off_level = 0
        return
    track.off_level = 0
    track.z_samples = (track.z_samples + [measured_z])[-LEARN_WINDOW:]


def _steady(previous: MiniState, new: MiniState) -> MiniState:
    """Average small jitter; follow a real move at once."""
    moved = math.hypot(new.x_mm - previous.x_mm, new.y_mm - previous.y_mm)
    turned = abs((new.heading_deg - previous.heading_deg + 180) % 360 - 180)
    if moved > JITTER_MM or turned > JITTER_DEG or previous.status != "seen":
        return new
    if moved < 0.005 and turned < 0.005:
        return previous.seen_at(new.last_seen_frame, new.last_seen_s)  # settled: averaging would change nothing visible
    a = 0.3
    heading = (previous.heading_deg + a * ((new.heading_deg - previous.heading_deg + 180) % 360 - 180)) % 360
    return replace(new, x_mm=previous.x_mm + a * (new.x_mm - previous.x_mm),
                   y_mm=previous.y_mm + a * (new.y_mm - previous.y_mm), heading_deg=heading)
