"""Pinhole camera with OpenCV lens distortion, and the table's pose in front of it.

One model serves the synthetic renderer and the estimators, so both use OpenCV's conventions:
pixel centres at integer coordinates, distortion as in ``cv2.projectPoints``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from companion.state import CameraPose

_UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-12)


@dataclass(frozen=True, eq=False)
class CameraModel:
    matrix: np.ndarray  # 3x3 intrinsics, pixels
    distortion: np.ndarray  # k1 k2 p1 p2 [k3 ...]
    width_px: int
    height_px: int

    @classmethod
    def from_values(cls, matrix, distortion, width_px: int, height_px: int) -> "CameraModel":
        return cls(np.asarray(matrix, dtype=np.float64).reshape(3, 3),
                   np.asarray(distortion, dtype=np.float64).ravel(), int(width_px), int(height_px))

    @classmethod
    def guess(cls, width_px: int, height_px: int, horizontal_fov_deg: float = 65.0) -> "CameraModel":
        """An uncalibrated webcam: square pixels, centred principal point, no distortion.

        Typical webcams span 60-78 degrees horizontally; positions stay right to a few mm but
        heights need a calibrated camera (`companion calibrate camera`).
        """
        f = (width_px / 2) / np.tan(np.radians(horizontal_fov_deg) / 2)
        matrix = np.array([[f, 0, (width_px - 1) / 2], [0, f, (height_px - 1) / 2], [0, 0, 1.0]])
        return cls(matrix, np.zeros(5), width_px, height_px)

    @property
    def focal_px(self) -> float:
        return float((self.matrix[0, 0] + self.matrix[1, 1]) / 2)

    def normalize(self, pixels: np.ndarray) -> np.ndarray:
        """Distorted pixel coordinates (N, 2) -> ideal normalized image coordinates (N, 2)."""
        pts = np.asarray(pixels, dtype=np.float64).reshape(-1, 1, 2)
        if len(pts) == 0:
            return np.zeros((0, 2))
        # (No P: normalized coordinates, as an identity P gives them, without one built every call.)
        out = cv2.undistortPoints(pts, self.matrix, self.distortion, None, None,
                                  criteria=_UNDISTORT_CRITERIA)
        return out.reshape(-1, 2)

    def denormalize(self, normalized: np.ndarray) -> np.ndarray:
        """Ideal normalized coordinates (N, 2) -> distorted pixel coordinates (N, 2)."""
        n = np.asarray(normalized, dtype=np.float64).reshape(-1, 2)
        pts = np.concatenate([n, np.ones((len(n), 1))], axis=1)
        px, _ = cv2.projectPoints(pts, np.zeros(3), np.zeros(3), self.matrix, self.distortion)
        return px.reshape(-1, 2)


@dataclass(frozen=True, eq=False)
class TablePose:
    """Rigid transform from the table frame (mm) to the camera frame (mm): X_cam = R X + t."""

    rotation: np.ndarray  # 3x3
    translation_mm: np.ndarray  # (3,)

    @classmethod
    def from_rvec(cls, rvec, tvec) -> "TablePose":
        rot, _ = cv2.Rodrigues(np.asarray(rvec, dtype=np.float64).reshape(3, 1))
        return cls(rot, np.asarray(tvec, dtype=np.float64).ravel())

    @classmethod
    def from_state(cls, camera: CameraPose) -> "TablePose":
        """The pose a table state was seen with."""
        return cls.from_rvec(np.asarray(camera.rotation_mrad) / 1000.0, camera.translation_mm)

    def to_state(self) -> CameraPose:
        def three(values: np.ndarray) -> tuple[float, float, float]:
            return float(values[0]), float(values[1]), float(values[2])

        return CameraPose(three(self.rvec * 1000.0), three(self.translation_mm), three(self.camera_centre_mm))

    @cached_property
    def rvec(self) -> np.ndarray:
        return cv2.Rodrigues(self.rotation)[0].ravel()

    @cached_property
    def camera_centre_mm(self) -> np.ndarray:
        """The camera's optical centre in the table frame."""
        return -self.rotation.T @ self.translation_mm

    @cached_property
    def camera_centre_xyz(self) -> tuple[float, float, float]:
        """`camera_centre_mm` as three floats (per-marker placement math runs in plain Python)."""
        x, y, z = self.camera_centre_mm.tolist()
        return x, y, z

    @cached_property
    def rotation_rows(self) -> tuple[tuple[float, float, float], ...]:
        """`rotation` as three rows of floats."""
        return tuple(tuple(row) for row in self.rotation.tolist())

    def to_camera(self, points_mm: np.ndarray) -> np.ndarray:
        return np.asarray(points_mm, dtype=np.float64).reshape(-1, 3) @ self.rotation.T + self.translation_mm

    def project(self, camera: CameraModel, points_mm: np.ndarray) -> np.ndarray:
        """Table points (N, 3) -> distorted pixels (N, 2)."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 3)
        px, _ = cv2.projectPoints(pts, self.rvec, self.translation_mm, camera.matrix, camera.distortion)
        return px.reshape(-1, 2)

    def rays(self, normalized: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normalized image coordinates (N, 2) -> (origin (3,), unit directions (N, 3)) in the table frame."""
        n = np.asarray(normalized, dtype=np.float64).reshape(-1, 2)
        d = n @ self.rotation[:2] + self.rotation[2]  # R^T (x, y, 1) for each row
        d /= np.sqrt(np.einsum("ij,ij->i", d, d))[:, None]
        return self.camera_centre_mm, d

    def intersect_plane(self, normalized: np.ndarray, z_mm: float | np.ndarray) -> np.ndarray:
        """Where the viewing rays through normalized points meet the horizontal plane z = z_mm: (N, 3)."""
        origin, d = self.rays(normalized)
        t = (np.asarray(z_mm) - origin[2]) / d[:, 2]
        return origin + d * t[:, None]
