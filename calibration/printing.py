"""Printable markers and the calibration board, at exact scale.

`markers_pages(setup, paper)` lays out the anchors and every roster marker at their exact black
square size with a one-module white quiet zone, a dashed cut line, the id and name (anchors: their
table position), shelf-packed so that no marker straddles a page, and a 100 mm ruler on every page
to check that the printer kept the scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from calibration.vector import PAPERS_MM, Line, Page, Rect, Text
from companion.errors import InputError
from companion.setup_file import Setup
from companion.vision.markers import dictionary, marker_bits

MARGIN_MM = 10.0
GAP_MM = 6.0
RULER_BAND_MM = 22.0
LABEL_MM = 2.8  # text height
SEAM_MM = 0.02  # rows overlap this much so rasterisers leave no hairline between them


@dataclass(frozen=True)
class PrintItem:
    marker_id: int
    side_mm: float  # the black square
    lines: tuple[str, ...]  # label lines under the marker

    @property
    def quiet_mm(self) -> float:
        return self.side_mm / 6.0 if self.side_mm else 0.0

    def size(self, cells: int) -> tuple[float, float]:
        module = self.side_mm / cells
        block = self.side_mm + 2 * module
        text_w = max((0.56 * LABEL_MM * len(t) for t in self.lines), default=0.0)
        return max(block, text_w), block + 1.5 + len(self.lines) * (LABEL_MM + 1.0)


def draw_marker(items: list, x: float, y: float, side_mm: float, bits: np.ndarray) -> None:
    """Black modules of a marker whose black square's top-left corner is (x, y), runs merged per row."""
    cells = bits.shape[0]
    module = side_mm / cells
    for r in range(cells):
        c = 0
        while c < cells:
            if bits[r, c] == 0:
                start = c
                while c < cells and bits[r, c] == 0:
                    c += 1
                extra = SEAM_MM if r < cells - 1 else 0.0
                items.append(Rect(x + start * module, y + r * module, (c - start) * module, module + extra))
            else:
                c += 1


def _ruler(page: Page) -> None:
    x0, y = MARGIN_MM, page.height_mm - MARGIN_MM - 8.0
    page.items.append(Line(x0, y, x0 + 100.0, y, 0.3))
    for k in range(11):
        tick = 4.0 if k % 5 == 0 else 2.5
        page.items.append(Line(x0 + 10.0 * k, y, x0 + 10.0 * k, y - tick, 0.3))
    page.items.append(Text(x0, y + 5.0, LABEL_MM, "100 mm: measure it. Print at 100% (no 'fit to page').")) 


def markers_pages(setup: Setup, paper: str = "a4") -> list[Page]:
    if paper not in PAPERS_MM:
        raise InputError(f"--paper: {paper!r} is not one of {', '.join(PAPERS_MM)}")
    width, height = PAPERS_MM[paper]
    cells = dictionary(setup.dictionary).markerSize + 2
    items = [PrintItem(a.id, a.size_mm, (f"anchor {a.id}", f"x {a.x_mm:g} y {a.y_mm:g} mm, up {a.rotation_deg:g} deg"))
             for a in setup.anchors]
    items += [PrintItem(m.id, m.marker_mm, (f"{m.id} {m.name}"[:40],)) for m in setup.minis]
    items += [PrintItem(o.id, o.marker_mm, (f"{o.id} {o.name} ({o.kind})"[:40],)) for o in setup.objects]
    if not items:
        raise InputError(f"{setup.path}: nothing to print (no anchors, minis or objects)")
    usable_w, usable_h = width - 2 * MARGIN_MM, height - 2 * MARGIN_MM - RULER_BAND_MM - 8.0
    pages: list[Page] = []
    page = None
    x = y = shelf = 0.0
    for item in items:
        w, h = item.size(cells)
        if w > usable_w or h > usable_h:
            raise InputError(f"marker {item.marker_id}: {item.side_mm:g} mm does not fit on {paper} paper")
        if page is None or x + w > usable_w:
            x, y, shelf = 0.0, y + shelf + (GAP_MM if shelf else 0.0), 0.0
        if page is None or y + h > usable_h:
            page = Page(width, height)
            pages.append(page)
            x, y, shelf = 0.0, 0.0, 0.0
        left, top = MARGIN_MM + x, MARGIN_MM + 8.0 + y
        module = item.side_mm / cells
        page.items.append(Rect(left, top, item.side_mm + 2 * module, item.side_mm + 2 * module, fill=False, dash_mm=1.5))
        draw_marker(page.items, left + module, top + module, item.side_mm, marker_bits(setup.dictionary, item.marker_id))
        for k, line in enumerate(item.lines):
            page.items.append(Text(left, top + item.side_mm + 2 * module + 1.5 + (k + 1) * (LABEL_MM + 1.0) - 1.0,
                                   LABEL_MM, line))
        x += w + GAP_MM
        shelf = max(shelf, h)
    for k, page in enumerate(pages):
        page.items.append(Text(MARGIN_MM, MARGIN_MM + 3.0, 3.5,
                               f"Table companion markers ({setup.dictionary}) - page {k + 1} of {len(pages)}"))
        _ruler(page)
    return pages


