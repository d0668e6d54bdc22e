"""Pixel boxes (x0, y0, x1, y1), end-exclusive: overlap tests and merging."""

from __future__ import annotations

Box = tuple[int, int, int, int]


def overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def merge_boxes(boxes: list[Box]) -> list[Box]:
    """Union overlapping boxes until none overlap, so each pixel is handled once."""
    merged = [list(b) for b in boxes]
    changed = True
    while changed:
        changed = False
        out: list[list[int]] = []
        for b in merged:
            for o in out:
                if overlap(tuple(o), tuple(b)):
                    o[:] = [min(o[0], b[0]), min(o[1], b[1]), max(o[2], b[2]), max(o[3], b[3])]
                    changed = True
                    break
            else:
                out.append(b)
        merged = out
    return [tuple(b) for b in merged]
