"""Whether the camera's exposure leaves the anchors' white paper under its ceiling.

Block colours are named against that paper (`colours`). A paper the camera clips reads at the
ceiling however much light falls on it, so everything looks lighter against it than it is (a gray
brick's top as white), and a bright top the lens spreads past its edges reads taller. The frame
gives back only some of what the clip took (the tops of a clear hue measure the light:
`colours.frame_top_shade`); the players can give it all (a lower exposure, less light), so the
frame says so.
"""

from __future__ import annotations

import numpy as np

from companion.setup_file import AnchorSpec, Setup
from companion.vision.colours import CLIPPED
from companion.vision.registration import square_corners_mm
from companion.vision.tableview import TableView

CEILING = CLIPPED * 255.0  # an 8-bit value this high is the camera's ceiling, not the paper
PAPER_CLIPPED_SHARE = 0.5  # of the anchors' margin samples at the ceiling: the paper is clipped
# The white margin printed around an anchor: the ring between squares this many modules across
# about its centre (the marker is 6), clear of the black border's blur and of the paper's edge
# (`localtable.paper_white` takes the colour reference from the same ring).
PAPER_RING_MODULES = (6.9, 7.7)
_POINTS_A_SIDE = 8
PAPER_CLIPPED_WARNING = ("the anchors' white paper reads at the camera's ceiling (overexposed): gray and white "
                         "blocks look alike there, and bright tops read taller; lower the camera's exposure or the light")


def paper_clipped_share(image: np.ndarray, view: TableView, anchors: tuple[AnchorSpec, ...]) -> float | None:
    """The share of points on the anchors' white margins (those the frame shows) that read at the
    camera's ceiling: in two channels or more of a colour frame, or in a grey one. None when no
    margin is in the frame."""
    points = []
    for anchor in anchors:
        for modules in PAPER_RING_MODULES:
            corners = square_corners_mm(anchor.x_mm, anchor.y_mm, anchor.size_mm * modules / 6,
                                        anchor.rotation_deg)[:, :2]
            t = (np.arange(_POINTS_A_SIDE) + 0.5) / _POINTS_A_SIDE
            for a, b in zip(corners, np.roll(corners, -1, axis=0)):
                points.append(a + t[:, None] * (b - a))
    if not points:
        return None
    flat = np.concatenate(points)
    pixels = view.to_pixels(flat)
    h, w = image.shape[:2]
    inside = (pixels[:, 0] >= 0) & (pixels[:, 0] <= w - 1) & (pixels[:, 1] >= 0) & (pixels[:, 1] <= h - 1)
    if not inside.any():
        return None
    values = view.sample(image, flat[inside]).reshape(int(inside.sum()), -1)
    at_ceiling = (values >= CEILING).sum(axis=1) >= min(2, values.shape[1])
    return float(at_ceiling.mean())


def paper_clipped(image: np.ndarray, view: TableView, anchors: tuple[AnchorSpec, ...]) -> bool:
    share = paper_clipped_share(image, view, anchors)
    return share is not None and share >= PAPER_CLIPPED_SHARE


def with_exposure_warning(warnings: tuple[str, ...], image: np.ndarray, view: TableView, setup: Setup
                          ) -> tuple[str, ...]:
    """A frame's warnings, with PAPER_CLIPPED_WARNING when this colour frame clips the anchors'
    paper (and without it when it does not)."""
    kept = tuple(w for w in warnings if w != PAPER_CLIPPED_WARNING)
    return kept + (PAPER_CLIPPED_WARNING,) if paper_clipped(image, view, setup.anchors) else kept
