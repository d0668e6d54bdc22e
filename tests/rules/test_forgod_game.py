"""The F0R60D engagement: reaction rolls, alternating turns, the first round's commanders, cycles,
rounds, strategic actions and their effects, undo, and the saved form."""

import pytest

from companion.rules.forgod.attack import attack
from companion.rules.forgod.game import (Act, CardDied, Counter, ForgodGame, IllegalEvent, Reaction, ReachedRearguard,
                                         Resolve, event_from_json)
from tests.rules.test_forgod import card, centre, placed, setup_of


@pytest.fixture
def game():
    s = setup_of(card(1, "ana", commander=True, reaction=2), card(2, "ana"), card(3, "ana", type="archery"),
                 card(11, "bo", commander=True, reaction=0, level=3), card(12, "bo"))
    return ForgodGame(s)


def test_reaction_roll_decides_who_acts_first_and_ties_roll_again(game):
    with pytest.raises(IllegalEvent, match="roll again"):
        game.push(Reaction({"ana": 3, "bo": 5}))  # 3 + 2 = 5 + 0
    with pytest.raises(IllegalEvent, match="one d10 for each"):
        game.push(Reaction({"ana": 3}))
    with pytest.raises(IllegalEvent, match="1 to 10"):
        game.push(Reaction({"ana": 11, "bo": 1}))
    game.push(Reaction({"ana": 2, "bo": 5}))  # 4 against 5
    assert game.turn_player == "bo" and game.round == 1


def test_first_round_only_commanders_then_alternating_cycles(game):
    game.push(Reaction({"ana": 9, "bo": 1}))
    assert game.summary()["may_act"] == {"ana": [1], "bo": [11]}
    with pytest.raises(IllegalEvent, match="only commanders act in the first round"):
        game.push(Act(2, "move"))
    with pytest.raises(IllegalEvent, match="it is ana's turn"):
        game.push(Act(11, "move"))
    game.push(Act(1, "move"))
    assert game.turn_player == "bo"
    game.push(Act(11, "attack", 2))
    assert game.turn_player is None and game.log[-1] == "round 1 ends"
    with pytest.raises(IllegalEvent, match="reaction roll first"):
        game.push(Act(2, "move"))
    game.push(Reaction({"ana": 1, "bo": 8}))
    assert game.turn_player == "bo" and game.summary()["may_act"]["bo"] == [12]  # 11 acted: 12 goes first
    game.push(Act(12, "move"))
    assert game.turn_player == "ana" and game.summary()["may_act"]["ana"] == [2, 3]
    game.push(Act(2, "move"))
    game.push(Act(11, "move"))  # bo's cycle was complete: a new one
    # bo's cards have all acted this round (12 and 11): the round ends, though ana's 3 has not
    assert game.turn_player is None and game.round == 2
    game.push(Reaction({"ana": 9, "bo": 1}))
    assert game.summary()["may_act"]["ana"] == [3]  # its cycle carries over: 3 still owes its turn
    with pytest.raises(IllegalEvent, match="it acted already"):
        game.push(Act(2, "move"))
    game.pop()
    assert game.round == 2 and game.turn_player is None  # undo is exact


def test_a_charge_lands_on_the_next_turn_and_a_failed_one_allows_a_counter(game):
    game.push(Reaction({"ana": 9, "bo": 1}))
    game.push(Act(1, "charge", 12))
    assert game.summary()["due"] == [{"card": 1, "action": "charge", "target": 12, "player": "ana", "now": False,
                                      "needs": "attack roll"}]
    with pytest.raises(IllegalEvent, match="lands on ana's next turn"):
        game.push(Resolve(1, "hit"))
    # while it charges, card 1 has -4 evasion against anyone
    effects = game.effects()
    assert (1, "target", ) == effects[0][:2] and effects[0][2].value == -4
    game.push(Act(11, "move"))
    game.push(Reaction({"ana": 9, "bo": 1}))
    assert game.summary()["due"][0]["now"]
    with pytest.raises(IllegalEvent, match="resolve first"):
        game.push(Act(2, "move"))
    game.push(Resolve(1, "failed"))
    assert game.summary()["counters"] == [{"card": 12, "against": 1}]
    game.push(Counter(12, 1))
    with pytest.raises(IllegalEvent, match="no counter-attack"):
        game.push(Counter(12, 1))


def test_flank_cross_check_then_charge_and_flank_lands(game):
    game.push(Reaction({"ana": 9, "bo": 1}))
    game.push(Act(1, "charge_flank", 11))
    with pytest.raises(IllegalEvent, match="fortitude cross-check"):
        game.push(Act(11, "move"))
    with pytest.raises(IllegalEvent, match="outcome: one of won, lost"):
        game.push(Resolve(1, "hit"))
    game.push(Resolve(1, "won"))
    game.push(Act(11, "move"))
    game.push(Reaction({"ana": 9, "bo": 1}))
    game.push(Resolve(1, "hit"))
    assert "hit" in game.log[-1] and game.summary()["due"] == []


