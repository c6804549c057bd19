"""A long-running process freezes its startup heap out of the cyclic collector
(bot.runtime.heap): what is alive stays out of every later collection; what startup left
unreachable is collected first, not frozen."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from bot.runtime.heap import freeze_startup_heap


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    """The suite's heap as it was: collected again after each test."""
    yield
    gc.unfreeze()


def _tracked(obj: object) -> bool:
    """Whether a collection of the oldest generation would walk `obj`."""
    return any(o is obj for o in gc.get_objects())


def test_what_startup_keeps_is_walked_by_no_later_collection() -> None:
    kept = _Node()
    assert _tracked(kept)

    frozen = freeze_startup_heap()

    assert not _tracked(kept)
    # What it froze, less any frozen object freed since (another thread's temporaries, alive
    # at the freeze: a suite run saw 2 of 510,513 go before this line).
    assert frozen > 0 and frozen * 0.99 <= gc.get_freeze_count() <= frozen
    made_after = _Node()
    assert _tracked(made_after)


def test_a_cycle_startup_left_unreachable_is_collected_not_frozen() -> None:
    first, second = _Node(), _Node()
    first.other, second.other = second, first
    gone = weakref.ref(first)
    del first, second

    freeze_startup_heap()

    assert gone() is None
