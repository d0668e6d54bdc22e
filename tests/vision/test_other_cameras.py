"""The locator on frames of cameras that are not the plain ray-caster: a randomised ray-cast frame
(rendered here) and small physically based frames committed beside this file (rendered once by
`python -m tests.vision.test_other_cameras`, which needs the '.[pbr]' extra).

A camera blurs linear light and then applies its tone curve; a marker's edges then sit on their
dark side, and a model of display values made every mini's height several mm low."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.setup_file import TableSpec, load_setup
from companion.synth.render import Renderer
from companion.synth.scene import random_scene
from companion.vision.locator import Locator
from companion.vision.markers import detect_raw

FRAMES = Path(__file__).with_name("frames")
# Small tables seen at the bench's scale (1.6 px a mm), so a committed frame stays small.
PBR_FRAMES = {"pbr_felt": 4, "pbr_wood": 0, "pbr_mat": 5}


def _errors(truth_minis: list[dict], state) -> tuple[set[int], list[float], list[float]]:
    truth = {m["id"]: m for m in truth_minis}
    found = {m.id: m for m in state.minis}
    xy = [math.hypot(m.x_mm - truth[i]["x_mm"], m.y_mm - truth[i]["y_mm"]) for i, m in found.items() if i in truth]
    dz = [m.z_mm - truth[i]["z_mm"] for i, m in found.items() if i in truth]
    return set(truth) - set(found), xy, dz


def test_heights_are_unbiased_on_a_camera_with_a_tone_curve_and_sharpening():
    scene = random_scene(12, randomise=True)
    scene = replace(scene, imaging=replace(scene.imaging, gamma=0.0, sharpen=0.6, blur_kernel="disc"))
    image = Renderer().render(scene)
    state = Locator(scene.setup(roster_heights=False), blocks=False).locate(image)
    truth = [{"id": m.id, "x_mm": m.x_mm, "y_mm": m.y_mm, "z_mm": m.z_mm} for m in scene.minis]
    missing, xy, dz = _errors(truth, state)
    assert not missing
    # The display-value model put these 3-8 mm low; unbiased, the mean is within a millimetre.
    assert abs(float(np.mean(dz))) < 1.0, dz
    assert np.percentile(np.abs(dz), 95) < 4.0 and np.percentile(xy, 95) < 1.5


@pytest.mark.parametrize("name", sorted(PBR_FRAMES))
def test_minis_on_a_physically_based_frame(name: str):
    image = cv2.imread(str(FRAMES / f"{name}.jpg"), cv2.IMREAD_COLOR)
    truth = json.loads((FRAMES / f"{name}.truth.json").read_text())
    setup = load_setup(FRAMES / f"{name}.toml")
    state = Locator(setup, blocks=False).locate(image)
    assert state.registered
    missing, xy, dz = _errors(truth["minis"], state)
    assert not missing
    # The display-value model put these minis 2-29 mm low (mean -5 to -18 mm a frame) and 4 mm off.
    assert max(xy) < 2.5 and max(abs(z) for z in dz) < 7.0, (xy, dz)
    assert abs(float(np.mean(dz))) < 2.5, dz


def _small_scene(seed: int):
    return random_scene(seed, n_minis=6, n_bricks=3, table=TableSpec(600.0, 400.0), width_px=960, height_px=540)


def regenerate() -> None:
    """Render the committed frames again (Mitsuba 3 needed)."""
    from companion.files import write_text_atomic
    from companion.setup_file import setup_to_toml
    from companion.synth import pbr
    from companion.synth.scene import scene_truth

    FRAMES.mkdir(exist_ok=True)
    for name, seed in PBR_FRAMES.items():
        scene = _small_scene(seed)
        image = pbr.render(scene)
        cv2.imwrite(str(FRAMES / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        write_text_atomic(FRAMES / f"{name}.toml", setup_to_toml(scene.setup(path=f"{name}.toml")))
        write_text_atomic(FRAMES / f"{name}.truth.json", json.dumps(scene_truth(scene), indent=1))
        print(name, scene.surface)


def test_prints_whose_black_an_exposure_lifted_to_grey_are_read():
    # Cut from a path-traced frame of a felt table (pbr, standard, seed 1, scene 2): the exposure
    # set for the dark felt clipped the paper and lifted the prints' black to 45-60% of it.
    gray = cv2.cvtColor(cv2.imread(str(FRAMES / "pbr_lifted_black.jpg"), cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    ids, _ = detect_raw(gray, "DICT_4X4_50", expected=frozenset({27, 31}))
    assert {27, 31} <= set(ids.tolist())


if __name__ == "__main__":
    regenerate()
