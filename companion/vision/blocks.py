"""Lego-style blocks in a registered frame: footprint, height and colour, with no tags.

1. Candidates: the table is resampled from straight above at 2 mm a pixel and compared with the
   table without what stands on it (an empty-table frame when there is one, else a median over
   ~60 mm, which a brick never fills, taken a second time with what the first found painted over
   where that crowds a window); minis, marker cards and anchors (known from their markers) are
   masked out, and the minis' shadows where the lamps are found from them (`lamps`); what
   differs and is big and compact (or thick all along) enough is a candidate.
2. Each candidate is cut out at 0.5 mm a pixel; where the table has a hue, what of it is the table
   in shade (a lamp's shadow of the block: every channel darker alike) is left out of it and read
   as table by the fits (on a table of no hue, only when no fit stood without that: a lit
   brick beside its shadows). Its brightest uniform part is the top face (lit from above) when
   one stands out, else the candidate's own outline is the silhouette; that rectangle starts
   the box fit of `brickfit`, done on the camera image itself at sub-pixel steps.
   Where lamps were found, a box's own shadows are predicted from its footprint and height: the
   outline may include them, their length is a second measure of its height, a block as tall as
   a tower must cast one, and touching "bricks" that are the others' shadows are dropped.
3. A fit is a block when it explains the candidate's outline, its top is one colour (in shade
   and in hue), not skin nor the table's own, and it is no taller than a tower of bricks; its
   colour is named against the anchors' white paper (`colours.name_colour`). A fit four bricks
   tall or more is asked again among a tower's heights, and against one box fitted to the outline
   alone (a tower's walls are bands of many colours).
4. A candidate no one box explains may be bricks of different colours that touch: split by
   chromaticity and fitted together on that colour map (`touching`), unless one tower, each course
   of its walls any one colour, explains that map better; or a wall that turns: its
   straight arms are fitted as boxes that leave out where the others join them, and arms of one
   colour are one block, their union; or a tower of many colours (one box on its outline).

Here are the finder and the fits of one candidate; its parts are `candidates` (step 1), `cutout`
(the grids), `localtable` (the table under it all), `shade` and `topface` (step 2), `blockshadows`
(the shadows' part in steps 2-3), `colourparts` and `touching` (step 4); it reports
`foundblock.FoundBlock`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, cached_property
from typing import Any

import cv2
import numpy as np

from companion.setup_file import MiniSpec, Setup
from companion.state import BRICK_MM, BlockState, MiniState
from companion.vision.brickfit import (GAP_MM, HEIGHTS_MM, PLATE_MM, SIDE_SIGMA_MM, STUD_MM, BoxFit, TableRect, fit_box,
                                       snap_side)
from companion.vision.blockshadows import (box_at, heights_by_their_shadows, low_instead, no_shadow_of_its_own,
                                          not_the_table_in_light_shade, shade_cast_by, shadow_height_cost,
                                          with_its_shadows, without_cast_shadows, without_their_shadows)
from companion.vision.camera import CameraModel, TablePose
from companion.vision.candidates import (FAINT_SHARE, CandidateRegion, bricks_only, compact_enough, edges_facing,
                                        faint_candidates, faint_outlines_around, faint_parts, holds_more_than,
                                        rising_from_beside, without_edge_band)
from companion.vision.colourparts import (FINER_APART, MAX_PARTS, ColourParts, chroma_tolerance, chromaticity,
                                         colour_parts)
from companion.vision.colours import (LEGO_PALETTE, PAPER_ALBEDO, TopReading, calibrating_shade, clipped_top,
                                     colour_distance, frame_top_shade, light_ratio, naming_wall, walls_may_name)
from companion.vision.cutout import (COARSE_MM, FINE_MM, MIN_AREA_MM2, STUD_GAP_DISC, coarse_at, crop_resized,
                                     fill_fine, filled_blob, filled_blobs, map_points, pixels_mm, rect_mm,
                                     top_colour_seen, top_points, top_samples)
from companion.vision.fitmemory import FitMemory
from companion.vision.foundblock import (ALL_HEIGHTS_MM, MAX_SIDE_MM, SNAP_MM, TALL_FROM_MM, FoundBlock, brick_sized,
                                         snapped)
from companion.vision.hands import (HAND_MM2, SKIN_SHARE, hand_may_be_in_view, hand_regions, looks_like_skin,
                                    mostly_skin, skin_top, skin_toned_on_paper)
from companion.vision.lamps import FoundLamp, darkness, find_lamps, mask_shadows
from companion.vision.localtable import crowded, local_table, mask_known, paper_white, table_without, tile_side_mm
from companion.vision.shade import (SHADE_TINT, Lamplight, black_bricks_shadow, broad_shade, could_be_shade,
                                    frames_shade_tint, hue_of, light_over_table, linear_light, lit_as_shade,
                                    only_shade, shade_part, shaded, table_in_shade, table_light_rgb,
                                    tinted_as_the_shade, top_may_be_shade, with_penumbra)
from companion.vision.tableview import TableView, window_size
from companion.vision.topface import (lit_part, near_colour, table_lit, top_face_of, without_a_lit_wall,
                                      without_its_shadow)
from companion.vision.touching import TABLE, Placed, agreement as box_agreement, courses_agreement, fit_touching
from companion.vision.under_mini import (REACH_MM, ROSTER_SIGMA_MM, TopUnder, fit_top, hidden_top, occluded,
                                         plane_points, stand_height_mm)

MIN_SILHOUETTE_FIT = 0.8  # see `_silhouette_fit`
TOP_ALIKE_SHARE = 0.75  # of a top face's colour samples, near their median (a brick's top is one colour)
# Near the camera's foot a low fit surer than this of its height stands at it; a less sure one is
# taken as one brick (`_fit_one`).
UNSEEN_CONFIDENCE = 0.6
TOWER_AGREEMENT = 0.9  # share of a tower's outline and surroundings its one box predicts right
TOWER_CONTRAST = 30.0  # least colour distance of a tower's top from the table (8-bit levels)
PLACED_COST_PER_POINT = 2.0 / 9.0  # ~2 nats per wrong independent sample, ~9 map points to one
TOWER_TOP_OUTLINED = 0.9  # share of a faint tall top's samples that must differ from the table (`_named`)
TOWER_TOP_INSET_MM = 2.5  # a tower's top is named this far inside its fitted edges
SHADOW_REACH_PX = 1  # a candidate touching a mini (2 mm at COARSE_MM) may be its shadow, cast from its base
HAND_SHADOW_REACH_MM = 150.0  # ... one this near a hand (held up to ~160 mm over the table) may be its
# A colour this much brighter (linear light) than the table in some channel, or than a shade in
# every channel, is lit: no shadow, or not that shade (noise and compression move the ratio by a
# few per cent; 1.05-1.3 gave the same blocks on the dev frames).
LIT_RATIO = 1.15
HUED_TABLE = 0.6  # `hue_of` a table whose shade `shaded` tells from black plastic beside it (felt, wood: 1.2-1.3)
SHADE_MOST = 0.5  # a candidate more in shade than this is rather a black brick than a block's shadow
WALL_SEEN_MM = 2.5  # a wall's cast band this wide has a middle clear of its blurred edges
FAR_TOP_FROM_MM = 40.0  # a candidate this far from the camera's foot has a far end (a tower's top)
# A clipped top's sides may be this much longer than its brick's (the bloom past its edges: path
# traced, 1-wide bricks fitted 9-12 mm wide, 2-wide ones 17-18 mm)
CLIPPED_BLOOM_MM = 4.0
CLIPPED_SIDE_SIGMA_MM = 1.0  # a clipped top's sides, as a height cue (`_fit_box`)
LEVEL_FLOOR = 8.0  # least colour distance from the table (8-bit levels) that is not table (4x felt's noise)


# A 6.5 mm disc at FINE_MM fits in any brick (7.8 mm wide at least), not in a printed line touching it.
_BRICK_DISC = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (13, 13))
# A block's outline explains the cut-out within 1.5 mm of it (its blur: `_near_outlines`).
_EXPLAINED_DISC = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * round(1.5 / FINE_MM) + 1,) * 2)
STUD_GAP_LEVEL = 0.5  # of the level: a gap in a cut-out that still differs this much from the table is closed


class BlockFinder:
    """Finds blocks in frames of one camera pose (the coarse view's maps are kept)."""

    def __init__(self, setup: Setup, palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE,
                 remember: bool = False) -> None:
        """`remember`: frames come from one stream (a live camera): a candidate that has not changed
        since the last frame is given the blocks its fit found then (`FitMemory`)."""
        self.setup = setup
        self.palette = palette
        self.memory = FitMemory() if remember else None
        self._view: TableView | None = None
        self._view_key: bytes | None = None
        self.lamps: list[FoundLamp] = []  # the lamps the last frame's minis' shadows showed
        self._lamplight: Lamplight | None = None  # this frame's, while its candidates are fitted
        self._hand_seen = True  # whether this frame shows a hand (`hand_may_be_in_view`), likewise
        self.stood_on: dict[int, float] = {}  # the last frame's minis of `frame_heights` found on a block
        self.hands_mm2 = 0.0  # how much of the table the last frame's hands and arms cover (`hands.hand_regions`)

    @property
    def hands_over_table(self) -> bool:
        """Whether the last frame searched had hands or arms over the table (`hands.hand_regions`; not
        `_hand_seen`, which any finger in view sets)."""
        return self.hands_mm2 > 0

    def view(self, camera: CameraModel, pose: TablePose) -> TableView:
        key = pose.rotation.tobytes() + pose.translation_mm.tobytes() + camera.matrix.tobytes() + camera.distortion.tobytes()
        if key != self._view_key:
            self._view, self._view_key = TableView(camera, pose), key
        assert self._view is not None
        return self._view

    def find(self, image: np.ndarray, camera: CameraModel, pose: TablePose, minis: tuple[MiniState, ...] = (),
             background: np.ndarray | None = None, frame_heights: dict[int, MiniState] | None = None
             ) -> list[FoundBlock]:
        """The blocks in a frame, the minis (and marked objects) in it known. `frame_heights`: minis
        placed at their roster's height, as the frame alone placed them: where the frame says one
        stands above the table and a block is seen under it there, the block is found and the mini
        is in `stood_on` (its id: the block's top, mm)."""
        view = self.view(camera, pose)
        self.stood_on = {}
        w_px, h_px = window_size(self.setup.table.width_mm, self.setup.table.depth_mm, COARSE_MM)
        coarse = view.window(image, 0.0, 0.0, w_px, h_px, COARSE_MM, cache=True)
        # Closing fills dark lines under ~4 mm (a printed mat's grid, wood grain) with the table
        # around them; the narrowest brick is 7.8 mm.
        closed = cv2.morphologyEx(coarse, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
        # 0 where the minis, marked objects and anchors stand: none of them is a block.
        clear = np.ones(coarse.shape[:2], np.uint8)
        mask_known(clear, self.setup, minis, view, (0.0, 0.0), COARSE_MM)
        table = (view.window(background, 0.0, 0.0, w_px, h_px, COARSE_MM, cache=True) if background is not None
                 else local_table(coarse))
        # The minis' shadows, where the lamps that cast them are found, are left out as the
        # minis are (on a gray mat a shadow looks like a gray brick).
        if self.memory is not None:
            self.memory.start(coarse, COARSE_MM)
        bare_dark = None if background is not None else (
            lambda: darkness(coarse, table_without(coarse, self._differs(closed, table, clear)[0] | (1 - clear))))
        shadows = self._leave_out_shadows(coarse, table, clear, minis, view, bare_dark)
        if background is None and shadows.any():
            table = local_table(coarse, exclude=shadows)  # (a median beside broad shade is too dark)
        mask, level, unbanded, diff = self._differs(closed, table, clear)
        if background is None:
            # Twice where things crowd: the second table estimate leaves out what the first found
            # (white walls all around a castle's yard would make its felt look darker than the
            # table). A median over a window things cover less of needs no second look.
            if crowded(mask):
                table = local_table(coarse, exclude=mask)
                mask, level, unbanded, diff = self._differs(closed, table, clear)
        white, white_table = paper_white(coarse, table, self.setup)
        self._hand_seen = hand_may_be_in_view(coarse, table, unbanded, white)
        hands = hand_regions(coarse, white, COARSE_MM)
        self.hands_mm2 = float(np.count_nonzero(hands)) * COARSE_MM ** 2
        self._lamplight = None
        if self.lamps:
            dark = darkness(coarse, table)
            self._lamplight = Lamplight(tuple(self.lamps), dark, clear, frames_shade_tint(coarse, table, shadows, dark, self.lamps))
        # Parts of an outline a coarse pixel apart are one candidate: a top that differs from the
        # table little (light gray on beige tiles, a pale glossy one) leaves a column of it under
        # the level, and a corner or a touching brick fitted apart stands as no block. Not joined
        # to a hand: a brick beside one went with it.
        joined = cv2.morphologyEx(mask & (1 - hands), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)) | mask
        count, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
        sample = _sampler(image, view)
        from_beside = rising_from_beside(mask, unbanded, labels, count, edges_facing(pose.camera_centre_mm, self.setup.table))
        beside_known = cv2.dilate(1 - clear, np.ones((2 * SHADOW_REACH_PX + 1,) * 2, np.uint8)) > 0
        if hands.any():  # (a hand's shadow falls further from it than a mini's: it is held higher)
            reach_px = 2 * int(HAND_SHADOW_REACH_MM / COARSE_MM) + 1
            beside_known |= cv2.dilate(hands, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (reach_px, reach_px))) > 0
        candidates: list[CandidateRegion] = []
        for label in range(1, count):
            x, y, w, h, area = (int(v) for v in stats[label])
            if area * COARSE_MM ** 2 < 0.6 * MIN_AREA_MM2 or max(w, h) * COARSE_MM > MAX_SIDE_MM * 1.5:
                continue
            if not from_beside[label]:
                candidates.append(((x, y, w, h), labels[y:y + h, x:x + w] == label, level))
        faint = faint_parts(diff, FAINT_SHARE * level, clear)
        candidates += faint_candidates(closed, diff, level, mask, clear, faint)
        strong_in_faint = np.bincount(faint[1][mask > 0], minlength=faint[0])  # strong pixels in each faint part

        def fitted(box: tuple[int, int, int, int], region: np.ndarray, its_level: float) -> list[FoundBlock]:
            recalled = None if self.memory is None else self.memory.recall(box, coarse, table, minis)
            if recalled is not None:
                return recalled
            fits = self._fit(image, view, sample, minis, table, box, region, its_level, white, white_table)
            if its_level == level and len(fits) <= 1:
                # On a busy table a brick may pass the level only in part: fitted again from the
                # faint outline around that part (`faint_outlines_around`), where nothing was
                # found there, or where the part was fitted as a smaller brick the outline's holds.
                for outline in faint_outlines_around(faint, strong_in_faint, box, region, FAINT_SHARE * level):
                    again = bricks_only(self._fit(image, view, sample, minis, table, *outline, white, white_table,
                                                   one_brick=True))
                    if not fits or (len(again) == 1 and holds_more_than(again[0], fits[0])):
                        fits = again
            if self.memory is not None:
                self.memory.keep(box, coarse, table, minis, fits)
            return fits

        blocks: list[FoundBlock] = []
        for (x, y, w, h), region, its_level in candidates:
            if not compact_enough(region) or _in_hands(hands[y:y + h, x:x + w], region):
                continue
            if beside_known[y:y + h, x:x + w][region].any() and only_shade(
                    coarse[y:y + h, x:x + w], table[y:y + h, x:x + w], region, white):
                continue  # a mini's or a hand's shadow on the table beside it
            blocks += fitted((x, y, w, h), region, its_level)
        # A fit whose top the frame shows on a hand took the hand for its top (a black brick half
        # under an arm was read again beside it, taller).
        if self.hands_over_table:
            blocks = [b for b in blocks if not _top_on_hands(b, hands, pose.camera_centre_mm)]
        blocks = without_cast_shadows(self._lamplight, blocks, table)
        blocks = not_the_table_in_light_shade(blocks, table)
        blocks = _not_the_tables_pattern(image, view, self.setup, minis, blocks, level)
        blocks = _not_inside_a_taller(blocks)
        blocks = self._under_minis(image, view, minis, blocks, table, level, white, white_table, frame_heights or {},
                                   hands)
        return _named_in_frames_light(blocks, self.palette)

    def _under_minis(self, image: np.ndarray, view: TableView, minis: tuple[MiniState, ...],
                     blocks: list[FoundBlock], table: np.ndarray, level: float, white: np.ndarray,
                     white_table: float, frame_heights: dict[int, MiniState], hands: np.ndarray) -> list[FoundBlock]:
        """The blocks found, with the block each mini standing above the table stands on where no
        block found holds its base's centre (`under_mini`: the mini hides most of it, and the
        finder left its place out); what was found of it beside the mini, or of its faces
        (`_inside`), is dropped for it. A mini placed at its roster's height is looked under where
        the frame alone stood it (`frame_heights`). A top the frame shows half on a hand (`hands`,
        the coarse view's mask) is no block here either."""
        found = list(blocks)
        for m in minis:
            spec = self.setup.mini(m.id)
            if spec is None or m.status != "seen":
                continue
            stand = stand_height_mm(m.z_mm, spec.marker_height)
            as_framed = stand is None and m.id in frame_heights
            if as_framed:
                m = frame_heights[m.id]
                stand = stand_height_mm(m.z_mm, spec.marker_height)
            if stand is None:
                continue
            if one_holds(found, np.array([m.x_mm, m.y_mm])):
                continue
            # A top the mini hides whole is guessed only where its height says surely that it
            # stands on one (not where the frame alone says so against the roster, nor where its
            # marker's height is unsure by more than a plate: a print in a lamp's glare).
            surely = (not as_framed and m.z_sigma_mm <= PLATE_MM and stand_height_mm(
                m.z_mm - HIDDEN_STAND_SIGMAS * math.hypot(m.z_sigma_mm, ROSTER_SIGMA_MM), spec.marker_height) is not None)
            under = self._under_mini(image, view, m, spec, stand, table, level, white, white_table, minis, surely)
            if under is None or (self.hands_over_table and _top_on_hands(under, hands, view.pose.camera_centre_mm)):
                continue  # (on a hand: a hand beside the mini taken for the top it stands on)
            found = [b for b in found if not _mostly_within(b.footprint_mm, under.footprint_mm)
                     and not _inside(b, under)] + [under]
            if as_framed:
                self.stood_on[m.id] = under.height_mm
        return found

    def _under_mini(self, image: np.ndarray, view: TableView, mini: MiniState, spec: MiniSpec, stand_mm: float,
                    table: np.ndarray, level: float, white: np.ndarray, white_table: float,
                    minis: tuple[MiniState, ...], may_be_hidden: bool = False) -> FoundBlock | None:
        """The block one standing mini (its roster entry `spec`) stands on (`under_mini.fit_top`),
        named as any top is; where too little of it is seen, the top it hides (`hidden_top`,
        with `may_be_hidden`) or None; None where its top is no block's."""
        base = np.array([mini.x_mm, mini.y_mm])
        points = plane_points(base)
        n = points.shape[0]
        cast = view.cast(points.reshape(-1, 2), stand_mm).reshape(points.shape)
        colours = view.sample(image, cast)[..., :3].astype(np.float64)
        table_here = coarse_at(table, cast).astype(np.float64)
        visible = 1 - occluded(view, stand_mm, base, spec.base_mm, mini.z_mm, tile_side_mm(spec.marker_mm),
                               mini.heading_deg, (n, n), base - REACH_MM)
        visible &= _clear_of_others(self.setup, minis, mini, view, cast)
        if not visible.any():
            return None
        # The table's colour round the block, from the window's rim: a median over 60 mm next to
        # the mini is pulled towards the block and the mini themselves.
        rim = (np.linalg.norm(points - base, axis=-1) >= UNDER_RIM_MM) & (visible > 0)
        table_colour = np.median(table_here[rim if rim.any() else visible > 0], axis=0)
        maybe_shade = could_be_shade(colours, table_here) | tinted_as_the_shade(self._lamplight, colours, table_here)
        in_shade = shaded(colours, table_here, white, SHADE_TINT)
        to_table = np.linalg.norm(colours - table_here, axis=-1)
        differs = to_table > level
        chroma = chromaticity(colours)
        # The table in the lamps' shade, the hue of each pixel from the table's (none: no lamps found)
        lamp_shade = (maybe_shade & lit_as_shade(self._lamplight, colours, table_here)
                      if self._lamplight is not None and self._lamplight.lamps else np.zeros(colours.shape[:-1], bool))
        table_hue = np.linalg.norm(chroma - chromaticity(table_here), axis=-1)
        # A top that may be the table in shade is none: the mini's and the block's shadows lie
        # right round it, and beside so little of the block no shadow model tells them apart
        # (where the table has a hue, `shaded` tells black plastic from its shade).
        hued = hue_of(table_colour, white) >= HUED_TABLE

        def may_be_top(bgr: np.ndarray) -> bool:
            if float(np.linalg.norm(bgr - table_colour)) < UNDER_CONTRAST * level:
                return False
            if hued:
                return not bool(shaded(bgr, table_colour, white, SHADE_TINT))
            return not (bool(could_be_shade(bgr, table_colour)) or bool(tinted_as_the_shade(self._lamplight, bgr, table_colour)))

        def labels(bgr: np.ndarray) -> np.ndarray:
            """1 where a pixel is of this top's colour (`_named`'s spread, its hue) and nearer it
            than the table, 0 where it is of its hue and darker (its walls, shade on it), else -1."""
            spread = max(18.0, 0.2 * float(np.linalg.norm(bgr)), 0.5 * float(np.linalg.norm(bgr - table_colour)))
            to_top = np.linalg.norm(colours - bgr, axis=-1)
            from_its_hue = np.linalg.norm(chroma - chromaticity(bgr), axis=-1)
            hue = from_its_hue <= chroma_tolerance(bgr)
            # A dark top's hue is judged loosely (its channels are a few levels each): the table in
            # the mini's and the block's shadow beside it passes, unless its hue is nearer the
            # table's (a green top's rectangle ran on over the shadow, named black). (A black top
            # keeps its pixels: they are far darker than the lamps' shade leaves the table.)
            shade_of_table = lamp_shade & (table_hue < from_its_hue)
            top = (to_top < spread) & (to_top < to_table) & hue & ~in_shade & ~shade_of_table
            kin = hue & (colours.sum(axis=-1) < float(bgr.sum()))
            return np.where(top, 1, np.where(kin, 0, -1)).astype(np.int8)

        def darker_kin(lighter: np.ndarray, darker: np.ndarray) -> bool:
            return (float(darker.sum()) < float(lighter.sum()) and float(np.linalg.norm(
                chromaticity(darker) - chromaticity(lighter))) <= float(chroma_tolerance(darker)))

        walls = (base - view.foot_mm) * stand_mm / view.camera_height_mm
        top = fit_top(base, stand_mm, colours, visible, differs, ~maybe_shade, may_be_top, labels, darker_kin, walls)
        if top is None:
            hidden = hidden_top(base, stand_mm, visible, (visible > 0) & ~differs, walls) if may_be_hidden else None
            return None if hidden is None else self._hidden_block(image, view, mini, spec, hidden)
        return self._block_under(image, view, mini.z_mm - spec.marker_height, mini.z_sigma_mm, top, table_colour, level,
                                 white, white_table)

    def _hidden_block(self, image: np.ndarray, view: TableView, mini: MiniState, spec: MiniSpec,
                      top: TopUnder) -> FoundBlock:
        """A block a standing mini hides whole (`hidden_top`): its height from the mini's marker,
        its extent guessed (HIDDEN_FIT: as sure as that), its colour unknown ("")."""
        fit = _fit_under(view, mini.z_mm - spec.marker_height, mini.z_sigma_mm, top)
        return FoundBlock(top.top.corners(), top.height_mm, "", HIDDEN_FIT, fit.height_confidence, 0.0,
                          snapped(top.top)[1], fit, top_colour_seen(image, view, fit.top), None, hidden_under=mini.id)

    def _block_under(self, image: np.ndarray, view: TableView, measured_mm: float, z_sigma_mm: float, top: TopUnder,
                     table_bgr: np.ndarray, level: float, white: np.ndarray, white_table: float) -> FoundBlock | None:
        """A top found under a mini as a block: its height from the mini's marker (`measured_mm`
        over the table, less the roster's marker height; how sure: the marker's height error and
        the roster's), its colour named as every top's is (`_named`) against the table round it."""
        fit = _fit_under(view, measured_mm, z_sigma_mm, top)
        corners = fit.top.corners()
        pad_mm = 4.0
        x0, y0 = (float(v) - pad_mm for v in corners.min(axis=0))
        w_px, h_px = (int((float(v) + 2 * pad_mm) / FINE_MM) + 1 for v in np.ptp(corners, axis=0))
        fine = view.window(image, x0, y0, w_px, h_px, FINE_MM)
        table_fine = np.empty((h_px, w_px, 3), np.float32)
        table_fine[:] = table_bgr
        blob = fill_fine(np.zeros((h_px, w_px), np.uint8), corners, (x0, y0))
        c = Candidate(image, view, _sampler(image, view), fine, colour_distance(fine, table_fine, blur_px=0.8), blob,
                       table_fine, (x0, y0), level, white, white_table, self.palette, self._lamplight, self._hand_seen)
        named = _named(c, top.samples_bgr, fit)
        if named is None:
            return None
        top_bgr, colour, colour_conf, reading = named
        # (named as any top first; named again in the frame's light as one the mini may shade)
        return FoundBlock(top.top.corners(), top.height_mm, colour, top.explained, fit.height_confidence, colour_conf,
                          snapped(top.top)[1], fit, top_bgr, replace(reading, shaded_by_a_mini=True))

    def _leave_out_shadows(self, coarse: np.ndarray, table: np.ndarray, clear: np.ndarray,
                           minis: tuple[MiniState, ...], view: TableView,
                           bare_dark: Callable[[], np.ndarray] | None) -> np.ndarray:
        """Zero in `clear` the minis' shadows (`lamps`), where the lamps are found from them, but
        for what is brighter there than the table (LIT_RATIO); the shadows' mask (uint8, 1 in
        shadow). A lamp found is kept where its shadows are dark too against the table with the
        cards and what differs from it painted over (`bare_dark`'s darkness; None: `table` is a
        bare table's picture already): among cards and white walls a median is too bright (the
        felt of a castle's yard read a quarter darker than the table, a lamp was found from the
        "shadows" two minis put there, and every block of the frame read one to three plates low)."""
        standing = [(m, tile_side_mm(spec.marker_mm), spec.base_mm) for m in minis
                    if (spec := self.setup.mini(m.id)) is not None and m.status == "seen"]
        centre = np.array([self.setup.table.width_mm, self.setup.table.depth_mm]) / 2
        again = None if self.memory is None else self.memory.lamps_again(coarse, minis)
        if again is None:
            tiles_clear = np.ones_like(clear)  # (read past the tiles' squares: `mask_known`)
            mask_known(tiles_clear, self.setup, minis, view, (0.0, 0.0), COARSE_MM, tiles=True)
            tiles = [(m, side) for m, side, _ in standing]
            self.lamps = find_lamps(darkness(coarse, table), tiles_clear, tiles, centre, COARSE_MM, bare_dark)
        else:
            self.lamps = list(again)
        if self.memory is not None:
            self.memory.lamps(tuple(self.lamps), coarse, minis, found=again is None)
        lit = np.ones_like(clear)
        mask_shadows(lit, self.lamps, standing, COARSE_MM)
        # A shadow only takes light away: what is brighter than the table in some channel there
        # (an orange brick standing where a mini's shadow was drawn) is no shadow, and stays.
        ys, xs = np.nonzero(lit == 0)
        brighter = light_over_table(coarse[ys, xs], table_light_rgb(table[ys, xs])).max(axis=-1) > LIT_RATIO
        kept = lit.copy()
        kept[ys[brighter], xs[brighter]] = 1
        clear &= kept
        return 1 - lit

    def _differs(self, closed: np.ndarray, table: np.ndarray, clear: np.ndarray
                 ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        """What differs from the table (a mask at COARSE_MM) where nothing known stands (`clear`,
        `mask_known`'s), the colour distance that counts, the mask before the table's edge band
        is cleared, and the colour distance from the table."""
        diff = colour_distance(closed, table, blur_px=1.0)
        level = max(LEVEL_FLOOR, 4.0 * float(np.median(diff[::4, ::4])))
        mask = (diff > level).astype(np.uint8) & clear
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))  # printed lines, grain
        unbanded = mask.copy()
        return without_edge_band(mask), level, unbanded, diff

    def _fit(self, image: np.ndarray, view: TableView, sample, minis: tuple[MiniState, ...], coarse_table: np.ndarray,
             box: tuple[int, int, int, int], region: np.ndarray, level: float, white: np.ndarray,
             white_table: float, one_brick: bool = False) -> list[FoundBlock]:
        """The block a candidate is (one box), or the parts of a wall that turns (an L, a U, a
        ring: boxes along its arms, one block when they share a colour); or, where none of those
        stood, its colour parts each fitted alone as a brick (`_its_parts_alone`); none. What the
        blocks found leave of it unexplained is fitted again as bricks of their own. With `one_brick`
        (a faint outline, the last resort: `bricks_only`) only the fits that may give a low
        brick are tried: one box, or two colours of one; no tower, touching bricks, wall, or a
        second pass with shade left out. (Those were tried on every faint outline and gave
        nothing there on the dev frames, at 50-170 ms each: half of a busy frame's time.)"""
        x, y, w, h = box
        pad_mm = 8.0
        x0, y0 = x * COARSE_MM - pad_mm, y * COARSE_MM - pad_mm
        w_px, h_px = int((w * COARSE_MM + 2 * pad_mm) / FINE_MM), int((h * COARSE_MM + 2 * pad_mm) / FINE_MM)
        fine = view.window(image, x0, y0, w_px, h_px, FINE_MM)
        table_fine = crop_resized(coarse_table, x0, y0, w_px, h_px)
        diff = colour_distance(fine, table_fine, blur_px=0.8)
        blob = (diff > level).astype(np.uint8)
        mask_known(blob, self.setup, minis, view, (x0, y0), FINE_MM)
        pad = int(pad_mm / FINE_MM)
        scale = int(round(COARSE_MM / FINE_MM))
        near = np.zeros_like(blob)
        grown = np.kron(region.astype(np.uint8), np.ones((scale, scale), np.uint8))
        near[pad:pad + grown.shape[0], pad:pad + grown.shape[1]] = grown[:h_px - pad, :w_px - pad]
        # Grown by 6 mm: the coarse search's closing drops a dark wall narrower than that.
        blob &= cv2.dilate(near, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (25, 25)))
        # A block's shadow on the table is no part of it: where the table has a hue that tells
        # shade from black plastic (`shaded`), it is left out of the outline, and the profiles read
        # the table there (a shadow beyond a near wall would widen the wall: a taller brick).
        smooth = cv2.GaussianBlur(fine, (0, 0), 1.0)
        tinted = shaded(smooth, table_fine, white, SHADE_TINT)
        shade = broad_shade(tinted, fine, table_fine, blob, SHADE_MOST)
        table = np.median((table_fine[blob > 0] if blob.any() else table_fine).reshape(-1, 3), axis=0)

        def cut(shade: np.ndarray) -> list[FoundBlock]:
            """The cut-out's fits with `shade` left out of it (`_fit_cut`)."""
            return self._fit_cut(image, view, sample, fine, diff, blob, shade, table_fine, (x0, y0), level, white,
                                 white_table, one_brick)

        def fits(shade: np.ndarray) -> list[FoundBlock]:
            found = cut(shade)
            # A top that is the table in shade, where its hue tells shade from black plastic
            # (`shaded`), is no block: a candidate mostly in shade (a hand's soft shadow) is fitted
            # whole as a black brick would be, and a brick's shadow may be split off it as a part
            # of the table's colour.
            # A tall box with no shadow of its own is none, or the low one its fit answers too.
            lit = [b if not no_shadow_of_its_own(self._lamplight, b) else low_instead(view, b) for b in found]
            return [b for b in lit if b is not None and not table_in_shade(b.top_bgr, table, white)]

        found = fits(shade)
        if one_brick:
            return found

        def passes() -> list[FoundBlock]:
            """The first cut-out's fits (`found`), or those of cut-outs with other shade left out
            where they stand better."""
            kept_shade = not shade.any()
            hued = hue_of(table, white) >= HUED_TABLE  # (else shade and black plastic look alike)

            def tinted_shade_left_out() -> list[FoundBlock]:
                """Last, where nothing stood and the shade was kept (over half the outline, or dark
                walls beside it): on a table of a clear hue the tint tells the table in shade from dark
                plastic, so it is left out after all (a tower of dark green bricks under two lamps on
                wood, its two shadows most of its outline, one towards the camera's foot: kept, the
                tower fitted 124.8 mm tall for 44.8, and was dropped)."""
                if found or not kept_shade or not hued:
                    return []
                strict = shade_part(tinted, blob)
                return fits(strict) if strict.any() else []

            if kept_shade:
                # Shade beside something dark is kept (`broad_shade`: a black brick's own pixels may
                # pass for shade), unless the dark is black plastic with a fraction of the shade's
                # light: a black brick beside its shadow, fitted whole, was one black plate as wide as
                # both. (Only then, and the brick within that plate: a tall brick's walls in shade
                # beside its shadow pass the test too, and a red tower so became a plate. And on a
                # table of a clear hue: on gray tiles with a little warmth a gray brick's wall in deep
                # shade and its shadow were a black block, and the wall apart a black brick.)
                black_shadow = black_bricks_shadow(fine, blob, tinted) if hued else None
                if (black_shadow is not None and black_shadow.any() and found and all(b.color == "black" for b in found)
                        and (apart := fits(black_shadow)) and all(within_one_of(b, found) for b in apart)):
                    return apart
            if shade.any() or (found and not all(top_may_be_shade(self._lamplight, b.top_bgr, table) for b in found)):
                return found
            # On a table of no hue (a gray mat) shade and black plastic look alike, so nothing was left
            # out; when no fit stood, or only fits whose tops may be the mat in shade (a low dark box
            # over a tall white brick's long shadow and the brick beside it), what could be the table
            # in shade is left out and the rest tried again (a lit brick with its lamps' shadows),
            # unless what stands beside it is dark too; not where its own walls may show (between its
            # lit top and the camera's foot: a white brick's walls in shade look like the mat in shade
            # too). What may be a black brick beside its shadow is tried first with the shadow left out
            # there too (a black brick's walls are black, not the mat in shade). Against a fit that
            # stood, what is left is taken only where its boxes explain their outline better (a black
            # brick's walls, taken for shade and cut off, leave a plate that explains its outline no
            # better than the brick did the whole).
            maybe = with_penumbra(smooth, table_fine, blob)

            def lit_fits(shade: np.ndarray) -> list[FoundBlock]:
                lit = cut(shade)
                # What stands there must be lit: a top that may itself be shade is what was left of one,
                # unless it is brighter in every channel than the shade cut out there (a light gray
                # brick's top on lighter tiles is darker than the tiles, as their shade is).
                cut_shade = table_light_rgb(np.median(fine[shade > 0].reshape(-1, 3), axis=0)) if shade.any() else None

                def stands(b: FoundBlock) -> bool:
                    over_the_shade = (cut_shade is not None
                                      and light_over_table(np.asarray(b.top_bgr, float), cut_shade).min() > LIT_RATIO)
                    return ((over_the_shade or not top_may_be_shade(self._lamplight, b.top_bgr, table))
                            and not no_shadow_of_its_own(self._lamplight, b))

                lit = [b for b in lit if stands(b)]
                if lit and found and min(b.silhouette_fit for b in lit) <= max(b.silhouette_fit for b in found):
                    return []
                return lit

            # On a table of no hue the lamps' deepest shade tells shade from black plastic (a black
            # top keeps 1-3% of gray tiles' light; on felt or wood the tint does, `shaded`).
            lamplight = None if hued else self._lamplight
            black_shadow = black_bricks_shadow(fine, blob, maybe, lamplight, table_fine)
            if black_shadow is not None and black_shadow.any() and (lit := lit_fits(black_shadow)):
                return lit
            broad = broad_shade(maybe, fine, table_fine, blob, 1.0, lamplight)
            if not broad.any():
                return found or tinted_shade_left_out()
            broad &= 1 - _towards_foot((blob > 0) & (broad == 0), (x0, y0), view, HEIGHTS_MM[-1])
            return lit_fits(broad) or found or tinted_shade_left_out()

        def top_no_shade(b: FoundBlock) -> bool:
            """Whether a brick fitted alone has a top that is no table in shade (`top_may_be_shade`,
            `table_in_shade`)."""
            return not top_may_be_shade(self._lamplight, b.top_bgr, table) and not table_in_shade(b.top_bgr, table, white)

        def parts_alone() -> list[FoundBlock]:
            """Last of all, where no cut-out gave a block: the first one's colour parts each fitted
            alone (`_its_parts_alone`), those whose tops may be the table in shade left out. (Taken
            any earlier, the largest part alone would stand where a later cut-out gives every brick:
            a white and a red brick beside their shadows on beige tiles gave only the white.)"""
            pieces = filled_blobs(cv2.morphologyEx(blob & (1 - shade), cv2.MORPH_OPEN, _BRICK_DISC))
            if not pieces or mostly_skin(fine, pieces[0], white):
                return []
            c = self._candidate(image, view, sample, fine, diff, pieces[0], shade, table_fine, (x0, y0), level, white,
                                white_table)
            return [b for b in _its_parts_alone(c, c.parts) if top_no_shade(b)]

        def the_rest(found: list[FoundBlock]) -> list[FoundBlock]:
            """What of the first cut-out the blocks found leave unexplained (beyond their silhouettes
            and the shadows they cast), each piece as broad as a brick fitted alone as a low brick
            (`_fit_one`), standing where its sides are a brick's, its top no shade, and its colour
            none of theirs (a piece of a block's own colour is a piece of it its fit missed): a
            touching brick the fit of the row dropped (a white 2x6 brick 28.8 mm high fitted 38.4
            with its neighbours, casting no tower's shadow) or never split off."""
            if not found:
                return []
            c = self._candidate(image, view, sample, fine, diff, blob, shade, table_fine, (x0, y0), level, white,
                                white_table)
            explained = _near_outlines(blob, [_silhouette_hull(view, b) for b in found], (x0, y0),
                                       shade_cast_by(c, [(b.fit.footprint, b.height_mm) for b in found]))
            rest = blob & (1 - shade) & (1 - explained)
            more: list[FoundBlock] = []
            for piece in filled_blobs(cv2.morphologyEx(rest, cv2.MORPH_OPEN, _BRICK_DISC)):
                if mostly_skin(fine, piece, white):
                    continue
                one = _fit_one(replace(c, blob=piece), tall=False)
                if one is not None and one.studs is None:
                    one = _grown_to_a_brick_against(one, found)
                if (one is not None and one.studs is not None and one.height_mm < TALL_FROM_MM
                        and all(b.color != one.color for b in found + more) and not within_one_of(one, found + more)
                        and top_no_shade(one)):
                    more.append(one)
            return more

        found = passes() or parts_alone()
        return found + the_rest(found)

    def _fit_cut(self, image: np.ndarray, view: TableView, sample, fine: np.ndarray, diff: np.ndarray,
                 blob: np.ndarray, shade: np.ndarray, table_fine: np.ndarray, origin: tuple[float, float],
                 level: float, white: np.ndarray, white_table: float, one_brick: bool = False) -> list[FoundBlock]:
        """`_fit`'s fits on one cut-out, with `shade` (the table in shade) left out of its outline
        (`one_brick`: as `_fit`'s)."""
        blob = blob & (1 - shade)

        def pieces_fitted(blob: np.ndarray) -> list[FoundBlock]:
            opened = cv2.morphologyEx(blob, cv2.MORPH_OPEN, _BRICK_DISC)
            # Shade left out may part bricks whose shadows had joined them: each part is fitted,
            # but beside the largest (a block itself) only whole bricks (their sides a brick's)
            # stand, not what is left of a brick's wall or penumbra.
            found: list[FoundBlock] = []
            for k, piece in enumerate(filled_blobs(opened)):
                fitted = self._fit_piece(image, view, sample, fine, diff, piece, opened, shade, table_fine, origin,
                                         level, white, white_table, one_brick)
                if k == 0 and not fitted:
                    return []
                found += fitted if k == 0 else [b for b in fitted if b.studs is not None]
            return found

        found = pieces_fitted(blob)
        closed = None if found else stud_gaps_closed(blob, diff, level, shade)
        if closed is None:
            return found
        # Nothing stood, and the cut-out had gaps (a glossy gray brick's top on a speckled mat,
        # path traced: the opening took it apart). Closed, it is fitted as one low brick (not the
        # towers', walls' and touching bricks' fits again: a frame's failed candidates would
        # cost half as much again), which stands only as a brick (both sides a brick's: a patch
        # of a mat's pattern closed up is some size) that explains it (not a brick-sized piece
        # of a tower's or a wall's outline).
        pieces = filled_blobs(cv2.morphologyEx(closed, cv2.MORPH_OPEN, _BRICK_DISC))
        if not pieces or float(np.mean(skin_toned_on_paper(fine[pieces[0] > 0], white))) >= SKIN_SHARE:
            return []  # (a row of fingers under the lens, closed, is 12 studs long: skin is no last resort's)
        one = _fit_one(self._candidate(image, view, sample, fine, diff, pieces[0], shade, table_fine, origin, level,
                                       white, white_table), tall=False)
        if one is None or one.studs is None or one.height_mm >= TALL_FROM_MM:
            return []
        return [one] if _silhouette_fit(closed, [(one.fit.footprint, one.fit.top)], origin) >= MIN_SILHOUETTE_FIT else []

    def _candidate(self, image: np.ndarray, view: TableView, sample, fine: np.ndarray, diff: np.ndarray,
                   blob: np.ndarray, shade: np.ndarray, table_fine: np.ndarray, origin: tuple[float, float],
                   level: float, white: np.ndarray, white_table: float) -> "Candidate":
        """One part of a cut-out (`blob`, filled) to fit, the table read where `shade` is."""
        if shade.any():
            sample = _table_in_shade_sampler(sample, shade, table_fine, origin)
        return Candidate(image, view, sample, fine, diff, blob, table_fine, origin, level, white, white_table,
                          self.palette, self._lamplight, self._hand_seen)

    def _fit_piece(self, image: np.ndarray, view: TableView, sample, fine: np.ndarray, diff: np.ndarray,
                   blob: np.ndarray, opened: np.ndarray, shade: np.ndarray, table_fine: np.ndarray,
                   origin: tuple[float, float], level: float, white: np.ndarray, white_table: float,
                   one_brick: bool = False) -> list[FoundBlock]:
        """`_fit_cut`'s fits of one part of the cut-out (`blob`, filled; `opened`: the cut-out's
        mask before filling)."""
        if mostly_skin(fine, blob, white):
            return []  # a hand or an arm over the table (before the costly fits, which it would defeat)
        c = self._candidate(image, view, sample, fine, diff, blob, shade, table_fine, origin, level, white, white_table)
        one = _fit_one(c)
        if one is not None and one.height_mm < TALL_FROM_MM:
            unsure = one.colour_confidence < SURE_ONE_COLOUR and _top_spans_two_colours(c, one)
            return (_two_colours_instead(c, one) if unsure else []) or [one]
        if one_brick:
            return []
        if one is not None:
            # A tall box's wall may end at a lower brick of another colour: the tower fitted to
            # the whole outline is taken when it explains the outline better.
            tower = _fit_tower(c, one)
            tall = tower if tower is not None else one
            if not no_shadow_of_its_own(c.lamplight, tall) or low_instead(c.view, tall) is not None:
                return [tall]
            if tall is not one and not no_shadow_of_its_own(c.lamplight, one):
                # The outline's tower casts no shadow of its own where the box fitted first does:
                # that box (a blue tower 86.4 mm high near the camera's foot, fitted 67.2 mm by its
                # walls and shadows, its outline's tower 99.2 mm, dropped, and the tower fitted
                # after read 54.4 mm, off its footprint).
                return [one]
            # A tall box with no shadow of its own and no low height is none (`_fit` drops it):
            # touching bricks are tried instead (a gray brick beside a green one on green felt
            # fitted as one box 48 mm tall).
        # Bricks of different colours that touch (one box's top would not be one colour).
        split = c.parts
        parts, parts_agreement, parts_as_reported = _fit_parts(c, split)
        # A part lost whose colour took in the table in shade beside it (an orange brick's shadow
        # on wood is wood's hue, darker: near orange): the touching fit grew the brick over its
        # shadow, and its top was then no one colour. Fitted again with the shade taken for
        # table, the split stands where it gives more bricks.
        for lit in _shade_cuts(c, split, parts) if split is not None and len(parts) < len(split.cores) else []:
            again = _fit_parts(c, lit)
            if len(again[0]) > len(parts):
                split, (parts, parts_agreement, parts_as_reported) = lit, again
                break
        if parts:
            # Touching bricks of other colours, or a tower's top with the bands of its walls'
            # other colours split off as low neighbours. The tower fitted to the outline is taken
            # where its courses (each any one colour) explain the colour map better than the
            # bricks as reported do (each placed on the map, then moved by its own walls: both
            # answers scored as given, on the same points), or, when a "touching brick" is as
            # tall as a tower, where it explains the outline better than the bricks explain
            # their colours, if lamps were found: a tower taken so is then dropped where it casts
            # no shadow of its own (`_fit`), and with no lamp nothing checks it (a yellow, a gray
            # and a blue brick in a row, 28.8, 19.2 and 28.8 mm, went as one gray tower 121.6 mm
            # high, its courses explaining the map worse than the bricks).
            points, labels = map_points(split.labels, c.origin)

            def courses(b: FoundBlock) -> float:
                return courses_agreement(points, labels, b.fit.footprint, b.height_mm, c.view.foot_mm,
                                         c.view.camera_height_mm)

            tower = c.outline_tower

            @cache
            def towers_courses() -> float:  # (asked for by at most two of the tests below)
                return courses(tower) if tower is not None else 0.0

            tallest = max(parts, key=lambda b: b.height_mm)
            # The tallest part a tower, the others bands of its lower courses: taken as one tall
            # block where its courses explain the map better than the bricks as reported and than
            # the outline's tower (a blue-topped tower 70.4 mm high over black courses on dark
            # wood, its shadow towards the camera's foot: its outline's tower took a black band for
            # its top, 57.6 mm high, off its footprint).
            if tallest.height_mm >= TALL_FROM_MM and courses(tallest) > max(parts_as_reported, towers_courses()):
                return [tallest]
            if tower is not None:
                assert c.tall_on_outline is not None  # (the tower was placed by it)
                if (tallest.height_mm >= TALL_FROM_MM and c.tall_on_outline.agreement > parts_agreement
                        and c.deep_lamps):
                    return [tower]
                if towers_courses() > parts_as_reported:
                    return [tower]
            kept = without_their_shadows(c, parts)
            if len(kept) == 1 < len(parts):
                return _alone_without_its_shadow(c, split, kept[0])
            return kept
        # A wall that turns: its own outline, holes kept (a castle's yard is table).
        arms = _fit_arms(replace(c, blob=opened & blob))
        if arms:
            return arms
        # A tower whose walls are bricks of many colours: one box fitted to its outline.
        if _a_tower_stands(c):
            return [c.outline_tower]
        # Then (or where the tower casts no shadow of its own, and `fits` would drop it),
        # touching bricks of near colours (red beside orange under a warm lamp) that the
        # usual split took for one: split finer, they stand only when every part is a brick of a
        # colour of its own, none of them another's wall in shade, and none the table in shade (a
        # finer split also parts a brick's top from its walls and its shadow on a gray mat, which
        # `shaded` cannot tell from a black brick, or a tower's courses).
        bricks = _split_finer(c)
        if bricks or one is None:
            return bricks
        # At last, where it was fitted as a tall box with no shadow of its own: the low range's own
        # fit may have a low height its tall refit lost (a yellow 9.6 mm brick on wood far from the
        # foot: its walls read 44.8 mm on the grain beyond them, 9.6 the next least; refitted as a
        # tower 67.2 mm, the low heights' least at 32).
        low = _fit_one(c, tall=False)
        instead = None if low is None else low_instead(c.view, low)
        return [] if instead is None else [instead]


