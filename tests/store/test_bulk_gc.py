"""The cyclic collector runs rarely while a replay holds what it builds and while `tandem
export` writes (bot.store.bulk_gc), not while a console download streams, and the process's
thresholds are put back as they were however the callers overlap."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.reporting.export import export, stream_file
from bot.store import replay
from bot.store.bulk_gc import BULK_THRESHOLDS, fewer_collections
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from tests.factories import enrolled, received


@pytest.fixture(autouse=True)
def default_thresholds() -> Iterator[None]:
    """CPython's default thresholds for each test, and the process's own put back after."""
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_the_thresholds_are_raised_inside_and_put_back_after() -> None:
    with fewer_collections():
        assert gc.get_threshold() == BULK_THRESHOLDS
    assert gc.get_threshold() == (700, 10, 10)


def test_the_thresholds_are_put_back_when_the_body_fails() -> None:
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("the replay failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_threshold_already_higher_is_kept_and_put_back() -> None:
    gc.set_threshold(500_000, 5, 1_000)
    with fewer_collections():
        assert gc.get_threshold() == (500_000, BULK_THRESHOLDS[1], 1_000)
    assert gc.get_threshold() == (500_000, 5, 1_000)


def test_a_collector_switched_off_stays_off() -> None:
    gc.disable()
    try:
        with fewer_collections():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_callers_leave_the_thresholds_raised_until_the_last_one_leaves() -> None:
    """Two threads, the first leaving while the second is still inside: the second's work keeps
    the raised thresholds, and the defaults come back when it leaves (not the raised ones the
    second found when it entered)."""
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def first() -> None:
        with fewer_collections():
            first_in.set()
            second_in.wait(10)
        first_out.set()

    def second() -> None:
        first_in.wait(10)
        with fewer_collections():
            second_in.set()
            first_out.wait(10)
            seen["after the first left"] = gc.get_threshold()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert seen["after the first left"] == BULK_THRESHOLDS
    assert gc.get_threshold() == (700, 10, 10)


def test_a_replay_folds_and_compares_with_the_collector_running_rarely(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    store.append(stream, [person, received(body="hello", phone=person.phone)])
    during: dict[str, set[tuple[int, int, int]]] = {"fold": set(), "compare": set()}
    stored_rows = replay._stored_rows

    def reading(*args: Any, **kwargs: Any) -> Any:
        during["compare"].add(gc.get_threshold())
        return stored_rows(*args, **kwargs)

    monkeypatch.setattr(replay, "_stored_rows", reading)

    report = replay.rebuild(store, progress=lambda _n: during["fold"].add(gc.get_threshold()))
    replay.compare(store, report)

    assert report.events == 2 and report.clean, report.differences
    assert during == {"fold": {BULK_THRESHOLDS}, "compare": {BULK_THRESHOLDS}}
    assert gc.get_threshold() == (700, 10, 10)


def test_an_export_writes_its_files_with_the_collector_running_rarely(
    store: EventStore, tmp_path: Path
) -> None:
    person = enrolled()
    store.append(
        participant_stream(person.participant_id), [person, received(body="hi", phone=person.phone)]
    )
    during: set[tuple[int, int, int]] = set()

    def progress(_name: str, _total: int | None) -> Callable[[int], None]:
        during.add(gc.get_threshold())
        return lambda _n: during.add(gc.get_threshold())

    counts = export(store, tmp_path, progress=progress)

    assert counts.participants == 1 and counts.messages == 1
    assert during == {BULK_THRESHOLDS}
    assert gc.get_threshold() == (700, 10, 10)


def test_a_download_is_streamed_with_the_collector_as_it_was(store: EventStore) -> None:
    """A console download is paced by its client in a web process: it leaves the thresholds
    as the process has them, however long it takes."""
    person = enrolled()
    store.append(participant_stream(person.participant_id), [person])
    lines = stream_file(store, "participants", "csv")
    during: set[tuple[int, int, int]] = set()
    for _line in lines:
        during.add(gc.get_threshold())

    assert during == {(700, 10, 10)}
