"""`companion print`: markers, the calibration board, Contienda's hex mat, F0R60D's battlefield."""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.commands import board_args, board_geometry, print_json


def cmd_print_markers(args: argparse.Namespace) -> int:
    from companion.calibration.printing import markers_pages
    from companion.calibration.vector import to_pdf, to_svg
    from companion.files import write_bytes_atomic, write_text_atomic
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    pages = markers_pages(setup, args.paper)
    out = Path(args.out)
    write_bytes_atomic(out / "markers.pdf", to_pdf(pages))
    svgs = []
    for k, page in enumerate(pages, start=1):
        write_text_atomic(out / f"markers-{k}.svg", to_svg(page))
        svgs.append(str(out / f"markers-{k}.svg"))
    result = {"pdf": str(out / "markers.pdf"), "svg": svgs, "pages": len(pages),
              "markers": [a.id for a in setup.anchors] + [m.id for m in setup.minis] + [o.id for o in setup.objects]}
    if args.json:
        print_json(result)
    else:
        print(f"wrote {result['pdf']} ({len(pages)} page(s)) and {len(svgs)} SVG(s): print at 100% scale and check "
              "the 100 mm ruler with a real ruler")
    return 0


def _print_tiled(args: argparse.Namespace, stem: str, pages: list) -> int:
    """A map printed over several sheets: STEM.pdf and one STEM-N.svg a sheet in --out."""
    from companion.calibration.vector import to_pdf, to_svg
    from companion.files import write_bytes_atomic, write_text_atomic

    out = Path(args.out)
    write_bytes_atomic(out / f"{stem}.pdf", to_pdf(pages))
    for k, page in enumerate(pages, start=1):
        write_text_atomic(out / f"{stem}-{k}.svg", to_svg(page))
    if args.json:
        print_json({"pdf": str(out / f"{stem}.pdf"), "pages": len(pages)})
    else:
        print(f"wrote {out / (stem + '.pdf')} ({len(pages)} sheets): print at 100%, align the crosses")
    return 0


def cmd_print_hexmat(args: argparse.Namespace) -> int:
    from companion.calibration.printing import hexmat_pages
    from companion.rules.contienda import grid_of
    from companion.setup_file import load_setup

    return _print_tiled(args, "hexmat", hexmat_pages(grid_of(load_setup(args.setup)), args.paper))


def cmd_print_battlefield(args: argparse.Namespace) -> int:
    from companion.calibration.printing import battlefield_pages
    from companion.commands import require_ruleset
    from companion.setup_file import load_setup

    setup = load_setup(args.setup)
    require_ruleset(setup, "forgod", "print battlefield")
    return _print_tiled(args, "battlefield", battlefield_pages(setup.rules.board, setup.rules.players, args.paper))


def cmd_print_board(args: argparse.Namespace) -> int:
    from companion.calibration.printing import board_page
    from companion.calibration.vector import to_pdf, to_svg
    from companion.files import write_bytes_atomic, write_text_atomic

    (cols, rows), square_mm, marker_mm = board_geometry(args)
    page, _ = board_page((cols, rows), square_mm, marker_mm, args.dictionary, args.paper)
    out = Path(args.out)
    write_bytes_atomic(out / "board.pdf", to_pdf([page]))
    write_text_atomic(out / "board.svg", to_svg(page))
    if args.json:
        print_json({"pdf": str(out / "board.pdf"), "svg": str(out / "board.svg"), "squares": [cols, rows],
                     "square_mm": args.square_mm, "marker_mm": args.marker_mm, "dictionary": args.dictionary})
    else:
        print(f"wrote {out / 'board.pdf'} and {out / 'board.svg'}: print at 100% and glue it flat on card")
    return 0


def add_group(sub: argparse._SubParsersAction) -> None:
    printing = sub.add_parser("print", help="printable markers and the calibration board (PDF and SVG)")
    psub = printing.add_subparsers(dest="what", required=True, metavar="WHAT")
    p = psub.add_parser("markers", help="anchors and every roster marker at exact size")
    p.add_argument("--setup", required=True)
    p.add_argument("--out", required=True, help="folder for markers.pdf and markers-N.svg")
    p.add_argument("--paper", choices=["a4", "letter"], default="a4")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_print_markers)
    for what, help_text, setup_help, func in (
            ("hexmat", "Contienda: the hex grid at exact scale, tiled over pages",
             "its [hex] table gives the hex size, origin, columns and rows", cmd_print_hexmat),
            ("battlefield", "F0R60D: the board of squares at exact scale, tiled over pages",
             "its [forgod] table gives the squares, origin, columns and rows", cmd_print_battlefield)):
        p = psub.add_parser(what, help=help_text)
        p.add_argument("--setup", required=True, help=setup_help)
        p.add_argument("--out", required=True)
        p.add_argument("--paper", choices=["a4", "letter"], default="a4")
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=func)
    p = psub.add_parser("board", help="a ChArUco board for camera calibration")
    p.add_argument("--out", required=True)
    board_args(p)
    p.add_argument("--paper", choices=["a4", "letter"], default="a4")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_print_board)