def _split_finer(c: Candidate) -> list[FoundBlock]:
    """Touching bricks of near colours split finer (`Candidate.finer_parts`), where every part is
    a brick of a colour of its own, none of them another's wall in shade, and none the table in
    shade; else none."""
    finer = c.finer_parts
    bricks, _, _ = _fit_parts(c, finer)
    if not bricks or finer is None or len({b.color for b in bricks}) < len(bricks):
        return []
    if len(bricks) < len(finer.cores) and not _the_rest_their_shade(c, finer, bricks):
        return []
    return bricks if _each_a_brick_of_its_own(c, bricks) else []


def _its_parts_alone(c: "Candidate", split: "ColourParts | None") -> list[FoundBlock]:
    """Each colour part of a candidate (`split`'s cores) fitted alone on its own outline, as one
    low brick: a gray 1x6 brick 28.8 mm high with a blue and a green brick 9.6 mm high beside it
    on green felt, their tops mostly behind it, had the only core, and its outline with theirs in
    it was no box's (silhouette 0.72). A brick stands at least a brick high: a plate's walls are
    too low to tell it from a flat patch of a colour (what is left of an unseen mini's black base
    beside its marker's white)."""
    if split is None:
        return []
    found = []
    for i in range(len(split.cores)):
        part = _part_outline(c, split, i)
        if part is None:
            continue
        one = _fit_one(replace(c, blob=part), tall=False)
        if one is not None and one.studs is not None and BRICK_MM <= one.height_mm < TALL_FROM_MM:
            found.append(one)
    return found


