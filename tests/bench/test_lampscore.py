"""The lamps found, scored against a scene's own (`bench.lampscore`)."""

from dataclasses import replace

import numpy as np

from companion.bench.lampscore import LampScore, true_lamps
from companion.synth.pbr import scene_look
from companion.synth.scene import Lamp, Lighting
from companion.synth.sequences import bench_table

CENTRE = np.array([600.0, 400.0])


def _at(slope: tuple[float, float], height_mm: float = 1e5) -> tuple[float, float, float]:
    """A lamp's place whose shadows run `slope` mm a mm of height at the table's centre."""
    return (*(CENTRE - np.array(slope) * height_mm), height_mm)


def _lamp(slope: tuple[float, float], share: float) -> Lamp:
    """A distant lamp whose shadows run `slope` mm a mm of height."""
    towards = np.array([-slope[0], -slope[1], 1.0])
    return Lamp(tuple(towards / np.linalg.norm(towards)), share, 2.0)


def test_a_lamp_found_near_a_true_ones_slope_is_it_each_once_and_the_rest_are_wrong():
    lamps = (_lamp((0.4, -0.2), 0.7), _lamp((-0.5, 0.1), 0.25), _lamp((0.0, 0.9), 0.05))
    scene = replace(bench_table(0, n_bricks=0), lighting=Lighting(lamps, 0.3))
    score = LampScore()
    score.add("raycast", scene, [_at((0.45, -0.25)), _at((0.44, -0.2), 2000.0), _at((0.0, 0.9))])
    # the main lamp found (twice: the second is none), the second main one missed, the faint one found
    assert score.summary() == {"main_lamps": 2, "found": 1, "wrong": 1}


def test_the_true_lamps_are_the_ray_casters_distant_lamps_and_the_path_tracers_area_lamp():
    scene = bench_table(0, n_bricks=0)
    lit = replace(scene, lighting=Lighting((Lamp((0.3, 0.0, 0.954), 0.8, 2.0),), 0.3))
    (slope, share), = true_lamps("raycast", lit)
    assert np.allclose(slope, (-0.3 / 0.954, 0.0)) and share == 0.8
    assert true_lamps("plain", replace(scene, lighting=None)) == []
    (slope, share), = true_lamps("pbr", scene)
    lamp = np.array(scene_look(scene).lamp_mm)
    assert np.allclose(np.array(slope) * lamp[2], CENTRE - lamp[:2]) and share == 1.0
