"""`companion bench live`: a moving table fed frame by frame to the live tracker.

Two minis walk (one after the other), a hand sweeps over the table and covers minis for a while.
For every frame after warm-up it prints the tracker's cost next to a full-frame `detectMarkers`
(default parameters) on the same frame, and the recall of both over the minis the camera can see.
It also checks that no mini covered (by the hand, or a walker's card) is reported moved, and
scores positions. The sequence is rendered first; then each method runs over all of it in passes
of its own, taking turns (tracker, detectMarkers, tracker, ...), and each method's figure is its
median pass: the machine's speed drifts by 10% from one pass to the next, more than the
difference measured.

The plain way is `detectMarkers` on the frame as the camera gives it (BGR; OpenCV converts it to
grey inside), as the tracker gets it too. Its time on a frame converted to grey beforehand (the
conversion not counted) is printed beside it.

A method's cost is the processor time it takes (`time.process_time`: every thread of the process),
and the wall-clock time is printed beside it. They differ because OpenCV spreads one call over the
machine's cores: full-frame `detectMarkers` takes ~9 ms of processor time on this 2-core machine and
finishes in ~5 ms by taking both, while the tracker's small searches cannot be spread. On the live
camera the other cores are not idle (the block search process, the web server, the phones), so the
wall-clock ratio measures a borrowed core, not a cost.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import cv2
import numpy as np

from companion.synth.render import Renderer, marker_visible_fraction
from companion.synth.sequences import at_height, bench_table, scripted_scene, towards_middle
from companion.vision.markers import dictionary
from companion.vision.tracker import LiveTracker

WARMUP_FRAMES = 5
HELD_TOLERANCE_MM = 3.0


def _median_pass(passes: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """The pass whose mean processor time is the median of the passes' means."""
    return sorted(passes, key=lambda ms: float(np.mean([cpu for cpu, _ in ms])))[len(passes) // 2]


class _Clock:
    """One call's processor time (every thread of the process) and wall-clock time, in ms, from its
    start to its return. (OpenCV's worker threads spin a while after a call returns, waiting for the
    next: that is not counted, so `detectMarkers` is charged 7-8 ms of the 9 its calls take in a row.)"""

    def __enter__(self) -> "_Clock":
        self._cpu, self._wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *_) -> None:
        # (processor ms, wall ms): what the benches' cost lists hold
        self.ms = ((time.process_time() - self._cpu) * 1000, (time.perf_counter() - self._wall) * 1000)