# Two tops of near colours under one lamp: the darker has at least this share of the other's light
# (a red top has 0.57 of an orange one's, path traced; the split-off wall of a blue brick 0.04).
FINER_TOPS_LIGHT = 0.35


def _the_rest_their_shade(c: "Candidate", split: "ColourParts", bricks: list[FoundBlock]) -> bool:
    """Whether the parts of a split that gave no brick are the bricks' own walls or shadows in
    shade: darker than the table, and within the bricks' silhouettes or where they cast shade."""
    boxes = [(b.fit.footprint, b.fit.top) for b in bricks]
    cast = shade_cast_by(c, [(b.fit.footprint, b.height_mm) for b in bricks])
    table_light = float(linear_light(np.asarray(c.table_colour, np.float64)).sum())
    for core in split.cores:
        if _part_stood(c, core, bricks):
            continue
        if float(linear_light(np.median(c.fine[core > 0], axis=0).astype(np.float64)).sum()) >= table_light:
            return False
        if _explained_share(core, boxes, c.origin, cast) < REST_EXPLAINED:
            return False
    return True


# A finer split's part that gave no brick is the bricks' walls or shadow where this much of it lies
# in their outlines or cast shade (a white and an orange brick's shade on beige tiles: 1.0).
REST_EXPLAINED = 0.9


