"""The command-line contract (DESIGN.md): --json prints exactly one JSON object; bad input is one line
on stderr with a non-zero exit code, never a traceback."""

import json
import subprocess
import sys

import pytest

from companion.cli import main
from companion.files import write_image_atomic
from companion.setup_file import setup_to_toml


@pytest.fixture(scope="module")
def scene_files(tmp_path_factory):
    from tests.conftest import rendered

    scene, image = rendered(101)
    folder = tmp_path_factory.mktemp("scene")
    write_image_atomic(folder / "frame.png", image)
    (folder / "setup.toml").write_text(setup_to_toml(scene.setup()))
    return scene, folder


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "companion.cli", *args], capture_output=True, text=True, timeout=300)


def test_locate_json_is_the_contract(scene_files):
    scene, folder = scene_files
    out = run("locate", str(folder / "frame.png"), "--setup", str(folder / "setup.toml"), "--json",
              "--draw", str(folder / "drawn.png"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)  # one object, nothing else
    assert data["registered"] is True and isinstance(data["blocks"], list)
    assert sorted(m["id"] for m in data["minis"]) == sorted(m.id for m in scene.minis)
    for m in data["minis"]:
        assert {"id", "x_mm", "y_mm", "z_mm", "heading_deg"} <= set(m)
    assert (folder / "drawn.png").stat().st_size > 10000


def test_locate_readable_output(scene_files, capsys):
    _, folder = scene_files
    assert main(["locate", str(folder / "frame.png"), "--setup", str(folder / "setup.toml")]) == 0
    text = capsys.readouterr().out
    assert "table registered from anchors" in text and "heading" in text


@pytest.mark.parametrize("setup_text, frame_kind, code, words", [
    ("[table]\nwidth_mm = 'x'\n", "good", 2, "table.width_mm"),
    ("[markers]\ndictionary = 'DICT_NOPE'\n", "good", 2, "markers.dictionary"),
    ("", "missing", 3, "image not found"),
    ("", "corrupt", 3, "not a readable image"),
    (None, "good", 2, "setup file not found"),
])
def test_bad_input_is_one_line_and_an_exit_code(scene_files, tmp_path, setup_text, frame_kind, code, words):
    _, folder = scene_files
    setup = tmp_path / "setup.toml"
    if setup_text is not None:
        setup.write_text(setup_text)
    frame = {"good": folder / "frame.png", "missing": tmp_path / "nope.png", "corrupt": tmp_path / "bad.png"}[frame_kind]
    if frame_kind == "corrupt":
        frame.write_bytes(b"\x89PNG broken")
    out = run("locate", str(frame), "--setup", str(setup), "--json")
    assert out.returncode == code
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in out.stderr


def test_a_frame_without_anchors_says_not_registered(tmp_path):
    blank = tmp_path / "blank.png"
    write_image_atomic(blank, __import__("numpy").full((480, 640, 3), 128, "uint8"))
    setup = tmp_path / "setup.toml"
    setup.write_text("[[anchors]]\nid = 0\nx_mm = 45\ny_mm = 45\n")
    out = run("locate", str(blank), "--setup", str(setup), "--json")
    data = json.loads(out.stdout)
    assert out.returncode == 5 and data["registered"] is False and data["reason"] == "table not registered: no anchor visible"


@pytest.mark.slow
def test_bench_vision_prints_both_methods():
    out = run("bench", "vision", "--scenes", "1", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [m["method"] for m in data["methods"]] == ["pipeline", "pipeline, image only", "plain OpenCV"]
    assert data["methods"][0]["recall"] == 1.0


@pytest.mark.slow
def test_demo_runs_the_product(tmp_path):
    out = run("demo", "--frames", "3", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "frame   2: registered" in out.stdout and (tmp_path / "frame_002.png").exists()


def test_synth_writes_frames_setups_and_truth(tmp_path):
    out = run("synth", "--out", str(tmp_path), "--scenes", "1", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["scenes"] == ["scene_000"]
    truth = json.loads((tmp_path / "scene_000.truth.json").read_text())
    located = json.loads(run("locate", str(tmp_path / "scene_000.png"), "--setup", str(tmp_path / "scene_000.toml"),
                             "--json").stdout)
    assert {m["id"] for m in located["minis"]} == {m["id"] for m in truth["minis"]}
