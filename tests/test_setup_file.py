import pytest

from companion.errors import SetupError
from companion.setup_file import default_anchors, load_setup, parse_setup, setup_to_toml, TableSpec

FULL = """
[table]
width_mm = 1200
depth_mm = 800

[markers]
dictionary = "DICT_4X4_50"

[[anchors]]
id = 0
x_mm = 45.0
y_mm = 45.0
size_mm = 50.0
rotation_deg = 90.0

[camera]
matrix = [[1400.0, 0.0, 960.0], [0.0, 1400.0, 540.0], [0.0, 0.0, 1.0]]
distortion = [-0.1, 0.02, 0.0, 0.0, 0.0]

[ruleset]
name = "knight"

[[players]]
name = "red"
hand_mm = 178.0
finger_mm = 20.0

[[minis]]
id = 4
name = "Orc berserker"
marker_mm = 20.0
player = "red"
faction = "orcs"
class = "berserker"
base_mm = 25.0
height_mm = 40.0
"""


def test_design_example_loads_with_every_field(write_setup):
    setup = load_setup(write_setup(FULL))
    assert setup.table == TableSpec(1200.0, 800.0)
    assert setup.anchors[0].rotation_deg == 90.0
    assert setup.camera.matrix[0][0] == 1400.0 and setup.camera.distortion[0] == -0.1
    mini = setup.mini(4)
    assert (mini.name, mini.unit_class, mini.faction, mini.player) == ("Orc berserker", "berserker", "orcs", "red")
    assert mini.height_given and mini.marker_height == 40.0
    assert setup.player("red").hand_mm == 178.0


def test_defaults_for_missing_optional_keys(write_setup):
    setup = load_setup(write_setup('[[anchors]]\nid = 0\nx_mm = 1\ny_mm = 2\n\n[[minis]]\nid = 7\n'))
    assert setup.table.width_mm == 1200.0 and setup.dictionary == "DICT_4X4_50" and setup.ruleset == "knight"
    assert setup.anchors[0].size_mm == 50.0 and setup.anchors[0].rotation_deg == 90.0
    mini = setup.mini(7)
    assert (mini.marker_mm, mini.base_mm, mini.height_mm, mini.height_given) == (20.0, 25.0, 40.0, False)
    assert setup.camera is None


@pytest.mark.parametrize("text, key", [
    ("[table]\nwidth_mm = 'wide'\n", "table.width_mm"),
    ("[table]\nwidth_mm = -3\n", "table.width_mm"),
    ("[table]\nlength_mm = 3\n", "table.length_mm"),
    ("[markers]\ndictionary = 'DICT_9X9'\n", "markers.dictionary"),
    ("[[anchors]]\nid = 0\ny_mm = 1\n", "anchors[0].x_mm"),
    ("[[minis]]\nid = -1\n", "minis[0].id"),
    ("[[minis]]\nid = 4\nmarker_mm = 0\n", "minis[0].marker_mm"),
    ("[[minis]]\nid = 4\ncolour = 'red'\n", "minis[0].colour"),
    ("[[anchors]]\nid = 4\nx_mm = 0\ny_mm = 0\n[[minis]]\nid = 4\n", "minis[0].id"),
    ("[[players]]\nname = 'red'\n[[minis]]\nid = 4\nplayer = 'green'\n", "minis[0].player"),
    ("[camera]\nmatrix = [[1, 0], [0, 1]]\n", "camera.matrix"),
    ("[camera]\nmatrix = [[nan, 0, 960], [0, 1000, 540], [0, 0, 1]]\n", "camera.matrix"),  # was a ValueError
    ("[camera]\nmatrix = [[1000, 0, 960], [0, 1000, 540], [0, 0, 1]]\ndistortion = [inf, 0, 0, 0, 0]\n",
     "camera.distortion"),
    ("[table]\nwidth_mm = 1e308\n", "table.width_mm"),  # was a ValueError sizing the views of it
    ("[[minis]]\nid = 4\nbase_mm = 1e300\n", "minis[0].base_mm"),  # was an OpenCV error drawing it
    ("[[minis]]\nid = 4\nheight_mm = -5\n", "minis[0].height_mm"),
    ("[[minis]]\nid = 4\nmarker_mm = 2000\n", "minis[0].marker_mm"),
    ("[[players]]\nname = 'red'\nhand_mm = 1e300\n", "players[0].hand_mm"),  # was every distance 0 hands
    ("[[players]]\nname = 'red'\nhand_mm = 150\nfinger_mm = 0.001\n", "players[0].finger_mm"),
    ("[[objects]]\nid = 9\nkind = 'castle'\nmarker_mm = 1e9\n", "objects[0].marker_mm"),
    ("[ruleset]\nname = 'chess'\n", "ruleset.name"),
    ("[[objects]]\nid = 9\nkind = 'tower'\n", "objects[0].kind"),
    ("surprise = 1\n", "surprise"),
    ("[[minis]]\nid = 4000\n", "minis[0].id"),  # DICT_4X4_50 has 0-49: a mini never seen
    ("[markers]\ndictionary = 'DICT_APRILTAG_16h5'\n[[anchors]]\nid = 30\nx_mm = 0\ny_mm = 0\n", "anchors[0].id"),
    ("[[anchors]]\nid = 0\nx_mm = 99999\ny_mm = 0\n", "anchors[0].x_mm"),  # 100 m off the table
])
def test_every_bad_value_names_file_and_key(write_setup, text, key):
    path = write_setup(text)
    with pytest.raises(SetupError) as err:
        load_setup(path)
    message = str(err.value)
    assert str(path) in message and key in message and "\n" not in message


def test_all_problems_are_reported_at_once(write_setup):
    with pytest.raises(SetupError) as err:
        load_setup(write_setup("[table]\nwidth_mm = 'x'\ndepth_mm = -1\n"))
    assert "table.width_mm" in str(err.value) and "table.depth_mm" in str(err.value)


def test_an_empty_setup_is_refused_not_taken_for_a_camera_problem(write_setup):
    with pytest.raises(SetupError, match="the file is empty: a setup needs at least"):
        load_setup(write_setup(""))
    only_table = write_setup("[table]\nwidth_mm = 600\n")
    assert load_setup(only_table).anchors == ()  # the rules on a saved state need no anchor
    with pytest.raises(SetupError, match=r"anchors: none given: at least one \[\[anchors\]\]"):
        load_setup(only_table, need_anchors=True)  # a camera's frames do


def test_missing_and_malformed_files(tmp_path, write_setup):
    with pytest.raises(SetupError, match="not found"):
        load_setup(tmp_path / "nope.toml")
    with pytest.raises(SetupError, match="not valid TOML"):
        load_setup(write_setup("[table\nwidth_mm = 3"))


def test_toml_round_trip(write_setup):
    setup = load_setup(write_setup(FULL))
    again = parse_setup(__import__("tomllib").loads(setup_to_toml(setup)), setup.path)
    assert again == setup


def test_default_anchors_follow_the_table_frame():
    a = default_anchors(TableSpec(1000, 600))
    assert [(x.id, x.x_mm, x.y_mm) for x in a] == [(0, 45, 45), (1, 955, 45), (2, 955, 555), (3, 45, 555)]