def _each_a_brick_of_its_own(c: "Candidate", bricks: list[FoundBlock]) -> bool:
    """Whether none of the bricks a split gave is another's wall in shade (`_a_wall_of_another`)
    or has a top that may be the table in shade (a brick's shadow split off as a dark part)."""
    return not (_a_wall_of_another(c, bricks)
                or any(top_may_be_shade(c.lamplight, b.top_bgr, c.table_colour) for b in bricks))


def _a_wall_of_another(c: "Candidate", bricks: list[FoundBlock]) -> bool:
    """Whether two parts of a finer split are colours the usual margin joins (`chroma_tolerance`)
    and one has under FINER_TOPS_LIGHT of the other's light: a brick's top and its own wall in
    deep shade, not two tops facing the same lamp."""
    apart = chroma_tolerance(np.median(c.fine[c.blob > 0], axis=0))
    tops = [np.asarray(b.top_bgr, np.float64) for b in bricks]
    for i, a in enumerate(tops):
        for b in tops[i + 1:]:
            near = float(np.linalg.norm(chromaticity(a) - chromaticity(b))) < apart
            light_a, light_b = float(linear_light(a).sum()), float(linear_light(b).sum())
            if near and min(light_a, light_b) < FINER_TOPS_LIGHT * max(light_a, light_b):
                return True
    return False


@dataclass(frozen=True, eq=False)
class Candidate:
    """One candidate as the fits see it: the frame and its view, the candidate's cut-out at FINE_MM
    (`fine`, its colour distance from the table `diff`, its outline `blob`, the table under it), and
    the levels of the frame (the distance that counts, the anchors' paper white)."""

    image: np.ndarray
    view: TableView
    sample: Any  # the camera image sampled at table points (`_sampler`)
    fine: np.ndarray
    diff: np.ndarray
    blob: np.ndarray
    table_fine: np.ndarray
    origin: tuple[float, float]  # table mm of the cut-out's corner
    level: float
    white: np.ndarray
    white_table: float
    palette: dict[str, tuple[float, float, float]]  # the colours blocks are named by
    lamplight: "Lamplight | None" = None  # the lamps found from the minis' shadows, when any
    hand_in_view: bool = True  # whether the frame shows a hand (`hand_may_be_in_view`): fingers come with one

    @property
    def deep_lamps(self) -> tuple[FoundLamp, ...]:
        """The lamps found whose shadows are dark enough to tell a height (none without lamps)."""
        return () if self.lamplight is None else self.lamplight.deep

    @cached_property
    def maybe_shade(self) -> np.ndarray:
        """Where the cut-out may be the table in shade (`could_be_shade`, or tinted as the frame's
        shade: `tinted_as_the_shade`; uint8)."""
        smooth = cv2.GaussianBlur(self.fine, (0, 0), 1.0)
        return (could_be_shade(smooth, self.table_fine) | tinted_as_the_shade(self.lamplight, smooth, self.table_fine)).astype(np.uint8)

    @cached_property
    def maybe_shade_closed(self) -> np.ndarray:
        """`maybe_shade` closed over the table's texture (a felt's fibres speckle its shade with
        pixels of another tint): where a box's cast shadow may lie (`shade_cast_by`)."""
        return cv2.morphologyEx(self.maybe_shade, cv2.MORPH_CLOSE, STUD_GAP_DISC)

    @cached_property
    def table_colour(self) -> np.ndarray:
        """The table's colour under the whole cut-out (median BGR): what a part's top is told from
        when it may be the table in shade (`top_may_be_shade`)."""
        return np.median(self.table_fine[self.blob > 0], axis=0)

    @cached_property
    def darkness(self) -> np.ndarray:
        """How much darker than the table under it each pixel of the cut-out is (`lamps.darkness`)."""
        return darkness(self.fine, self.table_fine)

    @cached_property
    def parts(self) -> "ColourParts | None":
        """The candidate split by colour (`colour_parts`, a k-means): the touching bricks' fit and
        the tower's tops both ask for it."""
        return _without_table_in_shade(self, colour_parts(self.fine, self.blob, self.differing,
                                                          shade_core=self.table_in_shade_under))

    def table_in_shade_under(self, mask: np.ndarray) -> bool:
        """Whether the cut-out's pixels under a mask are the table in shade (`table_in_shade`)."""
        return table_in_shade(self.fine[mask > 0], self.table_fine[mask > 0], self.white)

    @cached_property
    def finer_parts(self) -> "ColourParts | None":
        """The candidate split with a narrower margin between colours (`FINER_APART`)."""
        return colour_parts(self.fine, self.blob, self.differing, FINER_APART)

    @cached_property
    def differing(self) -> np.ndarray:
        """Where the cut-out differs from the table by the frame's level (uint8 mask)."""
        return (self.diff > self.level).astype(np.uint8)

    @cached_property
    def tall_on_outline(self) -> Placed | None:
        """The tower its outline fits best (`_tall_on_outline`): a touching fit's two comparisons
        with a tower ask for the same one."""
        return _tall_on_outline(self)

    @cached_property
    def outline_tower(self) -> FoundBlock | None:
        """The tower fitted to its outline alone (`_fit_tower`): the parts' fit and the tower's
        own try ask for the same one."""
        return _fit_tower(self)


# --- the fits a candidate is tried with ------------------------------------------------------------

def _fit_parts(c: Candidate, split: "ColourParts | None") -> tuple[list[FoundBlock], float, float]:
    """A candidate of touching bricks split by colour (`colour_parts`), the bricks fitted
    together on the colour map (`touching.fit_touching`: each hides part of its neighbours) and
    set where their shadows rule their heights out (`heights_by_their_shadows`), the
    share of the map's points that fit predicts right among the low heights (what a tower's fit is
    weighed against), and the share the bricks as reported
    predict right (a brick's walls may have moved it; a part that is no brick predicts nothing).
    Empty unless two parts or more are bricks that explain their own colours."""
    fine, origin = c.fine, c.origin
    if split is None or not 2 <= len(split.cores) <= MAX_PARTS:
        return [], 0.0, 0.0
    masks, labels = split.cores, split.labels
    starts = []
    for mask in masks:
        top = top_face_of(fine, mask)
        starts.append(rect_mm(top if top is not None else mask, origin))
    widened = [i for i, r in enumerate(starts) if not brick_sized(r)]
    starts = [_widened(r) if i in widened else r for i, r in enumerate(starts)]
    if not all(brick_sized(r) for r in starts):
        return [], 0.0, 0.0
    points, scored = map_points(labels, origin)
    foot = c.view.foot_mm
    placed = fit_touching(points, scored, starts, foot, c.view.camera_height_mm)
    agreement = max(p.agreement for p in placed)
    heights = sorted(p.height_mm for p in placed)
    if heights[-1] >= HEIGHTS_MM[-1] and heights[-2] <= BRICK_MM:
        # A part as tall as the low heights go, the others no higher than a brick, may be a
        # tower's top, taller still, over the bands of its lower courses.
        placed = fit_touching(points, scored, starts, foot, c.view.camera_height_mm, ALL_HEIGHTS_MM)
    if not all(_hidden_by_a_taller(placed[i], placed, foot) for i in widened) and _a_tower_stands(c):
        # A strip is also a band of a tower's wall (a band a colour), which nothing stands in
        # front of: the tower's fit is for it, where it casts its shadow (else the strip is a
        # one-stud brick's top, blurred narrower than a stud, beside one as tall).
        return [], 0.0, 0.0
    fits = [_placed_fit(c.view, p) for p in placed]
    bricks: dict[int, tuple[Placed, BoxFit]] = {}  # the parts that explain their colour
    for i, (p, fit) in enumerate(zip(placed, fits)):
        if p.explained < MIN_SILHOUETTE_FIT:
            continue
        # The map places each brick, but tells a height only by how much of its neighbours it
        # hides; its own walls, where they show, tell it better: the profile fit from its placed
        # top, leaving out the profiles that cross a neighbour (as for a wall's arms).
        walls = _fit_box(c, fit.top, True, tuple(f.top for j, f in enumerate(fits) if j != i))
        if walls is not None and _same_place(walls.footprint, p.footprint):
            p = replace(p, footprint=walls.footprint, height_mm=walls.height_mm)
            fit = walls
        bricks[i] = (p, fit)
    blocks = []
    reported: dict[int, tuple[TableRect, float]] = {}  # the parts' boxes as reported
    for i, (p, fit) in heights_by_their_shadows(c, bricks).items():
        mask = masks[i]
        top = fit.top
        # Its colour where its own top shows (a taller neighbour may cover the rest of it).
        inner = TableRect(top.centre, top.axis, (max(top.half_mm[0] - 1.0, 0.5), max(top.half_mm[1] - 1.0, 0.5)))
        own = fill_fine(np.zeros_like(mask), inner.corners(), origin)
        own &= mask
        if np.count_nonzero(own) < 12:
            continue
        seen = _named(c, fine[own > 0].astype(np.float64), fit)
        if seen is None:
            continue
        blocks.append(_placed_block(p, fit, seen))
        reported[i] = (p.footprint, p.height_mm)
    if len(blocks) < 2:
        return [], 0.0, 0.0
    as_reported = box_agreement(points, scored, list(reported.values()), foot, c.view.camera_height_mm, list(reported))
    return blocks, agreement, as_reported


SURE_ONE_COLOUR = 0.95  # a box's top named less surely may be two bricks of near colours (of 245 ray-cast blocks, 4)


# A top's samples' chromaticity (per cent), 10th to 90th percentile in its widest channel, from
# which it may be two bricks' tops: of 150 unsure low boxes on four benches' frames it spanned
# 0.3-15.8, the two that were two bricks 5.4 and 15.8. (The colour split it would ask for is a
# k-means: 7 ms a candidate.)
TWO_COLOURS_SPREAD = 4.0


def _top_spans_two_colours(c: Candidate, one: FoundBlock) -> bool:
    """Whether a box's top, sampled, spans more chromaticity than one brick's (TWO_COLOURS_SPREAD)."""
    chroma = chromaticity(top_samples(c.image, c.view, one.fit.top))
    return float((np.percentile(chroma, 90, axis=0) - np.percentile(chroma, 10, axis=0)).max()) >= TWO_COLOURS_SPREAD


def _two_colours_instead(c: Candidate, one: FoundBlock) -> list[FoundBlock]:
    """Touching bricks of near colours where one box explained the outline (an orange and a
    yellow brick of a height, one box over both named orange, not surely): the bricks split by
    colour (`_fit_parts`), each named another colour and a brick of its own, where they explain the
    colour map better than the one box does as any one of its parts; else none."""
    split = c.parts
    parts, _, as_reported = _fit_parts(c, split)
    if len(parts) < 2 or len({b.color for b in parts}) < len(parts) or not _each_a_brick_of_its_own(c, parts):
        return []
    assert split is not None
    points, labels = map_points(split.labels, c.origin)
    as_one = max(box_agreement(points, labels, [(one.fit.footprint, one.height_mm)], c.view.foot_mm,
                               c.view.camera_height_mm, [part]) for part in range(len(split.cores)))
    return parts if as_reported > as_one else []


def _without_table_in_shade(c: Candidate, split: "ColourParts | None") -> "ColourParts | None":
    """A colour split of more parts than are fitted (MAX_PARTS) without those that are the table
    in shade (`table_in_shade`, which tells shade from black plastic where the table has a hue: a
    brick's shadow on felt is the felt's colour darker, a colour of its own), scored as table;
    None when fewer than two parts are left. (Three pieces of a row's shadow on green felt beside
    three touching bricks made six parts. Not for fewer: a part that took in its own shadow, an
    orange brick's on wood, may read as shade on the whole, and a tower's walls in shade too.)"""
    if split is None or len(split.cores) <= MAX_PARTS:
        return split
    table = [i for i, core in enumerate(split.cores)
             if c.table_in_shade_under(core)]
    if not table:
        return split
    kept = [i for i in range(len(split.cores)) if i not in table]
    if len(kept) < 2:
        return None
    renumber = np.full(len(split.cores), TABLE, np.int32)
    renumber[kept] = np.arange(len(kept))
    labels = np.where(split.labels >= 0, renumber[np.maximum(split.labels, 0)], split.labels)
    for i in table:
        labels[split.cores[i] > 0] = TABLE
    return ColourParts([split.cores[i] for i in kept], labels)


