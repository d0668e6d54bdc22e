"""Camera calibration from views of the printed ChArUco board.

Each view gives the board's inner corners with their ids; views that are blurry, show too little
of the board, or repeat an earlier view are rejected with the reason. A set is refused (with what
to do) when it has too few views, covers too little of the image, or fits badly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.errors import InputError
from companion.vision.markers import dictionary

MIN_VIEWS = 10
MIN_CORNERS = 8
BLUR_MIN = 100.0  # Laplacian variance on the board: sharp ~2300, blur sigma 1 px ~310, 2 px ~75 (rendered views)
DUPLICATE_PX = 0.02  # mean corner move, as a share of the image diagonal, under which a view repeats one
COVERAGE_GRID = 4  # the image is cut into 4 x 4 cells; corners should reach most of them
MIN_COVERAGE = 0.6
MAX_RMS_PX = 1.0


@dataclass(frozen=True)
class BoardSpec:
    squares: tuple[int, int] = (7, 5)
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = "DICT_5X5_100"

    def board(self) -> cv2.aruco.CharucoBoard:
        return cv2.aruco.CharucoBoard(self.squares, self.square_mm, self.marker_mm, dictionary(self.dictionary))


@dataclass
class ViewSet:
    spec: BoardSpec
    size: tuple[int, int] | None = None  # width, height
    object_points: list[np.ndarray] = field(default_factory=list)
    image_points: list[np.ndarray] = field(default_factory=list)
    ids: list[np.ndarray] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._board = self.spec.board()
        self._detector = cv2.aruco.CharucoDetector(self._board)

    def add(self, image: np.ndarray, name: str = "") -> str | None:
        """Take a view if it is useful; the reason it was not, otherwise (None: taken)."""
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        size = (gray.shape[1], gray.shape[0])
        if self.size is not None and size != self.size:
            return self._reject(name, f"its size {size} differs from the first view's {self.size}")
        corners, ids, _, _ = self._detector.detectBoard(gray)
        if ids is None or len(ids) < MIN_CORNERS:
            return self._reject(name, f"board not seen well enough ({0 if ids is None else len(ids)} corners, "
                                      f"{MIN_CORNERS} needed)")
        pts = corners.reshape(-1, 2)
        x0, y0 = np.maximum(pts.min(axis=0).astype(int) - 10, 0)
        x1, y1 = pts.max(axis=0).astype(int) + 10
        sharpness = float(cv2.Laplacian(gray[y0:y1, x0:x1], cv2.CV_64F).var())
        if sharpness < BLUR_MIN:
            return self._reject(name, f"blurred (sharpness {sharpness:.0f}, {BLUR_MIN:.0f} needed): hold still")
        diagonal = float(np.hypot(*size))
        for prev_pts, prev_ids in zip(self.image_points, self.ids):
            common, a, b = np.intersect1d(ids.ravel(), prev_ids.ravel(), return_indices=True)
            if len(common) >= 0.8 * len(ids) and \
                    np.linalg.norm(pts[a] - prev_pts.reshape(-1, 2)[b], axis=1).mean() < DUPLICATE_PX * diagonal:
                return self._reject(name, "repeats an earlier view: move or tilt the board")
        self.size = size
        self.ids.append(ids.ravel())
        self.image_points.append(pts.astype(np.float32))
        self.object_points.append(self._board.getChessboardCorners()[ids.ravel()].astype(np.float32))
        return None

    def _reject(self, name: str, why: str) -> str:
        self.rejected.append(f"{name}: {why}" if name else why)
        return why

    def coverage(self) -> float:
        """Share of the image's 4 x 4 cells that some corner fell in."""
        if not self.image_points or self.size is None:
            return 0.0
        pts = np.concatenate(self.image_points)
        cells = {(int(x * COVERAGE_GRID / self.size[0]), int(y * COVERAGE_GRID / self.size[1])) for x, y in pts}
        return len(cells) / COVERAGE_GRID ** 2

    def advice(self) -> str:
        """What the next views should add: the image regions no corner reached yet."""
        if self.size is None:
            return "show the whole board to the camera"
        pts = np.concatenate(self.image_points)
        names = {(0, 0): "top-left", (1, 0): "top-right", (0, 1): "bottom-left", (1, 1): "bottom-right"}
        seen = {(int(x * 2 / self.size[0]), int(y * 2 / self.size[1])) for x, y in pts}
        missing = [n for k, n in names.items() if k not in seen]
        return ("bring the board into the " + ", ".join(missing) + " of the image") if missing \
            else "tilt the board (up to ~45 degrees) in different directions"


@dataclass(frozen=True)
class Calibration:
    matrix: np.ndarray
    distortion: np.ndarray
    rms_px: float
    views_used: int
    coverage: float
    size: tuple[int, int]

    def to_json(self) -> dict:
        return {"matrix": [[round(float(v), 4) for v in row] for row in self.matrix],
                "distortion": [round(float(v), 6) for v in self.distortion.ravel()],
                "rms_px": round(self.rms_px, 4), "views_used": self.views_used,
                "coverage": round(self.coverage, 3), "width_px": self.size[0], "height_px": self.size[1]}


def calibrate(views: ViewSet) -> Calibration:
    n = len(views.image_points)
    if n < MIN_VIEWS:
        raise InputError(f"only {n} usable board view(s), {MIN_VIEWS} needed: show the board at more places and "
                         f"angles ({views.advice()})")
    coverage = views.coverage()
    if coverage < MIN_COVERAGE:
        raise InputError(f"the board views cover {coverage:.0%} of the image, {MIN_COVERAGE:.0%} needed: "
                         f"{views.advice()}")
    flags = cv2.CALIB_FIX_K3  # five terms overfit with few views; k1 k2 p1 p2 describe webcams well
    rms, matrix, distortion, _, _ = cv2.calibrateCamera(
        [o.reshape(-1, 1, 3) for o in views.object_points], [i.reshape(-1, 1, 2) for i in views.image_points],
        views.size, None, None, flags=flags,
        criteria=(cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 100, 1e-9))
    if rms > MAX_RMS_PX:
        raise InputError(f"the fit is poor (RMS {rms:.2f} px, at most {MAX_RMS_PX} wanted): check that the board is "
                         "flat and printed at 100%, lock focus, and retake blurred views")
    return Calibration(matrix, distortion.ravel(), float(rms), n, coverage, views.size)
