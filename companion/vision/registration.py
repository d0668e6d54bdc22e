"""Register the table from whichever anchors are visible, every frame.

All visible anchors' refined corners go into one planar pose fit (IPPE, then Levenberg-Marquardt).
No anchor, or a fit that does not hold together, means "table not registered": callers must not
place anything without a pose from this frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from companion.setup_file import AnchorSpec
from companion.state import RegistrationState
from companion.vision.camera import TablePose
from companion.vision.markers import MarkerDetections

MAX_RESIDUAL_PX = 3.0  # anchors disagreeing by more than this mean a misprint or a moved anchor
# A webcam over a wargames table hangs 0.8-1.4 m above it (hardware.md); at 3 m a 20 mm marker is
# ~8 px. One anchor read out of noise (a dark room's gained-up webcam, a garbled stream) fits a
# pose of its own, and it put the camera 6-8 m up, a table of nothing: no table registered.
MAX_CAMERA_HEIGHT_MM = 3000.0


@dataclass(frozen=True, eq=False)
class Registration:
    registered: bool
    pose: TablePose | None
    anchors_seen: tuple[int, ...]
    residual_px: float  # RMS reprojection error of the anchor corners
    reason: str = ""

    def to_state(self) -> RegistrationState:
        """The value the table state carries (and its JSON shows)."""
        return self._state

    @cached_property
    def _state(self) -> RegistrationState:
        # Once per registration: the live tracker keeps one for as long as the camera stands still.
        return RegistrationState(self.registered, self.anchors_seen,
                                 None if math.isnan(self.residual_px) else round(self.residual_px, 3),
                                 self.pose.to_state() if self.pose is not None else None, self.reason)

    def to_json(self) -> dict:
        return self.to_state().to_json()


def square_corners_mm(x_mm: float, y_mm: float, size_mm: float, heading_deg: float, z_mm: float = 0.0) -> np.ndarray:
    """Corners (4, 3) of a horizontal square marker in OpenCV order (TL, TR, BR, BL of the print)."""
    c, s = math.cos(math.radians(heading_deg)), math.sin(math.radians(heading_deg))
    up, right = np.array([c, s]), np.array([s, -c])
    h = size_mm / 2
    centre = np.array([x_mm, y_mm])
    xy = [centre - h * right + h * up, centre + h * right + h * up,
          centre + h * right - h * up, centre - h * right - h * up]
    return np.array([[p[0], p[1], z_mm] for p in xy])


def anchor_points(detections: MarkerDetections, anchors: tuple[AnchorSpec, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Table corners (M, 3) and their normalized image points (M, 2) of the visible anchors seen once."""
    by_id = {a.id: a for a in anchors}
    ids = [int(i) for i in detections.ids]
    rows = [k for k, i in enumerate(ids) if i in by_id and ids.count(i) == 1]
    if not rows:
        return np.zeros((0, 3)), np.zeros((0, 2))
    obj = np.concatenate([square_corners_mm(by_id[ids[k]].x_mm, by_id[ids[k]].y_mm, by_id[ids[k]].size_mm,
                                            by_id[ids[k]].rotation_deg) for k in rows])
    return obj, np.concatenate([detections.corners_norm[k] for k in rows])


def residual_px(pose: TablePose, object_pts: np.ndarray, image_pts: np.ndarray, focal_px: float) -> float:
    """RMS reprojection error of table points under a pose, in pixels."""
    if len(object_pts) == 0:
        return float("nan")
    cam = pose.to_camera(object_pts)
    return float(np.sqrt(np.mean(np.sum((cam[:, :2] / cam[:, 2:3] - image_pts) ** 2, axis=1)))) * focal_px


def register(detections: MarkerDetections, anchors: tuple[AnchorSpec, ...], focal_px: float) -> Registration:
    by_id = {a.id: a for a in anchors}
    rows = [i for i, marker_id in enumerate(detections.ids) if int(marker_id) in by_id]
    seen_ids = [int(detections.ids[i]) for i in rows]
    duplicates = sorted({i for i in seen_ids if seen_ids.count(i) > 1})
    rows = [i for i in rows if int(detections.ids[i]) not in duplicates]
    if not rows:
        reason = "table not registered: no anchor visible"
        if duplicates:
            reason = f"table not registered: anchor ids seen twice {duplicates}"
        return Registration(False, None, (), float("nan"), reason)
    object_pts = np.concatenate([square_corners_mm(by_id[int(detections.ids[i])].x_mm, by_id[int(detections.ids[i])].y_mm,
                                                   by_id[int(detections.ids[i])].size_mm,
                                                   by_id[int(detections.ids[i])].rotation_deg) for i in rows])
    image_pts = np.concatenate([detections.corners_norm[i] for i in rows])
    pose = fit_plane_pose(object_pts, image_pts)
    ids = tuple(int(detections.ids[i]) for i in rows)
    if pose is None:
        return Registration(False, None, ids, float("nan"), "table not registered: anchor pose fit failed")
    residual = residual_px(pose, object_pts, image_pts, focal_px)
    if residual > MAX_RESIDUAL_PX:
        return Registration(False, None, ids, residual,
                            f"table not registered: anchors disagree by {residual:.1f} px "
                            "(an anchor moved, or its position in the setup is wrong)")
    if pose.camera_centre_mm[2] <= 0:
        return Registration(False, None, ids, residual, "table not registered: camera would be below the table")
    if pose.camera_centre_mm[2] > MAX_CAMERA_HEIGHT_MM:
        return Registration(False, None, ids, residual,
                            f"table not registered: the anchors would put the camera {pose.camera_centre_mm[2]:.0f} mm "
                            f"above the table (more than {MAX_CAMERA_HEIGHT_MM:.0f}: an anchor misread?)")
    return Registration(True, pose, ids, residual)


def fit_plane_pose(object_pts: np.ndarray, normalized_pts: np.ndarray) -> TablePose | None:
    """Pose of points on the z=0 plane from their ideal normalized image coordinates."""
    obj = np.asarray(object_pts, np.float64).reshape(-1, 1, 3)
    img = np.asarray(normalized_pts, np.float64).reshape(-1, 1, 2)
    eye = np.eye(3)
    ok, rvecs, tvecs, errs = cv2.solvePnPGeneric(obj, img, eye, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok or len(rvecs) == 0:
        return None
    best = int(np.argmin(np.asarray(errs).ravel())) if errs is not None else 0
    rvec, tvec = rvecs[best], tvecs[best]
    rvec, tvec = cv2.solvePnPRefineLM(obj, img, eye, None, rvec.copy(), tvec.copy(),
                                      (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT, 50, 1e-12))
    return TablePose.from_rvec(rvec, tvec)