def _alone_without_its_shadow(c: Candidate, split: "ColourParts", brick: FoundBlock) -> list[FoundBlock]:
    """A brick split by colour from parts that were its shadows (`without_their_shadows`),
    fitted again alone on its own colour's outline: the touching fit had placed it beside
    "bricks" that hid part of it (a green 1x4 brick 9.6 mm high beside its shadow on gray tiles
    read 22.4 mm, its top pushed onto the shadow). As first fitted where that gives nothing.
    (Where two parts or more are left, fitting them together again moved a tower's courses.)"""
    part = _part_outline(c, split, _part_under(c, split, brick))
    alone = _fit_one(replace(c, blob=part)) if part is not None else None
    return [alone if alone is not None else brick]


def _part_outline(c: Candidate, split: "ColourParts", part: int) -> np.ndarray | None:
    """One colour part's own outline in the candidate (its points, opened by a brick's narrowest
    side, the largest piece filled), to fit it alone; None where nothing that broad is left."""
    return filled_blob(cv2.morphologyEx(((split.labels == part) & (c.blob > 0)).astype(np.uint8), cv2.MORPH_OPEN,
                                    _BRICK_DISC))


def _part_under(c: Candidate, split: "ColourParts", block: FoundBlock) -> int:
    """The part of a split whose core lies most under a block's top or footprint (a top the fit
    pushed onto a neighbour's part still stands on its own part)."""
    own = fill_fine(np.zeros_like(c.blob), block.fit.top.corners(), c.origin)
    own = fill_fine(own, block.footprint_mm, c.origin) > 0
    return int(np.argmax([np.count_nonzero(own & (core > 0)) for core in split.cores]))


PART_SHADE_SHARE = 0.2  # a part this much of which may be the table in shade may have taken in a shadow


def _part_stood(c: Candidate, core: np.ndarray, stood: list[FoundBlock]) -> bool:
    """Whether a part's core has its middle under the top of a brick that stood."""
    ys, xs = np.nonzero(core)
    middle = tuple(float(v) for v in pixels_mm(xs, ys, c.origin).mean(axis=0))
    return any(cv2.pointPolygonTest(b.fit.top.corners().astype(np.float32), middle, False) >= 0 for b in stood)


def _shade_cuts(c: Candidate, split: "ColourParts", stood: list[FoundBlock]) -> list["ColourParts"]:
    """The colour split with what may be the table in shade (`maybe_shade`) taken out of the parts
    that are PART_SHADE_SHARE of it or more, and scored as table: first only where the part's own
    walls cannot show (between the rest of it and the camera's foot: a black brick's walls pass for
    a gray mat in shade too), then everywhere. None when no part lost (none of the bricks the split
    gave, `stood`, has its middle) is that much shade and, the shade left out, still a core."""
    shade = c.maybe_shade > 0
    # (A part all shade, a shadow, leaves no core; one that stood is no part lost.)
    shaded = [i for i, core in enumerate(split.cores) if float(shade[core > 0].mean()) >= PART_SHADE_SHARE
              and np.count_nonzero((core > 0) & ~shade) * FINE_MM ** 2 >= MIN_AREA_MM2 / 2
              and not _part_stood(c, core, stood)]
    if not shaded:
        return []
    cuts = []
    for keep_walls in (True, False):
        labels, cores = split.labels.copy(), list(split.cores)
        for i in shaded:
            table = shade & (labels == i)
            if keep_walls:
                table &= _towards_foot((cores[i] > 0) & ~shade, c.origin, c.view, HEIGHTS_MM[-1]) == 0
            labels[table] = TABLE
            cores[i] = cores[i] & (~table).astype(np.uint8)
        cuts.append(ColourParts(cores, labels))
    return cuts


def _hidden_by_a_taller(part: Placed, placed: list[Placed], foot_mm: np.ndarray) -> bool:
    """Whether a taller brick stands between a part and the camera's foot, where it hides part of
    its top from the camera."""
    def reach(p: Placed) -> float:
        return float(np.linalg.norm(p.footprint.centre - foot_mm))

    return any(p is not part and p.height_mm > part.height_mm and reach(p) < reach(part) for p in placed)


def _a_tower_stands(c: Candidate) -> bool:
    """Whether the tower fitted to the candidate's outline (`outline_tower`) stands: found, and
    casting a shadow of its own where the lamps found would throw one (`no_shadow_of_its_own`)."""
    tower = c.outline_tower
    return tower is not None and not no_shadow_of_its_own(c.lamplight, tower)


SAME_PLACE_IOU = 0.7  # a touching brick's walls may move its placement, not put it elsewhere
PART_STRIP_MM = 3.0  # the narrowest strip of a low brick's top that a taller neighbour leaves in view


def _widened(start: TableRect) -> TableRect:
    """A touching part's start: a low brick beside a taller one shows a strip of its top (the
    neighbour hides the rest), narrower than any brick; widened to a stud about its middle, the
    map's fit places it."""
    narrow = int(np.argmin(start.half_mm))
    if not PART_STRIP_MM <= 2 * start.half_mm[narrow] < STUD_MM - 3:
        return start
    halves = list(start.half_mm)
    halves[narrow] = (STUD_MM - GAP_MM) / 2
    return TableRect(start.centre, start.axis, (halves[0], halves[1]))


def _same_place(a: TableRect, b: TableRect) -> bool:
    """Two footprints that overlap as much as one brick's placed twice does."""
    pa, pb = a.corners().astype(np.float32), b.corners().astype(np.float32)
    inter, _ = cv2.intersectConvexConvex(pa, pb)
    union = cv2.contourArea(pa) + cv2.contourArea(pb) - inter
    return union > 0 and inter / union >= SAME_PLACE_IOU


def _fit_tower(c: Candidate, against: FoundBlock | None = None) -> FoundBlock | None:
    """A tall box fitted to the candidate's outline alone (`touching.fit_touching` with one
    part): a tower's walls show a band per brick, in as many colours, which no profile of one
    wall colour explains; its top is its own colour, at the outline's far end. With `against`
    (a tall box the profiles fitted), only when it explains the outline's map better than that
    block does, its top the brightest face or the far end's.

    Without `against` (nothing else explained the candidate) the top is looked for harder: on a
    tall tower it is a small part of the outline, a lower band of white bricks may be brighter,
    and on a table with no hue the tower's shadow is as dark as black plastic and lies beyond the
    top, where the far end should be. So each face that may be it is tried (the brightest, the
    far end's, each colour's), the outline kept to what a box under that top can cast
    (`_cast_reach`: the shadow beyond is table), and the box that explains its outline best is
    taken where the outline can tell its height (`_tower_shift_mm`) and predicts some of the
    outline's map (`c.tall_on_outline`)."""
    view = c.view
    if against is not None:
        top = top_face_of(c.fine, c.blob)
        top = top if top is not None else _far_top(c)
        start = None if top is None else rect_mm(top, c.origin)
        tall = None if start is None or not brick_sized(start) else _placed_tall(c, start, _hull_outline(c))
        if tall is None:
            return None
        placed, points, labels = tall
        if _tower_shift_mm(view, start, placed.height_mm) < TOWER_SHIFT_MM:
            return None  # (near the camera's foot the outline does not tell a tower, as `_tall_on_outline`)
        if placed.agreement <= box_agreement(points, labels, [(against.fit.footprint, against.height_mm)],
                                             view.foot_mm, view.camera_height_mm):
            return None
    else:
        placed = c.tall_on_outline
        if placed is None or placed.agreement <= 0.0:
            return None
    fit = _placed_fit(view, placed)
    # Its top's colour well inside: placed by its outline alone, a tall top may sit a millimetre
    # or two off (the outline's blurred ends), and its edge rows would be wall.
    named = _top_seen(c, fit, inset_mm=TOWER_TOP_INSET_MM)
    if named is None:
        return None
    block = _placed_block(placed, fit, named)
    if no_shadow_of_its_own(c.lamplight, block) or placed.height_mm >= max(ALL_HEIGHTS_MM):
        # Too tall for the shadow it casts (its outline read long: a 73.6 mm tower at 89.6 mm,
        # whose shadow's far part then lies on lit table): the height its shadows and its
        # outline agree on, its top where it is seen, if that is a tower casting its shadow.
        # Not for every tower: a lamp found from the minis' short shadows may be placed far
        # off, and a tower's long shadow then tells its height worse than its outline does. But
        # an outline that asks for the tallest tower there is has more than the tower in it (a
        # shadow towards the camera's foot: 96 and 99.2 mm towers read 124.8, their tops off).
        shadowed = with_its_shadows(c, fit, top_pinned=True)
        again = _placed_block(replace(placed, footprint=shadowed.footprint, height_mm=shadowed.height_mm), shadowed, named)
        if shadowed.height_mm >= TALL_FROM_MM and not no_shadow_of_its_own(c.lamplight, again, pale_counts=False):
            return again
    return block


def _tall_on_outline(c: Candidate) -> Placed | None:
    """`_fit_tower`'s search without `against`: each face that may be a tower's top, the tall box
    under it that explains its outline best, where the outline can tell its height."""
    view = c.view
    best: Placed | None = None
    hull = _hull_outline(c)
    for start in _tower_tops(c):
        tall = _placed_tall(c, start, hull & _cast_reach(view, c.origin, c.blob.shape, start))
        if tall is None or _tower_shift_mm(view, start, tall[0].height_mm) < TOWER_SHIFT_MM:
            continue  # (near the camera's foot an outline does not tell a tower from a low block)
        if best is None or tall[0].agreement > best.agreement:
            best = tall[0]
    return best


def _placed_tall(c: Candidate, start: TableRect, outline: np.ndarray
                 ) -> tuple[Placed, np.ndarray, np.ndarray] | None:
    """One box from a top `start` fitted to an outline (uint8 mask of the cut-out) among every
    height up to a tower's: (the placement, the map's points and labels), or None when it does not
    explain the outline or is low (a low box is the profile fit's to find: an outline alone says
    little of it)."""
    points, labels = map_points(np.where(outline > 0, 0, TABLE).astype(np.int32), c.origin)
    placed = fit_touching(points, labels, [start], c.view.foot_mm, c.view.camera_height_mm, ALL_HEIGHTS_MM)[0]
    if (placed.explained < MIN_SILHOUETTE_FIT or placed.agreement < TOWER_AGREEMENT
            or placed.height_mm < TALL_FROM_MM):
        return None
    return placed, points, labels


def _tower_tops(c: Candidate) -> list[TableRect]:
    """Where a tower's top may be, as cast rectangles, likeliest first: the brightest face, the
    face at the outline's far end from the camera's foot, then each colour's lit face (the part
    whose colour is the top's), furthest from the foot first; brick-sized ones only, each once."""
    faces = [top_face_of(c.fine, c.blob), _far_top(c)]
    split = c.parts
    if split is not None:
        parts = [top_face_of(c.fine, core) for core in split.cores[:MAX_PARTS]]
        foot = c.view.foot_mm
        faces += sorted((f for f in parts if f is not None),
                        key=lambda f: -float(np.linalg.norm(rect_mm(f, c.origin).centre - foot)))
    tops: list[TableRect] = []
    for face in faces:
        if face is None:
            continue
        start = rect_mm(face, c.origin)
        if brick_sized(start) and not any(_same_place(start, t) for t in tops):
            tops.append(start)
    return tops


TOWER_SHIFT_MM = 4.0  # what a tower's outline must move by against a low block's for its height to show
LOW_BLOCK_MM = 28.8  # three bricks: the common low block a tower is told from


def _tower_shift_mm(view: TableView, top: TableRect, height_mm: float, low_mm: float = LOW_BLOCK_MM) -> float:
    """How much further towards the camera's foot a box of `height_mm` under a top cast at `top`
    stands than a low block's (`low_mm`) would: the width of wall its outline shows more.
    Right under the lens it is a millimetre or two, blur's size, and the outline says nothing of
    the height (a long white brick there fitted 92.8 mm tall)."""
    reach = float(np.linalg.norm(top.centre - view.foot_mm))
    return reach * (1 / float(view.k(low_mm)) - 1 / float(view.k(height_mm)))


CAST_REACH_MARGIN_MM = 3.0  # a top face's rectangle is a blurred, lit part of it


def _cast_reach(view: TableView, origin_mm: tuple[float, float], shape: tuple[int, ...], top: TableRect) -> np.ndarray:
    """Where a box whose top the camera sees at `top` (cast) can show, in a cut-out at FINE_MM
    from `origin_mm` (uint8 mask of `shape`): between that top and its footprint under the
    tallest tower, which is the top scaled towards the camera's foot (the union of those
    scalings is the hull of the two ends). Beyond it, further from the foot or aside, is no part
    of that box: its shadow, something else."""
    foot = view.foot_mm
    tallest = max(ALL_HEIGHTS_MM)
    low = top.scaled_about(foot, (view.camera_height_mm - tallest) / view.camera_height_mm)
    corners = np.concatenate([top.corners(), low.corners()])
    reach = fill_fine(np.zeros(shape[:2], np.uint8), corners, origin_mm, hull=True)
    margin = int(round(CAST_REACH_MARGIN_MM / FINE_MM))
    return cv2.dilate(reach, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * margin + 1, 2 * margin + 1)))


def _half_contrast(diff: np.ndarray, blob: np.ndarray, level: float) -> float:
    """Half a candidate's typical colour distance from the table (no lower than the level that
    counts): where its blurred edges truly are."""
    return max(level, 0.5 * float(np.median(diff[blob > 0])))


def _hull_outline(c: Candidate) -> np.ndarray:
    """A tall box's outline as the camera casts it: cut at half the candidate's contrast (where a
    blurred edge truly is: cut lower, both ends grow a millimetre or two and the box that fits
    them is a few bricks too tall) and filled to its convex hull (a box's cast is convex; a band
    of bricks the table's colour would leave a gap across it)."""
    cut = ((c.diff > _half_contrast(c.diff, c.blob, c.level)) & (cv2.dilate(c.blob, np.ones((7, 7), np.uint8)) > 0)).astype(np.uint8)
    ys, xs = np.nonzero(cut)
    hull = np.zeros_like(cut)
    if len(xs) >= 3:
        cv2.fillConvexPoly(hull, cv2.convexHull(np.stack([xs, ys], axis=1).astype(np.int32)), 1)
    return hull


def _far_top(c: Candidate) -> np.ndarray | None:
    """A tall box's top face in a candidate's cut-out, found by where it must be: seen from the
    camera, the top is cast furthest from the camera's foot. The face of the far end's colour
    that reaches the far end, cut at its own brightness (the top is lit, its walls are not).
    None right under the lens (no far end) or when no such face stands out."""
    # Inside the outline by 1.5 mm: its outermost pixels blend with the table.
    ys, xs = np.nonzero(cv2.erode(c.blob, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))))
    if len(xs) < 12:
        return None
    pts = pixels_mm(xs, ys, c.origin)
    out = pts.mean(axis=0) - c.view.foot_mm
    if np.linalg.norm(out) < FAR_TOP_FROM_MM:
        return None
    reach = (pts - c.view.foot_mm) @ (out / np.linalg.norm(out))
    far = reach >= reach.max() - 5.0  # a top turned corner-first is a corner there
    if np.count_nonzero(far) < 4:
        return None
    smooth = cv2.GaussianBlur(c.fine, (0, 0), 1.0).astype(np.float32)
    alike = near_colour(smooth, np.median(smooth[ys[far], xs[far]], axis=0)) & (c.blob > 0)
    count, labels = cv2.connectedComponents(alike.astype(np.uint8), connectivity=4)
    ids = labels[ys[far], xs[far]]
    ids = ids[ids > 0]
    if count < 2 or not len(ids):
        return None
    face = labels == np.bincount(ids).argmax()
    value = smooth.max(axis=2)
    inside = value[face]
    return lit_part(face, value, float(np.percentile(inside, 85)), float(np.percentile(inside, 10)))


