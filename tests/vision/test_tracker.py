"""The live tracker on rendered sequences: follows walkers, holds what a hand covers, re-registers."""

import math
from dataclasses import replace

import numpy as np
import pytest

from companion.synth.sequences import scripted_scene
from companion.synth.render import Renderer, marker_visible_fraction
from companion.synth.scene import look_at_pose, random_scene
from companion.vision.tracker import LiveTracker

FRAMES = 12
pytestmark = pytest.mark.slow  # renders a 12-frame sequence


@pytest.fixture(scope="module")
def sequence():
    base = random_scene(77, "standard", n_minis=8, n_bricks=4)
    renderer = Renderer()
    scenes = [scripted_scene(base, f, FRAMES) for f in range(FRAMES)]
    return base, scenes, [renderer.render(s) for s in scenes]


@pytest.fixture(scope="module")
def tracked(sequence):
    base, scenes, images = sequence
    tracker = LiveTracker(base.setup())
    return [tracker.update(img, f, float(f)) for f, img in enumerate(images)]


def test_every_visible_mini_is_followed_to_the_millimetre(sequence, tracked):
    _, scenes, _ = sequence
    for scene, state in zip(scenes, tracked):
        assert state.registered
        for m in scene.minis:
            reported = state.mini(m.id)
            assert reported is not None, f"frame {state.frame}: mini {m.id} lost"
            if marker_visible_fraction(scene, m) == 1.0 and reported.status == "seen":
                assert math.hypot(reported.x_mm - m.x_mm, reported.y_mm - m.y_mm) < 2.0


def test_a_mini_under_the_hand_is_held_where_it_was(sequence, tracked):
    base, scenes, _ = sequence
    covered = 0
    for scene, state in zip(scenes, tracked):
        for m in scene.minis:
            if marker_visible_fraction(scene, m) < 1.0 and m in base.minis:  # covered and standing still
                reported = state.mini(m.id)
                covered += 1
                assert math.hypot(reported.x_mm - m.x_mm, reported.y_mm - m.y_mm) < 2.0
    assert covered > 0, "the script's hand should cover a standing mini"
    held = [m for s in tracked for m in s.minis if m.status == "held"]
    assert held, "a covered mini is reported held"


def test_heights_are_learned_over_still_frames():
    scene = random_scene(78, "standard", n_minis=2, n_bricks=0)
    renderer = Renderer()
    tracker = LiveTracker(scene.setup(roster_heights=False), remeasure_every=2)
    for f in range(20):  # a still table: idle frames re-measure one mini at a time
        state = tracker.update(renderer.render(replace(scene, noise_seed=f)), f, float(f))
    truth = {m.id: m.z_mm for m in scene.minis}
    assert all(m.height_source == "learned" for m in state.minis)
    assert all(abs(m.z_mm - truth[m.id]) < 2.0 for m in state.minis)


def test_a_bumped_camera_is_registered_again_on_the_next_frame(sequence):
    base, scenes, images = sequence
    tracker = LiveTracker(base.setup())
    for f in range(3):
        tracker.update(images[f], f, float(f))
    centre = base.pose.camera_centre_mm + np.array([35.0, -20.0, 10.0])
    bumped = replace(scenes[0], pose=look_at_pose(centre, np.array([620.0, 380.0, 0.0]), roll_deg=4.0), noise_seed=99)
    state = tracker.update(Renderer().render(bumped), 3, 3.0)
    assert state.registered
    for m in bumped.minis:
        reported = state.mini(m.id)
        assert reported.status == "seen"
        assert math.hypot(reported.x_mm - m.x_mm, reported.y_mm - m.y_mm) < 2.0


def test_a_frame_without_anchors_moves_nothing(sequence):
    base, _, images = sequence
    tracker = LiveTracker(base.setup())
    before = tracker.update(images[0], 0, 0.0)
    blank = np.full_like(images[0], 90)  # the camera sees a cloth thrown over the table
    after = tracker.update(blank, 1, 1.0)
    assert not after.registered and "not registered" in after.reason
    assert {m.id: (m.x_mm, m.y_mm) for m in after.minis} == {m.id: (m.x_mm, m.y_mm) for m in before.minis}
    assert all(m.status == "held" for m in after.minis)


