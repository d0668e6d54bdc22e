"""End to end in a real browser: Debian's Chromium driven by Playwright, a phone viewport, the real
server (waitress) over a real camera source (a folder with a rendered siege frame)."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from companion.run.server import CompanionServer, ServeOptions
from companion.vision.sources import LoopingSource, open_source
from tests.conftest import wait_for
from tests.web.conftest import battlefield_frames, variant

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}


@pytest.fixture(scope="module")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (apt-get install -y chromium; .ci/run does it)")
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _server(setup, folder: Path, data: Path) -> CompanionServer:
    spec = str(folder)
    server = CompanionServer(setup, lambda: LoopingSource(lambda: open_source(spec)), "test camera",
                             ServeOptions(host="127.0.0.1", port=0, data_dir=data, open_browser=False,
                                          min_interval_s=0.1))
    server.start_camera()
    server.run_in_thread()
    wait_for(lambda: server.hub.latest().state.registered, what="the first registered frame")
    return server


class Phone:
    def __init__(self, browser, server: CompanionServer) -> None:
        self.context = browser.new_context(**PHONE)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.server = server

    def join(self) -> None:
        self.page.goto(self.server.join_url.replace(self.server.join_url.split("/")[2], f"127.0.0.1:{self.server.port}"))
        assert self.page.url.endswith(f":{self.server.port}/"), "the join link redirects to a clean URL"
        self.page.wait_for_selector("#units li >> nth=7")

    def tap_unit(self, unit_id: int) -> None:
        # The map is redrawn when a unit moves: ask again if it was replaced while being measured.
        box = None
        for _ in range(20):
            box = self.page.locator(f'g.unit[data-id="{unit_id}"] circle').last.bounding_box()
            if box is not None:
                break
            self.page.wait_for_timeout(100)
        assert box is not None, f"unit {unit_id} is not on the map"
        self.page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def knight(browser, siege, tmp_path):
    _, setup, folder, _ = siege
    server = _server(setup, folder, tmp_path)
    phone = Phone(browser, server)
    yield phone
    phone.close()
    server.close()


def test_without_the_token_the_page_is_refused(browser, knight):
    page = knight.page
    response = page.goto(f"http://127.0.0.1:{knight.server.port}/")
    assert response.status == 401 and "QR code" in page.content()


def test_a_player_measures_reads_a_verdict_and_plays_a_siege_round(knight):
    page = knight.page
    knight.join()
    assert page.locator("#units li").count() == 8
    knight.tap_unit(6)  # the orc shooter
    page.wait_for_selector("#enemies > li >> nth=2")
    assert "shooter 6" in page.locator("#sel-title").inner_text()
    assert "range" in page.locator("#sel-range").inner_text()
    chips = page.locator("#enemies .chip").all_inner_texts()
    assert any(c in ("can attack", "cannot attack") for c in chips)
    legal = page.locator("#enemies > li:has(.bars)")
    if legal.count():  # the odds say in words what each part of the bar is
        assert "tie (no effect)" in legal.first.locator(".legend").inner_text()
    illegal = page.locator("#enemies > li:not(:has(.bars))")
    if illegal.count():  # an impossible attack leads with why, and shows no bonuses
        assert "attack +" not in illegal.first.inner_text()
    knight.tap_unit(20)  # a human defender: measure and a verdict for the pair
    page.wait_for_selector("#measure-out:not([hidden])")
    measured = page.locator("#measure-out").inner_text()
    assert "hand" in measured or "finger" in measured
    page.wait_for_selector("#pair-verdict .chip")

    # A siege round: start, red's turn, blue's turn, the round counter moves.
    page.locator("#new-game button").click()
    page.wait_for_selector("#roll:not([hidden])")
    assert page.locator("#round-chip").inner_text() == "Round 1 of 10"
    assert page.locator("#roll button").is_disabled()  # no dice chosen yet
    page.select_option("#die-black", "4")
    page.select_option("#die-red", "2")
    page.select_option("#die-white", "3")
    page.locator("#roll button").click()
    page.wait_for_function("document.querySelector('#game-line').textContent.includes(\"red's turn\")")
    page.wait_for_selector("#ledger:not([hidden])")  # the turn's ledger, refereed by the camera
    assert "of 4 AP" in page.locator("#ledger-title").inner_text()
    page.locator("#end-turn").click()
    page.wait_for_function("document.querySelector('#game-line').textContent.includes('blue to roll')")
    # blue starts with no dice chosen, not red's
    assert [page.locator(f"#die-{d}").input_value() for d in ("black", "red", "white")] == ["", "", ""]
    assert page.locator("#roll button").is_disabled()
    for d in ("black", "red", "white"):
        page.select_option(f"#die-{d}", "3")
    page.locator("#roll button").click()
    page.wait_for_function("document.querySelector('#game-line').textContent.includes(\"blue's turn\")")
    page.locator("#end-round").click()
    page.wait_for_function("document.querySelector('#round-chip').textContent === 'Round 2 of 10'")

    page.reload()  # the game is on disk, not in the page
    page.wait_for_function("document.querySelector('#round-chip').textContent === 'Round 2 of 10'")
    assert page.locator("#log li").count() >= 4
    page.locator("#undo").click()
    page.wait_for_function("document.querySelector('#round-chip').textContent === 'Round 1 of 10'")
    # one Undo, one line of the log: the turn that ended the round, said back to the player
    assert page.locator("#banner").inner_text() == "Took back: blue ended the turn; round 1 ended, a coin by the castle (1 of 10)"
    assert knight.errors == []


def test_the_phone_shows_the_turns_ledger_as_the_camera_referees_the_demo_siege(browser, tmp_path):
    """The demo's siege, played by its script on the real server, watched on a phone: before each of
    the first two ends of turn (the players look at their phones first) the ledger panel shows what
    the camera saw this turn: red's squad marched as one move of 2 AP, blue walled the gate (three
    bricks, each in reach), each against its black die and without a warning."""
    import queue
    import threading

    from companion.run.demo import SIEGE_CAMERA, siege_parts
    from companion.synth.siege import END_TURN

    setup, open_camera, script = siege_parts(48)
    at_end_of_turn: queue.Queue = queue.Queue()
    go_on = threading.Semaphore(0)
    tap = script._tap

    def look_first(t, ledger):  # the players read their phones before they tap "end turn"
        if t.path == END_TURN and script.played <= 4:
            at_end_of_turn.put(ledger)
            go_on.acquire(timeout=120)
        tap(t, ledger)

    script._tap = look_first
    server = CompanionServer(setup, open_camera, SIEGE_CAMERA,
                             ServeOptions(host="127.0.0.1", port=0, data_dir=tmp_path, open_browser=False,
                                          min_interval_s=0.1), [script.on_frame])
    script.prepare(server)
    server.start_camera()
    server.run_in_thread()
    phone = Phone(browser, server)
    try:
        wait_for(lambda: server.hub.latest().state.registered, what="the first registered frame")
        phone.join()
        page = phone.page

        def shown(player: str) -> tuple[dict, list[str], list[str]]:
            """The ledger the script read as it came to end the turn, once the phone shows the same:
            (ledger, the phone's move entries, its fortification entries)."""
            ledger = at_end_of_turn.get(timeout=240)
            title = (f"This turn: {ledger['ap_spent']} of {ledger['ap_die']} AP, {len(ledger['units_acted'])} of "
                     f"{ledger['warriors_die']} warriors, {ledger['attacks_made']} of {ledger['attacks_die']} attacks")
            entries = ([f"{m['ap']} AP: {m['why']}" for m in ledger["moves"]]
                       + [f"{f['ap']} AP: {f['why']}" for f in ledger["fortifications"]])
            # the title alone can match an earlier poll (the squad half-way also costs 2 AP): wait for the entries too
            page.wait_for_function("([t, e]) => document.querySelector('#ledger-title').textContent === t && "
                                   "JSON.stringify([...document.querySelectorAll('#ledger-entries li.ledger-move, "
                                   "#ledger-entries li.ledger-fort')].map(li => li.innerText)) === JSON.stringify(e)",
                                   arg=[title, entries])
            assert f"{player}'s turn" in page.locator("#game-line").inner_text()
            assert ledger["ap_spent"] <= ledger["ap_die"] and page.locator("#ledger-warnings li").count() == 0
            page.locator("#ledger").screenshot(path=str(tmp_path / f"ledger {player}.png"))  # looked at while writing this test
            return (ledger, page.locator("#ledger-entries li.ledger-move").all_inner_texts(),
                    page.locator("#ledger-entries li.ledger-fort").all_inner_texts())

        ledger, moves, forts = shown("red")  # the squad marched: five units, one move, charged once
        (march,) = ledger["moves"]
        assert march["units"] == [4, 5, 6, 7, 8] and march["ap"] == 2 == ledger["ap_spent"]
        assert moves == [f"2 AP: {march['why']}"] and "squad 4, 5, 6, 7, 8 moved together" in moves[0] and forts == []
        go_on.release()
        ledger, moves, forts = shown("blue")  # a defender stepped out and walled the gate: 3 bricks in reach
        (out,) = ledger["moves"]
        bricks = [f["bricks"] for f in ledger["fortifications"]]
        assert out["units"] == [20] and out["ap"] == 1 and sum(bricks) == 3 and ledger["ap_spent"] == 1 + 3
        assert moves == [f"1 AP: {out['why']}"] and len(forts) == len(bricks)
        assert forts == [f"{f['ap']} AP: {f['why']}" for f in ledger["fortifications"]]
        assert page.locator("#ledger-entries li.ledger-fort.bad").count() == 0  # none out of reach
        go_on.release()
        page.wait_for_function("document.querySelector('#game-line').textContent.includes(\"red's turn\")")
        log = page.locator("#log").inner_text()
        assert "red ended the turn" in log and "blue ended the turn" in log
        assert phone.errors == []
    finally:
        go_on.release()
        go_on.release()
        phone.close()
        server.close()


def test_a_proposal_keeps_its_button_while_its_reason_ticks_and_one_tap_records_it(browser, siege, tmp_path):
    """A unit the camera lost with the table bare where it stood is asked about; the phone polls
    every few hundred ms and the reason's seconds move, but the button stays under the player's
    thumb (the list was rebuilt every poll before), and one tap records the unit dead."""
    from dataclasses import replace

    from companion.live.snapshots import Snapshot

    _, setup, folder, _ = siege
    server = _server(setup, folder, tmp_path)
    phone = Phone(browser, server)
    try:
        server.loop.stop()  # from here on the test is the camera
        first = server.hub.latest()
        t0 = first.state.timestamp

        def publish(now: float) -> None:
            minis = tuple(replace(m, status="held", last_seen_s=t0 - 9.0, held_place="table") if m.id == 7 else m
                          for m in first.state.minis)
            seq = server.hub.latest().seq + 1
            server.hub.publish(replace(first, seq=seq, captured_at=now, state=replace(first.state, minis=minis,
                                                                                      timestamp=now)))

        publish(t0)
        phone.join()
        page = phone.page
        page.locator("#new-game button").click()
        page.wait_for_selector('#proposals li[data-unit="7"] button')
        assert "left the table: dead?" in page.locator('#proposals li[data-unit="7"] .name').inner_text()
        button = page.locator('#proposals li[data-unit="7"] button').element_handle()
        for later in (2.0, 4.0):
            publish(t0 + later)
            page.wait_for_function("s => document.querySelector('#proposals .hint').textContent.includes(s)",
                                   arg=f"for {9 + later:.0f} s")
            assert button.evaluate("b => b.isConnected"), "the button was replaced under the thumb"
        button.click()
        page.wait_for_function("document.querySelector('#log').textContent.includes('the table bare where it stood')")
        assert server.store.game.statuses().get(7) == "skeleton"  # a living unit that dies rises as a skeleton
        assert phone.errors == []
    finally:
        phone.close()
        server.close()


_LABEL_BOXES = """() => [...document.querySelectorAll('#map text')].map(t => {
    const r = t.getBoundingClientRect(); return [t.textContent, t.getAttribute('class'), r.left, r.top, r.right, r.bottom]; })"""
_BASES = """() => [...document.querySelectorAll('#map g.unit circle:last-of-type')].map(c => {
    const r = c.getBoundingClientRect(); return [c.parentNode.dataset.id, r.left, r.top, r.right, r.bottom]; })"""


def _overlap(a, b) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def test_the_maps_labels_cover_no_label_and_no_unit_and_the_zoom_button_is_off_the_map(knight, tmp_path):
    page = knight.page
    knight.join()
    for view, button in (("fit units", "Whole table"), ("whole table", "Fit units")):
        page.wait_for_selector("#map text.label-height >> nth=4")  # the blocks come with the first block search
        page.screenshot(path=str(tmp_path / f"map {view}.png"))  # looked at while writing this test
        labels = page.evaluate(_LABEL_BOXES)
        bases = page.evaluate(_BASES)
        assert len(bases) == 8 and len(labels) >= 8 + 5  # every unit's id, the castle walls' heights
        heights = [text for text, kind, *_ in labels if kind == "label-height"]
        assert heights and all(text.endswith(" mm") for text in heights)  # never read as a unit id
        for i, (text, _, *box) in enumerate(labels):
            for other, _, *other_box in labels[i + 1:]:
                assert _overlap(box, other_box) < 2.0, f"{view}: label {text!r} overlaps {other!r}"
            for unit, *base in bases:
                assert _overlap(box, base) < 2.0, f"{view}: label {text!r} covers unit {unit}"
        zoom = page.locator("#zoom").bounding_box()
        map_box = page.locator("#map").bounding_box()
        assert zoom["y"] >= map_box["y"] + map_box["height"] - 1  # under the map, covering nothing on it
        assert page.locator("#zoom").inner_text() == button
        page.locator("#zoom").click()
    assert knight.errors == []


def test_one_handed_on_a_phone_no_sideways_scrolling_and_big_tap_targets(knight, tmp_path):
    page = knight.page
    knight.join()
    knight.tap_unit(4)
    page.wait_for_selector("#enemies li")
    page.locator("#moves").click()
    page.wait_for_selector(".move-region")
    # one smooth outline per AP (not a staircase of grid rectangles), each with its swatch in words
    ap = int(page.locator("#ap").inner_text())
    assert page.locator("path.move-region").count() == ap and page.locator("polygon.move-region").count() == 0
    assert page.locator("#moves-out .moves-legend .key").count() == ap
    assert all(f"{k} AP" in page.locator("#moves-out .moves-legend").inner_text() for k in range(1, ap + 1))
    page.screenshot(path=str(tmp_path / "moves.png"))  # looked at while writing this test
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    small = page.evaluate("""() => [...document.querySelectorAll('button, select')]
        .filter(e => e.offsetParent !== null)
        .map(e => [e.id || e.textContent.trim(), e.getBoundingClientRect()])
        .filter(([, r]) => r.height < 44 || r.width < 44).map(([n]) => n)""")
    assert small == []
    assert knight.errors == []


@contextmanager
def _phone_on(browser, setup, folder: Path, data: Path):
    """A joined phone on a server for this setup; both closed afterwards."""
    server = _server(setup, folder, data)
    phone = Phone(browser, server)
    try:
        phone.join()
        yield phone
    finally:
        phone.close()
        server.close()


def test_contienda_reach_hexes_flanks_and_odds_on_the_map(browser, siege, tmp_path):
    _, setup, folder, _ = siege
    with _phone_on(browser, variant(setup, "contienda", hex={"size_mm": 25.4}), folder, tmp_path) as phone:
        page = phone.page
        page.wait_for_function("document.querySelector('#bands').textContent.includes('1/6')")
        phone.tap_unit(4)
        page.wait_for_selector(".reach-hex")
        assert page.locator(".reach-hex").count() > 10
        assert "hexes in reach" in page.locator("#moves-out").inner_text()
        page.locator("#mod-up").click()
        page.wait_for_function("document.querySelector('#mod').textContent === '+1'")
        assert page.locator("#game").is_hidden()
        assert phone.errors == []


def test_infinity_template_on_the_map_with_odds_per_trooper(browser, siege, tmp_path):
    _, setup, folder, _ = siege
    with _phone_on(browser, variant(setup, "infinity", infinity={"circular_template_mm": 200.0}), folder,
                   tmp_path) as phone:
        phone.tap_unit(6)
        phone.tap_unit(20)
        phone.page.wait_for_selector("circle.template")
        text = phone.page.locator("#pair-verdict").inner_text()
        assert "affects" in text and "20" in text
        assert phone.errors == []


def test_forgod_squares_areas_verdicts_and_turns_on_the_phone(browser, tmp_path):
    setup, folder = battlefield_frames(29)  # a late frame of the demo script: the lord turned to flank
    server = _server(setup, folder, tmp_path)
    phone = Phone(browser, server)
    page = phone.page
    try:
        page.goto(server.join_url.replace(server.join_url.split("/")[2], f"127.0.0.1:{server.port}"))
        page.wait_for_selector("#units li >> nth=5")
        page.wait_for_function("document.querySelectorAll('.fg-square').length === 42")
        assert "×3" in page.locator('text.label-unit[data-unit="5"]').text_content()  # the detachment's size on the map
        phone.tap_unit(5)  # red's pikes: their areas on the board, a verdict on every blue card
        page.wait_for_selector(".fg-attack")
        page.wait_for_selector("#enemies > li >> nth=2")
        assert "infantry ×3" in page.locator("#sel-range").inner_text()
        first = page.locator("#enemies > li").first
        assert "can attack" in first.inner_text() and first.locator(".bars").count() == 1
        legend = first.locator(".legend").inner_text()
        assert "evaded" in legend and "critical" in legend and "kill" in legend
        assert "modifiers" in first.locator("summary").inner_text()

        # the engagement: reaction roll, the first round's commanders, the turn passes, undo
        page.locator("#fg-new").click()
        page.wait_for_selector("#fg-reaction:not([hidden])")
        page.select_option("#fg-roll-red", "7")
        page.select_option("#fg-roll-blue", "2")
        page.locator("#fg-reaction button").click()
        page.wait_for_function("document.querySelector('#fg-line').textContent.includes(\"red's turn (commanders only)\")")
        assert page.locator("#fg-card option").all_inner_texts() == ["Red lord (4)"]
        page.select_option("#fg-action", "move")
        page.locator("#fg-act button").click()
        page.wait_for_function("document.querySelector('#fg-line').textContent.includes(\"blue's turn\")")
        page.reload()  # the engagement is on disk, not in the page
        page.wait_for_function("document.querySelector('#fg-line').textContent.includes(\"blue's turn\")")
        page.locator("#fg-undo").click()
        page.wait_for_function("document.querySelector('#fg-line').textContent.includes(\"red's turn\")")
        assert page.locator("#game").is_hidden() and page.evaluate("document.documentElement.scrollWidth") <= 390
        assert phone.errors == []
    finally:
        phone.close()
        server.close()


def test_an_overexposed_camera_is_named_on_the_phone_and_the_host_and_cleared_when_fixed(browser, siege, tmp_path):
    """The anchors' paper clipped (the frame at three times the light, through the camera's sRGB
    curve): the phone's camera notes and the host screen say to lower the exposure."""
    import cv2

    from companion.synth.render import Renderer
    from companion.vision.exposure import PAPER_CLIPPED_WARNING

    _, setup, _, scene = siege
    folder = tmp_path / "bright"
    folder.mkdir()
    bright = replace(scene, imaging=replace(scene.imaging, gamma=0.0, exposure=3.0))
    cv2.imwrite(str(folder / "frame.png"), Renderer().render(bright))
    with _phone_on(browser, setup, folder, tmp_path / "data") as phone:
        page = phone.page
        page.wait_for_selector("#notes:not([hidden])")
        page.wait_for_function("document.querySelector('#notes-list').textContent.includes('overexposed')")
        assert PAPER_CLIPPED_WARNING in page.locator("#notes-list").inner_text()
        host = phone.context.new_page()
        host.goto(f"http://127.0.0.1:{phone.server.port}/host")
        host.wait_for_function("document.querySelector('#notes').textContent.includes('overexposed')")
        # The exposure lowered (the frame as the camera gives it normally): gone from both.
        cv2.imwrite(str(tmp_path / "normal.png"), Renderer().render(scene))
        (tmp_path / "normal.png").replace(folder / "frame.png")
        page.wait_for_function("!document.querySelector('#notes-list').textContent.includes('overexposed')")
        host.wait_for_function("!document.querySelector('#notes').textContent.includes('overexposed')")
        assert not phone.errors
