"""`companion bench verdicts`: what players see of the camera's errors — Knight attack verdicts
from the state the camera saw against verdicts from the exact truth, pair by pair.

For each bench table (a rendered scene: loose bricks plus, by default, a wall that turns, a tower
and a row of touching bricks), every enemy pair in both directions is judged twice by the same
rules code (`knight.attack`): once on the table state `Locator` made of the frame, once on the
truth (the scene's minis where they stand, its blocks as `Scene.truth_blocks` groups them). The
fields a player argues about are compared one by one; each disagreement is put down to a cause.

The plain way on the same frames: plain OpenCV's markers (`bench.vision.plain_opencv`) and the
plain HSV blocks (`blockscore.plain_blocks`), which measure no height: they are taken as two
bricks (19.2 mm), a usual wall.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from companion.bench.blockscore import HALF_BRICK_MM, plain_blocks, polygon_iou
from companion.bench.vision import plain_opencv
from companion.rules.knight.attack import AttackVerdict, attack, line_cover
from companion.rules.table import Table
from companion.setup_file import Setup
from companion.state import BlockState, MiniState, TableState
from companion.synth.scene import Scene
from companion.synth.worlds import Camera, bench_scene
from companion.vision.blocks import union_outline
from companion.vision.brickfit import TableRect
from companion.vision.exposure import PAPER_CLIPPED_WARNING
from companion.vision.locator import Locator

FIELDS = ("legal", "in_range", "in_view", "full_cover", "partial_cover", "elevation", "attack_bonus", "defence_bonus")
PLAIN_BLOCK_HEIGHT_MM = 19.2
POSITION_OFF_MM = 3.0  # a unit placed further than this from the truth is a position cause
DEFAULT_LAYOUT = {"n_walls": 1, "n_towers": 1, "n_touching": 1}
TARGETS = {"all_fields": 0.995, "tables_all_right": 0.9}


def verdict_fields(v: AttackVerdict) -> dict[str, object]:
    return {"legal": v.legal, "in_range": v.in_range, "in_view": v.in_view, "full_cover": v.cover.full,
            "partial_cover": v.cover.partial, "elevation": v.elevation, "attack_bonus": v.attack_bonus,
            "defence_bonus": v.defence_bonus}


def truth_state(scene: Scene) -> TableState:
    """The table as it is: every mini where it stands, every block as one footprint."""
    minis = tuple(MiniState(id=m.id, x_mm=m.x_mm, y_mm=m.y_mm, z_mm=m.z_mm, heading_deg=m.heading_deg % 360,
                            tilt_deg=m.tilt_deg) for m in scene.minis)
    blocks = []
    for i, (footprints, height, colour, _) in enumerate(scene.truth_blocks()):
        outline = footprints[0] if len(footprints) == 1 else union_outline_of(footprints)
        blocks.append(BlockState(tuple((float(x), float(y)) for x, y in outline), float(height), colour, id=i))
    return TableState(registered=True, minis=minis, blocks=tuple(blocks))


def union_outline_of(footprints: list[np.ndarray]) -> np.ndarray:
    """One outline of touching brick footprints (a wall's, a tower's)."""
    return union_outline([TableRect.from_quad(f) for f in footprints])


@dataclass
class Disagreement:
    table: int
    attacker: int
    target: int
    fields: tuple[str, ...]
    cause: str

    def to_json(self) -> dict:
        return {"table": self.table, "attacker": self.attacker, "target": self.target, "fields": list(self.fields),
                "cause": self.cause}


@dataclass
class VerdictScore:
    name: str
    pairs: int = 0
    tables: int = 0
    tables_all_right: int = 0
    agree: dict[str, int] = field(default_factory=lambda: {f: 0 for f in FIELDS})
    all_fields: int = 0
    cover_wrong: int = 0  # pairs whose full or partial cover differs from the truth's
    cover_wrong_flagged: int = 0  # of those, the ones the seen verdict called a close call
    cover_right_flagged: int = 0  # pairs whose cover is right though the seen verdict called it close
    wrong_flagged: int = 0  # pairs wrong in any field that the seen verdict called a close call
    right_flagged: int = 0  # pairs right in every field that it called a close call all the same
    # wrong where the attack may be made (legal in truth), and of those wrong without a word: the
    # verdicts a player acts on (the rest differ only in what an attack that cannot be made meets)
    wrong_on_legal: int = 0
    silent_on_legal: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)

    def add_table(self, index: int, scene: Scene, setup: Setup, seen: TableState, truth: TableState) -> None:
        seen_table, truth_table = Table.from_state(seen, setup), Table.from_state(truth, setup)
        seen_ids = {u.id for u in seen_table.units}
        right = True
        for a in truth_table.units:
            for t in truth_table.units:
                if a.player == t.player:
                    continue
                self.pairs += 1
                want = verdict_fields(attack(truth_table, a.id, t.id))
                flagged = False
                if a.id not in seen_ids or t.id not in seen_ids:
                    got: dict[str, object] = {}
                else:
                    seen_verdict = attack(seen_table, a.id, t.id)
                    got = verdict_fields(seen_verdict)
                    flagged = seen_verdict.close_call
                wrong = tuple(f for f in FIELDS if got.get(f) != want[f])
                if {"full_cover", "partial_cover"} & set(wrong):
                    self.cover_wrong += 1
                    self.cover_wrong_flagged += flagged
                else:
                    self.cover_right_flagged += flagged
                for f in FIELDS:
                    self.agree[f] += f not in wrong
                if not wrong:
                    self.all_fields += 1
                    self.right_flagged += flagged
                    continue
                self.wrong_flagged += flagged
                legal = bool(want["legal"])
                self.wrong_on_legal += legal
                self.silent_on_legal += legal and not flagged
                right = False
                self.disagreements.append(Disagreement(index, a.id, t.id, wrong,
                                                       cause(seen_table, truth_table, a.id, t.id)))
        self.tables += 1
        self.tables_all_right += right

    def summary(self) -> dict:
        def share(n: int, of: int) -> float | None:
            return round(n / of, 4) if of else None

        causes: dict[str, int] = {}
        for d in self.disagreements:
            kind = d.cause.split(":")[0]
            causes[kind] = causes.get(kind, 0) + 1
        return {"method": self.name, "pairs": self.pairs, "tables": self.tables,
                "per_field": {f: share(n, self.pairs) for f, n in self.agree.items()},
                "all_fields": share(self.all_fields, self.pairs),
                "tables_all_right": share(self.tables_all_right, self.tables),
                "causes": dict(sorted(causes.items(), key=lambda kv: -kv[1])),
                "cover_wrong": self.cover_wrong, "cover_wrong_called_close": self.cover_wrong_flagged,
                "cover_right_called_close": self.cover_right_flagged,
                # what players are told: a wrong verdict called a close call asks them to measure;
                # a silent one does not
                "wrong_called_close": self.wrong_flagged,
                "wrong_silent": self.pairs - self.all_fields - self.wrong_flagged,
                "wrong_on_legal": self.wrong_on_legal,
                "wrong_silent_on_legal": self.silent_on_legal,
                "right_called_close": self.right_flagged,
                "worst": [d.to_json() for d in sorted(self.disagreements, key=lambda d: -len(d.fields))[:8]]}


def cause(seen: Table, truth: Table, attacker_id: int, target_id: int) -> str:
    """Why one pair's verdict differs: the first of a unit not seen, a unit off its place, a block
    on the line of attack missed, seen where there is none, with its top off, or its footprint."""
    seen_units = {u.id: u for u in seen.units}
    for uid in (attacker_id, target_id):
        if uid not in seen_units:
            return f"unit missing: unit {uid} not seen"
        off = math.dist(seen_units[uid].centre, truth.unit(uid).centre)
        if off > POSITION_OFF_MM:
            return f"position: unit {uid} {off:.1f} mm off"
    a, t = truth.unit(attacker_id), truth.unit(target_id)
    profile = truth.player(a.player)
    truth_cover = {b.id: b for b in line_cover(truth, a, t, profile).blocks}
    seen_cover = {b.id: b for b in line_cover(seen, seen.unit(attacker_id), seen.unit(target_id),
                                              seen.player(a.player)).blocks}
    seen_blocks = {b.id: b for b in seen.blocks}
    truth_blocks = {b.id: b for b in truth.blocks}
    for bid, tb in truth_cover.items():
        match = _best_match(truth_blocks[bid].footprint, seen.blocks)
        if match is None:
            return f"missed block: the {truth_blocks[bid].color} block {tb.height_mm:.1f} mm high on the line"
        if abs(match.height_mm - tb.height_mm) > HALF_BRICK_MM or (
                match.id in seen_cover and seen_cover[match.id].kind != tb.kind):
            return (f"height: the {truth_blocks[bid].color} block {tb.height_mm:.1f} mm high seen at "
                    f"{match.height_mm:.1f} mm ({tb.kind} cover in truth)")
        if match.id not in seen_cover:
            return f"footprint: the {truth_blocks[bid].color} block on the line seen beside it"
    for bid in seen_cover:
        if _best_match(seen_blocks[bid].footprint, truth.blocks) is None:
            return f"false block: {seen_blocks[bid].color}, seen on the line where there is none"
        return f"footprint: the {seen_blocks[bid].color} block seen on the line is off it in truth"
    return "position: within a few mm, across a range or view line"


def _best_match(footprint, blocks) -> object | None:
    best, best_iou = None, 0.3
    for b in blocks:
        iou = polygon_iou(np.asarray(footprint, float), np.asarray(b.footprint, float))
        if iou > best_iou:
            best, best_iou = b, iou
    return best


def plain_state(image: np.ndarray, scene: Scene, setup: Setup) -> TableState:
    located, _ = plain_opencv(image, scene)
    minis = tuple(MiniState(id=i, x_mm=x, y_mm=y, z_mm=z, heading_deg=h) for i, (x, y, z, h) in located.items())
    found = plain_blocks(image, setup, scene.camera, scene.pose)
    blocks = tuple(BlockState(tuple((float(x), float(y)) for x, y in b.footprint_mm), PLAIN_BLOCK_HEIGHT_MM, b.color,
                              id=i) for i, b in enumerate(found))
    return TableState(registered=True, minis=minis, blocks=blocks)


def run(scenes: int = 12, seed: int = 0, renderer: str = "raycast", layout: dict[str, int] | None = None,
        progress=None) -> dict:
    layout = DEFAULT_LAYOUT if layout is None else layout
    camera = Camera(renderer)
    scores = [VerdictScore("pipeline"), VerdictScore("plain (OpenCV markers, HSV blocks)")]
    # The pipeline's verdicts again, split by whether the frame clips the anchors' paper (it warns).
    by_paper = {True: VerdictScore("paper clipped"), False: VerdictScore("paper not clipped")}
    for k in range(scenes):
        scene = bench_scene(renderer, seed * 100003 + k, "standard", **layout)
        image = camera.render(scene)
        setup = scene.setup()
        truth = truth_state(scene)
        seen = Locator(setup).analyse(image).state
        scores[0].add_table(k, scene, setup, seen, truth)
        by_paper[PAPER_CLIPPED_WARNING in seen.warnings].add_table(k, scene, setup, seen, truth)
        scores[1].add_table(k, scene, setup, plain_state(image, scene, setup), truth)
        if progress:
            progress(k + 1, scenes)
    return {"renderer": renderer, "scenes": scenes, "seed": seed, **{k.removeprefix("n_"): v for k, v in layout.items()},
            "methods": [s.summary() for s in scores], "targets": TARGETS,
            "by_paper": {("clipped" if k else "not_clipped"): {f: v.summary()[f] for f in ("tables", "pairs", "all_fields",
                                                                                             "tables_all_right")}
                         for k, v in by_paper.items()}}


def format_table(result: dict) -> str:
    layout = ", ".join(f"{result[k]} {k}" for k in ("walls", "towers", "touching") if k in result)
    if result.get("standing"):
        layout += f", {result['standing']} minis standing on blocks"
    lines = [f"bench verdicts: {result['scenes']} tables, {result['renderer']} camera, seed {result['seed']} "
             f"(each: loose bricks, {layout}); Knight attack verdicts, seen state vs truth"]
    cols = list(FIELDS) + ["all_fields", "tables_all_right"]
    widths = [max(len(c) + 2, 9) for c in cols]
    lines.append(f"{'method':<36}" + "".join(f"{c:>{w}}" for c, w in zip(cols, widths)))
    for m in result["methods"]:
        values = [m["per_field"][f] for f in FIELDS] + [m["all_fields"], m["tables_all_right"]]
        lines.append(f"{m['method']:<36}" + "".join(f"{'-' if v is None else v:>{w}}" for v, w in zip(values, widths)))
    lines.append(f"targets (pipeline): all_fields >= {TARGETS['all_fields']}, "
                 f"tables_all_right >= {TARGETS['tables_all_right']}")
    for m in result["methods"]:
        lines.append(f"{m['method']}: {m['pairs'] - round((m['all_fields'] or 0) * m['pairs'])} of {m['pairs']} pairs "
                     f"differ ({m['wrong_on_legal']} on an attack that may be made); causes: "
                     + (", ".join(f"{k} {v}" for k, v in m["causes"].items()) or "none")
                     + f"; called a close call {m['wrong_called_close']} of them, silent {m['wrong_silent']}"
                     + f" ({m['wrong_silent_on_legal']} on an attack that may be made)"
                     + f"; right but called a close call {m['right_called_close']}"
                     + f" (cover wrong on {m['cover_wrong']}, {m['cover_wrong_called_close']} of them called close)")
    clipped, fine = result["by_paper"]["clipped"], result["by_paper"]["not_clipped"]
    if clipped["tables"] and fine["tables"]:
        lines.append(f"the anchors' paper at the camera's ceiling (the frame warns) on {clipped['tables']} of "
                     f"{clipped['tables'] + fine['tables']} tables: all fields {clipped['all_fields']} there "
                     f"({clipped['pairs']} pairs), {fine['all_fields']} elsewhere ({fine['pairs']}); tables right on "
                     f"every pair {clipped['tables_all_right']} and {fine['tables_all_right']}")
    else:
        lines.append(f"the anchors' paper at the camera's ceiling (the frame warns) on "
                     f"{'all' if clipped['tables'] else 'none'} of the {clipped['tables'] + fine['tables']} tables")
    worst = result["methods"][0]["worst"]
    if worst:
        lines.append("worst disagreements (pipeline):")
        for d in worst:
            lines.append(f"  table {d['table']}, unit {d['attacker']} -> {d['target']}: {', '.join(d['fields'])} "
                         f"({d['cause']})")
    return "\n".join(lines)