def _fit_one(c: Candidate, tall: bool = True) -> FoundBlock | None:
    """One box fitted to the candidate: a low one, or (`tall`) one of a tower's heights where no
    low box explains it."""
    fine, diff, blob, level, origin = c.fine, c.diff, c.blob, c.level, c.origin
    x0, y0 = origin
    # Start from the top face where it stands out, else from the whole silhouette (a black
    # brick's walls are as dark as its top), cut at half its own contrast: a black brick on a
    # light table differs by ten times the threshold and would spread a pixel wider.
    top = top_face_of(fine, blob, c.table_fine, c.maybe_shade)
    if top is not None:
        top = without_its_shadow(c, without_a_lit_wall(c, top))
        start = rect_mm(top, (x0, y0))
    else:
        half = _half_contrast(diff, blob, level)
        silhouette = filled_blob(cv2.morphologyEx((diff > half).astype(np.uint8) & blob, cv2.MORPH_OPEN, _BRICK_DISC))
        if silhouette is None:
            return None
        start = rect_mm(silhouette, (x0, y0))
    if not brick_sized(start):
        return None

    clipped_top = _top_clipped(c.image, c.view, start)

    def scored(option: BoxFit) -> tuple[float, BoxFit, TableRect, tuple[int, int] | None] | None:
        """A box fit as (how well it explains the outline, the fit, its footprint snapped to
        bricks, its studs); None for a tower whose sides are no brick's (a painted mini's body)."""
        footprint, studs = snapped(option.footprint, CLIPPED_BLOOM_MM if clipped_top else 0.0)
        if option.height_mm > max(HEIGHTS_MM) and studs is None:
            return None
        return (_silhouette_fit(blob, [(footprint, option.top)], origin, shade_cast_by(c, [(footprint, option.height_mm)])),
                option, footprint, studs)

    # Up to five bricks first; a fit that does not explain the outline (or wants more) is
    # tried again among a tower's heights: a tower's many-coloured walls can lead the low
    # range astray, and most blocks are low (the tall range for all would double the time).
    best: tuple[float, BoxFit, TableRect, tuple[int, int] | None] | None = None
    best_as_fitted: BoxFit | None = None  # the best's box before its shadows moved its height
    # Near the camera's foot the outline of a plate and of five bricks differ by less than an
    # edge's blur: the walls are under a pixel and only the top's size tells a height, which the
    # camera biases (its blur in linear light before its gamma, a clipped top's bloom: a fraction
    # of a mm, tens of mm of height there).
    looked_down_on = _tower_shift_mm(c.view, start, max(HEIGHTS_MM), low_mm=PLATE_MM) < TOWER_SHIFT_MM
    for heights in (HEIGHTS_MM, ALL_HEIGHTS_MM) if tall else (HEIGHTS_MM,):
        low = heights is HEIGHTS_MM
        fit = _fit_box(c, start, top is not None, heights=heights, to_the_end=looked_down_on and low)
        if fit is None:
            continue
        as_fitted = fit
        shadowed = with_its_shadows(c, fit)
        past_the_range = shadowed.height_mm >= max(HEIGHTS_MM)
        if looked_down_on and low and (past_the_range or shadowed.height_confidence < UNSEEN_CONFIDENCE):
            # Neither its walls nor its shadows tell: one brick, the likeliest block, its height
            # likelihood kept (its confidence then says how unsure it is).
            shadowed = box_at(c.view, shadowed, BRICK_MM, shadowed.height_cost)
        options = [shadowed]
        if top is not None and shadowed.height_mm != fit.height_mm and not table_lit(c, top):
            # Its shadows say it is lower than the fit: what the fit took for a wall was shadow, and
            # its silhouette at the lower height takes it for top. The top seen standing out may
            # be where the top is: whichever of the two explains the outline better. Taller: the
            # silhouette at the taller height gives it a smaller top than the one seen (path
            # traced, an orange tower 99.2 mm high and a 2x2 brick 28.8 mm high, their tops seen,
            # explained their outlines only under those tops, and were lost).
            options.append(box_at(c.view, fit, shadowed.height_mm, shadowed.height_cost, top_pinned=True))
        explained = [s for s in map(scored, options) if s is not None]
        if not explained:
            continue
        iou, fit, footprint, studs = max(explained, key=lambda s: s[0])
        if (looked_down_on and low and past_the_range and studs is None
                and not _top_clipped(c.image, c.view, fit.top)):
            # What wanted to be taller there stands only with a brick's sides (a faint patch of
            # light on a mat is none), unless its top is clipped: that blooms past its edges.
            continue
        if fit.height_mm > max(HEIGHTS_MM) and fit.height_confidence < UNSEEN_CONFIDENCE:
            # A tower unsure of its height is none: near the foot only the top's size calls it
            # one (a white 2x3 brick 19.2 mm high, clipped, 20 mm from the foot: 86.4 mm; a tower
            # 51.2 mm high 89 mm from it is sure), and elsewhere a low brick's top beside another
            # passes for its wall (a green and an orange 2x2 touching on an overexposed frame, a
            # white 2x2 "tower" 118.4 mm high, confidence 0.52; true towers 0.78-1.0).
            continue
        if best is None or iou > best[0] or (heights is ALL_HEIGHTS_MM and iou >= MIN_SILHOUETTE_FIT):
            best, best_as_fitted = (iou, fit, footprint, studs), as_fitted
        if iou >= MIN_SILHOUETTE_FIT and fit.height_mm < TALL_FROM_MM:
            break  # a tower's wall can pass for a shorter box's: a tall answer is asked again
    if best is None or best[0] < MIN_SILHOUETTE_FIT:
        return None
    iou, fit, footprint, studs = best
    seen = _top_seen(c, fit)
    if seen is None and top is not None and not table_lit(c, top):
        # The top taken again from the silhouette took in a wall in shade beside it and is no one
        # colour (a gray 2x4 brick on gray tiles, its dark walls and shadow one with it: a 40 x 23
        # mm top; a red 1x8 brick on wood seen steeply, its dark red wall as wide as its top, fitted
        # as a plate two studs wide): the box under the top seen standing out, where it explains
        # the outline too.
        pinned = _pinned_under_top(c, fit, start, scored)
        if pinned is None or pinned[0] < MIN_SILHOUETTE_FIT:
            return None
        iou, fit, footprint, studs = pinned
        seen = _top_seen(c, fit)
    assert best_as_fitted is not None  # (kept with the best)
    if seen is None and fit.height_mm < best_as_fitted.height_mm:
        # Its shadows took it lower than its walls did, and its top taken again from the
        # silhouette at that height took in what the taller fit had for wall and is no one colour
        # (path traced, a gray 1x4 brick 28.8 mm high, no top standing out, its silhouette widened
        # by the shadow beside its near wall: fitted 38.4 mm high and a brick wide, 28.8 by its
        # shadows and 13 mm wide, and lost): the top where the fit placed it, at the shadows' height.
        pinned = scored(box_at(c.view, best_as_fitted, fit.height_mm, fit.height_cost, top_pinned=True))
        if pinned is not None and pinned[0] >= MIN_SILHOUETTE_FIT and (seen := _top_seen(c, pinned[1])) is not None:
            iou, fit, footprint, studs = pinned
    if seen is None:
        return None
    top_bgr, colour, colour_conf, reading = seen
    return FoundBlock(footprint.corners(), fit.height_mm, colour, iou, fit.height_confidence, colour_conf, studs, fit,
                      top_bgr, reading)


def _pinned_under_top(c: Candidate, fit: BoxFit, top: TableRect, scored: Callable[[BoxFit], tuple | None]
                      ) -> tuple | None:
    """`_fit_one`'s scored box (`scored`) under a top seen: at the fit's height where that explains
    the outline, else at the lowest height that explains it best (the outline does not rule out a
    taller box, whose walls may look like the table, nor ask for one; its height likelihood is
    then the outline's: even over the heights that explain it as well, none elsewhere); None
    where every height explains it alike (it tells no height: a low dark patch under a
    tower's fit)."""
    def under(height_mm: float, height_cost: dict[float, float]) -> tuple | None:
        return scored(box_at(c.view, replace(fit, top=top), height_mm, height_cost, top_pinned=True))

    at_fit = under(fit.height_mm, fit.height_cost)
    if at_fit is not None and at_fit[0] >= MIN_SILHOUETTE_FIT:
        return at_fit
    tried = [(h, s) for h in HEIGHTS_MM
             if (s := at_fit if h == fit.height_mm else under(h, fit.height_cost)) is not None]
    if not tried:
        return None
    best = max(s[0] for _, s in tried)
    if best <= min(s[0] for _, s in tried):
        return None
    height_cost = {h: 0.0 if s[0] >= best else math.inf for h, s in tried}
    iou, box, footprint, studs = next(s for _, s in tried if s[0] >= best)
    return iou, replace(box, height_cost=height_cost), footprint, studs


def _top_seen(c: Candidate, fit: BoxFit, inset_mm: float = 1.0) -> tuple[np.ndarray, str, float, TopReading] | None:
    """A fitted top's colour (BGR), its name and confidence; None when it is skin, the table, or
    not one colour."""
    points = top_points(fit.top, inset_mm)
    # Its hue is judged further in: a webcam keeps colour at half its resolution (JPEG's 4:2:0)
    # and blurs it more, so a narrow top's edge rows take the table's hue a pixel or two in.
    mm_per_px = 1.0 / math.sqrt(abs(float(np.linalg.det(c.view.px_per_mm(fit.top.centre)))))
    hue_inset_mm = max(inset_mm, CHROMA_EDGE_PX * mm_per_px)
    hue_samples = None if hue_inset_mm <= inset_mm else c.view.sample(c.image, top_points(fit.top, hue_inset_mm))
    return _named(c, c.view.sample(c.image, points), fit, _differing_share(c, points), hue_samples)


def _differing_share(c: Candidate, points_mm: np.ndarray) -> float:
    """The share of table points (N, 2) where the candidate's cut-out differs from the table by
    the level that counts (outside the cut-out: none)."""
    px = _fine_pixels(points_mm, c.origin)
    h, w = c.diff.shape
    inside = (px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)
    rows, cols = np.clip(px[:, 1], 0, h - 1), np.clip(px[:, 0], 0, w - 1)
    return float(np.mean(inside & (c.diff[rows, cols] > c.level)))


def _fine_pixels(points_mm: np.ndarray, origin_mm: tuple[float, float]) -> np.ndarray:
    """The fine window's pixel (column, row) nearest each table point (..., 2), unclipped."""
    return np.round((np.asarray(points_mm) - np.asarray(origin_mm)) / FINE_MM - 0.5).astype(int)


def _named(c: Candidate, samples: np.ndarray, fit: BoxFit, outlined: float = 1.0,
           hue_samples: np.ndarray | None = None) -> tuple[np.ndarray, str, float, TopReading] | None:
    """`_top_seen` from colours (N, 3) BGR sampled on the top face; `outlined`: the share of them
    where the frame differs from the table (`_differing_share`); `hue_samples`: those its hue
    is judged on, when not the same."""
    level, white, white_table = c.level, c.white, c.white_table
    top_bgr = np.median(samples, axis=0)
    table_here = _table_at(c.table_fine, fit.top, c.origin)
    table_level = float(table_here.mean()) / 255.0
    light = table_level / max(white_table, 1e-3)  # on the display, for the paper's balance

    def balanced(bgr: np.ndarray) -> np.ndarray:
        """A colour under the paper's white balance, at the anchors' light (BGR 0-255)."""
        rgb = bgr[::-1] / 255.0 / np.maximum(white / PAPER_ALBEDO, 1e-3) / max(light, 1e-3)
        return np.clip(rgb[::-1] * 255.0 * PAPER_ALBEDO, 0, 255)

    # Skin is judged under the paper's white balance (a white brick under a warm lamp is
    # skin-toned), and only on what stands as high as a hand's fingers on the table. A glossy
    # red or orange brick's top, paled and yellowed by the lamp's reflection, is skin-toned
    # too; but its walls, turned from the lamp, show the plastic's own hue, while a finger's
    # sides are the skin of its top in shade. A clipped top is named with its walls too.
    top_balanced = balanced(top_bgr)
    skin_toned_top = fit.height_mm >= SKIN_FROM_MM and looks_like_skin(top_balanced)
    wall = _wall_colour(c, fit) if skin_toned_top else None
    # With no wall seen (under the lens) the top alone cannot tell a finger from a glossy orange
    # top: a finger comes with its hand, a brick alone, and a brick's sides are those bricks have.
    # Where the frame shows no hand there is no finger: an orange brick whose walls in shade are
    # its top's hue darker (matte plastic under a lamp) is a brick (path traced, it was lost).
    if (skin_toned_top and c.hand_in_view and skin_top(top_balanced, None if wall is None else balanced(wall))
            and (wall is not None or _hand_in_window(c) or not _a_bricks_sides(fit.footprint))):
        return None
    contrast = float(np.linalg.norm(top_bgr - table_here))
    if contrast < level or (fit.height_mm >= TALL_FROM_MM and contrast < max(3 * level, TOWER_CONTRAST)
                            and (outlined < TOWER_TOP_OUTLINED or float(top_bgr.sum()) <= float(table_here.sum()))):
        # its "top" is the table: a gap between two walls, a hole in a castle (a tower's top,
        # cast far from its foot, must stand out clearly, or differ from the table all over
        # where it is sampled and be lighter: a patch of felt between walls, or a shadow, explains
        # a tall box's outline too, but a green top on green felt is lighter than it all over)
        return None
    # A brick's top is one colour (its studs' highlights within half its contrast with the
    # table, its hue the same all over); a box drawn over an L, over a castle's ring and its
    # yard, or over touching bricks of different colours, is not. A low top's lightness is
    # judged on the samples its hue is too, further in, where that passes (a 9.6 mm top fitted a
    # millimetre wide had a row and a column of its samples on its blurred edges: a third of
    # them off); not a tall one's (a tower fitted over a black wall that turns and its yard
    # passed so, far in).
    spread = max(18.0, 0.2 * float(np.linalg.norm(top_bgr)), 0.5 * contrast)
    alike = max(float(np.mean(np.linalg.norm(seen - top_bgr, axis=1) <= spread))
                for seen in (samples, None if fit.height_mm >= TALL_FROM_MM else hue_samples) if seen is not None)
    hue = chromaticity(samples if hue_samples is None else hue_samples)
    if (alike < TOP_ALIKE_SHARE
            or np.mean(np.linalg.norm(hue - np.median(hue, axis=0), axis=1) <= chroma_tolerance(top_bgr))
            < TOP_ALIKE_SHARE):
        return None
    top_rgb = top_bgr[::-1] / 255.0
    if wall is None and walls_may_name(top_rgb, white):  # (a skin-toned top's walls were read above)
        wall = _wall_colour(c, fit)
    reading = TopReading(top_rgb, white, light_ratio(table_level, white_table),
                         naming_wall(top_rgb, None if wall is None else wall[::-1] / 255.0, white))
    colour, colour_conf = reading.name(c.palette)
    return top_bgr, colour, colour_conf, reading


def _named_in_frames_light(blocks: list[FoundBlock], palette: dict[str, tuple[float, float, float]]
                           ) -> list[FoundBlock]:
    """The blocks named again under the light their tops named by a hue measured
    (`colours.frame_top_shade`): one frame's tops are lit alike."""
    shades = [s for b in blocks if b.reading is not None and not b.reading.shaded_by_a_mini
              and (s := calibrating_shade(b.reading, b.color, b.colour_confidence, palette)) is not None]
    top_shade = frame_top_shade(shades)
    if top_shade is None:
        return blocks
    named: list[FoundBlock] = []
    for block in blocks:
        if block.reading is not None:
            colour, confidence = block.reading.name(palette, top_shade)
            block = replace(block, color=colour, colour_confidence=confidence)
        named.append(block)
    return named


def _wall_colour(c: Candidate, fit: BoxFit) -> np.ndarray | None:
    """The median colour (BGR) of a fitted box's walls that the camera sees (those facing its
    foot), sampled across the middle of each wall's cast band, clear of its blurred edges and
    its corners; None when no wall is seen wide enough (under the lens, a plate)."""
    foot, footprint = c.view.foot_mm, fit.footprint
    points = []
    for normal, along, offset, half_len in footprint.sides():
        base = footprint.centre + normal * offset
        if float(normal @ (base - foot)) >= 0:
            continue  # a side facing away: its wall is hidden
        t = np.linspace(-0.6 * half_len, 0.6 * half_len, 7)
        bottom = base[None, :] + along[None, :] * t[:, None]
        top = c.view.cast(bottom, fit.height_mm)
        if float(np.linalg.norm(top[0] - bottom[0])) < WALL_SEEN_MM:
            continue
        points += [bottom + f * (top - bottom) for f in (0.35, 0.5, 0.65)]
    if not points:
        return None
    return np.median(c.view.sample(c.image, np.concatenate(points)[None])[0], axis=0)


