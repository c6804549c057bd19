"""On PostgreSQL a turn's decision is committed in one message with the participant's lock
(bot/store/flight.py), and flown again on the row read anew while only arrivals moved the
stream: the worker never holds the lock across its own round trips."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.conversation.turns import Turn
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.worker import FLIGHTS, Worker
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import EventData, participant_stream
from bot.store.replay import compare, rebuild
from bot.store.sealing import Sealer
from tests.conftest import TEST_MASTER_KEY
from tests.factories import received
from tests.runtime.test_worker import GREETING, echo, enroll, replies
from tests.store.statements import statements

LOCKED_READ = "SELECT participants.participant_id"  # the head row read FOR UPDATE, then written


@pytest.fixture
def pg(pg_store: EventStore) -> EventStore:
    return pg_store


@pytest.fixture
def other(pg: EventStore) -> Iterator[EventStore]:
    """The same database through an engine of its own: the participant's webhook, whose
    statements the worker's engine does not count."""
    store = EventStore(
        make_engine(pg.engine.url.render_as_string(hide_password=False)),
        clock=pg.clock,
        sealer=Sealer(TEST_MASTER_KEY),
    )
    yield store
    store.engine.dispose()


def _worker(store: EventStore, handler) -> Worker:  # noqa: ANN001
    settings = load_settings({"DATABASE_URL": str(store.engine.url)}, env_file=None)
    return Worker(build_services(settings, clock=store.clock, store=store), handler, "w1")


def _locks(seen: list[str]) -> tuple[int, int]:
    """(the flights' locks, the locked reads of the head row) among the statements."""
    flown = sum(s.startswith("SELECT 1 FROM participants") and "FOR UPDATE" in s for s in seen)
    locked = sum(s.startswith(LOCKED_READ) and s.endswith("FOR UPDATE") for s in seen)
    return flown, locked


def test_a_turn_whose_stream_only_arrivals_moved_is_flown_again_without_locking_first(
    pg: EventStore, other: EventStore
) -> None:
    pid = enroll(pg)
    stream = participant_stream(pid)

    def slow(turn: Turn) -> list[EventData]:
        if turn.kind == "enrolled":  # another message lands while this turn is decided
            other.append(stream, [received("SMlate", "late")])
        return echo(turn)

    with statements(pg.engine) as seen:
        _worker(pg, slow).run_once()
    assert replies(pg, pid) == [GREETING, "You said: late"]
    flown, locked = _locks(seen)
    assert (flown, locked) == (3, 0), seen  # greeting: 2 tries; the late message's turn: 1
    report = rebuild(pg)
    compare(pg, report)
    assert report.differences == []


def test_a_stream_that_keeps_moving_is_locked_after_the_last_flight(
    pg: EventStore, other: EventStore
) -> None:
    pid = enroll(pg)
    stream = participant_stream(pid)
    moves = iter(range(FLIGHTS))

    def busy(turn: Turn) -> list[EventData]:
        if turn.kind == "enrolled":
            other.append(stream, [received("SM-first", "first")])
        return echo(turn)

    worker = _worker(pg, busy)
    stored = worker.queue.stored_row  # each read of the row is followed by a move

    def moved_after_reading(s: str) -> dict | None:
        row = stored(s)
        n = next(moves, None)
        if n is not None:
            other.append(stream, [received(f"SM-move{n}", f"move {n}")])
        return row

    worker.queue.stored_row = moved_after_reading  # type: ignore[method-assign]
    with statements(pg.engine) as seen:
        worker.run_once()
    bodies = replies(pg, pid)
    assert bodies[0] == GREETING and "You said: first" in bodies
    first = seen.index(next(s for s in seen if s.startswith(LOCKED_READ) and "FOR UPDATE" in s))
    assert _locks(seen[:first]) == (FLIGHTS, 0), seen[:first]
    report = rebuild(pg)
    compare(pg, report)
    assert report.differences == []
