"""OpenCV's worker threads: none for the live tracker's small calls, all for a whole frame.

OpenCV hands even a 40 x 40 px search to its thread pool, and the workers spin a while after each
call waiting for the next one: on the live tracker's frames (a dozen small searches, fits and
blurs) that cost half as much processor time again as the work itself, and no wall-clock time
was saved (`companion bench live`). A whole-frame search is large enough to share out.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import cv2

_pool_sizes: list[int] = []  # OpenCV's thread counts before each `on_this_thread` still open


@contextmanager
def on_this_thread() -> Iterator[None]:
    """OpenCV calls within run on the calling thread only (the setting is the process's: calls
    from other threads meanwhile run there too, slower but the same)."""
    before = cv2.getNumThreads()
    _pool_sizes.append(before)
    cv2.setNumThreads(1)
    try:
        yield
    finally:
        _pool_sizes.pop()
        cv2.setNumThreads(before)


@contextmanager
def with_the_pool() -> Iterator[None]:
    """Within `on_this_thread`: OpenCV's threads back for one large call (else nothing changes)."""
    if not _pool_sizes:
        yield
        return
    cv2.setNumThreads(_pool_sizes[0])
    try:
        yield
    finally:
        cv2.setNumThreads(1)
