"""`companion bench vision --absent`: rosters that also list the ids no one on the table carries."""

import pytest

from companion.bench import vision
from companion.synth.scene import random_scene


def test_the_absent_ids_are_every_id_of_the_dictionary_no_marker_on_the_table_carries():
    setup = random_scene(3).setup()
    listed = vision.with_absent(setup)
    assert listed.minis[:len(setup.minis)] == setup.minis
    taken = {m.id for m in setup.minis} | set(setup.anchor_ids)
    added = [m.id for m in listed.minis[len(setup.minis):]]
    assert sorted(added) == sorted(set(range(50)) - taken)  # DICT_4X4_50
    assert listed.listed_ids == frozenset(range(50))


@pytest.mark.slow
def test_no_absent_id_is_read_on_a_bench_table():
    result = vision.run(scenes=1, seed=4, absent=True)
    pipeline = result["methods"][0]
    assert result["absent"] and pipeline["recall"] == 1.0 and pipeline["false_ids"] == 0
