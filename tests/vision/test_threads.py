import cv2
import pytest

from companion.vision.threads import on_this_thread, with_the_pool


@pytest.fixture
def two_threads():
    before = cv2.getNumThreads()
    cv2.setNumThreads(2)
    yield
    cv2.setNumThreads(before)


def test_small_calls_run_on_the_calling_thread_and_a_whole_frame_gets_the_pool_back(two_threads):
    with on_this_thread():
        assert cv2.getNumThreads() == 1
        with with_the_pool():
            assert cv2.getNumThreads() == 2
        assert cv2.getNumThreads() == 1
    assert cv2.getNumThreads() == 2


def test_the_pool_is_restored_when_the_work_fails(two_threads):
    with pytest.raises(ValueError):
        with on_this_thread():
            raise ValueError("a frame that could not be read")
    assert cv2.getNumThreads() == 2


def test_outside_the_tracker_the_pool_is_left_as_it_is(two_threads):
    with with_the_pool():
        assert cv2.getNumThreads() == 2
    assert cv2.getNumThreads() == 2
