"""Print -> rasterise the PDF at a known DPI -> detect: exact sizes, every id, nothing cut by a page edge."""

import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter

import cv2
import numpy as np
import pytest

from companion.calibration.printing import board_page, markers_pages
from companion.calibration.vector import to_pdf, to_svg
from companion.errors import InputError
from companion.setup_file import AnchorSpec, MiniSpec, ObjectSpec, Setup, TableSpec, default_anchors
from companion.vision.camera import CameraModel
from companion.vision.markers import detect

DPI = 300
PX_PER_MM = DPI / 25.4
needs_pdftoppm = pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) is not installed")


def setup_with_roster():
    minis = tuple(MiniSpec(i, f"mini {i}", marker_mm=size) for i, size in zip(range(4, 30), [15, 18, 20, 22, 25] * 6))
    return Setup(path="<test>", anchors=default_anchors(TableSpec()), minis=minis,
                 objects=(ObjectSpec(40, "castle", marker_mm=30.0, name="castle"),))


def rasterise(pdf: bytes, tmp_path) -> list[np.ndarray]:
    (tmp_path / "out.pdf").write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", str(DPI), "-gray", "-png", str(tmp_path / "out.pdf"), str(tmp_path / "page")],
                   check=True, timeout=120)
    return [cv2.imread(str(p), cv2.IMREAD_GRAYSCALE) for p in sorted(tmp_path.glob("page-*.png"))]


@needs_pdftoppm
@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_printed_markers_measure_their_setup_size(tmp_path, paper):
    setup = setup_with_roster()
    pages = markers_pages(setup, paper)
    images = rasterise(to_pdf(pages), tmp_path)
    assert len(images) == len(pages) >= 2
    expected = {a.id: a.size_mm for a in setup.anchors} | {m.id: m.marker_mm for m in setup.minis} | {40: 30.0}
    seen = Counter()
    for image in images:
        h, w = image.shape
        found = detect(image, CameraModel.guess(w, h), setup.dictionary)
        for marker_id, corners in zip(found.ids, found.corners_px):
            marker_id = int(marker_id)
            seen[marker_id] += 1
            side_mm = np.mean(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)) / PX_PER_MM
            assert abs(side_mm - expected[marker_id]) / expected[marker_id] < 0.005, (marker_id, side_mm)
            # whole on its page, with its quiet zone, never against an edge
            assert corners.min() > 5 * PX_PER_MM and (corners[:, 0] < w - 5 * PX_PER_MM).all() \
                and (corners[:, 1] < h - 5 * PX_PER_MM).all()
    assert seen == Counter({i: 1 for i in expected})


@needs_pdftoppm
def test_the_ruler_is_100_mm(tmp_path):
    pages = markers_pages(Setup(path="<test>", anchors=(AnchorSpec(0, 45, 45),)), "a4")
    (image,) = rasterise(to_pdf(pages), tmp_path)
    y = int(round((pages[0].height_mm - 10.0 - 8.0) * PX_PER_MM))
    dark = np.flatnonzero(image[y] < 128)
    assert abs((dark.max() - dark.min()) / PX_PER_MM - 100.0) < 0.5


@needs_pdftoppm
def test_board_is_found_whole_at_its_square_size(tmp_path):
    page, board = board_page()
    (image,) = rasterise(to_pdf([page]), tmp_path)
    detector = cv2.aruco.CharucoDetector(board)
    corners, ids, _, _ = detector.detectBoard(image)
    assert ids is not None and len(ids) == 6 * 4  # every inner corner of 7 x 5 squares
    pts = corners.reshape(-1, 2)[np.argsort(ids.ravel())]
    spacing = np.linalg.norm(np.diff(pts.reshape(4, 6, 2), axis=1), axis=2).mean() / PX_PER_MM
    assert abs(spacing - 30.0) / 30.0 < 0.005


def test_svg_pages_are_well_formed_and_exact_size():
    (page,) = markers_pages(Setup(path="<test>", anchors=(AnchorSpec(0, 45, 45),)), "letter")
    root = ET.fromstring(to_svg(page))
    assert root.get("width") == "215.9mm" and root.get("height") == "279.4mm"
    assert len(root.findall("{http://www.w3.org/2000/svg}rect")) > 5


def test_impossible_prints_are_clear_errors():
    with pytest.raises(InputError, match="does not fit"):
        markers_pages(Setup(path="<test>", anchors=(AnchorSpec(0, 45, 45, size_mm=300.0),)))
    with pytest.raises(InputError, match="nothing to print"):
        markers_pages(Setup(path="<test>"))
    with pytest.raises(InputError, match="smaller than"):
        board_page(square_mm=20, marker_mm=22)