def run(frames: int = 40, seed: int = 0, progress=None, passes: int = 3, height_px: int = 1080) -> dict:
    base = at_height(bench_table(seed), height_px)
    setup = base.setup()
    baseline = cv2.aruco.ArucoDetector(dictionary(setup.dictionary), cv2.aruco.DetectorParameters())
    renderer = Renderer()
    # Render the whole sequence first, then time each method over all frames in passes of its own,
    # so neither pays for the renderer having just flushed the CPU caches.
    scenes = [scripted_scene(base, f, frames) for f in range(frames)]
    images = []
    for f, scene in enumerate(scenes):
        images.append(renderer.render(scene))
        if progress:
            progress(f + 1, frames)
    grays = [cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) for image in images]
    tracker_passes, bgr_passes, gray_passes = [], [], []  # each frame's (processor ms, wall ms)
    states: list = []
    baseline_ids: list[set[int]] = []
    for _ in range(passes):
        tracker = LiveTracker(setup, blocks=False)  # marker tracking only: blocks are searched at their own pace
        pass_states, ms = [], []
        for f, image in enumerate(images):
            with _Clock() as clock:
                pass_states.append(tracker.update(image, f, time.time()))
            ms.append(clock.ms)
        tracker_passes.append(ms[WARMUP_FRAMES:])
        states = states or pass_states
        ms, ids_seen = [], []
        for image in images:
            with _Clock() as clock:
                _, ids, _ = baseline.detectMarkers(image)
            ms.append(clock.ms)
            ids_seen.append(set() if ids is None else {int(i) for i in np.asarray(ids).ravel()})
        bgr_passes.append(ms[WARMUP_FRAMES:])
        baseline_ids = baseline_ids or ids_seen
        gray_passes.append(_detect_ms(baseline, grays)[WARMUP_FRAMES:])
    tracker_ms, tracker_wall_ms = np.array(_median_pass(tracker_passes)).T
    baseline_ms, baseline_wall_ms = np.array(_median_pass(bgr_passes)).T
    gray_ms = np.array(_median_pass(gray_passes))[:, 0]
    visible_total = tracker_found = baseline_found = 0
    covered_checks = moved_by_hand = 0
    xy_errors: list[float] = []
    z_errors: list[float] = []
    start_positions = {m.id: m for m in base.minis}
    for f in range(WARMUP_FRAMES, frames):
        scene, state, base_ids = scenes[f], states[f], baseline_ids[f]
        for m in scene.minis:
            # (a walker's card may pass over a still mini's marker, with no hand in the frame)
            visible = marker_visible_fraction(scene, m) == 1.0
            reported = state.mini(m.id)
            if visible:
                visible_total += 1
                baseline_found += m.id in base_ids
                if reported is not None and reported.status == "seen":
                    tracker_found += 1
                    xy_errors.append(math.hypot(reported.x_mm - m.x_mm, reported.y_mm - m.y_mm))
                    z_errors.append(abs(reported.z_mm - m.z_mm))
            else:
                still = math.hypot(m.x_mm - start_positions[m.id].x_mm, m.y_mm - start_positions[m.id].y_mm) < 1e-6
                if still and reported is not None:
                    covered_checks += 1
                    if math.hypot(reported.x_mm - m.x_mm, reported.y_mm - m.y_mm) > HELD_TOLERANCE_MM:
                        moved_by_hand += 1
    t_mean, b_mean = float(np.mean(tracker_ms)), float(np.mean(baseline_ms))
    return {
        "frames": frames, "steady_frames": len(tracker_ms), "seed": seed,
        "resolution": f"{base.camera.width_px}x{base.camera.height_px}",
        "tracker_ms_mean": round(t_mean, 2), "tracker_ms_median": round(float(np.median(tracker_ms)), 2),
        "tracker_ms_p95": round(float(np.percentile(tracker_ms, 95)), 2),
        "tracker_worst_frame_ms": round(float(np.max(tracker_wall_ms)), 1),
        "detect_markers_worst_frame_ms": round(float(np.max(baseline_wall_ms)), 1),
        "detect_markers_ms_mean": round(b_mean, 2), "detect_markers_ms_median": round(float(np.median(baseline_ms)), 2),
        "cost_ratio": round(t_mean / b_mean, 3),
        "tracker_wall_ms_mean": round(float(np.mean(tracker_wall_ms)), 2),
        "detect_markers_wall_ms_mean": round(float(np.mean(baseline_wall_ms)), 2),
        "wall_ratio": round(float(np.mean(tracker_wall_ms)) / float(np.mean(baseline_wall_ms)), 3),
        "opencv_threads": cv2.getNumThreads(),
        "detect_markers_grey_ms_mean": round(float(np.mean(gray_ms)), 2),
        "cost_ratio_vs_grey": round(t_mean / float(np.mean(gray_ms)), 3), "passes": passes,
        "tracker_recall": round(tracker_found / visible_total, 4) if visible_total else None,
        "detect_markers_recall": round(baseline_found / visible_total, 4) if visible_total else None,
        "covered_checks": covered_checks, "covered_reported_moved": moved_by_hand,
        "tracker_xy_mm_p95": round(float(np.percentile(xy_errors, 95)), 3) if xy_errors else None,
        "tracker_z_mm_p95": round(float(np.percentile(z_errors, 95)), 3) if z_errors else None,
        "full_frame_searches": tracker.stats.full_frames,
    }


def format_table(r: dict) -> str:
    return "\n".join([
        f"bench live: {r['frames']} frames ({r['resolution']}, {r['steady_frames']} after warm-up, seed {r['seed']})",
        f"{'':<26}{'processor ms/frame':>20}{'median':>10}{'wall ms/frame':>15}{'recall':>10}",
        f"{'live tracker':<26}{r['tracker_ms_mean']:>20}{r['tracker_ms_median']:>10}{r['tracker_wall_ms_mean']:>15}"
        f"{r['tracker_recall']:>10}",
        f"{'full-frame detectMarkers':<26}{r['detect_markers_ms_mean']:>20}{r['detect_markers_ms_median']:>10}"
        f"{r['detect_markers_wall_ms_mean']:>15}{r['detect_markers_recall']:>10}",
        f"{'  on a grey frame':<26}{r['detect_markers_grey_ms_mean']:>20}   (conversion to grey not counted)",
        f"cost ratio tracker / detectMarkers: {r['cost_ratio']} (target <= 0.333; processor time); against the grey "
        f"frame {r['cost_ratio_vs_grey']}; median of {r['passes']} alternating passes",
        f"wall-clock ratio {r['wall_ratio']} (OpenCV on {r['opencv_threads']} threads: detectMarkers spreads over the cores)",
        f"worst frame on the clock: tracker {r['tracker_worst_frame_ms']} ms, detectMarkers "
        f"{r['detect_markers_worst_frame_ms']} ms (one frame at 30 frames/s: 33.3 ms)",
        f"covered (the hand, a walker's card): {r['covered_checks']} mini-frames, reported moved: "
        f"{r['covered_reported_moved']}",
        f"tracker xy p95 {r['tracker_xy_mm_p95']} mm, z p95 {r['tracker_z_mm_p95']} mm; "
        f"full-frame searches: {r['full_frame_searches']}",
    ])