def _fit_arms(c: Candidate) -> list[FoundBlock]:
    """A wall that turns, fitted arm by arm: the arms are the straight runs of its top face (or
    of its outline where no top stands out), each fitted as a box whose profiles leave out
    where the other arms join it; arms of one colour make one block, its footprint their union."""
    blob, origin = c.blob, c.origin
    top = top_face_of(c.fine, blob)
    arms = _arms(top if top is not None else blob, origin)
    if not 2 <= len(arms) <= MAX_ARMS:
        return []
    parts: list[_Arm] = []
    for i, arm in enumerate(arms):
        fit = _fit_box(c, arm, top is not None, tuple(a for j, a in enumerate(arms) if j != i))
        if fit is None:
            return []
        seen = _top_seen(c, fit)
        if seen is None:
            return []
        bloom = CLIPPED_BLOOM_MM if _top_clipped(c.image, c.view, fit.top) else 0.0
        parts.append(_Arm(fit, snapped(fit.footprint, bloom)[0], *seen))
    if (c.parts is None or len(c.parts.cores) < 2) and len({p.colour for p in parts}) > 1:
        # The cut-out is one colour (its split found no second, or no second as broad as a brick's
        # narrowest side: a white ring's walls in shade): its arms' tops named apart are
        # one colour read under the light's falloff along the wall (a path-traced orange ring read
        # white on three arms, orange on the fourth: two blocks). The colour of most of its top.
        area: dict[str, float] = {}
        for p in parts:
            area[p.colour] = area.get(p.colour, 0.0) + float(np.prod(p.fit.top.half_mm))
        colour = max(area, key=area.get)
        parts = [replace(p, colour=colour) for p in parts]
    blocks = []
    for colour in dict.fromkeys(p.colour for p in parts):
        same = [p for p in parts if p.colour == colour]
        iou = _silhouette_fit(blob, [(p.footprint, p.fit.top) for p in same], origin,
                              shade_cast_by(c, [(p.footprint, p.fit.height_mm) for p in same]))
        if iou < MIN_SILHOUETTE_FIT * len(same) / len(parts):
            return []  # the arms do not explain the wall
        longest = max(same, key=lambda p: max(p.footprint.half_mm))
        # One wall, one height: each arm's fit is a measurement of it, their costs (negative log
        # likelihoods) added.
        common = sorted(set.intersection(*(set(p.fit.height_cost) for p in same)))
        cost = {h: sum(p.fit.height_cost[h] for p in same) for h in common}
        # and the shadows the wall casts, as a box's answer to them (`with_its_shadows`)
        shadows = shadow_height_cost(c, [p.fit.top for p in same], common)
        if shadows is not None:
            cost = {h: v + float(extra) for (h, v), extra in zip(cost.items(), shadows)}
        least = min(cost.values())
        joint = replace(longest.fit, height_mm=min(cost, key=cost.get), height_cost={h: v - least for h, v in cost.items()})
        blocks.append(FoundBlock(union_outline([p.footprint for p in same]), joint.height_mm, colour, iou,
                            joint.height_confidence, min(p.colour_confidence for p in same),
                            None, longest.fit, longest.top_bgr, longest.reading))
    return blocks


@dataclass(frozen=True)
class _Arm:
    """One straight arm of a wall that turns, as fitted."""

    fit: BoxFit
    footprint: TableRect  # snapped
    top_bgr: np.ndarray
    colour: str
    colour_confidence: float
    reading: TopReading


def _fit_box(c: Candidate, start: TableRect, start_is_top: bool, adjoining: tuple[TableRect, ...] = (),
             heights: tuple[float, ...] = HEIGHTS_MM, to_the_end: bool = False) -> BoxFit | None:
    """`fit_box` in the candidate's view among `heights`; None when it ran off the candidate or
    (unless `to_the_end`) wants to be taller than they go (a hand, an arm)."""
    view = c.view
    # The image's scale across a brick changes by a thousandth: taken once, at its middle.
    scale = view.px_per_mm(start.centre)
    # A top the camera clipped blooms past its edges (the lens spreads its excess light into
    # pixels that clip too): its size says little of its height, its walls say more.
    clipped = _top_clipped(c.image, view, start)
    fit = fit_box(c.sample, start, view.foot_mm, view.camera_height_mm,
                  lambda p, d: max(float(np.linalg.norm(scale @ d)), 1e-6), heights_mm=heights,
                  start_is_top=start_is_top, adjoining=adjoining,
                  side_sigma_mm=CLIPPED_SIDE_SIGMA_MM if clipped else SIDE_SIGMA_MM)
    return None if fit is None or (fit.height_mm >= max(fit.height_cost) and not to_the_end) else fit


def detect_blocks(image: np.ndarray, camera: CameraModel, pose: TablePose, setup: Setup,
                  minis: tuple[MiniState, ...] = (), background: np.ndarray | None = None,
                  palette: dict[str, tuple[float, float, float]] = LEGO_PALETTE) -> list[FoundBlock]:
    """Every block on the table in one registered frame."""
    return BlockFinder(setup, palette).find(image, camera, pose, minis, background)


def same_colour_again(now_bgr: np.ndarray, then_bgr: np.ndarray) -> bool:
    """Whether a colour measured again at the same place, under the same light, is the one
    measured before (noise and a little shading apart)."""
    return bool(np.linalg.norm(now_bgr - then_bgr) <= max(18.0, 0.2 * float(np.linalg.norm(then_bgr))))


def top_colour_matches(image: np.ndarray, view: TableView, block: FoundBlock) -> bool:
    """Whether a known block's top still shows the colour it was found with (compared with that
    measurement itself, not with a palette name: the light there has not changed)."""
    return same_colour_again(top_colour_seen(image, view, block.fit.top), block.top_bgr)


def block_state(block: FoundBlock, block_id: int) -> BlockState:
    """What the table state says of a block (0.1 mm, three decimals of confidence)."""
    low, high = block.height_range_mm
    return BlockState(footprint_mm=tuple((round(float(x), 1), round(float(y), 1)) for x, y in block.footprint_mm),
                      height_mm=round(block.height_mm, 1), color=block.color, id=block_id,
                      confidence=round(block.confidence, 3), height_range_mm=(round(low, 1), round(high, 1)),
                      hidden_under=block.hidden_under)


def to_block_states(blocks: list[FoundBlock]) -> tuple[BlockState, ...]:
    return tuple(block_state(b, i) for i, b in enumerate(blocks))


# --- pieces ----------------------------------------------------------------------------------------


def _placed_fit(view: TableView, placed: Placed) -> BoxFit:
    """A brick `touching` placed, as a box fit: its top the footprint cast to its height."""
    top = placed.footprint.scaled_about(view.foot_mm, float(view.k(placed.height_mm)))
    # Its cost is points of the map predicted wrong, 0.5 mm apart: a blurred camera pixel spans
    # about nine of them, so they are not independent, and as likelihoods (exp(-cost)) the counts
    # made every placed height look certain (a part two bricks low had confidence 1.0).
    cost = {h: c * PLACED_COST_PER_POINT for h, c in placed.height_cost.items()}
    return BoxFit(top=top, silhouette=top, height_mm=placed.height_mm, footprint=placed.footprint,
                  height_cost=cost)


def _placed_block(placed: Placed, fit: BoxFit, named: tuple[np.ndarray, str, float, TopReading]) -> FoundBlock:
    """A brick `touching` placed, with its top's colour (`_named`), as a block."""
    top_bgr, colour, colour_conf, reading = named
    return FoundBlock(placed.footprint.corners(), placed.height_mm, colour, placed.explained, fit.height_confidence,
                      colour_conf, snapped(placed.footprint)[1], fit, top_bgr, reading)


SKIN_FROM_MM = 19.2  # a finger on the table is this thick; a skin-toned top lower than it is a brick


BRICK_SIDES_STUDS = frozenset({1, 2, 3, 4, 6, 8, 10, 12, 16})  # the sides bricks and plates are made in


def _a_bricks_sides(footprint: TableRect) -> bool:
    """Whether a footprint's sides both snap to sides bricks are made in (a row of fingers 88 x 15
    mm snaps to 11 x 2 studs: no brick)."""
    studs = snapped(footprint)[1]
    return studs is not None and all(n in BRICK_SIDES_STUDS for n in studs)


def _hand_in_window(c: Candidate) -> bool:
    """Whether the candidate's window shows a hand's worth (HAND_MM2) of skin-toned pixels that
    differ from the table, under the paper's white balance."""
    differs = c.differing > 0
    if np.count_nonzero(differs) * FINE_MM ** 2 < HAND_MM2:
        return False
    return float(np.count_nonzero(skin_toned_on_paper(c.fine[differs], c.white))) * FINE_MM ** 2 >= HAND_MM2


UNDER_CONTRAST = 2.0  # a top under a mini differs from the table by this many of the frame's levels
UNDER_RIM_MM = 40.0  # the table round a block under a mini: this far from the mini's base and more
# A mini stands on a top it hides whole where its height less this many of its sigmas (and the
# roster's) still stands it on one; such a top's extent is a guess, its fit as sure as this.
HIDDEN_STAND_SIGMAS = 3.0
HIDDEN_FIT = 0.5
ON_HANDS = 0.5  # a candidate or a top this much on a hand (`hands.hand_regions`) is no block the frame can read
# A block found beside a mini with this share of it inside the block the mini stands on is a piece
# of that block or of the mini: every such block on the standing dev sets was false, at 0.4-0.95
# of its footprint inside (0.5 left two of them).
MOSTLY_WITHIN = 0.35
# Two blocks do not stand in one place: a block with this share of its footprint inside that of one
# of its colour TALLER_BY_MM taller was its face (`_not_inside_a_taller`: on the dev frames 0.59
# and 0.72, a gray and a black brick's wall read as 6.4 mm blocks). Touching bricks' boxes overlap
# by their fits' errors, up to 0.95 of one's footprint, within two plates of each other's height;
# a lower brick of another colour fitted into its taller neighbour's box shared 0.36-0.49 of it.
INSIDE_A_TALLER = 0.35
TALLER_BY_MM = 4 * PLATE_MM
# A low block of another colour under a tower, the tower's footprint within its own and half of it
# within the tower's, is the tower's lower courses (a green top over red courses: the red walls
# fitted as a 6.4 mm box round the tower, 0.95 of the tower within it, 0.64 of it within the
# tower); touching bricks beside a taller one shared 0.08-0.85 either way on the dev frames.
COURSES_WITHIN = 0.5
TOWER_ON_ITS_COURSES = 0.9


def _fit_under(view: TableView, measured_mm: float, z_sigma_mm: float, top: TopUnder) -> BoxFit:
    """A box under a standing mini: its top where `top` is, its height's likelihood from the
    mini's marker (`measured_mm` over the table, less the roster's marker height; how sure: the
    marker's height error and the roster's)."""
    cast_top = top.top.scaled_about(view.foot_mm, float(view.k(top.height_mm)))
    sigma = math.hypot(z_sigma_mm, ROSTER_SIGMA_MM)
    costs = {float(h): (float(h) - measured_mm) ** 2 / (2 * sigma ** 2) for h in ALL_HEIGHTS_MM}
    least = costs[min(costs, key=lambda h: abs(h - top.height_mm))]
    return BoxFit(top=cast_top, silhouette=cast_top, height_mm=top.height_mm, footprint=top.top,
                  height_cost={h: c - least for h, c in costs.items()})


def _clear_of_others(setup: Setup, minis: tuple[MiniState, ...], mini: MiniState, view: TableView,
                     cast_mm: np.ndarray) -> np.ndarray:
    """uint8 over a window's table points (`cast_mm`, (n, n, 2)): 0 where the other minis, marked
    objects and anchors stand (`mask_known`), 1 elsewhere."""
    lo = cast_mm.reshape(-1, 2).min(axis=0) - COARSE_MM
    w_px, h_px = (int(v) + 2 for v in np.ceil((cast_mm.reshape(-1, 2).max(axis=0) - lo) / COARSE_MM) + 1)
    clear = np.ones((h_px, w_px), np.uint8)
    mask_known(clear, setup, tuple(m for m in minis if m.id != mini.id), view, (float(lo[0]), float(lo[1])), COARSE_MM)
    return coarse_at(clear, cast_mm, lo, cv2.INTER_NEAREST)


def _in_hands(hands: np.ndarray, region: np.ndarray) -> bool:
    """Whether most of a candidate's region (a mask over its box of `hands`) lies on a hand."""
    return float(np.mean(hands[region] > 0)) >= ON_HANDS


def _top_on_hands(block: FoundBlock, hands: np.ndarray, camera_mm: np.ndarray) -> bool:
    """Whether most of a block's top, where the frame shows it on the table's plane (seen from the
    camera at `camera_mm`, a top lies further out from below the lens the higher it is), lies on a
    hand in `hands` (the coarse view's mask)."""
    corners = np.asarray(block.footprint_mm, float)
    below = camera_mm[:2]
    seen = below + (corners - below) * camera_mm[2] / max(camera_mm[2] - block.height_mm, 1.0)
    top = np.zeros_like(hands)
    cv2.fillPoly(top, [np.round(seen / COARSE_MM).astype(np.int32)], 1)
    return bool(top.any()) and float(np.mean(hands[top > 0] > 0)) >= ON_HANDS


def _mostly_within(footprint_mm: np.ndarray, other_mm: np.ndarray) -> bool:
    """Whether MOSTLY_WITHIN of a footprint lies inside another (a piece of it found beside its mini)."""
    return _share_within(footprint_mm, other_mm) >= MOSTLY_WITHIN


def _share_within(footprint_mm: np.ndarray, other_mm: np.ndarray) -> float:
    """How much of a brick's footprint (4 corners) lies inside another footprint (a wall's outline:
    its hull); 0 for a wall's own outline (no piece of a brick)."""
    a = footprint_mm.astype(np.float32)
    if len(a) != 4:
        return 0.0
    b = other_mm.astype(np.float32) if len(other_mm) == 4 else cv2.convexHull(other_mm.astype(np.float32))
    area = cv2.contourArea(a)
    inter, _ = cv2.intersectConvexConvex(a, b)
    return float(inter / area) if area > 0 else 0.0


def _not_inside_a_taller(blocks: list[FoundBlock]) -> list[FoundBlock]:
    """The blocks but those standing in a block of their colour TALLER_BY_MM taller or more
    (INSIDE_A_TALLER of their footprint within its): two blocks do not stand in one place, and such
    a one was that block's own face (its wall in shade) fitted as a low block beside its top. (One
    of another colour there was a lower brick touching it, its box fitted into the other's: the
    verdicts still want it on their lines; unless a tower stands on it, within it all but whole:
    then it is the tower's lower courses, `_inside`.)"""
    return [b for b in blocks if b.hidden_under is not None or not any(a is not b and _inside(b, a) for a in blocks)]


def _inside(block: FoundBlock, other: FoundBlock) -> bool:
    """Whether a block stands in another of its colour (`_not_inside_a_taller`), or is the lower
    courses of a tower of other colours standing on it (COURSES_WITHIN, TOWER_ON_ITS_COURSES)."""
    if other.height_mm < block.height_mm + TALLER_BY_MM:
        return False
    share = _share_within(block.footprint_mm, other.footprint_mm)
    if block.color == other.color:
        return share >= INSIDE_A_TALLER
    return (other.height_mm >= TALL_FROM_MM and share >= COURSES_WITHIN
            and _share_within(other.footprint_mm, block.footprint_mm) >= TOWER_ON_ITS_COURSES)


CHROMA_EDGE_PX = 2.0  # a top's hue is judged this many camera pixels in from its edges (`_top_seen`)


