"""Which square each card stands in, seen by the camera: its side, its line, the enemy field."""

from __future__ import annotations

from dataclasses import dataclass

from companion.rules.forgod.board import ADVANCED, Square
from companion.rules.forgod.cards import Card, Forgod
from companion.rules.table import Table


@dataclass(frozen=True)
class Placed:
    card: Card
    square: Square | None  # None: off the board
    side: str = ""  # the player owning the square
    line: str = ""  # the square's line for its owner
    in_enemy_field: bool = False

    @property
    def fights_from(self) -> str:
        """The line whose modifiers apply: the whole enemy field counts as advanced; powers have none."""
        if self.square is None or self.card.type == "power":
            return ""
        return ADVANCED if self.in_enemy_field else self.line

    def to_json(self) -> dict:
        col, row = self.square
        return {"col": col, "row": row, "side": self.side, "line": self.line, "in_enemy_field": self.in_enemy_field}


def place(rules: Forgod, table: Table) -> dict[int, Placed]:
    """Every roster card the state placed, by id."""
    board = rules.board
    out = {}
    for unit in table.units:
        card = rules.card(unit.id)
        if card is None:
            continue
        square = board.square_at(*unit.centre)
        if square is None:
            out[unit.id] = Placed(card, None)
            continue
        owner = rules.players[board.side_of(square[1])]
        out[unit.id] = Placed(card, square, owner, board.line_of(square[1]), owner != card.player)
    return out


def cells_json(placed: dict[int, Placed]) -> dict:
    return {"cells": {str(i): p.to_json() for i, p in sorted(placed.items()) if p.square is not None},
            "off_board": sorted(i for i, p in placed.items() if p.square is None)}