def _worst_wall_ms(costs: list[tuple[float, float]]) -> float:
    """The longest frame on the clock (what the live view waits for), of (processor, wall) ms pairs."""
    return round(max(wall for _, wall in costs), 1)


def _against_plain(tracker_ms: list[tuple[float, float]], images: list[np.ndarray], dictionary_name: str) -> dict:
    """The tracker's mean processor time on these frames (`tracker_ms`: (processor, wall) ms each)
    next to full-frame `detectMarkers`' (default parameters, the frame as the camera gives it)
    timed on the same frames afterwards: what a sequence's row adds to its own figures (rough: the
    tracker's frames were timed between renders)."""
    detector = cv2.aruco.ArucoDetector(dictionary(dictionary_name), cv2.aruco.DetectorParameters())
    t_mean = float(np.mean([cpu for cpu, _ in tracker_ms]))
    p_mean = float(np.mean([cpu for cpu, _ in _detect_ms(detector, images)]))
    return {"tracker_ms_mean": round(t_mean, 2), "detect_markers_ms_mean": round(p_mean, 2),
            "cost_ratio": round(t_mean / p_mean, 3)}


def _detect_ms(detector: cv2.aruco.ArucoDetector, images: list[np.ndarray]) -> list[tuple[float, float]]:
    """`detectMarkers`' cost on each frame: (processor ms, wall ms)."""
    ms = []
    for image in images:
        with _Clock() as clock:
            detector.detectMarkers(image)
        ms.append(clock.ms)
    return ms


PUSH_SPEEDS_MM = (24.0, 40.0, 60.0)  # mm a frame: at 10 frames/s an ordinary 0.24-0.6 m/s push
PUSH_FRAMES = 8
RIGHT_MM = 3.0  # a reported position this close to the truth is the right answer


def push_run(seed: int = 0, speeds: tuple[float, ...] = PUSH_SPEEDS_MM, progress=None) -> dict:
    """A mini pushed across the table in a straight line, `PUSH_FRAMES` frames at each speed, then
    left standing. For each frame of the push: is the reported position within 3 mm of the truth
    (and seen, not held)? Reported: the frames the tracker lagged during the push, the frames
    after the push until it was right, the worst error meanwhile, and the worst frame's cost."""
    base = bench_table(seed)
    setup = base.setup()
    renderer = Renderer()
    pushed = base.minis[0]
    rows = []
    for k, speed in enumerate(speeds):
        still = 6
        direction = math.radians(pushed.heading_deg)
        reach = speed * PUSH_FRAMES
        # Push towards the table's middle so the mini stays on the table at every speed.
        direction = towards_middle(base, pushed) if reach > 200 else direction
        scenes, truth = [], []
        for f in range(still + PUSH_FRAMES + 6):
            steps = min(max(f - still, 0), PUSH_FRAMES)
            x = pushed.x_mm + math.cos(direction) * speed * steps
            y = pushed.y_mm + math.sin(direction) * speed * steps
            minis = (replace(pushed, x_mm=x, y_mm=y),) + base.minis[1:]
            scenes.append(replace(base, minis=minis, noise_seed=f))
            truth.append((x, y))
        tracker = LiveTracker(setup, blocks=False)
        errors, costs, images = [], [], []
        for f, scene in enumerate(scenes):
            image = renderer.render(scene)
            images.append(image)
            with _Clock() as clock:
                state = tracker.update(image, f, time.time())
            costs.append(clock.ms)
            m = state.mini(pushed.id)
            ok = m is not None and m.status == "seen"
            errors.append(math.hypot(m.x_mm - truth[f][0], m.y_mm - truth[f][1]) if m is not None else math.inf)
            errors[-1] = errors[-1] if ok else max(errors[-1], RIGHT_MM + 1e-9)  # held is never right while it moves
            if progress:
                progress(k * len(scenes) + f + 1, len(speeds) * len(scenes))
        during = errors[still + 1:still + PUSH_FRAMES + 1]
        after = errors[still + PUSH_FRAMES + 1:]
        settle = next((i for i, e in enumerate(after) if e <= RIGHT_MM), None)
        rows.append({"speed_mm_per_frame": speed, "push_frames": PUSH_FRAMES,
                     "lagging_frames": sum(e > RIGHT_MM for e in during),
                     "worst_error_mm": round(max(during), 1) if max(during) < math.inf else None,
                     "frames_to_right_after_stop": settle,
                     "worst_frame_ms": _worst_wall_ms(costs[still:]),
                     **_against_plain(costs[still:], images[still:], setup.dictionary)})
    return {"seed": seed, "mini": pushed.id, "marker_mm": pushed.marker_mm, "rows": rows}