def test_a_held_mini_says_what_is_where_it_stood_a_hand_the_bare_table_or_itself_lying():
    """A hand resting over a mini: held, `held_place` "hand" (it is not gone, however long the hand
    stays). The hand lifts it away: "table". Knocked over instead, lying with its marker turned
    away from the camera: "other". On a felt table and on wood (whose hue is skin's)."""
    from companion.synth.scene import SynthHand

    renderer = Renderer()
    for seed in (0, 3):
        base = random_scene(seed * 7919 + 11, "standard", n_minis=8, n_bricks=2)
        mini = base.minis[3]
        away = math.degrees(math.atan2(mini.y_mm - base.pose.camera_centre_mm[1], mini.x_mm - base.pose.camera_centre_mm[0]))
        lying = replace(mini, tilt_deg=90.0, tilt_towards_deg=away, z_mm=mini.base_mm / 2)
        hand = replace(base, hands=(SynthHand(mini.x_mm, mini.y_mm + 20, 110.0, 90.0),))
        gone = replace(base, minis=tuple(m for m in base.minis if m.id != mini.id))
        fallen = replace(base, minis=tuple(lying if m.id == mini.id else m for m in base.minis))
        for later, place in ((gone, "table"), (fallen, "other")):
            tracker = LiveTracker(base.setup(), blocks=False)
            for frame, scene in enumerate([base] * 3 + [hand] * 3 + [later] * 3):
                state = tracker.update(renderer.render(replace(scene, noise_seed=frame)), frame, float(frame))
                others = [m for m in state.minis if m.id != mini.id]
                assert all(m.status == "seen" and not m.held_place for m in others), (base.surface, frame)
                held = state.mini(mini.id)
                if scene is base:
                    assert held.status == "seen" and not held.held_place
                    continue
                expected = "hand" if scene is hand else place
                assert held.status == "held" and held.held_place == expected, (base.surface, frame, held.held_place)
                assert math.hypot(held.x_mm - mini.x_mm, held.y_mm - mini.y_mm) < 2.0


def test_a_mini_lifted_and_put_down_elsewhere_is_never_seen_at_its_old_place():
    # Between two frames a player moves a mini 300 mm (or the camera loop lagged): the old corners
    # must not be reused once the spot they came from has changed, even when it is quiet afterwards.
    scene = random_scene(79, "standard", n_minis=3, n_bricks=0)
    moved = scene.minis[0]
    far = replace(moved, x_mm=moved.x_mm + (300 if moved.x_mm < 600 else -300))
    later = replace(scene, minis=(far,) + scene.minis[1:])
    renderer = Renderer()
    before, after = renderer.render(scene), renderer.render(later)
    tracker = LiveTracker(scene.setup())
    tracker.update(before, 0, 0.0)
    for frame in range(1, 5):  # the same new table, frame after frame
        state = tracker.update(after, frame, float(frame))
        reported = state.mini(moved.id)
        old_gap = math.hypot(reported.x_mm - moved.x_mm, reported.y_mm - moved.y_mm)
        assert not (reported.status == "seen" and old_gap < 50), f"frame {frame}: seen at its old place"
    assert reported.status == "seen" and math.hypot(reported.x_mm - far.x_mm, reported.y_mm - far.y_mm) < 2.0


