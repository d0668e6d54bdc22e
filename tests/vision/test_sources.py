import cv2
import numpy as np
import pytest

from companion.errors import CameraError, InputError
from companion.vision.sources import open_source, read_image


def _image(seed=0):
    return (np.random.default_rng(seed).random((48, 64, 3)) * 255).astype(np.uint8)


def test_image_file_and_folder(tmp_path):
    for k in range(3):
        cv2.imwrite(str(tmp_path / f"f{k}.png"), _image(k))
    (tmp_path / "notes.txt").write_text("not an image")
    frames = list(open_source(str(tmp_path)))
    assert [f.index for f in frames] == [0, 1, 2] and frames[1].name.endswith("f1.png")
    assert np.array_equal(frames[2].image, _image(2))
    single = list(open_source(str(tmp_path / "f0.png")))
    assert len(single) == 1


def test_video_file_through_videocapture(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for k in range(5):
        writer.write(_image(k))
    writer.release()
    with open_source(str(path)) as source:
        frames = list(source)
    assert len(frames) == 5 and frames[0].image.shape == (48, 64, 3)


def test_bad_sources_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        open_source(str(tmp_path / "missing.png"))
    with pytest.raises(InputError, match="no images"):
        open_source(str(tmp_path))
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(b"\xff\xd8\xff\xe0 definitely not a jpeg")
    with pytest.raises(InputError, match="not a readable image"):
        read_image(corrupt)
    with pytest.raises(CameraError, match="cannot open"):
        open_source("97")  # no such device index
    not_video = tmp_path / "clip.mp4"
    not_video.write_bytes(b"garbage")
    with pytest.raises(CameraError, match="cannot open"):
        open_source(str(not_video))


def test_a_looping_source_plays_a_still_photo_as_a_camera(tmp_path):
    import cv2
    import numpy as np

    from companion.vision.sources import LoopingSource, open_source

    cv2.imwrite(str(tmp_path / "a.png"), np.full((40, 60, 3), 10, np.uint8))
    cv2.imwrite(str(tmp_path / "b.png"), np.full((40, 60, 3), 200, np.uint8))
    source = LoopingSource(lambda: open_source(str(tmp_path)))
    frames = [source.read() for _ in range(5)]
    assert [f.index for f in frames] == [0, 1, 2, 3, 4]
    assert [int(f.image[0, 0, 0]) for f in frames] == [10, 200, 10, 200, 10]


def test_the_synthetic_camera_renders_a_held_scene_once():
    from companion.synth.scene import random_scene
    from companion.synth.source import SyntheticSource

    scene = random_scene(3, "standard", n_minis=1, n_bricks=0, width_px=320, height_px=180)
    source = SyntheticSource(lambda i: scene, 3)
    images = [source.read().image for _ in range(3)]
    assert images[0] is images[1] is images[2]  # the same scene is not rendered again
