"""Vector pages at exact scale, written as SVG (one per page) and PDF (all pages), by hand.

Only what printing needs: filled or outlined (optionally dashed) rectangles, lines and text in a
standard font. Coordinates are millimetres from the page's top-left corner, y down; the PDF writer
converts to points from the bottom-left. No dependency: a PDF of rectangles and Helvetica text is
a few lines of text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PT_PER_MM = 72.0 / 25.4
PAPERS_MM = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: bool = True  # black fill; False: a 0.2 mm outline
    dash_mm: float = 0.0  # outline dash length (cut lines)
    white: bool = False  # a white fill (a quiet zone over something else)


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    width_mm: float = 0.2


@dataclass(frozen=True)
class Text:
    x: float
    y: float  # baseline
    size_mm: float
    text: str


@dataclass
class Page:
    width_mm: float
    height_mm: float
    items: list = field(default_factory=list)


def _escape_xml(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def to_svg(page: Page) -> str:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{page.width_mm}mm" height="{page.height_mm}mm" '
             f'viewBox="0 0 {page.width_mm} {page.height_mm}">',
             f'<rect x="0" y="0" width="{page.width_mm}" height="{page.height_mm}" fill="white"/>']
    for it in page.items:
        if isinstance(it, Rect):
            if it.fill:
                colour = "white" if it.white else "black"
                parts.append(f'<rect x="{it.x:.4f}" y="{it.y:.4f}" width="{it.w:.4f}" height="{it.h:.4f}" fill="{colour}"/>')
            else:
                dash = f' stroke-dasharray="{it.dash_mm} {it.dash_mm}"' if it.dash_mm else ""
                parts.append(f'<rect x="{it.x:.4f}" y="{it.y:.4f}" width="{it.w:.4f}" height="{it.h:.4f}" fill="none" '
                             f'stroke="black" stroke-width="0.2"{dash}/>')
        elif isinstance(it, Line):
            parts.append(f'<line x1="{it.x1:.4f}" y1="{it.y1:.4f}" x2="{it.x2:.4f}" y2="{it.y2:.4f}" '
                         f'stroke="black" stroke-width="{it.width_mm}"/>')
        elif isinstance(it, Text):
            parts.append(f'<text x="{it.x:.3f}" y="{it.y:.3f}" font-family="Helvetica, Arial, sans-serif" '
                         f'font-size="{it.size_mm}">{_escape_xml(it.text)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _pdf_text(s: str) -> str:
    return s.encode("latin-1", "replace").decode("latin-1").replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _content(page: Page) -> bytes:
    h = page.height_mm
    k = PT_PER_MM
    ops = []
    for it in page.items:
        if isinstance(it, Rect):
            x, y, w, hh = it.x * k, (h - it.y - it.h) * k, it.w * k, it.h * k
            if it.fill:
                ops.append(f"{'1' if it.white else '0'} g {x:.3f} {y:.3f} {w:.3f} {hh:.3f} re f")
            else:
                dash = f"[{it.dash_mm * k:.2f} {it.dash_mm * k:.2f}] 0 d" if it.dash_mm else "[] 0 d"
                ops.append(f"0 G {0.2 * k:.3f} w {dash} {x:.3f} {y:.3f} {w:.3f} {hh:.3f} re S")
        elif isinstance(it, Line):
            ops.append(f"0 G {it.width_mm * k:.3f} w [] 0 d {it.x1 * k:.3f} {(h - it.y1) * k:.3f} m "
                       f"{it.x2 * k:.3f} {(h - it.y2) * k:.3f} l S")
        elif isinstance(it, Text):
            ops.append(f"0 g BT /F1 {it.size_mm * k:.2f} Tf {it.x * k:.3f} {(h - it.y) * k:.3f} Td "
                       f"({_pdf_text(it.text)}) Tj ET")
    return "\n".join(ops).encode("latin-1")


def to_pdf(pages: list[Page]) -> bytes:
    """A PDF 1.4 file: one page object per page, sizes in points, Helvetica for text."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_obj = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for page in pages:
        stream = _content(page)
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(add(("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %.3f %.3f] /Contents %d 0 R "
                         "/Resources << /Font << /F1 %d 0 R >> >> >>" % (
                             pages_obj, page.width_mm * PT_PER_MM, page.height_mm * PT_PER_MM, content, font)).encode()))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = ("<< /Type /Pages /Kids [%s] /Count %d >>" % (
        " ".join(f"{k} 0 R" for k in kids), len(kids))).encode()
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, xref)
    return bytes(out)