def test_a_marker_that_stops_where_it_was_last_refined_takes_that_measurement_again(monkeypatch):
    # Something passed over a mini (its marker's pixels blurred for a frame): it was re-found
    # roughly (OpenCV's corners, a lower confidence). Back to the pixels of its last refined
    # measurement and quiet, that measurement stands again: refined, and no new pattern fit.
    import cv2

    from companion.vision import markers

    scene = random_scene(80, "standard", n_minis=3, n_bricks=0)
    image = Renderer().render(scene)
    mini = scene.minis[0]
    camera, pose = scene.camera, scene.pose
    centre = pose.project(camera, np.array([[mini.x_mm, mini.y_mm, mini.z_mm]]))[0].round().astype(int)
    passed = image.copy()
    y0, y1, x0, x1 = centre[1] - 40, centre[1] + 40, centre[0] - 40, centre[0] + 40
    passed[y0:y1, x0:x1] = cv2.GaussianBlur(image[y0:y1, x0:x1], (0, 0), 0.8)
    tracker = LiveTracker(scene.setup(), remeasure_every=10**6)  # no round-robin re-measurement here
    first = tracker.update(image, 0, 0.0).mini(mini.id)
    rough = tracker.update(passed, 1, 1.0).mini(mini.id)
    assert rough.status == "seen" and rough.confidence < first.confidence  # re-found, roughly
    tracker.update(image, 2, 2.0)  # the pixels are back; the tracker sees them settle
    fits = []
    real_fit = markers.fit_pattern
    monkeypatch.setattr(markers, "fit_pattern", lambda *a, **k: fits.append(int(a[3])) or real_fit(*a, **k))
    again = [tracker.update(image, frame, float(frame)).mini(mini.id) for frame in (3, 4)]
    assert all(m.status == "seen" and m.confidence == first.confidence for m in again)
    assert again[0].x_mm == again[1].x_mm and mini.id not in fits
    assert math.hypot(again[1].x_mm - mini.x_mm, again[1].y_mm - mini.y_mm) < 1.0


def test_grey_frames_given_to_the_tracker_are_never_written_to():
    # The tracker reuses its grey buffer from frame to frame; a grey frame from the camera must not
    # become that buffer (the next frame's conversion would overwrite the caller's picture).
    import cv2

    scene = random_scene(79, "standard", n_minis=3, n_bricks=0)
    moved = scene.minis[0]
    later = replace(scene, minis=(replace(moved, x_mm=moved.x_mm + 40),) + scene.minis[1:])
    renderer = Renderer()
    first, second = (cv2.cvtColor(renderer.render(s), cv2.COLOR_BGR2GRAY) for s in (scene, later))
    first_as_given = first.copy()
    tracker = LiveTracker(scene.setup())
    tracker.update(first, 0, 0.0)
    tracker.update(second, 1, 1.0)
    assert np.array_equal(first, first_as_given)


def test_a_walker_at_720p_is_followed_through_its_rough_sightings():
    # At 720p a walking 23 mm marker is 14 px wide: OpenCV's corners (all a tracker takes of a
    # marker in motion) make it look 60 mm under the table, and it had been taken for a misread
    # and held at its start for most of its walk.
    from companion.synth.sequences import at_height, bench_table

    base = at_height(bench_table(0), 720)
    walker = base.minis[0]
    tracker = LiveTracker(base.setup(), blocks=False)
    renderer = Renderer()
    for f in range(4, 19):
        scene = scripted_scene(base, f, 40)
        state = tracker.update(renderer.render(scene), f, f / 30)
        truth = next(m for m in scene.minis if m.id == walker.id)
        reported = state.mini(walker.id)
        assert reported.status == "seen", f"frame {f}: the walker is {reported.status}"
        assert math.hypot(reported.x_mm - truth.x_mm, reported.y_mm - truth.y_mm) < 2.0, f"frame {f}"


def test_a_search_of_the_whole_frame_again_insists_on_the_tracked_markers_only(sequence, monkeypatch):
    """A roster lists the dead and the minis still in the box. Searched whole again (the camera
    moved, the registration was lost), the frame is looked at every way there is only for the
    markers being tracked: insisting on the absent ones took 190 ms of a 1080p frame, not 45."""
    import companion.vision.incremental as incremental
    from companion.bench.vision import with_absent

    base, _, images = sequence
    setup = with_absent(base.setup())
    asked: list[frozenset[int] | None] = []
    real = incremental.detect_listed

    def detect_listed(gray, camera, dictionary_name, listed, anchor_ids, rescued=None):
        asked.append(listed)
        return real(gray, camera, dictionary_name, listed, anchor_ids, rescued)

    monkeypatch.setattr(incremental, "detect_listed", detect_listed)
    tracker = LiveTracker(setup, blocks=False)
    for f, image in enumerate(images[:3]):
        tracker.update(image, f, float(f))
    camera, _ = tracker.locator.camera(images[3].shape[1], images[3].shape[0])
    again, _ = tracker._markers.detect_whole(images[3], camera)
    on_table = {m.id for m in base.minis} | setup.anchor_ids
    assert asked[0] == setup.listed_ids  # the first look: everyone the roster lists
    assert asked[-1] <= on_table and setup.anchor_ids <= asked[-1]
    assert {m.id for m in base.minis} <= set(again.ids.tolist())  # nobody on the table lost


