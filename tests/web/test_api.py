"""The JSON API with Flask's test client, over a real camera thread on a rendered siege frame."""

from __future__ import annotations

import math

import pytest

from tests.web.conftest import Running, variant


def test_every_call_needs_the_join_cookie(running):
    anonymous = running.client(joined=False)
    for path in ("/api/state", "/api/units", "/api/game", "/api/health", "/", "/host", "/stream.mjpg", "/join.svg"):
        response = anonymous.get(path)
        assert response.status_code == 401, path
    assert "error" in anonymous.get("/api/state").get_json()
    assert anonymous.get("/join?t=wrong").status_code == 403


def test_join_sets_an_httponly_samesite_cookie_and_redirects_to_a_clean_url(running):
    client = running.app.test_client()
    response = client.get(f"/join?t={running.companion.token}&next=/host")
    assert response.status_code == 303 and response.headers["Location"] == "/host"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and running.companion.token in cookie
    assert client.get("/api/state").status_code == 200
    evil = client.get(f"/join?t={running.companion.token}&next=https://evil.example/")
    assert evil.headers["Location"] == "/"


def test_a_foreign_host_header_is_refused(running):
    client = running.client()
    response = client.get("/api/state", headers={"Host": "attacker.example:8765"})
    assert response.status_code == 400 and "Host" in response.get_json()["error"]


def test_state_changes_need_the_header_token(running):
    client = running.client()
    response = running.post(client, "/api/game", {"mode": "siege", "castle_holder": "blue"}, csrf=False)
    assert response.status_code == 403 and "X-Companion-Token" in response.get_json()["error"]


def test_state_has_every_unit_where_the_camera_put_it(running, siege):
    _, _, _, scene = siege
    data = running.client().get("/api/state").get_json()
    assert data["registered"] and data["snapshot"]["camera"]["ok"] and data["ruleset"] == "knight"
    assert data["table"] == {"width_mm": 1200.0, "depth_mm": 800.0}
    truth = {m.id: m for m in scene.minis}
    assert {u["id"] for u in data["units"]} == {m.id for m in scene.minis if m.id != 40}
    for u in data["units"]:
        assert math.hypot(u["x_mm"] - truth[u["id"]].x_mm, u["y_mm"] - truth[u["id"]].y_mm) < 2.0
        assert u["colour"].startswith("#") and u["status"] == "alive"
    assert [o["kind"] for o in data["objects"]] == ["castle"]
    assert data["objects"][0]["controller"] == "blue"  # three defenders inside, no attacker within 2 fingers
    assert data["squads"], "the attackers march shoulder to shoulder"
    assert data["game"]["available"] and not data["game"]["exists"]


def test_unit_detail_gives_range_and_a_verdict_on_every_enemy(running):
    client = running.client()
    detail = client.get("/api/units/6").get_json()  # the orc shooter
    assert detail["class"] == "shooter" and detail["range"]["hands"] >= 1 and detail["acting_player"] == "red"
    assert {e["target"] for e in detail["enemies"]} == {20, 21, 22}
    for e in detail["enemies"]:
        assert e["chips"][0]["text"] in ("can attack", "cannot attack")
        assert e["reasons"] and set(e["odds"]) >= {"attacker_wins", "tie", "defender_wins"}
        assert any(c["text"].startswith(("in range", "out of range")) for c in e["chips"])


def test_measure_in_the_acting_players_hand(running):
    client = running.client()
    red = client.get("/api/measure?from=6&to=20").get_json()
    blue = client.get("/api/measure?from=6&to=20&player=blue").get_json()
    assert red["player"] == "red" and blue["player"] == "blue"
    assert red["edge_mm"] == blue["edge_mm"] and red["text"] and blue["hand_mm"] == 165.0


@pytest.mark.parametrize("query, field", [("from=6", "to"), ("from=x&to=20", "from"), ("from=6&to=6", "to")])
def test_bad_measure_input_is_a_400_naming_the_field(running, query, field):
    response = running.client().get(f"/api/measure?{query}")
    assert response.status_code == 400 and response.get_json()["field"] == field


def test_unknown_unit_is_a_400_with_the_reason(running):
    response = running.client().get("/api/units/99")
    assert response.status_code == 400 and "not on the table" in response.get_json()["error"]


