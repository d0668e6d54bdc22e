"""Blocks as the finder reports them, made by hand for the tests of what is done with them."""

from __future__ import annotations

import numpy as np

from companion.vision.foundblock import FoundBlock
from companion.vision.brickfit import BoxFit, TableRect


def box_block(footprint: TableRect, height_mm: float, colour: str, studs: tuple[int, int] | None = (4, 1),
              top_bgr: tuple[float, float, float] = (120.0, 120.0, 120.0), silhouette_fit: float = 0.95) -> FoundBlock:
    """A block fitted as one box on `footprint` (its top seen right over it), sure of its height."""
    fit = BoxFit(top=footprint, silhouette=footprint, height_mm=height_mm, footprint=footprint,
                 height_cost={height_mm: 0.0})
    return FoundBlock(footprint.corners(), height_mm, colour, silhouette_fit, 0.9, 0.9, studs, fit,
                      np.array(top_bgr, float))
