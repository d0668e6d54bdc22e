import json
import subprocess
import sys
from dataclasses import replace

import cv2

from companion.setup_file import load_setup, setup_to_toml
from companion.synth.render import Renderer
from companion.synth.scene import SynthMini, random_scene


def run(*args):
    return subprocess.run([sys.executable, "-m", "companion.cli", *args], capture_output=True, text=True, timeout=120)


def test_hand_from_two_markers_at_the_finger_tips(tmp_path):
    scene = random_scene(31, n_minis=2, n_bricks=0)
    # two small markers flat on the table, 171.5 mm apart centre to centre (ids not in the roster)
    tips = (SynthMini(48, 400.0, 300.0, 0.3, 0.0, 15.0, margin_modules=1.0),
            SynthMini(49, 571.5, 300.0, 0.3, 90.0, 15.0, margin_modules=1.0))
    image = Renderer().render(replace(scene, minis=scene.minis + tips))
    cv2.imwrite(str(tmp_path / "hand.png"), image)
    (tmp_path / "setup.toml").write_text("# players' table\n" + setup_to_toml(scene.setup()))
    out = run("calibrate", "hand", "--setup", str(tmp_path / "setup.toml"), "--player", "blue",
              "--frame", str(tmp_path / "hand.png"), "--markers", "48", "49", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert abs(data["hand_mm"] - 171.5) < 1.0
    blue = load_setup(tmp_path / "setup.toml").player("blue")
    assert blue.hand_mm == data["hand_mm"] and abs(blue.finger_mm - 171.5 * 20 / 178) < 0.2
    assert (tmp_path / "setup.toml").read_text().startswith("# players' table\n")


def test_presets_typed_values_and_bad_input(tmp_path):
    (tmp_path / "setup.toml").write_text("[[players]]\nname = \"red\"\n\n[[players]]\nname = \"kid\"\n")
    assert run("calibrate", "hand", "--setup", str(tmp_path / "setup.toml"), "--player", "kid", "--preset", "child").returncode == 0
    assert run("calibrate", "hand", "--setup", str(tmp_path / "setup.toml"), "--player", "red", "--hand-mm", "181",
               "--finger-mm", "21").returncode == 0
    setup = load_setup(tmp_path / "setup.toml")
    assert (setup.player("kid").hand_mm, setup.player("kid").finger_mm) == (152.0, 16.0)
    assert (setup.player("red").hand_mm, setup.player("red").finger_mm) == (181.0, 21.0)
    bad = run("calibrate", "hand", "--setup", str(tmp_path / "setup.toml"), "--player", "red", "--hand-mm", "900")
    assert bad.returncode == 3 and "not a person's" in bad.stderr
    nobody = run("calibrate", "hand", "--setup", str(tmp_path / "setup.toml"), "--player", "zed", "--preset", "adult")
    assert nobody.returncode == 3 and "--player" in nobody.stderr