def test_attack_matches_the_rules_core(running):
    from companion.rules.knight.attack import attack
    from companion.rules.table import Table

    data = running.client().get("/api/attack?attacker=6&target=20").get_json()
    table = Table.from_state(running.hub.latest().state, running.companion.setup)
    assert data["legal"] == attack(table, 6, 20).legal and data["reasons"] == list(attack(table, 6, 20).reasons)
    assert data["chips"] and data["target"] == 20


def test_moves_and_their_limits(running):
    client = running.client()
    data = client.get("/api/moves?unit=4&ap=2").get_json()
    assert [r["ap"] for r in data["regions"]] == [1, 2] and data["regions"][1]["area_mm2"] > data["regions"][0]["area_mm2"]
    bad = client.get("/api/moves?unit=4&ap=9")
    assert bad.status_code == 400 and bad.get_json()["field"] == "ap"


def test_squads_and_objects(running):
    client = running.client()
    assert client.get("/api/squads").get_json()["squads"]
    assert client.get("/api/objects").get_json()["objects"][0]["why"]


def test_a_siege_round_by_round_with_409_when_not_allowed(running):
    client = running.client()
    post = lambda path, body=None: running.post(client, path, body)  # noqa: E731
    assert post("/api/game", {"mode": "siege", "castle_holder": "blue"}).status_code == 200
    assert post("/api/game/end-turn").status_code == 409  # nobody rolled yet
    bad_die = post("/api/game/roll", {"black": 7, "red": 2, "white": 3})
    assert bad_die.status_code == 400 and bad_die.get_json()["field"] == "black"
    game = post("/api/game/roll", {"black": 4, "red": 2, "white": 3}).get_json()
    assert game["turn"] == "red" and game["round"] == 1 and game["siege_rounds"] == 10
    early = post("/api/game/end-round")
    assert early.status_code == 409 and "blue has not played" in early.get_json()["error"]
    post("/api/game/end-turn")
    post("/api/game/roll", {"black": 3, "red": 3, "white": 3})
    game = post("/api/game/end-round").get_json()
    assert game["round"] == 2 and game["rounds_done"] == 1
    assert game["control"] == {"castle": "blue"}  # read from the camera when the turn ended
    # One line per event, so one Undo takes back exactly the last line the players read.
    assert game["log"][-1] == "blue ended the turn; round 1 ended, a coin by the castle (1 of 10)"
    lines = len(game["log"])
    undone = post("/api/game/undo").get_json()
    assert undone["round"] == 1 and undone["turn"] == "blue"
    assert undone["undone"] == game["log"][-1] and len(undone["log"]) == lines - 1
    log = client.get("/api/log").get_json()
    assert [e["kind"] for e in log["events"]] == ["start_turn", "end_turn", "start_turn"]
    again = post("/api/game", {"mode": "skirmish"})
    assert again.status_code == 409  # a game is under way


def test_bad_event_bodies_are_400(running):
    client = running.client()
    running.post(client, "/api/game", {"mode": "siege", "castle_holder": "blue"})
    for body in ({"kind": "nonsense"}, {"kind": "spend", "die": "black", "amount": "two"}, {}):
        response = running.post(client, "/api/game/events", body)
        assert response.status_code == 400, body
    response = client.post("/api/game/roll", data="not json", headers={"X-Companion-Token": running.companion.csrf})
    assert response.status_code == 400 and response.get_json()["field"] == "body"


def test_a_unit_that_died_fights_on_as_a_skeleton(running):
    client = running.client()
    running.post(client, "/api/game", {"mode": "siege", "castle_holder": "blue"})
    running.post(client, "/api/game/events", {"kind": "unit_died", "unit": 20, "cause": "arrow"})
    units = {u["id"]: u for u in client.get("/api/state").get_json()["units"]}
    assert units[20]["status"] == "skeleton"
    verdict = client.get("/api/attack?attacker=6&target=20").get_json()
    assert any(m["name"].startswith("skeletons") for m in verdict["defence_modifiers"])


def test_unknown_endpoint_and_method_are_json(running):
    client = running.client()
    assert client.get("/api/nothing").status_code == 404 and "error" in client.get("/api/nothing").get_json()
    assert client.delete("/api/state", headers={"X-Companion-Token": running.companion.csrf}).status_code == 405


