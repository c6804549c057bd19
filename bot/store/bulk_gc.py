"""Rare cyclic garbage collection while a bulk read builds large state in memory (replay) or
makes objects by the million (export).

CPython's cyclic collector runs a young collection every 700 net allocations of container
objects, a middle one every 10 of those, and a full one (every object alive) once enough has
survived. Replay keeps what it builds (every projection's rows, then every stored row to compare
with) until it ends, so the middle and full collections walk a heap that only grows, a large
share of a replay. Replay makes no cyclic garbage (`gc.collect()` after one finds none), so
collecting rarely loses no memory; reference counting frees everything else as before.
An export holds one batch of participants' events at a time, but a batch's rows live long
enough to be promoted, so full collections still come, and an export leaves only a little
cyclic garbage whatever its size. Figures: docs/performance.md (Export, Replay).

The thresholds are the process's, so `fewer_collections` counts who is inside it: the first to
enter raises them, the last to leave puts back what they were. A threshold already higher is
kept, and a collector switched off stays off. Only the CLI's bulk work, in a process of its
own, takes it (`tandem export`, `tandem replay`): not a console download, which its client
paces, for as long as it likes, in a web process whose other threads go on allocating.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# A young collection every 100,000 net allocations (not 700), an older one every 100 of those.
BULK_THRESHOLDS = (100_000, 100, 100)

_lock = threading.Lock()
_inside = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the body with the collector's thresholds raised to at least BULK_THRESHOLDS."""
    global _inside, _saved
    with _lock:
        if _inside == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(*(max(a, b) for a, b in zip(_saved, BULK_THRESHOLDS, strict=True)))
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
