"""The F0R60D API over a rendered battlefield: answers as the commands give them, the engagement on
disk, bad input 400 naming the field, declarations the camera contradicts 409."""

import pytest

from tests.web.conftest import Running, battlefield_frames


@pytest.fixture(scope="module")
def battlefield():
    return battlefield_frames(0)  # the cards where the script starts


@pytest.fixture
def running(battlefield, tmp_path):
    from companion.live.store import GameStore
    from companion.rules.forgod.game import ForgodGame

    setup, folder = battlefield
    r = Running(setup, folder, None)
    store = GameStore(tmp_path / "e.sqlite", setup, ForgodGame)
    object.__setattr__(r.companion, "store", store)
    r.store = store
    yield r
    r.close()


def test_board_cells_card_and_attack(running):
    client = running.client()
    board = client.get("/api/forgod/board").get_json()
    assert board["columns"] == 7 and len(board["squares"]) == 42 and board["players"] == ["red", "blue"]
    cells = client.get("/api/forgod/cells").get_json()
    assert cells["cells"]["5"] == {"col": 2, "row": 2, "side": "red", "line": "advanced", "in_enemy_field": False}
    card = client.get("/api/forgod/cards/5").get_json()
    assert card["cards"] == 3 and [2, 3] in card["areas"]["attack"] and {v["target"] for v in card["enemies"]} == {20, 21, 22}
    v = client.get("/api/forgod/attack?attacker=5&target=21&charge=1").get_json()
    assert v["legal"] and v["multiplier"] == 2 and v["attack_bonus"] == 1 * 3 + 4 + 4
    state = client.get("/api/state").get_json()
    assert state["forgod"]["cards"]["5"]["cards"] == 3 and state["ruleset"] == "forgod"
    assert client.get("/api/forgod/army").get_json()["valid"] is True
    cross = client.get("/api/forgod/cross?attacker=4&defender=20&kind=fortitude").get_json()
    assert cross["bonus_a"] == 3 and cross["bonus_d"] == 2


def test_bad_input_is_400_naming_the_field(running):
    client = running.client()
    for path, field in [("/api/forgod/attack?attacker=5&target=99", "target"), ("/api/forgod/attack?attacker=x&target=4", "attacker"),
                        ("/api/forgod/attack?attacker=5&target=5", "target"), ("/api/forgod/odds?attack=1", "evasion"),
                        ("/api/forgod/odds?attack=1&evasion=0&multiplier=0", "multiplier"),
                        ("/api/forgod/cross?attacker=4&defender=20&kind=luck", "kind"), ("/api/forgod/cards/99", "card"),
                        ("/api/forgod/attack?attacker=5&target=21&charge=maybe", "charge")]:
        r = client.get(path)
        assert r.status_code == 400 and r.get_json()["field"] == field, (path, r.get_json())
    post = lambda path, body: running.post(client, path, body)  # noqa: E731
    assert post("/api/forgod/game", {}).status_code == 200
    for body, field in [({"kind": "act"}, "card"), ({"kind": "dance"}, "kind"), ({"kind": "act", "card": 4, "extra": 1}, "extra"),
                        ({"kind": "reaction", "rolls": [1, 2]}, "rolls")]:
        r = post("/api/forgod/game/events", body)
        assert r.status_code == 400 and r.get_json()["field"] == field, (body, r.get_json())
    assert post("/api/forgod/game", {"mode": "x"}).status_code == 400


def test_an_engagement_through_the_api_with_the_camera_watching(running):
    client = running.client()
    post = lambda path, body=None: running.post(client, path, body or {})  # noqa: E731
    assert post("/api/forgod/game").get_json()["exists"] is True
    assert post("/api/forgod/game/events", {"kind": "act", "card": 4, "action": "move"}).status_code == 409  # no reaction yet
    g = post("/api/forgod/game/events", {"kind": "reaction", "rolls": {"red": 7, "blue": 4}}).get_json()
    assert g["turn"] == "red" and g["may_act"]["red"] == [4]
    post("/api/forgod/game/events", {"kind": "act", "card": 4, "action": "move"})
    post("/api/forgod/game/events", {"kind": "act", "card": 20, "action": "pass"})
    post("/api/forgod/game/events", {"kind": "reaction", "rolls": {"red": 9, "blue": 1}})
    g = post("/api/forgod/game/events", {"kind": "act", "card": 5, "action": "charge", "target": 21}).get_json()
    assert g["due"][0]["camera"] == "the target is within reach" and g["due"][0]["in_reach"] is True
    r = post("/api/forgod/game/events", {"kind": "act", "card": 22, "action": "shield", "target": 20})
    assert r.status_code == 200
    r = post("/api/forgod/game/events", {"kind": "act", "card": 6, "action": "attack", "target": 22})
    assert r.status_code == 409 and "resolve first" in r.get_json()["error"]  # red's next turn: the charge lands
    g = post("/api/forgod/game/events", {"kind": "resolve", "card": 5, "outcome": "evaded"}).get_json()
    assert g["counters"] == [{"card": 21, "against": 5}]
    g = post("/api/forgod/game/events", {"kind": "act", "card": 6, "action": "flank", "target": 20}).get_json()
    flank = next(d for d in g["due"] if d["card"] == 6)
    assert flank["needs"] == "fortitude cross-check" and flank["turned"] is False and "cross_check" in flank
    log = client.get("/api/log").get_json()
    assert len(log["events"]) == 8 and log["events"][0]["kind"] == "reaction"
    undone = post("/api/forgod/game/undo").get_json()
    assert undone["due"] == [] and undone["counters"] == [{"card": 21, "against": 5}]
    assert post("/api/forgod/game").status_code == 409  # under way: force needed
    assert post("/api/forgod/game", {"force": True}).get_json()["round"] == 0


def test_knight_endpoints_answer_409_on_a_forgod_table(running):
    client = running.client()
    assert client.get("/api/attack?attacker=4&target=20").status_code == 409
    assert running.post(client, "/api/game/roll", {"black": 1, "red": 1, "white": 1}).status_code == 409
    assert client.get("/api/game").get_json()["kind"] == "forgod"
