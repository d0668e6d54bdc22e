"""The command-line contract (DESIGN.md): --json prints exactly one JSON object; bad input is one line
on stderr with a non-zero exit code, never a traceback."""

import json
import subprocess
import sys

import pytest

from companion.cli import main
from companion.files import write_image_atomic
from companion.setup_file import setup_to_toml
from tests.conftest import stop


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
    scene, _ = scene_files
    if scene.bricks:  # the readable table lists the blocks too, not only --json and --draw
        assert "block 0:" in text and "mm high" in text


@pytest.mark.parametrize("setup_text, frame_kind, code, words", [
    ("[table]\nwidth_mm = 'x'\n", "good", 2, "table.width_mm"),
    ("[markers]\ndictionary = 'DICT_NOPE'\n", "good", 2, "markers.dictionary"),
    ("[[anchors]]\nid = 0\nx_mm = 45\ny_mm = 45\n", "missing", 3, "image not found"),
    ("[[anchors]]\nid = 0\nx_mm = 45\ny_mm = 45\n", "corrupt", 3, "not a readable image"),
    (None, "good", 2, "setup file not found"),
    ("", "good", 2, "the file is empty"),
    ("[table]\nwidth_mm = 600\ndepth_mm = 400\n", "good", 2, "anchors: none given"),
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


@pytest.mark.parametrize("argv, words", [
    (["contienda", "odds", "--mod", "nan"], "companion contienda odds: argument --mod: invalid int value: 'nan'"),
    (["knight", "moves", "--setup", "s.toml", "--state", "st.json", "--unit", "6"], "required: --ap"),
    (["measure", "--setup", "s.toml"], "companion measure: the following arguments are required"),
    (["nosuch"], "invalid choice: 'nosuch'"),
])
def test_a_command_line_argparse_refuses_is_one_line_too(capsys, argv, words):
    # argparse printed its usage first: three or four lines before the one that says what is wrong.
    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1 and words in err and "--help" in err


@pytest.mark.parametrize("draw, words", [("drawn.txt", "not an image file name"),
                                         ("no/such/folder/drawn.png", "does not exist")])
def test_a_bad_draw_target_is_one_line_and_creates_nothing(scene_files, tmp_path, draw, words):
    _, folder = scene_files
    out = run("locate", str(folder / "frame.png"), "--setup", str(folder / "setup.toml"), "--draw", str(tmp_path / draw))
    assert out.returncode == 3 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in out.stderr
    assert list(tmp_path.iterdir()) == []  # no folders made on the way


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
    # every block is in the colour confusion matrix, found or missed, and in its kind's count
    for blocks in data["block_methods"]:
        assert sum(sum(row.values()) for row in blocks["colours"].values()) == data["blocks"]
        assert blocks["by_kind"]["single"]["blocks"] == data["blocks"]
    # the ray-caster's exposure keeps the anchors' paper under the ceiling: every frame on that side
    assert data["paper_clipped_frames"] == 0 and data["blocks_by_paper"]["not_clipped"]["blocks"] == data["blocks"]


@pytest.mark.slow
def test_demo_serves_the_siege_to_a_phone_and_stops_cleanly(tmp_path):
    import http.cookiejar
    import signal
    import socket
    import urllib.request

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]  # the fixed port is taken: the demo must fall back to a free one
    proc = subprocess.Popen([sys.executable, "-m", "companion.cli", "demo", "--frames", "5", "--no-browser",
                             "--host", "127.0.0.1", "--port", str(port), "--data-dir", str(tmp_path), "--fps", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # as a background job
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("script done"):
                break
        text = "".join(lines)
        assert f"port {port} is taken" in text and "join from a phone" in text and "\u2588" in text  # the QR code
        host_url = next(line.split(": ", 1)[1].strip() for line in lines if line.startswith("host screen:"))
        assert f":{port}/" not in host_url
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        assert opener.open(host_url).status == 200  # joined through the token, landed on /host
        base = host_url.split("/join")[0]
        state = json.loads(opener.open(base + "/api/state").read())
        assert state["registered"] and len(state["units"]) == 8
        game = state["game"]
        assert game["mode"] == "siege" and game["siege_rounds"] == 10
        assert game["rounds_done"] == 2 and game["turn"] is None  # two rounds, turn by turn, as tapped
        assert game["units"]["5"] == "skeleton" and game["units"]["20"] == "skeleton"  # the script's casualties
        ends = [e for e in json.loads(opener.open(base + "/api/log").read())["events"] if e["kind"] == "end_turn"]
        assert len(ends) == 4 and all(e["ledger"]["ap_spent"] <= e["ledger"]["ap_die"] for e in ends)
        assert not any("the turn spends" in w for e in ends for w in e["ledger"]["warnings"])  # within the dice
        (march,) = ends[0]["ledger"]["moves"]  # red's squad marched as one: refereed by the camera
        assert march["units"] == [4, 5, 6, 7, 8] and march["ap"] == 2
        assert "position error over all frames" in text and "the players tap: red ends the turn" in text
    finally:
        out, err = stop(proc)  # as a service manager stops it; a background job's child ignores SIGINT
        taken.close()
    assert proc.returncode == 0 and "Traceback" not in err, err


def test_serve_refuses_a_game_without_its_players_naming_the_key(tmp_path, scene_files):
    _, folder = scene_files
    lonely = tmp_path / "lonely.toml"
    lonely.write_text("[[anchors]]\nid = 0\nx_mm = 45\ny_mm = 45\n")  # Knight, no players, no roster
    out = run("serve", "--camera", str(folder / "frame.png"), "--setup", str(lonely), "--no-browser")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "lonely.toml: players: a knight game is played by two players" in out.stderr


def test_serve_refuses_a_missing_camera_file_in_one_line(tmp_path, scene_files):
    _, folder = scene_files
    out = run("serve", "--camera", str(tmp_path / "nope.mp4"), "--setup", str(folder / "setup.toml"), "--no-browser")
    assert out.returncode == 3 and out.stderr.count("\n") == 1 and "nope.mp4" in out.stderr
    bad_video = tmp_path / "notes.txt"
    bad_video.write_text("not a video")
    out = run("serve", "--camera", str(bad_video), "--setup", str(folder / "setup.toml"), "--no-browser")
    assert out.returncode == 4 and out.stderr.count("\n") == 1 and "notes.txt" in out.stderr
    # A device index that is not there (a typo) is said at once, in one line (it was retried
    # forever, two lines of OpenCV's warnings each time); so is `doctor`'s (it had those lines first).
    for command in ("serve", "doctor"):
        out = run(command, "--camera", "97", "--setup", str(folder / "setup.toml"), *(["--no-browser"] if command == "serve" else []))
        assert out.returncode == 4 and out.stderr.count("\n") == 1 and "camera 97: cannot open" in out.stderr


def test_synth_writes_frames_setups_and_truth(tmp_path):
    out = run("synth", "--out", str(tmp_path), "--scenes", "1", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["scenes"] == ["scene_000"] and out.stderr == ""  # not a terminal: quiet
    said = run("synth", "--out", str(tmp_path / "again"), "--scenes", "2")
    # long work says at once what it does, then counts with the time taken and left
    assert said.stderr.startswith("rendering 2 table(s) with the plain camera...\n")
    assert "1/2 (" in said.stderr and "s to go)" in said.stderr and "2/2 (" in said.stderr
    truth = json.loads((tmp_path / "scene_000.truth.json").read_text())
    located = json.loads(run("locate", str(tmp_path / "scene_000.png"), "--setup", str(tmp_path / "scene_000.toml"),
                             "--json").stdout)
    assert {m["id"] for m in located["minis"]} == {m["id"] for m in truth["minis"]}


@pytest.mark.parametrize("argv, says", [(["--scenes", "0"], "--scenes: must be at least 1"),
                                        (["--hands", "-2"], "--hands: must be 0 or more")])
def test_synth_refuses_nothing_to_render_and_writes_nothing(tmp_path, capsys, argv, says):
    # --scenes 0 or -3 "wrote 0 scenes" and exited 0
    assert main(["synth", "--out", str(tmp_path / "out"), *argv]) == 3
    assert capsys.readouterr().err.strip() == f"error: {says}" and not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra, says", [
    (["--target", "{b}", "--dodge", "{b}:x"], "--dodge: '{b}:x' is not ID:PH"),  # these three were tracebacks
    (["--target", "{b}", "--dodge", "{b}"], "--dodge: '{b}' is not ID:PH"),
    (["--target", "{b}", "--shoot-back", "{b}:x"], "--shoot-back: '{b}:x' is not ID:SV or ID:SVxBURST"),
    (["--target", "{b}", "--dodge", "{b}:999"], "PH: 999 is not 1 to 30"),  # every die a critical
    (["--target", "{b}", "--sv", "999"], "--sv: 999 is not 1 to 30"),
    (["--target", "{b}", "--point", "600,400"], "--point: for no-target ammunition only"),  # was ignored
    (["--point", "nan,400"], "--point: 'nan,400' is not a point"),
    (["--point", "99999,400"], "--point: '99999,400' is off the table"),
])
def test_infinity_template_refuses_bad_reactions_and_points_in_one_line(scene_files, tmp_path, capsys, extra, says):
    scene, folder = scene_files
    a, b = scene.minis[0].id, scene.minis[1].id
    state = {"registered": True, "minis": [{"id": m.id, "x_mm": m.x_mm, "y_mm": m.y_mm, "z_mm": m.z_mm,
                                             "heading_deg": m.heading_deg} for m in scene.minis[:2]]}
    (tmp_path / "state.json").write_text(json.dumps(state))
    argv = ["infinity", "template", "--setup", str(folder / "setup.toml"), "--state", str(tmp_path / "state.json"),
            "--attacker", str(a), *[v.format(b=b) for v in extra]]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and says.format(b=b) in err


@pytest.mark.parametrize("board, says", [
    (["--square-mm", "nan"], "--square-mm: nan is not a size in mm"),  # these two were SystemErrors from OpenCV
    (["--squares", "1x1"], "--squares: 1x1 has no inner corner"),
    (["--square-mm", "-5"], "--square-mm: -5 is not a size in mm"),
    (["--marker-mm", "40"], "--marker-mm: must be smaller than --square-mm"),
])
def test_a_board_that_cannot_be_is_refused_in_one_line_by_print_and_calibrate(scene_files, tmp_path, capsys, board, says):
    _, folder = scene_files
    for argv in (["print", "board", "--out", str(tmp_path / "board")],
                 ["calibrate", "camera", "--setup", str(folder / "setup.toml"), "--synthetic", "3", "--dry-run"]):
        assert main(argv + board) == 3
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and f"error: {says}" in err, err
    assert not (tmp_path / "board").exists()