def test_pages_carry_the_header_token_and_the_qr(running):
    client = running.client()
    page = client.get("/").get_data(as_text=True)
    assert running.companion.csrf in page and 'name="ruleset" content="knight"' in page
    assert b"<svg" in client.get("/join.svg").data
    assert "stream.mjpg" in client.get("/host").get_data(as_text=True)


def test_rules_of_another_system_answer_409_here(running):
    client = running.client()
    assert client.get("/api/contienda/cells").status_code == 409
    assert client.get("/api/infinity/template?attacker=6&target=20").status_code == 409


def test_contienda_cells_reach_and_odds(siege, tmp_path):
    _, setup, folder, _ = siege
    r = Running(variant(setup, "contienda", hex={"size_mm": 25.4}), folder, None)
    try:
        client = r.client()
        cells = client.get("/api/contienda/cells").get_json()["cells"]
        assert set(cells) == {"4", "5", "6", "7", "8", "20", "21", "22"}
        reach = client.get("/api/contienda/reach?unit=4&ap=1").get_json()
        assert reach["hexes"] and all(cost == 1 for _, _, cost in reach["hexes"])
        grid = client.get("/api/contienda/grid").get_json()
        assert len(grid["hexes"]) > 1000 and len(grid["hexes"][0][2]) == 6
        odds = client.get("/api/contienda/odds?mod=0").get_json()
        assert odds["fractions"] == {"full": "1/6", "partial": "5/12", "miss": "5/12"}
        assert client.get("/api/contienda/odds?advantage=1&disadvantage=1").status_code == 400
        assert client.get("/api/game").get_json()["available"] is False
        assert client.get("/api/moves?unit=4&ap=1").status_code == 409
    finally:
        r.close()


def test_infinity_template_names_who_is_under_it(siege):
    _, setup, folder, _ = siege
    r = Running(variant(setup, "infinity", infinity={"circular_template_mm": 200.0}), folder, None)
    try:
        client = r.client()
        t = client.get("/api/infinity/template?attacker=6&target=20").get_json()
        assert 20 in t["affected"] and t["target"] == 20 and "line_of_fire_why" in t
        assert set(t["affected"]) >= {20, 21}  # a 200 mm circle on 20 also covers its neighbour inside
        if t["line_of_fire"] and not t["cancelled_by"]:
            assert set(t["odds"]) == {str(i) for i in t["affected"]}
        f2f = client.get("/api/infinity/f2f?sv_a=13&burst_a=3&sv_b=12&burst_b=1").get_json()
        assert round(f2f["a_wins"], 4) == 0.7550
        assert client.get("/api/infinity/template?attacker=6").status_code == 400
        point = client.get("/api/infinity/template?attacker=6&x=600&y=400")
        assert point.status_code == 200 and point.get_json()["target"] is None
        for x, y, field in (("nan", "400", "x"), ("600", "inf", "y"), ("5000", "400", "x"), ("600", "", "y")):
            refused = client.get(f"/api/infinity/template?attacker=6&x={x}&y={y}")  # was: a template at NaN
            assert refused.status_code == 400 and refused.get_json()["field"] == field, (x, y)
        refused = client.get("/api/infinity/template?attacker=6&target=20&dodge_20=999")  # was: every die a critical
        assert refused.status_code == 400 and refused.get_json()["field"] == "dodge_20"
        assert client.get("/api/infinity/template?attacker=6&target=20&dodge_20=12").status_code == 200
    finally:
        r.close()


