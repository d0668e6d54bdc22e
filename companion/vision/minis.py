"""Place a mini from its marker: position on the table, marker height, heading, tilt.

The marker on a mini's head is horizontal, of known size, above a registered table. Cast its four
corner rays down to the table plane: seen from the camera centre C, a horizontal square at height z
maps onto the plane z=0 by an exact homothety centred under C with ratio Cz / (Cz - z). So a
similarity fit of a square to the four plane points gives, in closed form, the heading (rotation),
the height (scale: z = Cz (1 - s / side0)) and the base centre (the fitted centre pulled back
towards C). Nothing is solved iteratively and every corner counts equally.

When the height is already known (learned over a sequence, or given), only the centre ray and the
rotation are used, which removes the height noise from x and y.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from companion.vision.camera import TablePose

# Template corners as complex numbers, so that table = centre + a * template with a = scale * e^(i heading).
# Local (right, up) offsets TL(-1,1) TR(1,1) BR(1,-1) BL(-1,-1) become up - i*right.
_TEMPLATE = np.array([1 + 1j, 1 - 1j, -1 - 1j, -1 + 1j]) / 2
_TEMPLATE_CONJ = np.conj(_TEMPLATE)
_TEMPLATE_NORM = float(np.sum(np.abs(_TEMPLATE) ** 2))


@dataclass(frozen=True)
class MarkerPose:
    x_mm: float  # point on the table under the marker centre
    y_mm: float
    z_mm: float  # marker centre above the table
    heading_deg: float  # marker up vector, counter-clockwise from +x, [0, 360)
    tilt_deg: float  # angle between the marker's normal and the table's (0 = flat)
    fit_residual_px: float  # how far the corners are from a horizontal square of the right size
    z_sigma_mm: float  # expected height error from the residual


@dataclass(frozen=True, eq=False)
class SquareFit:
    """A marker's corners cast onto the table plane and fitted by a square (complex similarity)."""

    ground: tuple[complex, ...]  # the corners on the table plane, mm
    c0: complex  # the fitted square's centre on the table plane
    a: complex  # its half-diagonal-ish scale and direction (template coefficient)


# Plain Python on four corners throughout: the live tracker places a marker or two every frame,
# and numpy's per-call cost on arrays this small was most of a placement (~0.1 ms).
_TEMPLATE_LIST = _TEMPLATE.tolist()
_TEMPLATE_CONJ_LIST = _TEMPLATE_CONJ.tolist()


def fit_square(corners_norm: np.ndarray, pose: TablePose) -> SquareFit:
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = pose.rotation_rows
    ox, oy, oz = pose.camera_centre_xyz
    ground = []
    for x, y in np.asarray(corners_norm, np.float64).reshape(-1, 2).tolist():
        # The viewing ray R^T (x, y, 1) from the camera centre, to the plane z = 0.
        dx, dy, dz = x * r00 + y * r10 + r20, x * r01 + y * r11 + r21, x * r02 + y * r12 + r22
        along = -oz / dz if dz else math.copysign(math.inf, -oz)  # (a ray along the table: as numpy's inf)
        ground.append(complex(ox + dx * along, oy + dy * along))
    c0 = sum(ground) / len(ground)
    a = sum(w * (q - c0) for w, q in zip(_TEMPLATE_CONJ_LIST, ground)) / _TEMPLATE_NORM
    return SquareFit(tuple(ground), c0, a)


def locate_horizontal_marker(corners_norm: np.ndarray, side_mm: float, pose: TablePose,
                             focal_px: float, known_z_mm: float | None = None,
                             fit: SquareFit | None = None, with_tilt: bool = True) -> MarkerPose:
    """Pass `fit` (from `fit_square` on the same corners) to place one marker at several heights.
    `with_tilt=False` (OpenCV's unrefined corners of a marker in motion say nothing about its tilt)
    reports 0 and saves a pose solve."""
    fit = fit or fit_square(corners_norm, pose)
    cx, cy, cz = pose.camera_centre_xyz
    q, c0, a = fit.ground, fit.c0, fit.a
    side0 = abs(a)  # the marker's side as cast on the table plane, mm
    heading = math.degrees(math.atan2(a.imag, a.real)) % 360.0
    z = cz * (1.0 - side_mm / side0) if known_z_mm is None else float(known_z_mm)
    ratio = (cz - z) / cz
    foot = complex(cx, cy)
    centre = foot + (c0 - foot) * ratio
    off_squares = sum(abs(g - (c0 + a * t)) ** 2 for g, t in zip(q, _TEMPLATE_LIST))
    # mm on the plane z=0 -> pixels: a pixel spans about (distance / focal) there.
    distance = math.sqrt((c0.real - cx) ** 2 + (c0.imag - cy) ** 2 + cz ** 2)
    rms_mm = math.sqrt(off_squares / len(q))
    resid_px = rms_mm * focal_px / distance
    # Side error ~ residual spread over 4 corners; dz = Cz * s / side0^2 * d(side0).
    side_sigma_mm = rms_mm / 2
    z_sigma = cz * side_mm / side0 ** 2 * side_sigma_mm
    if known_z_mm is not None:
        tilt = float("nan")
    else:
        tilt = marker_tilt_deg(corners_norm, side_mm, pose) if with_tilt else 0.0
    return MarkerPose(float(centre.real), float(centre.imag), float(z), heading, tilt, resid_px, float(z_sigma))


def marker_tilt_deg(corners_norm: np.ndarray, side_mm: float, pose: TablePose) -> float:
    """Tilt of a marker from flat, from a free 6-DOF square pose (IPPE_SQUARE); coarse for small markers."""
    h = side_mm / 2
    obj = np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]], np.float64)
    image = np.asarray(corners_norm, np.float64).reshape(-1, 1, 2)
    rvecs, errs = _finite_square_poses(obj, image, cv2.SOLVEPNP_IPPE_SQUARE)
    if not rvecs:
        # IPPE's closed form can come out NaN on an exact, nearly degenerate square (seen on a
        # 12 mm marker at the table's edge); the iterative solver still has the answer.
        rvecs, errs = _finite_square_poses(obj, image, cv2.SOLVEPNP_ITERATIVE)
    if not rvecs:
        return float("nan")
    tilts = []
    for rvec in rvecs:
        rot, _ = cv2.Rodrigues(rvec)
        normal_table = pose.rotation.T @ (rot @ np.array([0.0, 0.0, 1.0]))
        tilts.append(math.degrees(math.acos(min(abs(float(normal_table[2])), 1.0))))
    return float(tilts[int(np.argmin(errs))])


def _finite_square_poses(obj: np.ndarray, image: np.ndarray, flags: int) -> tuple[list[np.ndarray], list[float]]:
    """The solver's rotations that are numbers, with their reprojection errors."""
    ok, rvecs, _, errs = cv2.solvePnPGeneric(obj, image, np.eye(3), None, flags=flags)
    if not ok:
        return [], []
    errs_list = np.asarray(errs).ravel().tolist() if errs is not None else [0.0] * len(rvecs)
    kept = [(r, e) for r, e in zip(rvecs, errs_list) if np.all(np.isfinite(r)) and math.isfinite(e)]
    return [r for r, _ in kept], [e for _, e in kept]
