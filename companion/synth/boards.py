"""Synthetic views of a calibration board with known intrinsics: the instrument behind the
calibration tests and `companion calibrate camera --synthetic` (a dry run that shows what a good
set looks like)."""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.calibration.camera import BoardSpec
from companion.setup_file import TableSpec
from companion.synth.render import Renderer
from companion.synth.scene import Imaging, Scene, SynthBoard, look_at_pose
from companion.vision.camera import CameraModel, TablePose

TRUE_MATRIX = np.array([[1180.0, 0.0, 652.0], [0.0, 1176.0, 351.0], [0.0, 0.0, 1.0]])
TRUE_DISTORTION = np.array([-0.21, 0.09, 0.0008, -0.0005, 0.0])


def _centre_at(pose, eye: np.ndarray, camera: CameraModel, pixel: tuple[float, float]):
    """Turn the camera about its centre so that what it looked at lands on `pixel` (ideal)."""
    target = np.linalg.inv(camera.matrix) @ np.array([pixel[0], pixel[1], 1.0])
    target /= np.linalg.norm(target)
    axis = np.cross([0.0, 0.0, 1.0], target)
    angle = math.asin(min(np.linalg.norm(axis), 1.0))
    turn = cv2.Rodrigues(axis / max(np.linalg.norm(axis), 1e-12) * angle)[0] if angle > 1e-9 else np.eye(3)
    rotation = turn @ pose.rotation
    return TablePose(rotation, -rotation @ eye)


def board_views(count: int = 20, seed: int = 0, spec: BoardSpec = BoardSpec(), width_px: int = 1280,
                height_px: int = 720) -> tuple[list[np.ndarray], CameraModel]:
    """`count` views of a flat board from around it: tilted up to ~40 degrees, reaching the image corners."""
    rng = np.random.default_rng(seed)
    camera = CameraModel(TRUE_MATRIX, TRUE_DISTORTION, width_px, height_px)
    cols, rows = spec.squares
    board = SynthBoard(100.0, 100.0, spec.squares, spec.square_mm, spec.marker_mm, spec.dictionary)
    centre = np.array([100.0 + cols * spec.square_mm / 2, 100.0 + rows * spec.square_mm / 2, 0.0])
    renderer = Renderer()
    images = []
    for k in range(count):
        tilt = math.radians(rng.uniform(0, 40))
        azimuth = rng.uniform(0, 2 * math.pi)
        distance = rng.uniform(380, 560)
        eye = centre + distance * np.array([math.sin(tilt) * math.cos(azimuth), math.sin(tilt) * math.sin(azimuth),
                                            math.cos(tilt)])
        # Put the board's centre on a 4 x 4 grid of image positions in turn, so the views reach
        # the corners of the image (where distortion is strongest) as a careful user's would.
        u = (0.15 + 0.7 * ((k % 4) / 3) + rng.uniform(-0.04, 0.04)) * width_px
        v = (0.15 + 0.7 * (((k // 4) % 4) / 3) + rng.uniform(-0.04, 0.04)) * height_px
        pose = _centre_at(look_at_pose(eye, centre, roll_deg=rng.uniform(-25, 25)), eye, camera, (u, v))
        scene = Scene(TableSpec(450.0, 350.0), "wood", (), (), (), (), camera, pose,
                      imaging=Imaging(noise_sigma=1.5, blur_sigma_px=0.5, jpeg_quality=92, supersample=3), boards=(board,),
                      noise_seed=k, texture_seed=seed)
        images.append(renderer.render(scene))
    return images, camera
