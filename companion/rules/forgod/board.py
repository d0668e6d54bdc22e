"""The F0R60D board: two facing battlefields of aligned squares laid in the table frame.

Player 1 owns rows 0..R-1 (rearguard 0, advanced R-1), player 2 rows R..2R-1 (advanced R, rearguard
2R-1); the rows between are normal (with R = 1 the single row is normal). A card's square holds its
base centre; a centre exactly on a line goes to the higher index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Square = tuple[int, int]  # (col, row)

REARGUARD, NORMAL, ADVANCED = "rearguard", "normal", "advanced"
# Float noise must not move a centre that sits exactly on a line (x = origin + 3 w) to the lower square.
_ON_LINE = 1e-9


@dataclass(frozen=True)
class Board:
    square_w_mm: float = 70.0  # along x
    square_d_mm: float = 95.0  # along y
    origin_x_mm: float = 100.0  # least-x, least-y corner of square (0, 0)
    origin_y_mm: float = 60.0
    columns: int = 7
    rows_per_side: int = 3

    @property
    def rows(self) -> int:
        return 2 * self.rows_per_side

    def square_at(self, x_mm: float, y_mm: float) -> Square | None:
        """The square holding a point, None off the board."""
        col = math.floor((x_mm - self.origin_x_mm) / self.square_w_mm + _ON_LINE)
        row = math.floor((y_mm - self.origin_y_mm) / self.square_d_mm + _ON_LINE)
        if 0 <= col < self.columns and 0 <= row < self.rows:
            return col, row
        return None

    def side_of(self, row: int) -> int:
        """0 for the first player's field, 1 for the second's."""
        return 0 if row < self.rows_per_side else 1

    def line_of(self, row: int) -> str:
        """The row's formation line for the player who owns it."""
        r = self.rows_per_side
        depth = row if row < r else 2 * r - 1 - row  # 0 at the owner's back edge
        if r == 1:
            return NORMAL
        if depth == 0:
            return REARGUARD
        if depth == r - 1:
            return ADVANCED
        return NORMAL

    def forward(self, side: int) -> int:
        """The row step towards the enemy for a card of `side`."""
        return 1 if side == 0 else -1

    def corners(self, square: Square) -> tuple[tuple[float, float], ...]:
        col, row = square
        x0, y0 = self.origin_x_mm + col * self.square_w_mm, self.origin_y_mm + row * self.square_d_mm
        x1, y1 = x0 + self.square_w_mm, y0 + self.square_d_mm
        return (x0, y0), (x1, y0), (x1, y1), (x0, y1)

    @property
    def size_mm(self) -> tuple[float, float]:
        return self.columns * self.square_w_mm, self.rows * self.square_d_mm
