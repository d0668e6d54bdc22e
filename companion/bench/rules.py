"""`companion bench rules`: every attack query for every pair on a 12-unit, 10-block table."""

from __future__ import annotations

import random
import time

from companion.rules.knight.attack import RANGES, attack
from companion.rules.table import Block, Table, Unit
from companion.setup_file import PlayerSpec

FACTIONS = ("orcs", "humans", "dwarves", "rodents", "skeletons")


def random_table(seed: int, n_units: int = 12, n_blocks: int = 10) -> Table:
    rng = random.Random(seed)
    units = []
    for i in range(n_units):
        player = "red" if i % 2 == 0 else "blue"
        units.append(Unit(i + 4, f"u{i + 4}", player, rng.choice(FACTIONS), rng.choice(list(RANGES)),
                          (rng.uniform(100, 700), rng.uniform(100, 500)), rng.uniform(0, 360), 12.5, 40.0,
                          rng.choice([0.0, 0.0, 9.6])))
    blocks = []
    for k in range(n_blocks):
        x, y = rng.uniform(100, 700), rng.uniform(100, 500)
        w, d = rng.choice([(31.8, 15.8), (63.8, 15.8), (47.8, 7.8)])
        blocks.append(Block(k, ((x, y), (x + w, y), (x + w, y + d), (x, y + d)), rng.choice([9.6, 19.2, 48.0])))
    return Table(tuple(units), tuple(blocks), (), (PlayerSpec("red"), PlayerSpec("blue")))


def run(tables: int = 20, seed: int = 0) -> dict:
    per_table_ms = []
    queries = legal = 0
    for k in range(tables):
        table = random_table(seed * 1000 + k)
        start = time.perf_counter()
        for a in table.units:
            for b in table.units:
                if a.id != b.id:
                    legal += attack(table, a.id, b.id).legal
                    queries += 1
        per_table_ms.append((time.perf_counter() - start) * 1000)
    per_table_ms.sort()
    return {"tables": tables, "units": 12, "blocks": 10, "queries_per_table": queries // tables,
            "legal_share": round(legal / queries, 3), "ms_per_table_median": round(per_table_ms[len(per_table_ms) // 2], 1),
            "ms_per_table_max": round(per_table_ms[-1], 1), "target_ms": 50}


def format_table(r: dict) -> str:
    return (f"bench rules: {r['tables']} tables of {r['units']} units and {r['blocks']} blocks, "
            f"{r['queries_per_table']} attack queries each ({r['legal_share']:.0%} legal)\n"
            f"whole table: median {r['ms_per_table_median']} ms, max {r['ms_per_table_max']} ms (target <= {r['target_ms']} ms)")
