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

from companion.calibration.vector import PAPERS_MM, Line, Page, Rect, Text
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


@dataclass(frozen=True)
class Tile:
    """One sheet of a map printed over several: which window of the table it shows."""

    page: Page
    x0_mm: float  # the window's least-x, least-y corner in table mm
    y0_mm: float
    width_mm: float
    height_mm: float

    def to_page(self, x: float, y: float) -> tuple[float, float]:
        # A sheet lies face up with its x along the table's x: the page's up is the table's +y.
        return MARGIN_MM + (x - self.x0_mm), MARGIN_MM + 12.0 + (self.y0_mm + self.height_mm - y)

    def inside(self, x: float, y: float) -> bool:
        return 0 <= x - self.x0_mm <= self.width_mm and 0 <= y - self.y0_mm <= self.height_mm

    def clip(self, a: tuple[float, float], b: tuple[float, float]) -> tuple[tuple[float, float], tuple[float, float]] | None:
        """An axis-aligned segment cut to the window (None when it misses it)."""
        (ax, ay), (bx, by) = a, b
        lo_x, hi_x = self.x0_mm, self.x0_mm + self.width_mm
        lo_y, hi_y = self.y0_mm, self.y0_mm + self.height_mm
        if ax == bx:
            y1, y2 = max(min(ay, by), lo_y), min(max(ay, by), hi_y)
            return ((ax, y1), (ax, y2)) if lo_x <= ax <= hi_x and y1 < y2 else None
        x1, x2 = max(min(ax, bx), lo_x), min(max(ax, bx), hi_x)
        return ((x1, ay), (x2, ay)) if lo_y <= ay <= hi_y and x1 < x2 else None


def tiles(x_min: float, x_max: float, y_min: float, y_max: float, paper: str, overlap_mm: float,
          title: str) -> list[Tile]:
    """Sheets covering a table window, `overlap_mm` shared with their neighbours, each with crosses at
    table coordinates every 100 mm (labelled x,y) to lay them on top of each other, and a title."""
    width, height = PAPERS_MM[paper]
    usable_w, usable_h = width - 2 * MARGIN_MM, height - 2 * MARGIN_MM - 12.0
    step_x, step_y = usable_w - overlap_mm, usable_h - overlap_mm
    cols = max(1, math.ceil((x_max - x_min - overlap_mm) / step_x))
    rows = max(1, math.ceil((y_max - y_min - overlap_mm) / step_y))
    out = []
    for j in range(rows):
        for i in range(cols):
            tile = Tile(Page(width, height), x_min + i * step_x, y_min + j * step_y, usable_w, usable_h)
            for gx in range(int(math.floor(tile.x0_mm / 100.0)) * 100, int(tile.x0_mm + usable_w) + 1, 100):
                for gy in range(int(math.floor(tile.y0_mm / 100.0)) * 100, int(tile.y0_mm + usable_h) + 1, 100):
                    if tile.inside(gx, gy):
                        px, py = tile.to_page(gx, gy)
                        tile.page.items.extend([Line(px - 3, py, px + 3, py, 0.35), Line(px, py - 3, px, py + 3, 0.35),
                                                Text(px + 1.0, py - 1.0, 2.2, f"{gx},{gy}")])
            tile.page.items.append(Text(MARGIN_MM, MARGIN_MM + 3.0, 3.5,
                                        f"{title} - sheet column {i + 1}/{cols}, row {j + 1}/{rows} (row 1 at the "
                                        "least y): crosses give table x,y in mm; lay them on top of each other"))
            out.append(tile)
    return out


def hexmat_pages(grid, paper: str = "a4", overlap_mm: float = 10.0) -> list[Page]:  # grid: a contienda.HexGrid
    """The hex grid at exact scale, tiled over as many pages as the map needs."""
    hexes = [(q, r) for r in range(grid.rows) for q in range(-grid.rows, grid.columns + grid.rows) if grid.on_map((q, r))]
    xs = [x for h in hexes for x, _ in grid.corners(h)]
    ys = [y for h in hexes for _, y in grid.corners(h)]
    sheets = tiles(min(xs), max(xs), min(ys), max(ys), paper, overlap_mm, f"Hex mat, {grid.size_mm:g} mm hexes")
    for tile in sheets:
        for h in hexes:
            corners = grid.corners(h)
            for a, b in zip(corners, corners[1:] + corners[:1]):
                if tile.inside(*a) and tile.inside(*b):
                    tile.page.items.append(Line(*tile.to_page(*a), *tile.to_page(*b), 0.25))
    return [t.page for t in sheets]


SQUARE_LINE_MM = 0.5
FIELD_LINE_MM = 1.2  # the line between the two battlefields


def battlefield_pages(board, players: tuple[str, str], paper: str = "a4", overlap_mm: float = 10.0) -> list[Page]:
    """F0R60D's board of squares at exact scale over as many sheets as it needs (board: a forgod Board).

    Every square carries its column and row; each row is labelled with its owner and formation line
    on both sides of the board; the line between the two fields is drawn heavier.
    """
    x0, y0 = board.origin_x_mm, board.origin_y_mm
    x1, y1 = x0 + board.columns * board.square_w_mm, y0 + board.rows * board.square_d_mm
    label_mm = 24.0  # room for the row labels beside the board
    sheets = tiles(x0 - label_mm, x1 + label_mm, y0 - 8.0, y1 + 8.0, paper, overlap_mm,
                   f"F0R60D battlefield, {board.square_w_mm:g} x {board.square_d_mm:g} mm squares")
    segments = [((x0 + c * board.square_w_mm, y0), (x0 + c * board.square_w_mm, y1), SQUARE_LINE_MM)
                for c in range(board.columns + 1)]
    segments += [((x0, y0 + r * board.square_d_mm), (x1, y0 + r * board.square_d_mm),
                  FIELD_LINE_MM if r == board.rows_per_side else SQUARE_LINE_MM) for r in range(board.rows + 1)]
    for tile in sheets:
        for a, b, width in segments:
            cut = tile.clip(a, b)
            if cut is not None:
                tile.page.items.append(Line(*tile.to_page(*cut[0]), *tile.to_page(*cut[1]), width))
        for row in range(board.rows):
            owner = players[board.side_of(row)]
            cy = y0 + (row + 0.5) * board.square_d_mm
            for col in range(board.columns):
                tx, ty = x0 + col * board.square_w_mm + 2.0, y0 + (row + 1) * board.square_d_mm - 4.0
                if tile.inside(tx, ty) and tile.inside(tx + 8.0, ty - 3.0):
                    tile.page.items.append(Text(*tile.to_page(tx, ty), 2.2, f"{col},{row}"))
            for lx in (x0 - label_mm + 1.0, x1 + 1.0):
                if tile.inside(lx, cy) and tile.inside(lx + 22.0, cy):
                    px, py = tile.to_page(lx, cy)
                    tile.page.items += [Text(px, py, 2.4, owner[:12]), Text(px, py + 3.2, 2.4, board.line_of(row))]
    return [t.page for t in sheets]
