"""The join QR code: SVG for the host screen, text for the terminal (the `qrcode` package)."""

from __future__ import annotations

import io

import qrcode
from qrcode.image.svg import SvgPathImage


def qr_svg(url: str) -> bytes:
    image = qrcode.make(url, image_factory=SvgPathImage, border=2)
    return image.to_string(encoding="unicode").encode()


def qr_text(url: str) -> str:
    """Half-block characters: two modules a character, readable by phone cameras off a terminal."""
    qr = qrcode.QRCode(border=2)
    qr.add_data(url)
    out = io.StringIO()
    qr.print_ascii(out=out, invert=True)
    return out.getvalue()
