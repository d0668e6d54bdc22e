"""The table seen from straight above: where a table point (or a point at a height) lands in the image.

Every horizontal plane at height h, seen through the camera and cast onto the table along the
viewing rays, is the table-plane shape scaled by k = Cz / (Cz - h) about the camera's foot
(Cz: the camera centre's height, the foot: the point of the table right under it). Block fitting
lives in that cast view, where the top face of a box is its footprint scaled by k(h).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.vision.camera import CameraModel, TablePose


MAP_STEP_PX = 8  # a top-down window's pixel map is projected this often and interpolated between


class TableView:
    """Maps table-plane points (mm) into the camera image of one registered frame."""

    def __init__(self, camera: CameraModel, pose: TablePose) -> None:
        self.camera, self.pose = camera, pose
        centre = pose.camera_centre_mm
        self.foot_mm = np.array([float(centre[0]), float(centre[1])])
        self.camera_height_mm = float(centre[2])
        self._window_maps: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def k(self, height_mm: float | np.ndarray) -> float | np.ndarray:
        """The ratio by which the plane at this height, cast onto the table, is scaled about the foot."""
        return self.camera_height_mm / np.maximum(self.camera_height_mm - np.asarray(height_mm, float), 1.0)

    def cast(self, points_mm: np.ndarray, height_mm: float) -> np.ndarray:
        """Points at a height (N, 2) -> where the camera sees them on the table plane (N, 2)."""
        return self.foot_mm + self.k(height_mm) * (np.asarray(points_mm, float) - self.foot_mm)

    def uncast(self, points_mm: np.ndarray, height_mm: float) -> np.ndarray:
        """The inverse of `cast`: table-plane points seen at a height -> their true (x, y)."""
        return self.foot_mm + (np.asarray(points_mm, float) - self.foot_mm) / self.k(height_mm)

    def to_pixels(self, points_mm: np.ndarray) -> np.ndarray:
        """Table-plane points (..., 2) -> distorted pixels (..., 2).

        The same model as cv2.projectPoints, written out: projectPoints also computes its
        Jacobian, ~1 us a point, which dominated a top-down view's cost."""
        pts = np.asarray(points_mm, float)
        flat = pts.reshape(-1, 2)
        dist = self.camera.distortion
        if len(dist) > 5 and np.any(dist[5:]):
            px = self.pose.project(self.camera, np.concatenate([flat, np.zeros((len(flat), 1))], axis=1))
            return px.reshape(pts.shape)
        k1, k2, p1, p2, k3 = (list(dist[:5]) + [0.0] * 5)[:5]
        rot, t = self.pose.rotation, self.pose.translation_mm
        cam = flat @ rot[:, :2].T + t
        x, y = cam[:, 0] / cam[:, 2], cam[:, 1] / cam[:, 2]
        r2 = x * x + y * y
        radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
        xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
        yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
        m = self.camera.matrix
        out = np.stack([m[0, 0] * xd + m[0, 1] * yd + m[0, 2], m[1, 1] * yd + m[1, 2]], axis=-1)
        return out.reshape(pts.shape)

    def px_per_mm(self, point_mm: np.ndarray) -> np.ndarray:
        """The image's local scale at a table point: (2, 2), pixels per mm along x and y (columns)."""
        p = np.asarray(point_mm, float)
        ends = self.to_pixels(np.array([p, p + (1.0, 0.0), p + (0.0, 1.0)]))
        return np.stack([ends[1] - ends[0], ends[2] - ends[0]], axis=1)

    def sample(self, image: np.ndarray, points_mm: np.ndarray) -> np.ndarray:
        """The image (bilinear) at table-plane points (..., 2) -> (..., channels) float32."""
        pts = np.asarray(points_mm, float)
        flat = pts.reshape(-1, 2)
        # remap wants rows and columns under 32767: lay the points out in rows of up to 1024 (a
        # few points are not padded to a whole row: the live tracker samples 24 at a time)
        cols = min(1024, max(1, len(flat)))
        rows = -(-max(len(flat), 1) // cols)
        padded = np.zeros((rows * cols, 2))
        padded[:len(flat)] = flat
        px = self.to_pixels(padded.reshape(rows, cols, 2)).astype(np.float32)
        out = sample_pixels(image, px[..., 0].copy(), px[..., 1].copy()).reshape(rows * cols, -1)[:len(flat)]
        return out.reshape(pts.shape[:-1] + (out.shape[-1],))

    def window(self, image: np.ndarray, x0_mm: float, y0_mm: float, w_px: int, h_px: int, mm_per_px: float,
               cache: bool = False) -> np.ndarray:
        """A top-down view of a table window: pixel (r, c) shows the table point at its centre."""
        key = (x0_mm, y0_mm, w_px, h_px, mm_per_px)
        maps = self._window_maps.get(key) if cache else None
        if maps is None:
            maps = self._maps(x0_mm, y0_mm, w_px, h_px, mm_per_px)
            if cache:
                if len(self._window_maps) > 4:
                    self._window_maps.clear()
                self._window_maps[key] = maps
        return cv2.remap(image, maps[0], maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


    def _maps(self, x0_mm: float, y0_mm: float, w_px: int, h_px: int, mm_per_px: float, step: int = MAP_STEP_PX
              ) -> tuple[np.ndarray, np.ndarray]:
        """Where each pixel of a top-down window is in the image: projected on a grid every `step`
        pixels (and one cell beyond each border) and interpolated by cv2.resize, whose linear
        interpolation puts grid point i at pixel (i + 0.5) step - 0.5. The mapping bends by
        thousandths of a pixel over a cell; projecting every pixel cost ~0.2 us each."""
        nx, ny = -(-w_px // step) + 2, -(-h_px // step) + 2
        gx = ((np.arange(nx) - 1 + 0.5) * step - 0.5 + 0.5) * mm_per_px + x0_mm
        gy = ((np.arange(ny) - 1 + 0.5) * step - 0.5 + 0.5) * mm_per_px + y0_mm
        grid = self.to_pixels(np.stack(np.meshgrid(gx, gy), axis=-1)).astype(np.float32)
        full = cv2.resize(grid, (nx * step, ny * step), interpolation=cv2.INTER_LINEAR)
        crop = full[step:step + h_px, step:step + w_px]
        return np.ascontiguousarray(crop[..., 0]), np.ascontiguousarray(crop[..., 1])


def sample_pixels(image: np.ndarray, x_px: np.ndarray, y_px: np.ndarray) -> np.ndarray:
    """The image (bilinear, its edges replicated) at pixel positions given as remap's maps (float32,
    one shape): (..., channels) float32. (`TableView.sample` projects table points to them; the live
    tracker keeps a held mini's ring projected once.)"""
    out = cv2.remap(image, x_px, y_px, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return out.astype(np.float32).reshape(x_px.shape + (-1,))


def window_size(width_mm: float, depth_mm: float, mm_per_px: float) -> tuple[int, int]:
    return int(math.ceil(width_mm / mm_per_px)), int(math.ceil(depth_mm / mm_per_px))
