"""Contienda Arcana on the hex grid of the setup's [hex] table.

GET /api/contienda/grid -> {size_mm (across flats), origin_mm, hexes [[q, r, [[x, y] x6]]]} for the
hexes that touch the table (pointy-top, axial q, r).
GET /api/contienda/cells -> {cells {id: [q, r]}, flanked [ids], deployment_problems [text]}.
GET /api/contienda/reach?unit=A&ap=N[&mobility=M] -> {unit, ap, hexes [[q, r, ap_cost]], provoking
[[q, r]] (reached only by leaving a hex next to an enemy), charges [{direction, path, targets}]}.
GET /api/contienda/odds?mod=M[&advantage=1|&disadvantage=1][&attack_number=K] -> {full, partial,
miss, fractions}: 2d6 + M bands 10+ / 7-9 / 6-."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.rules.contienda import HexGrid, cells, charge_lanes, deployment_problems, flanked, odds, reach
from companion.web.api import arg_bool, arg_int, bad
from companion.web.context import Companion, companion

bp = Blueprint("contienda", __name__)


def _grid(c: Companion) -> HexGrid:
    return c.setup.rules


@bp.get("/contienda/grid")
def get_grid():
    c = companion()
    return jsonify(_grid(c).grid_json(c.setup.table.width_mm, c.setup.table.depth_mm))


@bp.get("/contienda/cells")
def get_cells():
    c = companion()
    grid = _grid(c)
    table = c.view().table
    players = tuple(p.name for p in c.setup.players)
    return jsonify({"cells": {str(k): list(v) for k, v in cells(table, grid).items()},
                    "flanked": [u.id for u in table.units if flanked(table, grid, u.id)],
                    "deployment_problems": deployment_problems(table, grid, players[:2]) if len(players) >= 2 else []})


@bp.get("/contienda/reach")
def get_reach():
    c = companion()
    grid = _grid(c)
    table = c.view().table
    unit = table.unit(arg_int("unit"))
    result = reach(table, grid, unit.id, arg_int("ap", 3, 0, 3), arg_int("mobility", 4, 1, 12))
    return jsonify({"unit": unit.id, "ap": arg_int("ap", 3, 0, 3), "hexes": [list(h) for h in result.hexes],
                    "provoking": [list(h) for h in result.provoking], "charges": [lane.to_json() for lane in charge_lanes(table, grid, unit.id)]})


@bp.get("/contienda/odds")
def get_odds():
    advantage, disadvantage = arg_bool("advantage"), arg_bool("disadvantage")
    if advantage and disadvantage:
        raise bad("disadvantage", "advantage and disadvantage cancel: send neither")
    return jsonify(odds(arg_int("mod", 0, -10, 10), int(advantage), int(disadvantage),
                        arg_int("attack_number", 1, 1, 6)).to_json())