def test_ranged_cards_cannot_charge_and_chargers_cannot_attack(game):
    game.push(Reaction({"ana": 9, "bo": 1}))
    game.push(Act(1, "move"))
    game.push(Act(11, "move"))
    game.push(Reaction({"ana": 9, "bo": 1}))
    with pytest.raises(IllegalEvent, match="range only: it cannot charge"):
        game.push(Act(3, "charge", 12))
    with pytest.raises(IllegalEvent, match="own side"):
        game.push(Act(2, "attack", 3))
    with pytest.raises(IllegalEvent, match="protects one of ana's own cards"):
        game.push(Act(2, "shield", 12))


def test_shield_and_royal_guard_change_the_verdict(game):
    s = game.setup
    game.push(Reaction({"ana": 9, "bo": 1}))
    game.push(Act(1, "move"))
    game.push(Act(11, "move"))
    game.push(Reaction({"ana": 9, "bo": 1}))
    game.push(Act(2, "shield", 1))
    game.push(Act(12, "royal_guard", 11))
    p = placed(s, m1=centre(3, 2), m2=centre(2, 2), m11=centre(3, 3), m12=centre(4, 3))
    v = attack(s.rules, p, 11, 1, effects=game.effects())
    assert any(m.name == "shielded" and m.value == 2 for m in v.modifiers) and v.to_json()["evasion_bonus"] == -2 + 2
    v = attack(s.rules, p, 1, 11, effects=game.effects(), guarded_by=game.guarded_commander(11))
    assert not v.legal and any("royal guard (card 12)" in r for r in v.reasons)
    v = attack(s.rules, p, 1, 12, effects=game.effects(), guarded_by=game.guarded_commander(12))
    assert any(m.name == "royal guard" and m.value == -2 for m in v.modifiers)


def test_deaths_the_rearguard_and_the_winner(game):
    game.push(Reaction({"ana": 9, "bo": 1}))
    game.push(ReachedRearguard(11))
    assert game.log[-1] == "card 11 reached ana's rearguard: ana discards 3 addition(s)"
    game.push(CardDied(12, "3 damage"))
    with pytest.raises(IllegalEvent, match="out of the engagement"):
        game.push(CardDied(12))
    game.push(CardDied(11))
    assert game.winner == "ana" and "no card left" in game.log[-1]
    with pytest.raises(IllegalEvent, match="over"):
        game.push(Act(1, "move"))


def test_saved_form_replays_exactly(game):
    game.push(Reaction({"ana": 9, "bo": 1}))
    game.push(Act(1, "flank", 11, note="card turned 90 deg"))
    game.push(Resolve(1, "lost"))
    again = ForgodGame.from_json(game.to_json(), game.setup)
    assert again.summary() == game.summary() and again.to_json() == game.to_json()
    for bad, word in [({"kind": "act"}, "card: required"), ({"kind": "act", "card": "x"}, "card: a card id"),
                      ({"kind": "dance"}, "kind: unknown"), ({"kind": "act", "card": 1, "n": 2}, "n: not a field"),
                      ({"kind": "reaction", "rolls": {"ana": "6"}}, "rolls:")]:
        with pytest.raises(ValueError, match=word):
            event_from_json(bad)


def test_cross_checks_count_detachments_and_the_commander():
    from companion.rules.forgod.checks import cross_check, placement_problems
    from companion.rules.forgod.odds import check_odds

    s = setup_of(card(1, "ana", commander=True, level=10, morale=1), card(2, "ana", cards=5, fortitude=1, morale=2),
                 card(11, "bo", commander=True, level=3, fortitude=2), card(12, "bo", cards=3, morale=0))
    p = placed(s, m1=centre(3, 0), m2=centre(3, 2), m11=centre(3, 5), m12=centre(3, 3))
    c = cross_check(s.rules, p, 2, 12, "fortitude").to_json()
    assert (c["bonus_a"], c["bonus_d"]) == (1 + 2, 0 + 1)  # 5 cards: +2; 3 cards: +1
    assert c["attacker_wins"] == float(check_odds(3, 1).attacker_wins)
    c = cross_check(s.rules, p, 2, 12, "morale").to_json()
    assert (c["bonus_a"], c["bonus_d"]) == (2 + 2 + 1, 0 + 1)  # ana's level-10 commander on the board: +1
    assert any(m["name"] == "commander" for m in c["attacker_modifiers"])
    p_off = placed(s, m1=(10.0, 10.0), m2=centre(3, 2), m12=centre(3, 3))
    assert cross_check(s.rules, p_off, 2, 12, "morale").to_json()["bonus_a"] == 4  # the commander is off the board
    assert placement_problems(p, "cover", 2, 1) == []  # two squares apart
    far = placed(s, m1=centre(0, 0), m2=centre(3, 2))
    assert "3 squares" in placement_problems(far, "cover", 1, 2)[0]
    assert "not in the square next to" in placement_problems(far, "royal_guard", 2, 1)[0]
    assert placement_problems(placed(s, m1=centre(3, 0), m2=centre(3, 1)), "royal_guard", 2, 1) == []