RATIO_HEADER = f"{'ms/frame':>10}{'detectMarkers ms':>18}{'ratio':>7}"  # a sequence row's cost, next to the plain way's


def _ratio_cell(row: dict) -> str:
    return f"{row['tracker_ms_mean']:>10}{row['detect_markers_ms_mean']:>18}{row['cost_ratio']:>7}"


def format_push(r: dict) -> str:
    lines = [f"bench live --sequence push: mini {r['mini']} ({r['marker_mm']:g} mm marker) pushed {PUSH_FRAMES} frames "
             f"at each speed, then left (seed {r['seed']}); right = within {RIGHT_MM:g} mm and seen",
             f"{'mm/frame':>9}{'lagging frames':>16}{'worst error mm':>16}{'to right after stop':>21}{'worst frame ms':>16}"
             f"{'lag at 10 fps':>15}{'at 30 fps':>11}{RATIO_HEADER}"]
    for row in r["rows"]:
        lag = row["lagging_frames"]
        lines.append(f"{row['speed_mm_per_frame']:>9g}{lag:>16}{str(row['worst_error_mm']):>16}"
                     f"{str(row['frames_to_right_after_stop']) + ' frames':>21}{row['worst_frame_ms']:>16}"
                     f"{lag / 10:>13.1f} s{lag / 30:>9.2f} s{_ratio_cell(row)}")
    return "\n".join(lines)


EXPOSURE_STEPS = (0.7, 1.3)  # the whole frame's brightness after auto-exposure steps (or a lamp switched on)


def exposure_run(seed: int = 0, steps: tuple[float, ...] = EXPOSURE_STEPS, progress=None) -> dict:
    """The table standing still while the camera's exposure steps (the whole frame x0.7 or x1.3, as
    an auto-exposure or a lamp does). Reported per step: frames until every mini is seen again
    where it stands (within 3 mm), how many were held meanwhile, and the worst frame's cost."""
    base = bench_table(seed)
    setup = base.setup()
    image = Renderer().render(base)
    rows = []
    before, after = 6, 12
    for k, gain in enumerate(steps):
        tracker = LiveTracker(setup, blocks=False)
        stepped = np.clip(image.astype(np.float32) * gain, 0, 255).astype(np.uint8)
        right_at, held_max, costs = None, 0, []
        frames = [image if f < before else stepped for f in range(before + after)]
        for f, frame in enumerate(frames):
            with _Clock() as clock:
                state = tracker.update(frame, f, time.time())
            costs.append(clock.ms)
            if f < before:
                continue
            wrong = [m for m in base.minis if (s := state.mini(m.id)) is None or s.status != "seen"
                     or s.last_seen_frame != f or math.hypot(s.x_mm - m.x_mm, s.y_mm - m.y_mm) > RIGHT_MM]
            held_max = max(held_max, len(wrong))
            if not wrong and right_at is None:
                right_at = f - before
            if progress:
                progress(k * (before + after) + f + 1, len(steps) * (before + after))
        rows.append({"gain": gain, "frames_to_all_seen": right_at, "most_not_seen": held_max,
                     "minis": len(base.minis), "worst_frame_ms": _worst_wall_ms(costs[before:]),
                     **_against_plain(costs[before:], frames[before:], setup.dictionary)})
    return {"seed": seed, "rows": rows}