def test_blocks_reach_the_map_and_the_verdicts(siege, tmp_path):
    # Block detection is its own issue; here a state with a wall (as `locate` writes it) is published
    # on the hub directly, to check that the API carries blocks to the page and into the verdicts.
    from companion.live.snapshots import CameraStatus, Snapshot, SnapshotHub, empty_snapshot
    from companion.state import TableState
    from companion.web import create_app
    from companion.web.context import Companion

    _, setup, _, scene = siege
    minis = [{"id": m.id, "x_mm": m.x_mm, "y_mm": m.y_mm, "z_mm": m.z_mm, "heading_deg": m.heading_deg}
             for m in scene.minis if m.id in (6, 20)]
    a, b = scene.minis[[m.id for m in scene.minis].index(6)], scene.minis[[m.id for m in scene.minis].index(20)]
    mx, my = (a.x_mm + b.x_mm) / 2, (a.y_mm + b.y_mm) / 2
    wall = {"footprint_mm": [[mx - 8, my - 60], [mx + 8, my - 60], [mx + 8, my + 60], [mx - 8, my + 60]],
            "height_mm": 96.0, "color": "gray"}
    state = TableState.from_json({"registered": True, "minis": minis, "blocks": [wall], "timestamp": 1.0})
    hub = SnapshotHub(empty_snapshot("test"))
    hub.publish(Snapshot(1, 1, 1.0, state, True, CameraStatus("ok", "test")))
    companion = Companion(setup, hub, "t" * 20)
    client = create_app(companion).test_client()
    client.get("/join?t=" + "t" * 20)
    data = client.get("/api/state").get_json()
    assert data["blocks"][0]["height_mm"] == 96.0 and data["blocks"][0]["color"] == "gray"
    verdict = client.get("/api/attack?attacker=6&target=20").get_json()
    assert verdict["cover"]["full"] and not verdict["legal"]
    assert any(c["text"] == "blocked by block 0" for c in verdict["chips"])
    assert not verdict["close_call"] and "close call: measure it" not in [c["text"] for c in verdict["chips"]]
    assert "hidden_under" not in data["blocks"][0]
    # The same wall as the camera reports a block a standing mini hides whole: said so, a close call.
    hidden = TableState.from_json({"registered": True, "minis": minis, "blocks": [wall | {"hidden_under": 7}],
                                   "timestamp": 2.0})
    hub.publish(Snapshot(2, 2, 2.0, hidden, True, CameraStatus("ok", "test")))
    assert client.get("/api/state").get_json()["blocks"][0]["hidden_under"] == 7
    verdict = client.get("/api/attack?attacker=6&target=20").get_json()
    assert verdict["cover"]["full"] and verdict["close_call"]
    assert any("hidden under unit 7" in b["why"] for b in verdict["cover"]["blocks"])
    assert {"text": "close call: measure it", "kind": "info"} in verdict["chips"]
    # the host screen marks it as the phone does: on the line of attack and on the block it turns on
    labels = sorted(shape.label for shape in companion.overlay_shapes() if shape.kind in ("line", "polygon"))
    assert labels == ["B0 full (close call)", "cannot attack (close call)"], labels


def test_the_turn_ledger_referees_the_turn_from_the_camera(running):
    """The table as seen when the dice were entered is the turn's start; the ledger compares the
    camera's table now with it, in the acting player's units, and is saved with the end of the turn."""
    import json

    client = running.client()
    post = lambda path, body=None: running.post(client, path, body)  # noqa: E731
    post("/api/game", {"mode": "siege", "castle_holder": "blue"})
    game = post("/api/game/roll", {"black": 2, "red": 1, "white": 1}).get_json()
    assert game["ledger"]["ap_spent"] == 0 and game["ledger"]["ap_die"] == 2  # nothing moved yet
    # The start as the store kept it, with red's unit 4 standing 1 hand + 2.5 fingers (228 mm) back
    # and unit 6 one further on: the camera now sees both where the frame has them.
    store = running.store
    with store._lock, store._transaction():
        (seq, seen), = store._db.execute("SELECT seq, seen FROM events WHERE event LIKE '%start_turn%'").fetchall()
        start = json.loads(seen)
        for m in start["state"]["minis"]:
            if m["id"] == 4:
                m["x_mm"] -= 228.0
            if m["id"] == 6:
                m["y_mm"] -= 60.0
        store._db.execute("UPDATE events SET seen = ? WHERE seq = ?", (json.dumps(start), seq))
    store.version += 1
    led = client.get("/api/game").get_json()["ledger"]
    moved = {tuple(m["units"]): m for m in led["moves"]}
    assert moved[(4,)]["ap"] == 2 and (moved[(4,)]["hands"], moved[(4,)]["fingers"]) == (1, 2)
    assert led["ap_spent"] >= 3 and led["units_acted"] == sorted(led["units_acted"]) and 4 in led["units_acted"]
    assert any("black die allows 2" in w for w in led["warnings"])
    assert any("white die allows 1" in w for w in led["warnings"])
    post("/api/game/end-turn")
    log = client.get("/api/log").get_json()["events"]
    assert log[-1]["kind"] == "end_turn" and log[-1]["ledger"]["ap_spent"] == led["ap_spent"]
    assert client.get("/api/game").get_json()["ledger"] is None  # between turns