CHROMA_WEIGHT = 0.5
# BGR -> luma and the two colour differences (Rec. 601), the colour differences weighted less: a
# JPEG or a webcam stream keeps colour at half resolution, so its colour edges are twice as blurred.
_EDGE_MATRIX = np.array([[0.114, 0.587, 0.299],
                         [-0.0813 * CHROMA_WEIGHT, -0.4187 * CHROMA_WEIGHT, 0.5 * CHROMA_WEIGHT],
                         [0.5 * CHROMA_WEIGHT, -0.3313 * CHROMA_WEIGHT, -0.1687 * CHROMA_WEIGHT]], np.float32)


def _top_clipped(image: np.ndarray, view: TableView, top: TableRect) -> bool:
    """Whether the camera clipped the top face (`clipped_top` of its median colour)."""
    return clipped_top(top_colour_seen(image, view, top)[::-1] / 255.0)


def _sampler(image: np.ndarray, view: TableView):
    """What the profiles are read from: the image at table points, as luma and colour differences."""
    return lambda points_mm: view.sample(image, points_mm) @ _EDGE_MATRIX.T


def _towards_foot(lit: np.ndarray, origin_mm: tuple[float, float], view: TableView, height_mm: float) -> np.ndarray:
    """Where the walls of a box whose top is `lit` (a mask of a FINE_MM cut-out) can show, up to
    `height_mm` tall: the top swept towards the camera's foot by its parallax (uint8)."""
    ys, xs = np.nonzero(lit)
    out = lit.astype(np.uint8)
    if not len(xs):
        return out
    centre = np.asarray(origin_mm) + (np.array([xs.mean(), ys.mean()]) + 0.5) * FINE_MM
    away = centre - view.foot_mm
    reach_mm = float(np.linalg.norm(away)) * height_mm / view.camera_height_mm
    step = -away / max(float(np.linalg.norm(away)), 1e-6)
    h, w = lit.shape
    for t in range(1, int(math.ceil(reach_mm / FINE_MM)) + 1):
        dx, dy = (int(round(v)) for v in step * t)
        yy, xx = ys + dy, xs + dx
        keep = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        out[yy[keep], xx[keep]] = 1
    return out


def _grown_to_a_brick_against(block: FoundBlock, found: list[FoundBlock]) -> FoundBlock | None:
    """A brick fitted on what the blocks found leave of an outline (`the_rest`) whose side is
    short of a brick's where it meets one of theirs: the found block's silhouette took the rest of
    it (a black 1x2 brick 19.2 mm high behind a blue one 9.6 mm high: 5 mm of its 7.8 left), and it
    reaches that block's footprint. Grown to the brick's side above, towards it; None where it is
    short of a brick elsewhere, or would stand in the found block."""
    rect = block.fit.footprint
    halves, centre = list(rect.half_mm), rect.centre.copy()
    directions = (rect.axis, rect.across)
    for k in range(2):
        length = 2 * halves[k]
        if abs(snap_side(length)[1]) <= SNAP_MM:
            continue
        target = (int((length + GAP_MM) // STUD_MM) + 1) * STUD_MM - GAP_MM
        grow = target - length
        toward = None
        for sign in (1.0, -1.0):
            edge = centre + sign * halves[k] * directions[k]
            reach = edge + sign * (grow + GROW_REACH_MM) * directions[k]
            if one_holds(found, reach) or one_holds(found, edge + sign * grow * directions[k]):
                toward = sign
                break
        if toward is None:
            return None
        centre = centre + toward * grow / 2 * directions[k]
        halves[k] = target / 2
    grown = TableRect(centre, rect.axis, (halves[0], halves[1]))
    footprint, studs = snapped(grown)
    corners = footprint.corners().astype(np.float32)
    for b in found:
        inter, _ = cv2.intersectConvexConvex(corners, b.footprint_mm.astype(np.float32))
        if inter > GROW_OVERLAP_MM2:
            return None
    return replace(block, footprint_mm=footprint.corners(), studs=studs, fit=replace(block.fit, footprint=footprint))


GROW_REACH_MM = 1.5  # how far past a brick grown against a found block that block's footprint may begin
GROW_OVERLAP_MM2 = 8.0  # what of a found block's footprint a brick grown against it may cover (its fit's error)


def within_one_of(block: FoundBlock, others: list[FoundBlock]) -> bool:
    """Whether a block's footprint centre lies within one of the others' footprints."""
    return one_holds(others, block.footprint_mm.mean(axis=0))


def one_holds(blocks: list[FoundBlock] | tuple[FoundBlock, ...], point_mm: np.ndarray) -> bool:
    """Whether a table point lies within (or on) one of the blocks' footprints."""
    point = (float(point_mm[0]), float(point_mm[1]))
    return any(cv2.pointPolygonTest(b.footprint_mm.astype(np.float32), point, False) >= 0 for b in blocks)


def _table_in_shade_sampler(sample, shade: np.ndarray, table_fine: np.ndarray, origin_mm: tuple[float, float]):
    """`sample`, reading the table's own colour where a fine window's `shade` mask is set."""
    table_edges = table_fine.astype(np.float32) @ _EDGE_MATRIX.T
    h, w = shade.shape

    def unshaded(points_mm: np.ndarray) -> np.ndarray:
        out = sample(points_mm)
        cols = np.floor((points_mm[..., 0] - origin_mm[0]) / FINE_MM).astype(int)
        rows = np.floor((points_mm[..., 1] - origin_mm[1]) / FINE_MM).astype(int)
        inside = (cols >= 0) & (cols < w) & (rows >= 0) & (rows < h)
        hit = np.zeros(inside.shape, bool)
        hit[inside] = shade[rows[inside], cols[inside]] > 0
        out[hit] = table_edges[rows[hit], cols[hit]]
        return out

    return unshaded


def stud_gaps_closed(blob: np.ndarray, diff: np.ndarray, level: float, shade: np.ndarray) -> np.ndarray | None:
    """A cut-out (uint8, FINE_MM) with its gaps under a stud across closed where they still differ
    from the table by STUD_GAP_LEVEL of the level that counts (`diff`, the colour distance) and
    are not the table in shade (`shade`); None when it has none. A brick's top has texture of its
    own (its studs' shaded rims, a glossy sheen, the camera's noise) that dips under the level in
    spots; the table's own speckle stays under half of it."""
    near = (diff > STUD_GAP_LEVEL * level).astype(np.uint8) & (1 - shade)
    closed = blob | (cv2.morphologyEx(blob, cv2.MORPH_CLOSE, STUD_GAP_DISC) & near)
    return closed if np.count_nonzero(closed) > np.count_nonzero(blob) else None


def _silhouette_fit(blob: np.ndarray, boxes: list[tuple[TableRect, TableRect]], origin_mm: tuple[float, float],
                    cast_shade: np.ndarray | None = None) -> float:
    """How well boxes (footprint, top face) explain a candidate: the smaller of the share of their
    top faces the candidate covers and the share of the candidate within 1.5 mm of the boxes'
    outlines (`_explained_share`). (A wall may look like the table, so it need not be covered; a
    candidate cut at a low threshold is a blurred pixel or two wider than the box.)"""
    face = np.zeros_like(blob)
    for _, top in boxes:
        fill_fine(face, TableRect(top.centre, top.axis, (max(top.half_mm[0] - 1.0, 0.5),
                                                          max(top.half_mm[1] - 1.0, 0.5))).corners(), origin_mm)
    covered = np.count_nonzero(face & blob) / max(np.count_nonzero(face), 1)
    return float(min(covered, _explained_share(blob, boxes, origin_mm, cast_shade)))


def _explained_share(blob: np.ndarray, boxes: list[tuple[TableRect, TableRect]], origin_mm: tuple[float, float],
                     cast_shade: np.ndarray | None = None) -> float:
    """The share of a mask within 1.5 mm of boxes' (footprint, top face) outlines as seen, or where
    their own shadows fall and it may be that shade (`cast_shade`, `shade_cast_by`)."""
    hulls = [cv2.convexHull(np.concatenate([footprint.corners(), top.corners()]).astype(np.float32)).reshape(-1, 2)
             for footprint, top in boxes]
    near = _near_outlines(blob, hulls, origin_mm, cast_shade)
    return float(np.count_nonzero(near & blob) / max(np.count_nonzero(blob), 1))


def _near_outlines(like: np.ndarray, outlines: list[np.ndarray], origin_mm: tuple[float, float],
                   cast_shade: np.ndarray | None = None) -> np.ndarray:
    """A mask like `like` (a FINE_MM cut-out) of where outlines as seen (polygons in table mm)
    explain it: within 1.5 mm of them, or in the shade their boxes cast (`cast_shade`)."""
    near = np.zeros_like(like)
    for outline in outlines:
        fill_fine(near, outline, origin_mm)
    near = cv2.dilate(near, _EXPLAINED_DISC)
    if cast_shade is not None:
        near |= cast_shade
    return near


# The ring round a block where the table shows beyond its walls and its blur, and the share of it
# that may be the block's own colour: a block stands apart from the table on every side.
RING_MM = (2.0, 6.0)
RING_ALIKE = 0.2


def _not_the_tables_pattern(image: np.ndarray, view: TableView, setup: Setup, minis: tuple[MiniState, ...],
                            blocks: list[FoundBlock], level: float) -> list[FoundBlock]:
    """The blocks found, without those whose top's colour runs on past them: over RING_ALIKE of
    the ring RING_MM round their silhouette (clear of the other blocks and of the minis) within
    half the frame's level of it. Such a "block" is a patch of the table's own pattern, cut off
    by its local estimate: a strip of a camouflage mat's gray patch along a green one, fitted as a
    gray brick 22-32 mm high with the green for its wall, or a tile beside a mini's shadow. (On the
    verdict and standing bench tables the true blocks found have at most 0.12 of it, ten false
    ones 0.24-0.87.)"""
    if not blocks:
        return blocks
    hulls = [_silhouette_hull(view, b) for b in blocks]
    inner, outer = (cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * int(r) + 1,) * 2) for r in RING_MM)
    kept = []
    for i, block in enumerate(blocks):
        origin = hulls[i].min(axis=0) - RING_MM[1] - 2.0
        w, h = (np.ceil(hulls[i].max(axis=0) - origin + RING_MM[1] + 2.0)).astype(int)
        own, others = np.zeros((h, w), np.uint8), np.zeros((h, w), np.uint8)
        cv2.fillPoly(own, [np.round(hulls[i] - origin).astype(np.int32)], 1)
        for j, hull in enumerate(hulls):
            if j != i:
                cv2.fillPoly(others, [np.round(hull - origin).astype(np.int32)], 1)
        clear = np.ones((h, w), np.uint8)
        mask_known(clear, setup, minis, view, (float(origin[0]), float(origin[1])), 1.0)
        ring = ((cv2.dilate(own, outer) > 0) & (cv2.dilate(own, inner) == 0) & (cv2.dilate(others, inner) == 0)
                & (clear > 0))
        rows, cols = np.nonzero(ring)
        points = np.stack([cols, rows], axis=1) + origin + 0.5
        on_table = ((points >= 0) & (points <= (setup.table.width_mm, setup.table.depth_mm))).all(axis=1)
        if not on_table.any():
            kept.append(block)
            continue
        seen = view.sample(image, points[on_table]).reshape(-1, 3).astype(np.float32)
        alike = np.linalg.norm(seen - np.asarray(block.top_bgr, np.float32), axis=1) < level / 2
        if float(np.mean(alike)) <= RING_ALIKE:
            kept.append(block)
    return kept


def _silhouette_hull(view: TableView, block: FoundBlock) -> np.ndarray:
    """The outline a block covers on the table plane: its footprint and its top cast, hulled (N, 2)."""
    points = np.concatenate([block.footprint_mm, view.cast(block.footprint_mm, block.height_mm)]).astype(np.float32)
    return cv2.convexHull(points).reshape(-1, 2).astype(float)


MAX_ARMS = 8
ARM_MIN_MM = 24.0  # an arm is a straight run at least this long, longer than a wall is thick


def _arms(mask: np.ndarray, origin_mm: tuple[float, float]) -> list[TableRect]:
    """The straight arms of a wall's top (or outline) seen from above: turned square to its
    enclosing rectangle, the runs at least ARM_MIN_MM long along either axis, each component's
    box. Where arms meet, both take the corner."""
    ys, xs = np.nonzero(mask)
    if len(xs) < 10:
        return []
    pts = np.stack([xs, ys], axis=1).astype(np.float32)
    (cx, cy), _, angle = cv2.minAreaRect(pts)
    size = int(np.ceil(np.hypot(*mask.shape))) + 4
    turn = cv2.getRotationMatrix2D((cx, cy), angle, 1.0)
    turn[:, 2] += (size / 2 - cx, size / 2 - cy)
    upright = cv2.warpAffine(mask, turn, (size, size), flags=cv2.INTER_NEAREST)
    back = cv2.invertAffineTransform(turn)
    run = int(round(ARM_MIN_MM / FINE_MM))
    arms = []
    for kernel in (np.ones((1, run), np.uint8), np.ones((run, 1), np.uint8)):
        kept = cv2.morphologyEx(upright, cv2.MORPH_OPEN, kernel)
        count, _, stats, _ = cv2.connectedComponentsWithStats(kept, connectivity=4)
        for x, y, w, h, area in stats[1:]:
            if area * FINE_MM ** 2 < MIN_AREA_MM2:
                continue
            corners = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], float) - 0.5
            on_mask = corners @ back[:, :2].T + back[:, 2]
            arms.append(TableRect.from_quad((on_mask + 0.5) * FINE_MM + np.asarray(origin_mm)))
    return arms


def union_outline(footprints: list[TableRect]) -> np.ndarray:
    """The outline (N, 2), counter-clockwise, of rectangles that overlap or touch: drawn at 0.25 mm
    and traced, corners kept to within 0.3 mm. A yard they enclose (a castle's ring) stays out:
    its outline is joined to the outer one by a cut of no width, so the polygon is still one."""
    corners = np.concatenate([f.corners() for f in footprints])
    lo = corners.min(axis=0) - 2.0
    step = 0.25
    size = np.ceil((corners.max(axis=0) + 2.0 - lo) / step).astype(int)
    canvas = np.zeros((size[1], size[0]), np.uint8)
    for f in footprints:
        cv2.fillConvexPoly(canvas, np.round((f.corners() - lo) / step * 4).astype(np.int32), 1, cv2.LINE_8, 2)
    canvas = cv2.morphologyEx(canvas, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))  # bricks 0.2 mm apart touch
    contours, hierarchy = cv2.findContours(canvas, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)

    def simplified(contour: np.ndarray, clockwise: bool) -> np.ndarray:
        poly = cv2.approxPolyDP(contour, 0.3 / step, True).reshape(-1, 2).astype(float) * step + lo
        return poly[::-1] if (cv2.contourArea(poly.astype(np.float32), oriented=True) < 0) != clockwise else poly

    outer_index = max((i for i in range(len(contours)) if hierarchy[0][i][3] < 0),
                      key=lambda i: cv2.contourArea(contours[i]))
    poly = simplified(contours[outer_index], clockwise=False)
    for i, contour in enumerate(contours):
        if hierarchy[0][i][3] != outer_index or cv2.contourArea(contour) * step ** 2 < MIN_AREA_MM2:
            continue
        hole = simplified(contour, clockwise=True)
        gaps = np.linalg.norm(poly[:, None] - hole[None], axis=2)
        a, b = np.unravel_index(int(np.argmin(gaps)), gaps.shape)
        poly = np.concatenate([poly[:a + 1], np.roll(hole, -b, axis=0), hole[b:b + 1], poly[a:]])
    return poly


def _table_at(table_fine: np.ndarray, top: TableRect, origin_mm: tuple[float, float]) -> np.ndarray:
    """The table's colour (BGR) under a top face's centre, from the table estimate."""
    c = _fine_pixels(top.centre, origin_mm)
    r, col = int(np.clip(c[1], 0, table_fine.shape[0] - 1)), int(np.clip(c[0], 0, table_fine.shape[1] - 1))
    return table_fine[r, col].astype(np.float64)


__all__ = ["FoundBlock", "BlockFinder", "block_state", "detect_blocks", "to_block_states"]