@needs_pdftoppm
def test_hexmat_sheets_are_at_scale_and_oriented_like_the_table(tmp_path):
    from companion.calibration.printing import hexmat_pages
    from companion.calibration.vector import Line, Text
    from companion.rules.contienda import HexGrid

    grid = HexGrid(25.4, (0.0, 0.0), 12, 10)
    pages = hexmat_pages(grid, "a4")
    assert 2 <= len(pages) <= 4
    # hex sides in the vector pages are 25.4 / sqrt(3) = 14.66 mm long
    sides = [((i.x2 - i.x1) ** 2 + (i.y2 - i.y1) ** 2) ** 0.5 for i in pages[0].items if isinstance(i, Line) and i.width_mm == 0.25]
    assert sides and all(abs(s - 25.4 / 3 ** 0.5) < 1e-6 for s in sides)
    crosses = {i.text: (i.x, i.y) for i in pages[0].items if isinstance(i, Text) and "," in i.text and len(i.text) < 10}
    # the table's +y is the page's up: the "0,100" cross is above "0,0"; +x is to the right
    assert crosses["0,100"][1] < crosses["0,0"][1] and crosses["100,0"][0] > crosses["0,0"][0]
    images = rasterise(to_pdf(pages[:1]), tmp_path)
    h, w = images[0].shape  # pdftoppm rounds the page up to whole pixels
    assert abs(h - 297 * PX_PER_MM) <= 1 and abs(w - 210 * PX_PER_MM) <= 1


@needs_pdftoppm
def test_battlefield_sheets_are_at_scale_labelled_and_cover_the_board(tmp_path):
    from companion.calibration.printing import FIELD_LINE_MM, SQUARE_LINE_MM, battlefield_pages
    from companion.calibration.vector import Line, Text
    from companion.rules.forgod.board import Board

    board = Board()  # 70 x 95 mm squares from (100, 60), 7 x 6: 490 x 570 mm, over several A4 sheets
    pages = battlefield_pages(board, ("ana", "bo"), "a4")
    assert 4 <= len(pages) <= 9
    texts = [i.text for p in pages for i in p.items if isinstance(i, Text)]
    # every square carries its column and row; every row its owner and line, beside the board
    assert all(f"{c},{r}" in texts for c in range(7) for r in range(6))
    assert {"rearguard", "normal", "advanced", "ana", "bo"} <= set(texts)
    assert any("," in t and t.split(",")[0].isdigit() and int(t.split(",")[0]) % 100 == 0 for t in texts)  # crosses
    heavy = [i for p in pages for i in p.items if isinstance(i, Line) and i.width_mm == FIELD_LINE_MM]
    assert heavy and all(abs(i.y1 - i.y2) < 1e-9 for i in heavy)  # the field boundary runs along x
    # on the first sheet: vertical square lines exactly 70 mm apart in the vector page and in the raster
    first = [i for i in pages[0].items if isinstance(i, Line) and i.width_mm == SQUARE_LINE_MM and abs(i.x1 - i.x2) < 1e-9]
    xs = sorted({round(i.x1, 6) for i in first})
    assert len(xs) >= 2 and all(abs((b - a) - 70.0) < 1e-6 for a, b in zip(xs, xs[1:]))
    image = rasterise(to_pdf(pages[:1]), tmp_path)[0]
    row = image[int(round((first[0].y1 + first[0].y2) / 2 * PX_PER_MM))]
    dark = np.flatnonzero(row < 128)
    for x in xs:  # a dark pixel within 1 px of every line's place
        assert np.min(np.abs(dark - x * PX_PER_MM)) <= 1.5, x


def test_print_battlefield_command(tmp_path):
    import json
    import subprocess
    import sys

    setup = tmp_path / "f.toml"
    setup.write_text('[[anchors]]\nid = 0\nx_mm = 40\ny_mm = 40\n[ruleset]\nname = "forgod"\n[forgod]\ncolumns = 3\n'
                     'rows_per_side = 1\n[[players]]\nname = "a"\n[[players]]\nname = "b"\n')
    out = subprocess.run([sys.executable, "-m", "companion.cli", "print", "battlefield", "--setup", str(setup),
                          "--out", str(tmp_path / "out"), "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["pages"] >= 1 and (tmp_path / "out" / "battlefield.pdf").read_bytes().startswith(b"%PDF")
    knight = tmp_path / "k.toml"
    knight.write_text('[[anchors]]\nid = 0\nx_mm = 40\ny_mm = 40\n')
    out = subprocess.run([sys.executable, "-m", "companion.cli", "print", "battlefield", "--setup", str(knight),
                          "--out", str(tmp_path / "o2")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "ruleset.name" in out.stderr and not (tmp_path / "o2").exists()