def board_page(squares: tuple[int, int] = (7, 5), square_mm: float = 30.0, marker_mm: float = 22.0,
               dictionary_name: str = "DICT_5X5_100", paper: str = "a4") -> tuple[Page, cv2.aruco.CharucoBoard]:
    """A ChArUco board on a landscape page: top-left square black, markers in the white squares in
    row-major order (OpenCV's convention), drawn from the board's own geometry."""
    if marker_mm >= square_mm:
        raise InputError("--marker-mm: must be smaller than --square-mm")
    d = dictionary(dictionary_name)
    board = cv2.aruco.CharucoBoard(squares, square_mm / 1000.0, marker_mm / 1000.0, d)
    h_mm, w_mm = sorted(PAPERS_MM[paper])
    cols, rows = squares
    if cols * square_mm > w_mm - 2 * MARGIN_MM or rows * square_mm > h_mm - 2 * MARGIN_MM - RULER_BAND_MM:
        raise InputError(f"a {cols}x{rows} board of {square_mm:g} mm squares does not fit on {paper} paper")
    page = Page(w_mm, h_mm)
    x0 = (w_mm - cols * square_mm) / 2
    y0 = MARGIN_MM + 8.0
    for j in range(rows):
        for i in range(cols):
            if (i + j) % 2 == 0:
                page.items.append(Rect(x0 + i * square_mm, y0 + j * square_mm, square_mm, square_mm))
    for marker_id, corners in zip(board.getIds().ravel(), board.getObjPoints()):
        tl = np.asarray(corners)[0] * 1000.0
        draw_marker(page.items, x0 + tl[0], y0 + tl[1], marker_mm, marker_bits(dictionary_name, int(marker_id)))
    page.items.append(Text(x0, MARGIN_MM + 3.0, 3.5, f"ChArUco {cols}x{rows}, squares {square_mm:g} mm, "
                                                     f"markers {marker_mm:g} mm, {dictionary_name}"))
    _ruler(page)
    return page, board


def hexmat_pages(grid, paper: str = "a4", overlap_mm: float = 10.0) -> list[Page]:  # grid: a contienda.HexGrid
    """The hex grid at exact scale, tiled over as many pages as the map needs.

    Each page shows one window of the table (with `overlap_mm` shared with its neighbours) and
    crosses at table coordinates every 100 mm, labelled, so the sheets can be laid and aligned.
    """
    width, height = PAPERS_MM[paper]
    usable_w, usable_h = width - 2 * MARGIN_MM, height - 2 * MARGIN_MM - 12.0
    hexes = [(q, r) for r in range(grid.rows) for q in range(-grid.rows, grid.columns + grid.rows) if grid.on_map((q, r))]
    xs = [x for h in hexes for x, _ in grid.corners(h)]
    ys = [y for h in hexes for _, y in grid.corners(h)]
    x_min, x_max, y_min, y_max = min(xs), max(xs), min(ys), max(ys)
    step_x, step_y = usable_w - overlap_mm, usable_h - overlap_mm
    cols = max(1, math.ceil((x_max - x_min - overlap_mm) / step_x))
    rows = max(1, math.ceil((y_max - y_min - overlap_mm) / step_y))
    pages = []
    for j in range(rows):
        for i in range(cols):
            wx0, wy0 = x_min + i * step_x, y_min + j * step_y
            page = Page(width, height)

            def to_page(x: float, y: float) -> tuple[float, float]:
                # A sheet lies face up with its x along the table's x: the page's up is the table's +y.
                return MARGIN_MM + (x - wx0), MARGIN_MM + 12.0 + (wy0 + usable_h - y)

            def inside(x: float, y: float) -> bool:
                return 0 <= x - wx0 <= usable_w and 0 <= y - wy0 <= usable_h

            for h in hexes:
                corners = grid.corners(h)
                for a, b in zip(corners, corners[1:] + corners[:1]):
                    if inside(*a) and inside(*b):
                        page.items.append(Line(*to_page(*a), *to_page(*b), 0.25))
            for gx in range(int(math.floor(wx0 / 100.0)) * 100, int(wx0 + usable_w) + 1, 100):
                for gy in range(int(math.floor(wy0 / 100.0)) * 100, int(wy0 + usable_h) + 1, 100):
                    if inside(gx, gy):
                        px, py = to_page(gx, gy)
                        page.items += [Line(px - 3, py, px + 3, py, 0.35), Line(px, py - 3, px, py + 3, 0.35),
                                       Text(px + 1.0, py - 1.0, 2.2, f"{gx},{gy}")]
            page.items.append(Text(MARGIN_MM, MARGIN_MM + 3.0, 3.5,
                                   f"Hex mat, {grid.size_mm:g} mm hexes - sheet column {i + 1}/{cols}, row {j + 1}/{rows} "
                                   "(row 1 at y = 0): crosses give table x,y in mm; lay them on top of each other"))
            pages.append(page)
    return pages
