"""`companion bench vision`: render scenes with known truth, locate minis, score against the truth.

Three ways on the same frames, in the same run:
- pipeline: the product (edge/pattern refinement, horizontal-marker geometry, roster heights
  blended in where the frame agrees; roster heights carry 1 mm of ruler error);
- pipeline, image only: the same without any height from the roster;
- plain OpenCV: ArucoDetector with default parameters, solvePnP for the table from the anchors and
  solvePnP (IPPE_SQUARE) per marker, the marker centre dropped straight down.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from companion.bench.blockscore import BLOCK_TARGETS, HAND_TARGETS, BlockScore, Reported, format_wrong, timed_plain
from companion.bench.lampscore import LampScore, format_lamps
from companion.setup_file import MiniSpec, Setup
from companion.synth.scene import Scene
from companion.synth.worlds import Camera, bench_scene
from companion.vision.blocks import BlockFinder
from companion.vision.exposure import paper_clipped
from companion.vision.locator import Locator
from companion.vision.markers import dictionary
from companion.vision.registration import square_corners_mm
from companion.vision.tableview import TableView


@dataclass
class Score:
    """Accumulated errors of one method over all scenes."""

    name: str
    expected: int = 0
    found: int = 0
    false_ids: int = 0
    xy_mm: list[float] = field(default_factory=list)
    z_mm: list[float] = field(default_factory=list)
    heading_deg: list[float] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)

    def add(self, scene: Scene, located: dict[int, tuple[float, float, float, float]], other_ids: set[int], ms: float) -> None:
        truth = {m.id: m for m in scene.minis}
        self.expected += len(truth)
        self.ms.append(ms)
        self.false_ids += len((set(located) | other_ids) - set(truth))
        for marker_id, (x, y, z, heading) in located.items():
            m = truth.get(marker_id)
            if m is None:
                continue
            self.found += 1
            self.xy_mm.append(math.hypot(x - m.x_mm, y - m.y_mm))
            self.z_mm.append(abs(z - m.z_mm))
            self.heading_deg.append(abs((heading - m.heading_deg + 180) % 360 - 180))

    def summary(self) -> dict:
        def pct(values: list[float], q: float) -> float | None:
            return round(float(np.percentile(values, q)), 3) if values else None

        return {
            "method": self.name,
            "recall": round(self.found / self.expected, 4) if self.expected else None,
            "false_ids": self.false_ids,
            "xy_mm_median": pct(self.xy_mm, 50), "xy_mm_p95": pct(self.xy_mm, 95),
            "z_mm_median": pct(self.z_mm, 50), "z_mm_p95": pct(self.z_mm, 95),
            "heading_deg_p95": pct(self.heading_deg, 95),
            "ms_per_frame": round(float(np.mean(self.ms)), 1) if self.ms else None,
        }


def plain_opencv(image: np.ndarray, scene: Scene) -> tuple[dict[int, tuple[float, float, float, float]], set[int]]:
    """The usual way: default ArucoDetector, solvePnP for the table, solvePnP per marker."""
    setup = scene.setup()
    camera = scene.camera
    detector = cv2.aruco.ArucoDetector(dictionary(setup.dictionary), cv2.aruco.DetectorParameters())
    corners, ids, _ = detector.detectMarkers(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    if ids is None:
        return {}, set()
    ids = [int(i) for i in np.asarray(ids).ravel()]
    quads = [np.asarray(c, np.float64).reshape(4, 2) for c in corners]
    anchors = {a.id: a for a in setup.anchors}
    obj, img = [], []
    for marker_id, quad in zip(ids, quads):
        if marker_id in anchors:
            a = anchors[marker_id]
            obj.append(square_corners_mm(a.x_mm, a.y_mm, a.size_mm, a.rotation_deg))
            img.append(quad)
    if not obj:
        return {}, set(ids) - set(anchors)
    ok, rvec, tvec = cv2.solvePnP(np.concatenate(obj), np.concatenate(img), camera.matrix, camera.distortion)
    rot_table, _ = cv2.Rodrigues(rvec)
    located: dict[int, tuple[float, float, float, float]] = {}
    others: set[int] = set()
    for marker_id, quad in zip(ids, quads):
        if marker_id in anchors:
            continue
        spec = setup.mini(marker_id)
        if spec is None:
            others.add(marker_id)
            continue
        h = spec.marker_mm / 2
        square = np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]], np.float64)
        ok, rv, tv = cv2.solvePnP(square, quad, camera.matrix, camera.distortion, flags=cv2.SOLVEPNP_IPPE_SQUARE)
        if not ok:
            continue
        rot_marker, _ = cv2.Rodrigues(rv)
        centre = rot_table.T @ (tv.ravel() - tvec.ravel())
        up = rot_table.T @ (rot_marker @ np.array([0.0, 1.0, 0.0]))
        located[marker_id] = (float(centre[0]), float(centre[1]), float(centre[2]),
                              math.degrees(math.atan2(up[1], up[0])) % 360)
    return located, others


def with_absent(setup: Setup) -> Setup:
    """The roster also listing every id of the dictionary that no mini, object or anchor on the
    table carries: a real roster lists the dead and the minis still in the box. Each read of one
    is a false id, and every frame takes the looks made for missing markers."""
    taken = {m.id for m in setup.minis} | {o.id for o in setup.objects} | set(setup.anchor_ids)
    count = int(dictionary(setup.dictionary).bytesList.shape[0])
    template = setup.minis[0] if setup.minis else MiniSpec(id=0, name="")
    return replace(setup, minis=setup.minis + tuple(replace(template, id=i, name=f"absent {i}")
                                                    for i in range(count) if i not in taken))


def run(scenes: int = 20, seed: int = 0, level: str = "standard", hands: int = 0, progress=None,
        renderer: str = "raycast", layout: dict[str, int] | None = None, absent: bool = False) -> dict:
    """`layout`: what each table holds besides its loose bricks (`random_scene`'s n_walls,
    n_towers, n_touching). `absent`: the rosters also list the ids no one on the table carries
    (`with_absent`)."""
    layout = layout or {}
    camera_of_scene = Camera(renderer)
    scores = [Score("pipeline"), Score("pipeline, image only"), Score("plain OpenCV")]
    block_scores = [BlockScore("pipeline"), BlockScore("plain (HSV + minAreaRect)")]
    # The pipeline's blocks again, split by whether the frame clips the anchors' paper (colours are
    # named against it: gray and white cannot be told apart where it is clipped).
    by_paper = {True: BlockScore("paper clipped"), False: BlockScore("paper not clipped")}
    lamps = LampScore()
    for k in range(scenes):
        scene = bench_scene(renderer, seed * 100003 + k, level, n_hands=hands, **layout)
        image = camera_of_scene.render(scene)
        for score, setup in ((scores[0], scene.setup()), (scores[1], scene.setup(roster_heights=False))):
            setup = with_absent(setup) if absent else setup
            locator = Locator(setup, blocks=False)
            start = time.perf_counter()
            analysis = locator.analyse(image)
            ms = (time.perf_counter() - start) * 1000
            state = analysis.state
            if score is scores[0]:
                # The whole frame: minis, then blocks on the registered pose.
                camera, _ = locator.camera(image.shape[1], image.shape[0])
                blocks: list[Reported] = []
                block_ms = None
                if analysis.registration.pose is not None:
                    start = time.perf_counter()
                    finder = BlockFinder(setup)
                    analysis = locator.with_blocks(image, analysis, finder)
                    found, state = list(analysis.blocks), analysis.state  # (minis stood on a block seen under them)
                    block_ms = (time.perf_counter() - start) * 1000
                    lamps.add(renderer, scene, [lamp.position_mm for lamp in finder.lamps])
                    blocks = [Reported(b.footprint_mm, b.height_mm, b.color, b.hidden_under is not None) for b in found]
                    plain, plain_ms = timed_plain(image, setup, camera, analysis.registration.pose)
                    block_scores[1].add(scene, plain, plain_ms)
                    clipped = paper_clipped(image, TableView(camera, analysis.registration.pose), setup.anchors)
                    by_paper[clipped].add(scene, blocks, block_ms)
                block_scores[0].add(scene, blocks, block_ms)
                ms += block_ms or 0.0
            located = {m.id: (m.x_mm, m.y_mm, m.z_mm, m.heading_deg) for m in state.minis}
            others = {u.id for u in state.unknown_markers} | {d.id for d in state.duplicate_markers}
            score.add(scene, located, others, ms)
        start = time.perf_counter()
        located, others = plain_opencv(image, scene)
        scores[2].add(scene, located, others, (time.perf_counter() - start) * 1000)
        if progress:
            progress(k + 1, scenes)
    return {"renderer": renderer, "level": level, "scenes": scenes, "seed": seed, "hands": hands, "absent": absent,
            **{k.removeprefix("n_"): v for k, v in layout.items()}, "resolution": "1920x1080",
            "threads": cv2.getNumThreads(), "minis": scores[0].expected, "methods": [s.summary() for s in scores],
            "blocks": block_scores[0].expected, "block_methods": [s.summary() for s in block_scores],
            "lamps": lamps.summary(), "paper_clipped_frames": by_paper[True].frames,
            "blocks_by_paper": {("clipped" if k else "not_clipped"): _split_summary(v) for k, v in by_paper.items()}}


def _split_summary(score: BlockScore) -> dict:
    summary = score.summary()
    return {"frames": score.frames, "blocks": score.expected, "found": summary["found"],
            "height_within_half_brick": summary["height_within_half_brick"], "colour_right": summary["colour_right"]}


# The targets of the open issue on cameras not this project's: tighter on the simple ray-cast
# renders than on the path-traced ones; the hard level asks for recall and xy only.
TARGETS = {
    ("standard", "simple"): {"recall": 1.0, "false_ids": 0, "xy_mm_p95": 1.0, "z_mm_p95": 3.0, "heading_deg_p95": 1.0},
    ("standard", "pbr"): {"recall": 1.0, "false_ids": 0, "xy_mm_p95": 1.5, "z_mm_p95": 4.0, "heading_deg_p95": 1.0},
    ("hard", "simple"): {"recall": 0.97, "false_ids": 0, "xy_mm_p95": 3.0},
    ("hard", "pbr"): {"recall": 0.97, "false_ids": 0, "xy_mm_p95": 3.0},
}


def targets_for(level: str, renderer: str) -> dict[str, float]:
    return TARGETS.get((level, "pbr" if renderer == "pbr" else "simple"), {})


def format_table(result: dict, details: bool = False) -> str:
    """The figures as tables; `details`: and every block not reported right, a line each."""
    cols = ["recall", "false_ids", "xy_mm_median", "xy_mm_p95", "z_mm_median", "z_mm_p95", "heading_deg_p95", "ms_per_frame"]
    lines = [f"bench vision: {result['scenes']} {result['level']} scenes, {result['renderer']} camera ({result['resolution']}, "
             f"{result['minis']} minis, {result['blocks']} blocks"
             + "".join(f", {result[k]} {what} a scene" for k, what in
                       (("walls", "walls that turn (each one block)"), ("towers", "towers (each one block)"),
                        ("touching", "rows of touching bricks"), ("standing", "minis standing on blocks"))
                       if result.get(k))
             + f", {result['hands']} hands a scene"
             + (", the rosters also listing every id no one on the table carries" if result.get("absent") else "")
             + f", seed {result['seed']}, "
             f"OpenCV threads {result['threads']})",
             f"{'method':<26}" + "".join(f"{c:>16}" for c in cols)]
    for m in result["methods"]:
        lines.append(f"{m['method']:<26}" + "".join(f"{'-' if m[c] is None else m[c]:>16}" for c in cols))
    target = targets_for(result["level"], result["renderer"])
    if target and not result["hands"]:
        lines.append("targets (pipeline): " + ", ".join(f"{k} {'>=' if k == 'recall' else '<='} {v}" for k, v in target.items()))
    lines.append("(pipeline ms: the whole frame, minis and blocks)")
    bcols = ["found", "mean_iou", "height_mm_p90", "height_within_half_brick", "colour_right", "false_per_frame",
             "ms_per_frame"]
    lines.append(f"{'blocks':<26}" + "".join(f"{c:>26}" if c == "height_within_half_brick" else f"{c:>16}"
                                            for c in bcols))
    for m in result["block_methods"]:
        lines.append(f"{m['method']:<26}" + "".join(
            f"{'-' if m[c] is None else m[c]:>26}" if c == "height_within_half_brick" else f"{'-' if m[c] is None else m[c]:>16}"
            for c in bcols))
    targets = HAND_TARGETS if result["hands"] else BLOCK_TARGETS
    if result["level"] == "standard":
        lines.append("block targets (pipeline): " + ", ".join(
            f"{k} {'<=' if k in ('height_mm_p90', 'false_per_frame') else '>='} {v}" for k, v in targets.items()))
    pipeline = result["block_methods"][0]
    lines.append("pipeline by kind (found; found with the height within half a brick; blocks): " + "; ".join(
        f"{kind} {k['found']}, {k['height_within_half_brick']} ({k['blocks']})" for kind, k in pipeline["by_kind"].items()))
    if pipeline["under_hands"]:
        lines.append(f"blocks a hand hides from the camera (half their top or more; not counted above): "
                     f"{pipeline['under_hands']}")
    hidden = pipeline["hidden"]
    if hidden["reported"]:
        lines.append(f"hidden whole under standing minis (pipeline; colour unknown, footprint the most the mini hides): "
                     f"{hidden['reported']} reported, {hidden['found']} of them found (IoU >= 0.5), "
                     f"{hidden['over_a_block']} over a true block")
    lines.extend(format_confusion(pipeline["colours"], f"colours ({pipeline['method']}): rows the true colour, "
                                  "columns the colour reported for the block found there"))
    if "blocks_by_paper" in result:
        clipped, fine = result["blocks_by_paper"]["clipped"], result["blocks_by_paper"]["not_clipped"]
        frames = clipped["frames"] + fine["frames"]
        if clipped["frames"] and fine["frames"]:
            lines.append(f"the anchors' paper at the camera's ceiling (the frame warns) in {clipped['frames']} of "
                         f"{frames} frames: colour right {clipped['colour_right']} there ({clipped['blocks']} blocks), "
                         f"{fine['colour_right']} elsewhere ({fine['blocks']}); found {clipped['found']} and {fine['found']}, "
                         f"the height within half a brick {clipped['height_within_half_brick']} and "
                         f"{fine['height_within_half_brick']}")
        else:
            lines.append(f"the anchors' paper at the camera's ceiling (the frame warns) in "
                         f"{'all' if clipped['frames'] else 'none'} of the {frames} frames")
    if "lamps" in result:
        lines.append(format_lamps(result["lamps"]))
    if details:
        lines.extend(format_wrong(pipeline["wrong"], f"blocks not reported right ({pipeline['method']}; a height "
                                  "more than half a brick off or another colour), and false blocks:"))
    return "\n".join(lines)


def format_confusion(colours: dict[str, dict[str, int]], title: str) -> list[str]:
    """The confusion matrix of `BlockScore.summary()["colours"]`, a row per true colour, and a last
    column of the blocks of that colour not found."""
    if not colours:
        return []
    reported = sorted({r for row in colours.values() for r in row if r != "missed"} | set(colours))
    width = max(6, *(len(c or "unknown") + 1 for c in reported))  # ("": a block hidden whole, its colour unknown)
    lines = [title, f"{'':<10}" + "".join(f"{c or 'unknown':>{width}}" for c in reported) + f"{'missed':>{width + 1}}"]
    for truth, row in colours.items():
        lines.append(f"{truth:<10}" + "".join(f"{row.get(c, 0) or '.':>{width}}" for c in reported)
                     + f"{row.get('missed', 0) or '.':>{width + 1}}")
    return lines