def format_exposure(r: dict) -> str:
    lines = [f"bench live --sequence exposure: the whole frame's brightness steps, the table still (seed {r['seed']})",
             f"{'gain':>6}{'frames to all seen':>20}{'most not seen':>15}{'at 10 fps':>11}{'at 30 fps':>11}{'worst frame ms':>16}"
             f"{RATIO_HEADER}"]
    for row in r["rows"]:
        n = row["frames_to_all_seen"]
        lines.append(f"{row['gain']:>6g}{str(n):>20}{str(row['most_not_seen']) + '/' + str(row['minis']):>15}"
                     f"{(f'{n / 10:.1f} s' if n is not None else '-'):>11}{(f'{n / 30:.2f} s' if n is not None else '-'):>11}"
                     f"{row['worst_frame_ms']:>16}{_ratio_cell(row)}")
    return "\n".join(lines)


LIFT_DISTANCES_MM = (60.0, 150.0, 400.0)  # a mini picked up and put down again this far away
LIFT_S = 0.6  # in the air (off the camera's view of the table) this long
PLACED_S = 1.5  # then left standing at its new place this long


def lift_run(seed: int = 0, fps: float = 10.0, distances: tuple[float, ...] = LIFT_DISTANCES_MM,
             progress=None) -> dict:
    """A mini lifted off the table and put down elsewhere, at `fps` (frame times, not real time).
    Reported per distance: seconds after it is put down until it is reported seen within 3 mm of
    its new place, what was reported while it was in the air (frames held at its old place, frames
    not listed), and the worst frame's cost."""
    base = bench_table(seed)
    setup = base.setup()
    renderer = Renderer()
    lifted = base.minis[0]
    still, air, placed = 6, max(1, round(LIFT_S * fps)), max(2, round(PLACED_S * fps))
    to_mid = towards_middle(base, lifted)
    rows = []
    for k, distance in enumerate(distances):
        new = replace(lifted, x_mm=lifted.x_mm + distance * math.cos(to_mid), y_mm=lifted.y_mm + distance * math.sin(to_mid))
        tracker = LiveTracker(setup, blocks=False)
        right_at, held, unlisted, costs, images = None, 0, 0, [], []
        for f in range(still + air + placed):
            minis = base.minis if f < still else (() if f < still + air else (new,)) + base.minis[1:]
            image = renderer.render(replace(base, minis=minis, noise_seed=f))
            images.append(image)
            with _Clock() as clock:
                state = tracker.update(image, f, f / fps)
            costs.append(clock.ms)
            m = state.mini(lifted.id)
            if still <= f < still + air:
                held += m is not None and m.status == "held"
                unlisted += m is None
            elif f >= still + air and right_at is None and m is not None and m.status == "seen" \
                    and m.last_seen_frame == f and math.hypot(m.x_mm - new.x_mm, m.y_mm - new.y_mm) <= RIGHT_MM:
                right_at = (f - still - air) / fps
            if progress:
                progress(k * (still + air + placed) + f + 1, len(distances) * (still + air + placed))
        rows.append({"distance_mm": distance, "right_after_s": right_at, "air_frames": air,
                     "held_in_air": held, "unlisted_in_air": unlisted, "worst_frame_ms": _worst_wall_ms(costs[still:]),
                     **_against_plain(costs[still:], images[still:], setup.dictionary)})
    return {"seed": seed, "fps": fps, "mini": lifted.id, "marker_mm": lifted.marker_mm, "rows": rows}


def format_lift(r: dict) -> str:
    lines = [f"bench live --sequence lift ({r['fps']:g} frames/s, seed {r['seed']}): mini {r['mini']} "
             f"({r['marker_mm']:.1f} mm marker) lifted for {LIFT_S:g} s and put down further on; right = seen "
             f"within {RIGHT_MM:g} mm of its new place",
             f"{'distance mm':>12}{'right after':>13}{'in the air: held':>18}{'not listed':>12}{'worst frame ms':>16}"
             f"{RATIO_HEADER}"]
    for row in r["rows"]:
        right = f"{row['right_after_s']:.2f} s" if row["right_after_s"] is not None else "never"
        lines.append(f"{row['distance_mm']:>12g}{right:>13}{str(row['held_in_air']) + '/' + str(row['air_frames']):>18}"
                     f"{row['unlisted_in_air']:>12}{row['worst_frame_ms']:>16}{_ratio_cell(row)}")
    return "\n".join(lines)


NOISE_FRAMES = 4  # sensor noise drawn afresh for this many frames, then again in turn (rendering is slow)
BRICK_CLEAR_MM = 60.0  # the brick put down keeps this far from the bricks and minis already there


