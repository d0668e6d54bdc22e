import pytest

from companion.rules.knight.game import (BecameSkeleton, Convert, Destroyed, EndTurn, Game, Hire, IllegalEvent,
                                         Interrupt, Spend, StartTurn, UnitDied)
from companion.setup_file import MiniSpec, PlayerSpec, Setup


def setup():
    minis = [MiniSpec(i, f"red {i}", player="red", unit_class="berserker", faction="orcs") for i in range(4, 9)]
    minis += [MiniSpec(i, f"blue {i}", player="blue", unit_class="defender", faction="humans") for i in range(10, 15)]
    minis += [MiniSpec(20, "skeleton mercenary", player="red", unit_class="shooter", faction="skeletons")]
    return Setup(path="<test>", players=(PlayerSpec("red"), PlayerSpec("blue")), minis=tuple(minis))


def play_round(game, castle):
    for player in game.players:
        game.push(StartTurn(player, 3, 2, 4))
        game.push(EndTurn({"castle": castle}))


def test_siege_counts_rounds_and_the_attacker_wins_by_taking_the_castle():
    game = Game(setup(), "siege", castle_holder="blue")
    play_round(game, "blue")
    play_round(game, None)
    assert game.rounds_done == 2 and game.round == 3 and game.winner is None
    assert "a coin by the castle (2 of 10)" in game.log[-1]
    play_round(game, "red")
    assert game.winner == "red" and "by the end of round 3" in game.win_reason
    with pytest.raises(IllegalEvent, match="game is over"):
        game.push(StartTurn("red", 1, 1, 1))
    game.pop()  # undo the last end of turn: the game is open again
    assert game.winner is None and game.turn_player == "blue"


def test_siege_defender_wins_by_holding_through_round_ten():
    game = Game(setup(), "siege", castle_holder="blue")
    for _ in range(9):
        play_round(game, "blue")
    assert game.winner is None
    play_round(game, None)  # nobody holds it at the end of round 10: the attacker did not take it
    assert game.winner == "blue" and "through round 10" in game.win_reason


def test_turn_order_and_dice_rules():
    game = Game(setup(), "skirmish")
    with pytest.raises(IllegalEvent, match="it is red's turn"):
        game.push(StartTurn("blue", 3, 3, 3))
    with pytest.raises(IllegalEvent, match="roll the dice first"):
        game.push(EndTurn())
    game.push(StartTurn("red", 5, 2, 3))
    game.push(Convert(("black", "red"), "red"))  # black 2, red 5 - 1 = 4
    assert game.dice_left == {"black": 2, "red": 4, "white": 3}
    with pytest.raises(IllegalEvent, match="only right after the roll"):
        game.push(Convert(("black", "white"), "white"))
    with pytest.raises(IllegalEvent, match="black: 2 left, cannot spend 3"):
        game.push(Spend("black", 3, "a long march"))
    with pytest.raises(IllegalEvent, match="white die is a limit"):
        game.push(Spend("white", 1))
    game.push(Spend("red", 1, "attack on 10"))
    assert game.dice_left["red"] == 3
    game.pop()
    assert game.dice_left["red"] == 4


def test_an_interrupt_costs_one_on_every_die_next_turn_never_below_one():
    game = Game(setup(), "skirmish")
    game.push(StartTurn("red", 4, 4, 4))
    game.push(Interrupt("blue", 10))
    with pytest.raises(IllegalEvent, match="once per enemy turn"):
        game.push(Interrupt("blue", 11))
    game.push(EndTurn())
    game.push(StartTurn("blue", 1, 3, 6))
    assert game.dice_left == {"black": 1, "red": 2, "white": 5}


def test_afterlife_crystal_and_army_destroyed():
    game = Game(setup(), "skirmish")
    game.push(UnitDied(10, "berserker 4"))
    assert game.units[10].status == "skeleton"
    game.push(UnitDied(10))
    assert game.units[10].status == "gone" and game.balance("blue") == 1
    game.push(Destroyed("crystal", "blue"))
    game.push(UnitDied(11))
    assert game.units[11].status == "gone"  # no afterlife without the crystal
    for unit in (12, 13, 14):  # no crystal: each leaves at its first death
        game.push(UnitDied(unit))
    assert game.winner == "red" and "whole army" in game.win_reason