def test_a_still_marker_whose_corners_failed_the_fit_is_refined_from_a_later_frames_own(monkeypatch):
    # The lit bench table of seed 2: on its first frame OpenCV's square of mini 47's small print
    # (a margin one module wide, a dark body beside it) is 2 px too wide and no pattern fit holds
    # from it, while every later frame's square fits. The tracker kept refitting the first
    # square, every frame (a full fit's cost each) and in vain; it now tries a later frame's own
    # square, and only every `remeasure_every` frames.
    from companion.synth.sequences import bench_table
    from companion.vision import incremental

    base = bench_table(2, n_bricks=6, randomise=True)
    renderer = Renderer()
    images = [renderer.render(replace(base, noise_seed=n)) for n in range(4)]
    fits = []
    real_refine = incremental.refine
    monkeypatch.setattr(incremental, "refine", lambda gray, camera, ids, *a, **k:
                        fits.extend(int(i) for i in ids) or real_refine(gray, camera, ids, *a, **k))
    tracker = LiveTracker(base.setup(), blocks=False)
    states = [tracker.update(images[f % 4], f, f / 30) for f in range(14)]
    truth = next(m for m in base.minis if m.id == 47)
    last = states[-1].mini(47)
    assert last.status == "seen" and math.hypot(last.x_mm - truth.x_mm, last.y_mm - truth.y_mm) < 1.0
    assert any(r.precise for r in tracker._markers._regions[47])
    assert fits.count(47) <= 3, fits


def test_a_small_walker_missed_as_it_stops_is_found_where_it_stopped():
    # Bench table 7 at 720p: walker 28 (an 18 mm marker, 11 px) stops on frame 22, a pixel and a
    # half on from where the quick look in motion last read it, and that look misses it there. Its
    # place then stays still, and a still place was never searched again: it was held at the spot
    # where it was last seen, as if lifted, for the rest of the sequence.
    from companion.synth.sequences import at_height, bench_table

    base = at_height(bench_table(7), 720)
    tracker = LiveTracker(base.setup(), blocks=False)
    renderer = Renderer()
    for f in range(14, 27):
        scene = scripted_scene(base, f, 40)
        state = tracker.update(renderer.render(scene), f, f / 30)
    truth = next(m for m in scene.minis if m.id == 28)
    reported = state.mini(28)
    assert reported.status == "seen", f"walker 28 is {reported.status} ({reported.held_place}) 4 frames after it stopped"
    assert math.hypot(reported.x_mm - truth.x_mm, reported.y_mm - truth.y_mm) < 1.0


def test_a_hand_over_the_table_is_told_while_the_block_searches_see_it():
    """A hand over the table in a live stream: the block searches read no block under it, and the
    state says so while the last search saw the hand; once it is gone, the next search's state no
    longer does."""
    from companion.synth.scene import SynthHand
    from companion.vision.hands import LIVE_HANDS_WARNING

    renderer = Renderer()
    base = random_scene(91, "standard", n_minis=6, n_bricks=3)
    hand = replace(base, hands=(SynthHand(base.table.width_mm / 2, base.table.depth_mm / 2, 120.0, 60.0),))
    tracker = LiveTracker(base.setup())
    said = []
    for frame, scene in enumerate([base] * 2 + [hand] * 3 + [base] * 3):
        state = tracker.update(renderer.render(replace(scene, noise_seed=frame)), frame, float(frame))
        said.append(LIVE_HANDS_WARNING in state.warnings)
    # (searches run every 2 s, and sooner once a change settles: the hand's second frame, the bare
    # table's first)
    assert said == [False, False, True, True, True, False, False, False]