def bricks_run(seed: int = 0, fps: float = 30.0, progress=None, renderer: str = "plain") -> dict:
    """A brick put down and later taken away, the camera at `fps` in real time, blocks searched on
    their own thread as the live camera does; on a bare table (`plain`: the project's own camera) or
    on a table with a few loose bricks under lamps that cast shadows (`raycast`: camera and room
    randomised, where a block search takes longest). Reported: seconds until the brick is published
    and until it is dropped, the worst frame's cost on the camera thread (against one frame
    period), and the block searches' time."""
    from companion.synth.scene import SynthBrick

    lit = renderer == "raycast"
    base = bench_table(seed, n_bricks=6 if lit else 0, randomise=lit)
    setup = base.setup()
    render = Renderer()
    spot = _clear_spot(base)
    brick = SynthBrick(spot[0], spot[1], 30.0, 4, 2, 0.0, 19.2, "red")
    states = [[render.render(replace(scene, noise_seed=n)) for n in range(NOISE_FRAMES)]
              for scene in (base, replace(base, bricks=base.bricks + (brick,)))]
    put_at, taken_at, frames = int(fps * 1.0), int(fps * 3.0), int(fps * 5.0)

    def frame(f: int) -> np.ndarray:
        return states[int(put_at <= f < taken_at)][f % NOISE_FRAMES]

    def near_spot(state) -> bool:
        return any(math.dist(np.mean(b.footprint_mm, axis=0), spot) <= SAME_SPOT_MM for b in state.blocks)

    tracker = LiveTracker(setup, blocks_in_background=True)
    published = dropped = None
    costs = []
    start = time.perf_counter()
    try:
        for f in range(frames):
            due = start + f / fps
            time.sleep(max(0.0, due - time.perf_counter()))  # the camera's pace
            with _Clock() as clock:
                state = tracker.update(frame(f), f, f / fps)
            costs.append(clock.ms)
            if published is None and f >= put_at and near_spot(state):
                published = (f - put_at) / fps
            if published is not None and dropped is None and f >= taken_at and not near_spot(state):
                dropped = (f - taken_at) / fps
            if progress:
                progress(f + 1, frames)
    finally:
        tracker.close()
    searches_s = tracker.block_watch.searches_s
    return {"seed": seed, "fps": fps, "renderer": renderer, "publish_s": None if published is None else round(published, 2),
            "drop_s": None if dropped is None else round(dropped, 2),
            "worst_frame_ms": _worst_wall_ms(costs[int(fps):]), "frame_period_ms": round(1000 / fps, 1),
            "searches": tracker.block_watch.searches,
            "search_s_first": round(searches_s[0], 2) if searches_s else None,
            "search_s_median": round(float(np.median(searches_s[1:])), 2) if len(searches_s) > 1 else None,
            **_against_plain(costs[int(fps):], [frame(f) for f in range(int(fps), frames)], setup.dictionary)}


SAME_SPOT_MM = 10.0  # a block this near where the brick was put down is that brick


def _clear_spot(scene) -> tuple[float, float]:
    """Where to put the brick down: the first point from the table's middle outwards (a grid 40 mm
    apart, inside the table's middle three fifths) clear of every brick and mini on it."""
    w, d = scene.table.width_mm, scene.table.depth_mm
    grid = [(x, y) for x in np.arange(w * 0.2, w * 0.8, 40.0) for y in np.arange(d * 0.2, d * 0.8, 40.0)]
    grid.sort(key=lambda p: math.dist(p, (w * 0.5, d * 0.55)))
    taken = [(b.x_mm, b.y_mm) for b in scene.bricks] + [(m.x_mm, m.y_mm) for m in scene.minis]
    return next((float(x), float(y)) for x, y in grid if all(math.dist((x, y), t) > BRICK_CLEAR_MM for t in taken))


def format_bricks(r: dict) -> str:
    return (f"bench live --sequence bricks ({r['fps']:g} frames/s in real time, seed {r['seed']}, {r['renderer']} camera): a brick put down is "
            f"published after {r['publish_s']} s (target <= 0.5), taken away dropped after {r['drop_s']} s "
            f"(target <= 1); worst frame on the camera thread {r['worst_frame_ms']} ms (one frame: "
            f"{r['frame_period_ms']} ms); {r['searches']} block searches in their own process (the first "
            f"{r['search_s_first']} s, then a median {r['search_s_median']} s); camera thread "
            f"{r['tracker_ms_mean']} ms a frame against {r['detect_markers_ms_mean']} for detectMarkers (ratio {r['cost_ratio']})")