def test_hiring_needs_two_mine_coins_once_per_turn_and_no_priest():
    game = Game(setup(), "skirmish")
    for _ in range(2):
        for player in game.players:
            game.push(StartTurn(player, 2, 2, 2))
            game.push(EndTurn({"mine": "red"}))
    assert game.coins == {"red": 2, "blue": 0}
    game.push(StartTurn("red", 2, 2, 2))
    with pytest.raises(IllegalEvent, match="any class but the oblivion priest"):
        game.push(Hire("red", 30, "priest"))
    game.push(Hire("red", 30, "shooter"))
    assert game.units[30].status == "skeleton" and game.units[30].hired and game.coins["red"] == 0


def test_balance_counts_permanent_losses_less_hired_skeletons():
    game = Game(setup(), "skirmish")
    for unit in (4, 5):
        game.push(UnitDied(unit))
        game.push(UnitDied(unit))
    assert game.balance("red") == 2 and game.balance("blue") == 0


def test_plague_overlord_and_destruction():
    plague = Game(setup(), "plague")
    for unit in (10, 11, 12, 13):
        plague.push(BecameSkeleton(unit, "plague"))
    assert plague.winner is None
    plague.push(BecameSkeleton(14, "plague"))
    assert plague.winner == "red"
    overlord = Game(setup(), "overlord")
    overlord.push(StartTurn("red", 1, 1, 1))
    overlord.push(EndTurn({"obelisk": "red", "garden": "red", "mine": "blue"}))
    assert overlord.winner is None
    overlord.push(StartTurn("blue", 1, 1, 1))
    overlord.push(EndTurn({"obelisk": "blue", "garden": "blue", "mine": "blue"}))
    assert overlord.winner == "blue"
    destruction = Game(setup(), "destruction")
    destruction.push(Destroyed("castle", "red"))
    assert destruction.winner == "blue"


def test_the_log_round_trips_through_json():
    game = Game(setup(), "siege", castle_holder="blue")
    play_round(game, "blue")
    game.push(StartTurn("red", 6, 1, 2))
    game.push(Spend("black", 2, "march"))
    again = Game.from_json(game.to_json(), setup())
    assert again.summary() == game.summary()


def test_bad_construction_is_a_clear_error():
    with pytest.raises(ValueError, match="castle holder"):
        Game(setup(), "siege")
    with pytest.raises(ValueError, match="mode"):
        Game(setup(), "chess")


def test_the_game_view_of_the_table_raises_the_dead_as_skeletons_and_drops_the_gone():
    from companion.rules.table import Table
    from companion.state import MiniState, TableState

    s = setup()
    state = TableState(True, tuple(MiniState(id=i, x_mm=100.0 + 40 * i, y_mm=100.0, z_mm=40.0, heading_deg=0.0)
                                   for i in (4, 5, 10)))
    game = Game(s, "skirmish")
    game.push(UnitDied(4, "arrow"))  # rises as a skeleton
    game.push(UnitDied(5, "arrow"))
    game.push(UnitDied(5, "again"))  # a skeleton that dies is gone
    view = game.table_view(Table.from_state(state, s))
    assert {u.id: u.faction for u in view.units} == {4: "skeletons", 10: "humans"}


def test_played_this_round_lists_whose_turn_is_over():
    game = Game(setup(), "siege", castle_holder="blue")
    game.push(StartTurn("red", 3, 2, 4))
    assert game.played_this_round == ()
    game.push(EndTurn({}))
    assert game.played_this_round == ("red",)
    game.push(StartTurn("blue", 3, 2, 4))
    game.push(EndTurn({}))
    assert game.played_this_round == () and game.rounds_done == 1


@pytest.mark.parametrize("data, message", [
    ({"kind": "spend", "die": "black", "amount": "2"}, "amount must be an integer"),
    ({"kind": "spend", "die": "black", "amount": True}, "amount must be an integer"),
    ({"kind": "unit_died", "unit": 4, "cause": 7}, "cause must be a text"),
    ({"kind": "convert", "swap": ["black", 2], "lose_on": "black"}, "swap must be two dice names"),
    ({"kind": "end_turn", "control": {"castle": 1}}, "control must be"),
    ({"kind": "start_turn", "player": "red", "black": 1}, "start_turn:"),
    ({"kind": "teleport"}, "unknown event kind"),
])
def test_events_from_json_are_type_checked(data, message):
    from companion.rules.knight.game import event_from_json

    with pytest.raises(ValueError, match=message):
        event_from_json(data)