@pytest.fixture(scope="module")
def knocked_frame(tmp_path_factory):
    """The late siege frame with red's shooter (6) knocked over: its marker tilted 50 deg."""
    import math
    from dataclasses import replace as replace_

    import cv2

    from companion.synth.render import Renderer
    from companion.synth.siege import base_scene, siege_scene

    scene = siege_scene(base_scene(), 40)
    m6 = next(m for m in scene.minis if m.id == 6)
    cam = scene.pose.camera_centre_mm
    towards = math.degrees(math.atan2(cam[1] - m6.y_mm, cam[0] - m6.x_mm))
    minis = tuple(replace_(m, tilt_deg=50.0, tilt_towards_deg=towards, z_mm=14.0, base_mm=4.0) if m.id == 6 else m
                  for m in scene.minis)
    folder = tmp_path_factory.mktemp("knocked")
    cv2.imwrite(str(folder / "frame.png"), Renderer().render(replace_(scene, minis=minis)))
    return folder


def test_a_knocked_over_unit_is_proposed_never_applied_and_one_tap_confirms_it(siege, knocked_frame, tmp_path):
    _, setup, _, _ = siege
    r = Running(setup, knocked_frame, tmp_path / "g.sqlite")
    try:
        client = r.client()
        r.post(client, "/api/game", {"mode": "siege", "castle_holder": "blue"})
        state = client.get("/api/state").get_json()
        shooter = next(u for u in state["units"] if u["id"] == 6)
        assert shooter["status"] == "alive" and any("knocked over?" in w for w in state["warnings"])
        game = client.get("/api/game").get_json()
        (p,) = [p for p in game["proposals"] if p["unit"] == 6]
        assert p["kind"] == "knocked_over" and "tilted 50 deg" in p["why"] and game["units"]["6"] == "alive"
        confirmed = r.post(client, "/api/game/events", p["event"]).get_json()
        assert confirmed["units"]["6"] == "skeleton" and "knocked over" in confirmed["log"][-1]
        assert r.post(client, "/api/game/undo").get_json()["units"]["6"] == "alive"
    finally:
        r.close()


def test_a_unit_gone_from_the_table_for_a_while_is_asked_about(siege, tmp_path):
    """A unit the camera has not seen for more than 5 s (held at its old place), with no hand over
    where it stood, is asked about; one a hand has covered as long is not; one whose marker vanished
    where something now lies is a knocked-over candidate after a second."""
    from dataclasses import replace as replace_

    from companion.live.snapshots import CameraStatus, Snapshot, SnapshotHub
    from companion.live.store import GameStore
    from companion.web import create_app
    from companion.web.context import Companion

    _, setup, folder, _ = siege
    r = Running(setup, folder, None)  # one real registered state from the rendered frame
    try:
        state = r.hub.latest().state
    finally:
        r.close()
    now = state.timestamp
    minis = tuple(replace_(m, status="held", last_seen_s=now - 9.0, held_place="table") if m.id == 7 else
                  replace_(m, status="held", last_seen_s=now - 9.0, held_place="hand") if m.id == 8 else
                  replace_(m, status="held", last_seen_s=now - 2.0, held_place="other") if m.id == 6 else
                  replace_(m, status="held", last_seen_s=now - 2.0, held_place="table") if m.id == 5 else m
                  for m in state.minis)
    hub = SnapshotHub(Snapshot(1, 1, now, replace_(state, minis=minis), True, CameraStatus("ok", "test", "")))
    store = GameStore(tmp_path / "g.sqlite", setup)
    companion = Companion(setup, hub, "test-token-0123456789", store)
    client = create_app(companion, {"TESTING": True}).test_client()
    client.get(f"/join?t={companion.token}")
    client.post("/api/game", json={"mode": "siege", "castle_holder": "blue"}, headers={"X-Companion-Token": companion.csrf})
    proposals = client.get("/api/game").get_json()["proposals"]
    (p,) = [p for p in proposals if p["unit"] == 7]
    assert p["kind"] == "left_table" and "left the table: dead?" in p["ask"] and "9 s" in p["why"]
    assert "no hand over its place and the table bare" in p["why"] and not [p for p in proposals if p["unit"] == 8]
    # Gone 2 s: with something lying where it stood, a knocked-over candidate; lifted, not yet asked.
    (k,) = [p for p in proposals if p["unit"] == 6]
    assert k["kind"] == "knocked_over" and "vanished where it stood" in k["why"] and "knocked over: dead?" in k["ask"]
    assert not [p for p in proposals if p["unit"] == 5]
    store.close()


