"""Hand-built Knight tables for the rules tests (no camera involved)."""

from companion.rules.table import Block, Table, Unit
from companion.setup_file import PlayerSpec

RED = PlayerSpec("red", 178.0, 20.0)
BLUE = PlayerSpec("blue", 152.0, 16.0)  # a child's hand


def unit(uid, player, x, y, heading=0.0, cls="berserker", faction="", standing=0.0, height=40.0, base=25.0, tilt=0.0):
    return Unit(uid, f"u{uid}", player, faction, cls, (float(x), float(y)), heading, base / 2, height, standing, tilt)


def block(bid, x0, y0, x1, y1, height):
    return Block(bid, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)), height, "gray")


def table(*units, blocks=(), objects=()):
    return Table(tuple(units), tuple(blocks), tuple(objects), (RED, BLUE))
