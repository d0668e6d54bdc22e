"""Block fits remembered between the frames of one stream (`BlockFinder(remember=True)`): given back
where nothing changed but the sensor's noise, made again where anything did."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from companion.synth.render import Renderer
from companion.synth.scene import random_scene
from companion.vision.blocks import BlockFinder
from companion.vision.locator import Locator


def _frames(scene, noise_seeds):
    renderer = Renderer()
    return [renderer.render(replace(scene, noise_seed=n)) for n in noise_seeds]


def _find(finder: BlockFinder, scene, image):
    locator = Locator(scene.setup(), blocks=False)
    analysis = locator.analyse(image)
    camera, _ = locator.camera(image.shape[1], image.shape[0])
    return finder.find(image, camera, analysis.registration.pose, analysis.state.minis)


def _centres(blocks) -> list[tuple[float, float]]:
    return sorted(tuple(np.round(b.footprint_mm.mean(axis=0), 1)) for b in blocks)


@pytest.mark.slow
def test_an_unchanged_table_gets_its_fits_back_and_a_nudged_brick_is_fitted_again():
    scene = random_scene(21, "standard", n_minis=8, n_bricks=5)
    first, second = _frames(scene, (1, 2))
    finder = BlockFinder(scene.setup(), remember=True)
    found = _find(finder, scene, first)
    assert finder.memory.fitted >= 5 and finder.memory.recalled == 0
    # New noise, nothing moved: every candidate's fit is given back, not made again.
    again = _find(finder, scene, second)
    assert finder.memory.recalled == finder.memory.fitted + finder.memory.recalled and finder.memory.fitted == 0
    assert _centres(again) == _centres(found)
    # One brick nudged 4 mm: that one is fitted again, at its new place; the others are given back.
    moved = scene.bricks[0]
    nudged = replace(scene, bricks=(replace(moved, x_mm=moved.x_mm + 4.0),) + scene.bricks[1:])
    (third,) = _frames(nudged, (3,))
    after = _find(finder, nudged, third)
    assert 1 <= finder.memory.fitted <= 2 and finder.memory.recalled >= 4
    near = [b for b in after if np.hypot(*(b.footprint_mm.mean(axis=0) - [moved.x_mm + 4.0, moved.y_mm])) < 3.0]
    assert len(near) == 1
    # The whole frame lighter (the exposure): every fit is made again.
    lighter = np.clip(second.astype(np.float32) * 1.25, 0, 255).astype(np.uint8)
    _find(finder, scene, lighter)
    assert finder.memory.recalled == 0


def test_a_finder_that_does_not_remember_fits_every_frame():
    scene = random_scene(21, "standard", n_minis=8, n_bricks=2)
    first, second = _frames(scene, (1, 2))
    finder = BlockFinder(scene.setup())
    assert finder.memory is None
    a, b = _find(finder, scene, first), _find(finder, scene, second)
    assert len(a) == len(b) == 2
    assert a[0] is not b[0]


@pytest.mark.slow
def test_the_lamps_are_kept_while_the_minis_and_their_shadows_stay():
    """Under lamps a remembered search spent half its time finding the lamps again from the minis'
    shadows; they are given back while every mini stands where it stood and the view around
    it is as it was, and looked for again when a mini moves or the frame's light changes."""
    from companion.bench.live import bench_table

    scene = bench_table(0, n_bricks=6, randomise=True)
    first, second, third = _frames(scene, (1, 2, 3))
    finder = BlockFinder(scene.setup(), remember=True)
    found = _find(finder, scene, first)
    lamps = list(finder.lamps)
    assert lamps and not finder.memory.lamps_given
    again = _find(finder, scene, second)
    assert finder.memory.lamps_given and finder.lamps == lamps and finder.memory.fitted == 0
    assert _centres(again) == _centres(found)
    mini = scene.minis[0]
    moved = replace(scene, minis=(replace(mini, x_mm=mini.x_mm + 5.0),) + scene.minis[1:])
    (fourth,) = _frames(moved, (4,))
    _find(finder, moved, fourth)
    assert not finder.memory.lamps_given
    lighter = np.clip(third.astype(np.float32) * 1.25, 0, 255).astype(np.uint8)
    _find(finder, scene, lighter)
    assert not finder.memory.lamps_given