def test_the_host_screen_draws_what_a_phone_asks_about(running):
    """After a phone asks for a verdict, the camera overlay draws its line of attack and exactly the
    blocks the verdict names as crossing it, coloured by what they give; moves draw the region."""
    import numpy as np

    from companion.vision.camera import TablePose
    from companion.vision.draw import TableAnnotator
    from companion.vision.locator import camera_for

    client = running.client()
    v = client.get("/api/attack?attacker=6&target=20").get_json()
    shapes = running.companion.overlay_shapes()
    lines = [s for s in shapes if s.kind == "line"]
    assert len(lines) == 1 and lines[0].label == ("can attack" if v["legal"] else "cannot attack") + (
        " (close call)" if v["close_call"] else "")
    state = client.get("/api/state").get_json()
    centre = {u["id"]: (u["x_mm"], u["y_mm"]) for u in state["units"]}
    assert np.allclose(lines[0].points_mm, [centre[6], centre[20]], atol=0.2)
    drawn_blocks = sorted(s.label for s in shapes if s.kind == "polygon")
    assert drawn_blocks == sorted(f"B{b['id']} {b['kind']}" + (" (close call)" if b["close_call"] else "")
                                  for b in v["cover"]["blocks"])
    assert any(s.kind == "circle" and "range" in s.label for s in shapes)  # the shooter's range
    # drawn over the camera image: the frame with the overlay differs along the line of attack
    frame = np.full((1080, 1920, 3), 128, np.uint8)
    camera, _ = camera_for(running.companion.setup, 1920, 1080)
    pose = TablePose.from_state(running.hub.latest().state.registration.camera)  # the pose the state was seen with
    plain = TableAnnotator().annotate(frame, running.hub.latest().state, running.companion.setup, camera, pose)
    drawn = TableAnnotator().annotate(frame, running.hub.latest().state, running.companion.setup, camera, pose, shapes)
    mid = pose.project(camera, np.array([[(centre[6][0] + centre[20][0]) / 2, (centre[6][1] + centre[20][1]) / 2, 0.0]]))[0]
    x, y = int(round(mid[0])), int(round(mid[1]))
    assert np.abs(drawn[y - 2:y + 3, x - 2:x + 3].astype(int) - plain[y - 2:y + 3, x - 2:x + 3]).max() > 40
    client.get("/api/moves?unit=4&ap=1")
    assert running.companion.overlay_shapes() and all(s.kind == "polygon" for s in running.companion.overlay_shapes())


def test_api_errors_are_json_sentences_naming_the_field(running):
    client = running.client()
    post = lambda path, body=None: running.post(client, path, body)  # noqa: E731
    r = client.get("/api/attack?attacker=4&target=4")
    assert r.status_code == 400 and "--" not in r.get_json()["error"]  # no command-line flag in an API answer
    r = post("/api/game", {"mode": "siege", "castle_holder": "nobody"})
    assert r.status_code == 400 and r.get_json()["field"] == "castle_holder" and r.get_json()["error"].count("castle_holder") == 1
    post("/api/game", {"mode": "siege", "castle_holder": "blue"})
    r = post("/api/game/roll", {"black": 3, "red": 2, "white": 1, "blak": 4})
    assert r.status_code == 400 and r.get_json()["field"] == "blak"
    post("/api/game/roll", {"black": 3, "red": 2, "white": 1})
    r = post("/api/game/events", {"kind": "spend", "die": "black", "amount": 1, "n": 2})
    assert r.status_code == 400 and r.get_json()["field"] == "n" and "__init__" not in r.get_json()["error"]
    r = client.get("/api/log?limit=abc")
    assert r.status_code == 400 and r.get_json()["field"] == "limit"
    assert len(client.get("/api/log?limit=1").get_json()["events"]) == 1
    r = client.post("/api/game/roll", data=b"x" * (200 * 1024), headers={"X-Companion-Token": running.companion.csrf,
                                                                          "Content-Type": "application/json"})
    assert r.status_code == 413 and r.is_json and r.get_json()["field"] == "body"
